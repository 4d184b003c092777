"""Figures from result CSVs (never from anything else)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from rbrepro.errors import InvalidParameter, MissingData
from rbrepro.plots.fig3 import plot_fig3
from rbrepro.plots.fig4 import plot_fig4
from rbrepro.plots.fig5 import plot_fig5
from rbrepro.plots.fig6 import plot_fig6
from rbrepro.plots.scaling import plot_scaling

FIGURES = {"fig3": plot_fig3, "fig4": plot_fig4, "fig5": plot_fig5, "fig6": plot_fig6, "scaling": plot_scaling}


def load_results(path: str | Path) -> tuple[pd.DataFrame, dict | None]:
    """A results CSV (or a results folder holding results.csv) and the resolved config beside it."""
    path = Path(path)
    csv = path / "results.csv" if path.is_dir() else path
    if not csv.exists():
        raise MissingData(f"{csv}: no results CSV here; run `rbrepro sweep CONFIG` first")
    try:
        frame = pd.read_csv(csv)
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame()
    if frame.empty:
        raise InvalidParameter(f"{csv}: the results CSV has no rows")
    required = {"dataset", "method", "sigma", "R", "seed", "metric", "train_metric", "test_metric", "train_s", "D"}
    lacking = sorted(required - set(frame.columns))
    if lacking and not ("status" in frame and (frame["status"] != "ok").all()):
        raise InvalidParameter(f"{csv}: missing columns {', '.join(lacking)}; is this an rbrepro results CSV?")
    resolved = csv.parent / "config.resolved.yaml"
    config = yaml.safe_load(resolved.read_text()) if resolved.exists() else None
    return frame, config


def swept_for(frame: pd.DataFrame, config: dict | None) -> str | None:
    """The figure a results CSV was swept for: its resolved config's `figure`, else the rows' own."""
    if config and config.get("figure"):
        return str(config["figure"])
    if "figure" in frame and frame["figure"].notna().any():
        return str(frame["figure"].dropna().iloc[0])
    return None


def make_figure(figure: str, results: str | Path, out_base: str | Path) -> list[Path]:
    """Draw `figure` from a results CSV swept for it (anything else is refused in one line)."""
    if figure not in FIGURES:
        raise InvalidParameter(f"unknown figure {figure!r}; available: {', '.join(FIGURES)}")
    frame, config = load_results(results)
    made_for = swept_for(frame, config)
    if made_for != figure:
        what = f"a sweep for {made_for}" if made_for and made_for != "none" else "a sweep made for no figure"
        name = f" ({config['name']})" if config and config.get("name") else ""
        raise InvalidParameter(f"{results}: these results are {what}{name}, not for {figure}; plot them as "
                         f"{made_for}" if made_for in FIGURES else
                         f"{results}: these results are {what}{name}, not for {figure}; sweep a {figure} config")
    config = dict(config or {})
    unavailable = Path(results if Path(results).is_dir() else Path(results).parent) / "unavailable.json"
    if unavailable.exists():
        import json

        try:
            config["unavailable"] = sorted(json.loads(unavailable.read_text()))
        except ValueError:
            pass
    return FIGURES[figure](frame, Path(out_base), config)
