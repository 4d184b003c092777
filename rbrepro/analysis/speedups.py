"""Parallel RCD's speedups (Fig. 6, claim 7): time to a target objective read from each cell's
trace, the speedup over the 1-thread cells, and eq. 29's prediction.

Speedup = time(1 thread) / time(tau threads) to reach F <= F* + eps (F(0) - F*), eps = 1e-3,
F* the best objective of the single-thread run(s) of the same seed. Each seed is its own draw of
features, so its target and its 1-thread time are its own; the pooled speedup is the median over
the seeds, with their band (min-max) and n.

A speedup is the product of two ratios, each read from the same traces: the epochs the 1-thread
run needs to reach the target over those the tau-thread run needs (how the parallel iterates
converge per pass), and the seconds per epoch, 1 thread over tau (how fast a pass runs). Eq. 29
bounds the expected progress per update; where a measured speedup exceeds it, these two say why.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from rbrepro.analysis.rows import test_rows

EPS = 1e-3


def time_to_target(trace: list, target: float) -> float:
    for t, f, *_ in trace:
        if f <= target:
            return float(t)
    return float("inf")


def epochs_to_target(trace: list, target: float) -> float:
    """The first epoch (0: the start) whose objective is at most `target` (inf: never)."""
    for epoch, (_, f, *_) in enumerate(trace):
        if f <= target:
            return float(epoch)
    return float("inf")


def seconds_per_epoch(trace: list) -> float:
    """Timed seconds per epoch over the whole trace (NaN for a trace without an epoch)."""
    return float(trace[-1][0]) / (len(trace) - 1) if len(trace) > 1 else float("nan")


def eq29_speedup(tau, omega: float, D: float):
    """Eq. 29-30: tau threads updating coordinates in parallel, each step damped by
    1 + (omega - 1)(tau - 1)/(D - 1) with omega the non-zeros per row, speed up by tau over that damping
    (RB: omega = R, so nearly tau when D >> R; RF: omega = D, so 1). NaN where D <= 1. tau: a number
    or an array."""
    if D <= 1:
        return tau * float("nan")
    return tau / (1.0 + (omega - 1.0) * (tau - 1.0) / (D - 1.0))


def _ratio(a: float, b: float) -> float:
    return a / b if np.isfinite(a) and np.isfinite(b) and b > 0 else float("nan")


def _speedups_of_one_draw(part: pd.DataFrame) -> list[dict]:
    """One method's cells of one seed (one draw of features): time and epochs to its own target
    objective F* + eps (F(0) - F*), seconds per epoch, and the speedup over its own 1-thread cell with
    its two factors, per (variant, threads). A run that never reaches the target has no speedup (NaN)
    and `reached` False; `has_base` says whether the seed has a 1-thread cell to compare with."""
    traces = [json.loads(t) for t in part["rcd_trace"]]
    single = (part["threads"] == 1).to_numpy()
    pool = [tr for tr, s in zip(traces, single) if s] if single.any() else traces
    f_star = min(min(p[1] for p in tr) for tr in pool)
    f0 = traces[0][0][1]
    target = f_star + EPS * (f0 - f_star)
    part = part.assign(time_to_target=[time_to_target(tr, target) for tr in traces],
                       epochs_to_target=[epochs_to_target(tr, target) for tr in traces],
                       seconds_per_epoch=[seconds_per_epoch(tr) for tr in traces])
    base = part[part["threads"] == 1] if single.any() else part.iloc[:0]
    base_t = base["time_to_target"].mean() if len(base) else np.nan
    base_e = base["epochs_to_target"].mean() if len(base) else np.nan
    base_s = base["seconds_per_epoch"].mean() if len(base) else np.nan
    out = []
    for (variant, threads), g in part.groupby(["variant", "threads"]):
        t, e, s = g["time_to_target"].mean(), g["epochs_to_target"].mean(), g["seconds_per_epoch"].mean()
        reached = bool(np.isfinite(t))
        out.append({"variant": "sequential" if threads == 1 else variant, "threads": threads, "time_to_target": t,
                    "speedup": base_t / t if reached and t > 0 else float("nan"), "reached": reached,
                    "has_base": bool(len(base)),
                    "epoch_ratio": _ratio(base_e, e) if reached else float("nan"),
                    "pass_ratio": _ratio(base_s, s), "D": g["D"].mean(), "R": g["R"].iloc[0]})
    return out


def per_seed_speedups(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (method, seed, variant, threads): `_speedups_of_one_draw`'s numbers, from the test
    rows alone (a sweep that chose sigma on validation also holds validation cells at other sigmas:
    they time a different problem and are no repeat of the chosen cell)."""
    rows = test_rows(rows)
    rows = rows if "seed" in rows else rows.assign(seed=0)
    out = [dict(one, method=method, seed=seed) for method, part in rows.groupby("method")
           for seed, cells in part.groupby("seed") for one in _speedups_of_one_draw(cells)]
    return pd.DataFrame(out)


def speedups(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (method, variant, threads): the median over the repeats (seeds) of the time to target, the
    speedup with its band (speedup_min, speedup_max) and its two factors over the seeds that reach the
    target (NaN where none does: "not reached" is no number), D's median; `runs` says how many seeds
    have a 1-thread cell to compare with, `reached` how many of them reach the target."""
    frame = per_seed_speedups(rows)
    out = []
    if frame.empty:
        return frame
    for (method, variant, threads), g in frame.groupby(["method", "variant", "threads"], sort=False):
        judged = g[g["has_base"]]  # a seed without a 1-thread cell has no speedup to pool
        reaching = judged[judged["reached"]]
        sp = reaching["speedup"]
        out.append({"method": method, "variant": variant, "threads": threads,
                    "time_to_target": float(g["time_to_target"].median()),
                    "speedup": float(sp.median()) if len(sp) else float("nan"),
                    "speedup_min": float(sp.min()) if len(sp) else float("nan"),
                    "speedup_max": float(sp.max()) if len(sp) else float("nan"),
                    "epoch_ratio": float(reaching["epoch_ratio"].median()) if len(reaching) else float("nan"),
                    "pass_ratio": float(reaching["pass_ratio"].median()) if len(reaching) else float("nan"),
                    "D": float(g["D"].median()), "R": g["R"].iloc[0], "runs": len(judged),
                    "reached": len(reaching)})
    return pd.DataFrame(out)
