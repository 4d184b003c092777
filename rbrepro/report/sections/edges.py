"""Sigma chosen at a grid's edge: every chosen (dataset, method, R) of a committed run whose sigma
sits at the low or high end of the grid it was chosen from, with its reason by the printed rule of
`analysis.edges` (flat: levelled off at the edge; open: still improving, the best may lie beyond and
only a rerun with a wider grid can say)."""

from __future__ import annotations

import pandas as pd

from rbrepro.analysis.edges import OPEN, REASON_TEXT, edge_reasons, flat_rule
from rbrepro.models.registry import REFERENCE
from rbrepro.report.markdown import table
from rbrepro.report.runs import RUNS, protocol_of

#: the claims that read a run's chosen points (`sections.claims.CLAIMS`); the exact kernel's is a reference line
READ_BY = {"fig3": "claims 1, 2, 2b", "fig3-as-published": "claims 1, 2, 2b", "fig5": "claims 4, 5, 5b, 6",
           "fig5-as-published": "claims 4, 5, 5b, 6", "fig6": "claim 7"}
EXACT_READ_BY = {"fig3": "the exact kernel's line; claim 3b's reference", "fig5": "the exact kernel's line"}


def edge_cases(rows: pd.DataFrame, run: str = "") -> list[list]:
    """Per chosen (dataset, method, R) at its grid's edge: dataset, method, R, sigma, edge, the grid's
    range (every sigma that ran there, on any split), how many seeds, the edge's gain over its inner
    neighbour and the reason (`analysis.edges.edge_reasons`)."""
    out = []
    for case in edge_reasons(rows).itertuples(index=False):
        here = rows[(rows["dataset"] == case.dataset) & (rows["method"] == case.method) & (rows["R"] == case.R)]
        grid = here["sigma"]
        chosen = here[here["selected"].fillna(False).astype(bool) & (here["sigma"] == case.sigma)]
        out.append([case.dataset, case.method, "exact" if case.method == REFERENCE else int(case.R), case.sigma,
                    case.sigma_edge, f"{grid.min():g}-{grid.max():g} ({grid.nunique()})",
                    int(chosen["seed"].nunique()),
                    EXACT_READ_BY.get(run, "the exact kernel's line") if case.method == REFERENCE
                    else READ_BY.get(run, "–"),
                    "–" if case.gain != case.gain else f"{100 * case.gain:.3g}%", REASON_TEXT[case.reason]])
    return out


def edges_section(loaded_runs: dict) -> str:
    """The section: per committed run, its chosen sigma at a grid's edge, and why the report cannot
    say more."""
    parts = ["## Sigma chosen at a grid's edge", "",
             "A sigma chosen at the edge of the grid it was chosen from may not be the best: the best may lie "
             "beyond the grid, so the method may be under-tuned there, and the claims that read the point "
             "(named per row) may under-rate it. The report reads only the committed rows and cannot extend a "
             "grid: that takes adding sigma values beyond the edge to the dataset's grid in the run's config "
             "and rerunning it (`make <run>`, which writes `results/<run>`), then `rbrepro report`. A grid cannot "
             "be widened without end (as sigma falls the L1 kernel tends to a constant; the exact kernel's cost "
             "grows with each sigma), so each edge carries a reason by rule: " + flat_rule() + ". The claims "
             "count the open ones as possibly under-tuned."]
    for run in (r for runs in RUNS.values() for r in runs):
        loaded = loaded_runs.get(run)
        if loaded is None or run == "theory" or "sigma_edge" not in loaded[0]:
            continue
        cases = edge_cases(loaded[0], run)
        if "selected" not in loaded[0] or not loaded[0]["selected"].fillna(False).astype(bool).any():
            parts += ["", f"`results/{run}` ({protocol_of(run, loaded[0])}): sigma set by hand, none chosen from "
                          "a grid."]
            continue
        if not cases:
            parts += ["", f"`results/{run}` ({protocol_of(run, loaded[0])}): no chosen sigma at a grid's edge."]
            continue
        still = sum(c[-1] == REASON_TEXT[OPEN] for c in cases)
        parts += ["", f"`results/{run}` ({protocol_of(run, loaded[0])}): {len(cases)} chosen (dataset, method, R) "
                      f"at a grid's edge, of which {still} still improving (open); to extend: widen the grid in "
                      f"`configs/{run}.yaml`, then `make {run}`.", "",
                  table(["dataset", "method", "R", "sigma chosen", "edge", "grid (values)", "seeds", "read by",
                         "edge's gain over its neighbour", "reason"], cases)]
    return "\n".join(parts)
