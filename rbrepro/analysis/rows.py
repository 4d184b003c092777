"""Which rows count: successful rows on test data, the sigma the sweep chose and timings taken under
load (the same rules for figures, tables and report; the chosen sigma's rows and the exact kernel's
reference value are in analysis.chosen)."""

from __future__ import annotations

import pandas as pd

from rbrepro.metrics import higher_is_better as _metric_higher_is_better


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
    return rows[rows["sigma_edge"].astype(object).where(rows["sigma_edge"].notna(), "").astype(str)
                .isin(["low", "high"])]


def spread(rows: pd.DataFrame, x: str, column: str) -> pd.DataFrame:
    """At each x: the median of `column` over the seeds (the statistic every table, claim and figure
    reads), its seed band (min and max) and n, the number of rows."""
    return rows.groupby(x)[column].agg(["median", "min", "max", "size"]).rename(columns={"size": "n"}).sort_index()
