"""Figures from result CSVs (never from anything else)."""

from __future__ import annotations

from pathlib import Path

from rbrepro.analysis.results import swept_for
from rbrepro.dotted import resolve
from rbrepro.errors import InvalidParameter
from rbrepro.figure_registry import BUILT_IN, FIGURE_SPECS
from rbrepro.sweep.results_folder import load_results

#: the built-in figures' drawing functions (rbrepro.figure_registry declares every figure; make_figure
#: draws a registered one by its spec)
FIGURES = {spec.name: resolve(spec.drawing) for spec in BUILT_IN}


def make_figure(figure: str, results: str | Path, out_base: str | Path) -> list[Path]:
    """Draw `figure` from a results CSV swept for it (anything else is refused in one line)."""
    if figure not in FIGURE_SPECS:
        raise InvalidParameter(f"unknown figure {figure!r}; available: {', '.join(FIGURE_SPECS)}")
    frame, config = load_results(results)
    made_for = swept_for(frame, config)
    if made_for != figure:
        what = f"a sweep for {made_for}" if made_for and made_for != "none" else "a sweep made for no figure"
        name = f" ({config['name']})" if config and config.get("name") else ""
        raise InvalidParameter(f"{results}: these results are {what}{name}, not for {figure}; plot them as "
                         f"{made_for}" if made_for in FIGURE_SPECS else
                         f"{results}: these results are {what}{name}, not for {figure}; sweep a {figure} config")
    config = dict(config or {})
    unavailable = Path(results if Path(results).is_dir() else Path(results).parent) / "unavailable.json"
    if unavailable.exists():
        import json

        try:
            config["unavailable"] = sorted(json.loads(unavailable.read_text()))
        except ValueError:
            pass
    return resolve(FIGURE_SPECS[figure].drawing)(frame, Path(out_base), config)
