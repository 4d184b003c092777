"""The numbers behind the figures: each committed run's markdown tables."""

from __future__ import annotations

from pathlib import Path

from rbrepro.report.runs import RUNS
from rbrepro.report.tables import tables


def figures_section(root: Path) -> str:
    """The markdown tables of every committed figure run (rbrepro.report.tables), in RUNS' order."""
    parts = []
    for runs in RUNS.values():
        for run in runs:
            if run not in ("theory", "scaling", "paper-scale") and (root / "results" / run / "results.csv").exists():
                parts.append(tables(root / "results" / run).replace(f"## {root / 'results' / run}",
                                                                       f"### results/{run}"))
    return "## The numbers behind the figures\n\n" + "\n\n".join(parts)
