"""Which rows count: successful rows on test data, the sigma the sweep chose, timings taken under
load, and the exact kernel's reference value (the same rules for figures, tables and report)."""

from __future__ import annotations

import re

import pandas as pd

from rbrepro.metrics import best_sigma, seed_statistic
from rbrepro.metrics import higher_is_better as _metric_higher_is_better
from rbrepro.models.registry import REFERENCE
from rbrepro.sweep.quiet import LOAD_FLAG_CORES, disturbed_timings  # noqa: F401 - re-exported: one rule, the sweep's


def test_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Successful rows evaluated on test data (sigma-selection rows are left out)."""
    if frame.empty:
        return frame
    keep = frame["status"] == "ok" if "status" in frame else pd.Series(True, index=frame.index)
    if "evaluate_on" in frame:
        keep &= frame["evaluate_on"].fillna("test") == "test"
    return frame[keep]


def validation_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Successful rows evaluated on validation data: the scores over sigma that sigma selection read
    (with `run: chosen` the only curve over sigma a sweep has; test holds the chosen sigma alone)."""
    if frame.empty or "evaluate_on" not in frame:
        return frame.iloc[:0]
    keep = frame["evaluate_on"].fillna("test") == "validation"
    if "status" in frame:
        keep &= frame["status"] == "ok"
    return frame[keep]


def chosen_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows sigma selection chose (`selected`, written by the sweep), or all rows when the
    sweep chose nothing (a grid: the reader picks, e.g. the best test value as the authors did)."""
    if "selected" in rows:
        chosen = rows["selected"].fillna(False).astype(bool)
        if chosen.any():
            return rows[chosen]
    return rows


def higher_is_better(rows: pd.DataFrame) -> bool:
    """Whether these rows' metric (one per frame: a dataset's) is better higher (`metrics.higher_is_better`)."""
    return _metric_higher_is_better(str(rows["metric"].iloc[0]))


def edge_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Chosen rows whose sigma sits at the edge of its grid (the choice may lie beyond it)."""
    if "sigma_edge" not in rows:
        return rows.iloc[:0]
    return rows[rows["sigma_edge"].fillna("").astype(str).isin(["low", "high"])]


def spread(rows: pd.DataFrame, x: str, column: str) -> pd.DataFrame:
    """At each x: the median of `column` over the seeds (the statistic every table, claim and figure
    reads), its seed band (min and max) and n, the number of rows."""
    return rows.groupby(x)[column].agg(["median", "min", "max", "size"]).rename(columns={"size": "n"}).sort_index()


def exact_reference(frame: pd.DataFrame, dataset: str) -> tuple[float | None, str]:
    """The exact kernel's test performance on `dataset` at its chosen sigma (the best test value
    when the sweep chose nothing), or a note why there is none: where the memory guard refused it,
    the estimate for the fit on every training row (the test rows' cell), not a validation split's."""
    ok = test_rows(frame)
    rows = ok[(ok["dataset"] == dataset) & (ok["method"] == REFERENCE)] if len(ok) else ok
    if len(rows):
        picked = chosen_rows(rows)
        kernel = f", {picked['kernel'].iloc[0]}" if "kernel" in picked and picked["kernel"].iloc[0] != "l1" else ""
        if picked is not rows:
            on = picked["selected_on"].iloc[0] if "selected_on" in picked else "validation"
            return seed_statistic(picked["test_metric"]), f"exact kernel{kernel} (sigma chosen on {on})"
        by_sigma = {s: list(g["test_metric"]) for s, g in rows.groupby("sigma")}
        best = best_sigma(by_sigma, str(rows["metric"].iloc[0]))
        return seed_statistic(by_sigma[best]), f"exact kernel{kernel} (best test)"
    refused = frame[(frame["dataset"] == dataset) & (frame["method"] == REFERENCE)] if "method" in frame else frame
    if len(refused) and "error" in refused:
        if "evaluate_on" in refused:  # the test rows' refusal first: the fit on every training row
            refused = refused.iloc[refused["evaluate_on"].fillna("test").ne("test").to_numpy().argsort(kind="stable")]
        for text in refused["error"].dropna().astype(str):
            match = re.search(r"on N = ([0-9]+) rows needs about ([0-9.]+ [GM]B)", text) or \
                re.search(r"()needs about ([0-9.]+ [GM]B)", text)
            if match:
                rows = f" ({int(match.group(1)):,} training rows)" if match.group(1) else ""
                return None, f"exact kernel: needs {match.group(2)}, not run{rows}"
    return None, "exact kernel: not in these results"
