"""Figures from result CSVs (never from anything else)."""

from __future__ import annotations

import importlib
from pathlib import Path

from rbrepro.analysis.results import swept_for
from rbrepro.errors import InvalidParameter
from rbrepro.sweep.results_folder import load_results
from rbrepro.vocabulary import FIGURES as FIGURE_NAMES

#: each figure's drawing function, `plot_<name>` of the module rbrepro.plots.<name>, for every name in
#: vocabulary.FIGURES (the one list of the figures: a figure is its module and its name there)
FIGURES = {name: getattr(importlib.import_module(f"rbrepro.plots.{name}"), f"plot_{name}") for name in FIGURE_NAMES}


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
