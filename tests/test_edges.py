"""A sigma chosen at its grid's edge carries a reason by a printed rule: flat (levelled off at the edge)
or open (still improving there), read from the scores the choice was made on."""

from __future__ import annotations

import pandas as pd
import pytest

from rbrepro.analysis.edges import FLAT, FLAT_EDGE_GAIN, OPEN, UNKNOWN, edge_reasons


def _rows(method: str, R: int, curve: dict, metric: str = "accuracy", test_bias: float = 0.0) -> list[dict]:
    """One (dataset, method, R): validation rows over the grid (two seeds), then the test rows of the
    best sigma, marked chosen with its edge as the sweep writes them."""
    higher = metric == "accuracy"
    sigmas = sorted(curve)
    best = (max if higher else min)(sigmas, key=lambda s: (curve[s], -s) if higher else (curve[s], s))
    edge = "low" if best == sigmas[0] else "high" if best == sigmas[-1] else ""
    base = {"dataset": "d", "method": method, "R": R, "status": "ok", "metric": metric, "selected_on": "validation"}
    out = [{**base, "sigma": s, "seed": seed, "evaluate_on": "validation", "test_metric": v,
            "selected": False, "sigma_edge": ""} for s, v in curve.items() for seed in (0, 1)]
    out += [{**base, "sigma": best, "seed": seed, "evaluate_on": "test", "test_metric": curve[best] + test_bias,
             "selected": True, "sigma_edge": edge} for seed in (0, 1, 2)]
    return out


def _frame() -> pd.DataFrame:
    rows = _rows("rf", 8, {0.01: 90.0 + 90.0 * FLAT_EDGE_GAIN / 2, 0.03: 90.0, 0.1: 89.0})     # flat: tiny gain
    rows += _rows("nystrom", 8, {0.01: 92.0, 0.03: 90.0, 0.1: 89.0})                           # open: 2.2 %
    rows += _rows("rb", 8, {1.0: 0.30, 3.16: 0.25, 10.0: 0.20}, metric="rel_error")            # open, high edge
    rows += _rows("rb", 16, {1.0: 0.30, 3.16: 0.20, 10.0: 0.25}, metric="rel_error")           # inside: no edge
    return pd.DataFrame(rows)


def test_each_edge_gets_flat_or_open_by_its_gain_over_the_inner_neighbour():
    reasons = edge_reasons(_frame()).set_index(["method", "R"])
    assert set(reasons.index) == {("rf", 8), ("nystrom", 8), ("rb", 8)}     # R = 16 chose inside the grid
    assert reasons.loc[("rf", 8), "reason"] == FLAT
    assert reasons.loc[("rf", 8), "gain"] == pytest.approx(FLAT_EDGE_GAIN / 2)
    assert reasons.loc[("nystrom", 8), "reason"] == OPEN
    assert reasons.loc[("nystrom", 8), "gain"] == pytest.approx(2 / 90)
    assert reasons.loc[("rb", 8), "sigma_edge"] == "high" and reasons.loc[("rb", 8), "reason"] == OPEN
    assert reasons.loc[("rb", 8), "gain"] == pytest.approx(0.05 / 0.25)      # lower error is better


def test_the_reason_reads_the_choosing_split_not_the_test_rows():
    # the test rows at the edge are far better than anything (a large bias): the reason must not see them
    frame = pd.DataFrame(_rows("rf", 8, {0.01: 90.0, 0.03: 90.0, 0.1: 89.0}, test_bias=5.0))
    assert edge_reasons(frame)["reason"].tolist() == [FLAT]
    only_chosen = frame[frame["evaluate_on"] == "test"]                      # no scores to compare: unknown
    assert edge_reasons(only_chosen)["reason"].tolist() == [UNKNOWN]


def test_claims_count_only_the_open_edges_as_possibly_under_tuned():
    from rbrepro.report.claims import edge_note

    frame = _frame()
    chosen = frame[frame["selected"]]
    note = edge_note(chosen, frame)
    assert note.startswith("3 of 4 (dataset, method, R) it reads chose sigma at a grid's edge, of which 2 still "
                           "improving there")


def test_the_section_prints_the_rule_its_threshold_and_each_reason():
    from rbrepro.report.sections.edges import edges_section

    frame = _frame()
    section = edges_section({"fig5": (frame, None)})
    assert f"{FLAT_EDGE_GAIN:.1%}" in section and '"flat"' in section and '"open"' in section
    assert "3 chosen (dataset, method, R) at a grid's edge, of which 2 still improving (open)" in section
    lines = {line.split("|")[2].strip() + str(line.split("|")[3].strip()): line for line in section.splitlines()
             if line.startswith("| d |")}
    assert "flat: levelled off" in lines["rf8"] and "open: still improving" in lines["nystrom8"]
