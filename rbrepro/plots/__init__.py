"""Figures from result CSVs (never from anything else)."""

from __future__ import annotations

from pathlib import Path

from rbrepro.analysis.results import swept_for
from rbrepro.errors import InvalidParameter
from rbrepro.plots.fig3 import plot_fig3
from rbrepro.plots.fig4 import plot_fig4
from rbrepro.plots.fig5 import plot_fig5
from rbrepro.plots.fig6 import plot_fig6
from rbrepro.plots.scaling import plot_scaling
from rbrepro.sweep.results_folder import load_results

FIGURES = {"fig3": plot_fig3, "fig4": plot_fig4, "fig5": plot_fig5, "fig6": plot_fig6, "scaling": plot_scaling}


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
