"""Why a sigma chosen at its grid's edge stands or not, by one printed rule read from the rows: the
score the choice was made on (validation, or test where the run chose on test), its median over the
seeds at the edge sigma against the median at the edge's inner neighbour in the grid. "flat": the
edge is better by less than FLAT_EDGE_GAIN of the neighbour's score, so the curve has levelled off
towards the edge and sigma beyond it is unlikely to change the point by more; "open": still
improving at the edge, so the best may lie beyond and the grid should be widened."""

from __future__ import annotations

import math

import pandas as pd

from rbrepro.analysis.rows import edge_rows, higher_is_better, test_rows, validation_rows
from rbrepro.metrics import same_sigma, seed_statistic

#: the edge's gain over its inner neighbour (a fraction of the neighbour's median score) below which
#: the choice is "flat"; the one home of the threshold the report prints
FLAT_EDGE_GAIN = 0.001
FLAT = "flat"
OPEN = "open"
UNKNOWN = "unknown"
#: each reason as the report prints it
REASON_TEXT = {FLAT: "flat: levelled off at the edge", OPEN: "open: still improving at the edge; widen the grid",
               UNKNOWN: "unknown: no score at the inner neighbour"}
KEYS = ["dataset", "method", "R"]


def flat_rule() -> str:
    """The rule, worded once for the report's section and claims."""
    return (f"the score sigma was chosen on (validation; test where the run chose on test), its median over the "
            f"seeds at the edge sigma and at its inner neighbour in the grid: \"{FLAT}\" when the edge is better "
            f"by less than {FLAT_EDGE_GAIN:.1%} of the neighbour's score (the curve has levelled off towards the "
            f"edge), \"{OPEN}\" when it is better by that or more (still improving at the edge: the best may lie "
            f"beyond, the point may be under-tuned)")


def edge_gain(scores: pd.DataFrame, sigma: float, edge: str, higher: bool) -> float:
    """The edge sigma's gain over its inner neighbour: `scores` are one (dataset, method, R)'s rows on the
    choosing split; the medians over the seeds both sigmas ran; a fraction of the neighbour's median in
    the metric's better direction. NaN when the neighbour has no score."""
    sigmas = sorted(scores["sigma"].unique())
    at = [s for s in sigmas if same_sigma(s, sigma)]
    if not at:
        return math.nan
    index = sigmas.index(at[0])
    inner = index + 1 if edge == "low" else index - 1
    if not 0 <= inner < len(sigmas):
        return math.nan
    edge_rows_, inner_rows = scores[scores["sigma"] == at[0]], scores[scores["sigma"] == sigmas[inner]]
    seeds = set(edge_rows_["seed"]) & set(inner_rows["seed"]) if "seed" in scores else None
    if seeds is not None:
        edge_rows_, inner_rows = edge_rows_[edge_rows_["seed"].isin(seeds)], inner_rows[inner_rows["seed"].isin(seeds)]
    if edge_rows_.empty or inner_rows.empty:
        return math.nan
    a, b = seed_statistic(edge_rows_["test_metric"]), seed_statistic(inner_rows["test_metric"])
    gain = (a - b) if higher else (b - a)
    return gain / abs(b) if b else gain


def reason_of(gain: float) -> str:
    """flat / open by FLAT_EDGE_GAIN, unknown for NaN."""
    if gain != gain:
        return UNKNOWN
    return FLAT if gain < FLAT_EDGE_GAIN else OPEN


def edge_reasons(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per chosen (dataset, method, R) at its grid's edge: dataset, method, R, sigma, sigma_edge,
    gain (`edge_gain`) and reason (`reason_of`). `rows` is a run's whole frame: the chosen test rows
    and the rows the choice read."""
    columns = [*KEYS, "sigma", "sigma_edge", "gain", "reason"]
    tested = test_rows(rows)
    if "selected" not in tested:
        return pd.DataFrame(columns=columns)
    at_edge = edge_rows(tested[tested["selected"].fillna(False).astype(bool)])
    validation = validation_rows(rows)
    out = []
    for (dataset, method, R), part in at_edge.groupby(KEYS, sort=True):
        on = str(part["selected_on"].iloc[0]) if "selected_on" in part else "validation"
        pool = tested if on == "test" else validation
        scores = pool[(pool["dataset"] == dataset) & (pool["method"] == method) & (pool["R"] == R)]
        sigma, edge = float(part["sigma"].iloc[0]), str(part["sigma_edge"].iloc[0])
        gain = edge_gain(scores, sigma, edge, higher_is_better(part)) if len(scores) else math.nan
        out.append([dataset, method, R, sigma, edge, gain, reason_of(gain)])
    return pd.DataFrame(out, columns=columns)
