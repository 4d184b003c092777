"""bench.peers' ladder and targets, pure (tests/test_bench_peers.py runs them on toy functions): the
targets an exact kernel's metric sets, a competitor's climb up R to them, and its rows per target."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from rbrepro.metrics import higher_is_better

RS = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
POINTS = (0.5, 1.0, 2.0)  # target slack in points of the metric (relative error: x 0.01)


def meets(metric: float, target: float, higher_is_better: bool) -> bool:
    return metric >= target if higher_is_better else metric <= target


def targets_from(exact_metric: float, higher_is_better: bool) -> list[tuple[str, float]]:
    """The three targets: exact - 0.5 / 1 / 2 points (accuracy %), exact + 0.005 / 0.01 / 0.02 (relative error)."""
    if higher_is_better:
        return [(f"exact - {p:g} pt", exact_metric - p) for p in POINTS]
    return [(f"exact + {p:g} pt", exact_metric + p / 100.0) for p in POINTS]


@dataclass
class Outcome:
    """One competitor on one dataset: its ladder [(R, fit_s, metric)], and per target the
    reaching R (None: not reached) with the fit times at that R."""
    method: str
    config: str = ""
    ladder: list = field(default_factory=list)
    reached: dict = field(default_factory=dict)   # target value -> R or None
    times: dict = field(default_factory=dict)     # R -> [fit seconds]
    metric_at: dict = field(default_factory=dict)  # R -> test metric
    note: str = ""


def climb(fit_score, targets: list[float], higher_is_better: bool, rs=RS, budget_s: float = 60.0,
          repeats: int = 3, method: str = "", config: str = "") -> Outcome:
    """Fit at R = rs[0], rs[1], ... (fit_score(R) -> (fit_s, metric)) until every target is
    reached or a fit takes longer than budget_s; then refit at each reaching R until it has
    `repeats` times (the ladder's fit counts as the first)."""
    out = Outcome(method, config)
    out.reached = {t: None for t in targets}
    for R in rs:
        fit_s, metric = fit_score(R)
        out.ladder.append((R, fit_s, metric))
        out.times[R], out.metric_at[R] = [fit_s], metric
        for t in targets:
            if out.reached[t] is None and meets(metric, t, higher_is_better):
                out.reached[t] = R
        if all(r is not None for r in out.reached.values()):
            break
        if fit_s > budget_s:
            out.note = f"ladder ended after R = {R}: one fit took {fit_s:.1f} s > budget {budget_s:g} s"
            break
    for R in sorted({r for r in out.reached.values() if r is not None}):
        while len(out.times[R]) < repeats:
            out.times[R].append(fit_score(R)[0])
    return out


def single(times: list[float], metric: float, targets: list[float], higher_is_better: bool, method: str,
           config: str = "", note: str = "") -> Outcome:
    """A competitor without R (the exact kernel): one size, reaching a target or not."""
    out = Outcome(method, config, ladder=[(None, statistics.median(times), metric)], note=note)
    out.times[None], out.metric_at[None] = list(times), metric
    out.reached = {t: (None if not meets(metric, t, higher_is_better) else "-") for t in targets}
    return out


def skipped(method: str, why: str) -> Outcome:
    return Outcome(method, note=why)


def rows_of(dataset: str, metric_name: str, targets: list[tuple[str, float]], outcome: Outcome,
            machine: dict) -> list[dict]:
    rows = []
    for name, value in targets:
        base = {"dataset": dataset, "target": name, "target_value": value, "metric": metric_name,
                "method": outcome.method, "config": outcome.config, "note": outcome.note, **machine}
        if not outcome.ladder:  # skipped
            rows.append({**base, "reached_R": "not run"})
            continue
        R = outcome.reached.get(value)
        if R is None:
            metrics_seen = [m for _, _, m in outcome.ladder]  # the best it got, on the largest R tried
            best = max(metrics_seen) if higher_is_better(metric_name) else min(metrics_seen)
            rows.append({**base, "reached_R": "not reached", "test_metric": best, "repeats": 0})
            continue
        key = None if R == "-" else R
        ts = outcome.times[key]
        rows.append({**base, "reached_R": R, "median_s": statistics.median(ts), "min_s": min(ts), "max_s": max(ts),
                     "test_metric": outcome.metric_at[key], "repeats": len(ts)})
    return rows
