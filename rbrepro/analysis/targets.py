"""Reaching a target performance: per R, which rows reach it, the least cost among them, and
Fig. 5's default targets (shared by the figure, its tables and claims 5)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def rows_reaching(rows: pd.DataFrame, target: float, better_high: bool,
                  columns: tuple[str, ...] = ("train_s", "memory_model_entries")) -> pd.DataFrame:
    """Per R, the median over seeds (the repeated runs) of the test performance and of each cost
    column, and `runs`, how many rows; only the R whose median reaches `target` (the figure, the
    tables and claim 5 alike)."""
    grouped = rows.groupby("R")
    table = grouped[list(columns)].median()
    table.insert(0, "test_metric", grouped["test_metric"].median())
    table["runs"] = grouped.size()
    return table[table["test_metric"] >= target] if better_high else table[table["test_metric"] <= target]


def cheapest(rows: pd.DataFrame, targets: list[float], better_high: bool, column: str) -> list[float]:
    """Per target, the least `column` (train time, memory) among the R that reach it (NaN: none does)."""
    out = []
    for t in targets:
        hit = rows_reaching(rows, t, better_high, (column,))
        out.append(hit[column].min() if len(hit) else np.nan)
    return out


def at_fastest(rows: pd.DataFrame, targets: list[float], better_high: bool, column: str) -> list[float]:
    """Per target, `column` (memory) at the R whose median train time is the least among the R that reach
    it: the R claim 5 and the report's target tables read both numbers at (NaN: none reaches it)."""
    out = []
    for t in targets:
        hit = rows_reaching(rows, t, better_high, ("train_s", column))
        out.append(float(hit.loc[hit["train_s"].idxmin(), column]) if len(hit) else np.nan)
    return out


def ladder(values: np.ndarray, higher_better: bool, n: int = 3) -> list[float]:
    """Default Fig. 5 targets: n levels from the best worst-case up to the performance every
    method reaches (values: per method, (worst, best))."""
    worst = np.array([v[0] for v in values])
    best = np.array([v[1] for v in values])
    if higher_better:
        top, bottom = best.min(), worst.max()
        return list(np.linspace(min(bottom, top), top, n)) if bottom < top else [float(top)]
    top, bottom = best.max(), worst.min()
    return list(np.linspace(max(bottom, top), top, n)) if bottom > top else [float(top)]


def targets_for(rows: pd.DataFrame, configured: list[float], better_high: bool) -> list[float]:
    """The configured targets of a dataset, else the `ladder` over each method's median performance
    per R (its worst and best)."""
    if configured:
        return list(configured)
    per_method = [(g.groupby("R")["test_metric"].median().agg(["min", "max"])) for _, g in rows.groupby("method")]
    pairs = [(s["min"], s["max"]) if better_high else (s["max"], s["min"]) for s in per_method]
    return ladder(np.array(pairs), better_high)
