"""Parallel RCD's speedups (Fig. 6, claim 7): time to a target objective read from each cell's
trace, the speedup over the 1-thread cells, and eq. 29's prediction.

Speedup = time(1 thread) / time(tau threads) to reach F <= F* + eps (F(0) - F*), eps = 1e-3,
F* the best objective of the single-thread run(s) of the same seed; with several seeds (repeats)
each time and speedup is the median over them.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

EPS = 1e-3


def time_to_target(trace: list, target: float) -> float:
    for t, f in trace:
        if f <= target:
            return float(t)
    return float("inf")


def eq29_speedup(tau, omega: float, D: float):
    """Eq. 29-30: tau threads updating coordinates in parallel, each step damped by
    1 + (omega - 1)(tau - 1)/(D - 1) with omega the non-zeros per row, speed up by tau over that damping
    (RB: omega = R, so nearly tau when D >> R; RF: omega = D, so 1). NaN where D <= 1. tau: a number
    or an array."""
    if D <= 1:
        return tau * float("nan")
    return tau / (1.0 + (omega - 1.0) * (tau - 1.0) / (D - 1.0))


def _speedups_of_one_draw(part: pd.DataFrame) -> list[dict]:
    """One method's cells of one seed (one draw of features): time to its own target objective
    F* + eps (F(0) - F*) and speedup over its own 1-thread cell, per (variant, threads)."""
    traces = [json.loads(t) for t in part["rcd_trace"]]
    single = (part["threads"] == 1).to_numpy()
    pool = [tr for tr, s in zip(traces, single) if s] if single.any() else traces
    f_star = min(min(f for _, f in tr) for tr in pool)
    f0 = traces[0][0][1]
    target = f_star + EPS * (f0 - f_star)
    part = part.assign(time_to_target=[time_to_target(tr, target) for tr in traces])
    base = part[part["threads"] == 1]["time_to_target"].mean() if single.any() else np.nan
    out = []
    for (variant, threads), g in part.groupby(["variant", "threads"]):
        t = g["time_to_target"].mean()
        out.append({"variant": "sequential" if threads == 1 else variant, "threads": threads, "time_to_target": t,
                    "speedup": base / t if np.isfinite(t) and t > 0 else 0.0, "D": g["D"].mean(),
                    "R": g["R"].iloc[0]})
    return out


def speedups(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (method, variant, threads): time to target and speedup over the 1-thread cells, each the
    median over the repeats (seeds; `runs` says how many). Each seed is its own draw of features, so
    its target and its 1-thread time are its own, and only the ratios are pooled."""
    out = []
    rows = rows if "seed" in rows else rows.assign(seed=0)
    for method, part in rows.groupby("method"):
        per_seed = [dict(one, seed=seed) for seed, cells in part.groupby("seed")
                    for one in _speedups_of_one_draw(cells)]
        frame = pd.DataFrame(per_seed)
        for (variant, threads), g in frame.groupby(["variant", "threads"], sort=False):
            judged = g[np.isfinite(g["speedup"])]  # a seed without a 1-thread cell has no speedup to pool
            out.append({"method": method, "variant": variant, "threads": threads,
                        "time_to_target": float(g["time_to_target"].median()),
                        "speedup": float(judged["speedup"].median()) if len(judged) else float("nan"),
                        "D": g["D"].mean(), "R": g["R"].iloc[0], "runs": len(judged),
                        "reached": int((judged["speedup"] > 0).sum())})
    return pd.DataFrame(out)
