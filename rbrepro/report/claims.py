"""Each claim of the paper as a rule: evidence computed from a results CSV, and a verdict.

A rule returns a `Finding`: the verdict (one of VERDICTS), the per-dataset evidence rows
(every number the report shows) and the thresholds it applied, written next to it here.
A claim holds when its test passes on every dataset it is judged on, holds partly when it
passes on some, and does not hold when it passes on none; "not judged" when the results
hold nothing to judge it on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rbrepro.plots.common import test_rows
from rbrepro.plots.fig5 import rows_reaching
from rbrepro.plots.fig6 import speedups

HOLDS, PARTLY, FAILS, NOT_JUDGED = "holds", "holds partly", "does not hold", "not judged"
VERDICTS = (HOLDS, PARTLY, FAILS, NOT_JUDGED)

# Claim 1 (§5.1, Fig. 3): train and test coincide at small sigma, then diverge.
#: at the smallest sigma: |train - test| at most this many accuracy points, or this share of the test error
COINCIDE_POINTS, COINCIDE_SHARE = 1.0, 0.10
#: at the largest sigma: train - test at least this many points, or train error below this share of test's
DIVERGE_POINTS, DIVERGE_SHARE = 5.0, 0.5
# Claim 2 (§5.1, Fig. 3): the best sigma's train time is "only slightly" above the cheapest sigma's.
SLIGHTLY_RATIO = 2.0
# Claim 3 (§5.1, Fig. 4): performance improves steadily as R (and D) grows.
#: Spearman rank correlation of test performance (higher is better) with D, at least
STEADY_RANK_CORRELATION = 0.8
# Claim 4 (§5.2, Fig. 5): RB ahead of every baseline at equal R, "especially when R is small".
#: the share of (dataset, R) where RB is ahead of every baseline for "holds"; "partly" above zero
AHEAD_SHARE = 0.9
SMALL_R = 64
# Claim 5 (abstract, §5.2, Fig. 5): one to three orders of magnitude less time (and memory) to a target.
#: RB's time to a target against the fastest baseline's: at least this ratio (one order of magnitude)
ORDER_OF_MAGNITUDE = 10.0
# Claim 6 (§5.2): train time linear in R for all low-rank methods.
#: the log-log slope of train time against R (R >= LINEAR_FROM_R) within this interval
LINEAR_SLOPE = (0.7, 1.3)
LINEAR_FROM_R = 32
# Claim 7 (§1, §5.3, Fig. 6): parallel RCD speeds up almost linearly on RB, not at all on RF.
#: RB's speedup at tau threads at least this share of tau; RF's at most NO_SPEEDUP
ALMOST_LINEAR_SHARE, NO_SPEEDUP = 0.7, 1.2


@dataclass
class Finding:
    verdict: str
    header: list[str] = field(default_factory=list)
    rows: list[list] = field(default_factory=list)
    rule: str = ""


def _overall(passed: list[bool]) -> str:
    if not passed:
        return NOT_JUDGED
    return HOLDS if all(passed) else PARTLY if any(passed) else FAILS


def _is_accuracy(rows: pd.DataFrame) -> bool:
    return rows["metric"].iloc[0] == "accuracy"


def _rb_by_sigma(results: pd.DataFrame) -> dict[str, pd.DataFrame]:
    ok = test_rows(results)
    rb = ok[ok["method"] == "rb"]
    if "rng" in rb:
        rb = rb[rb["rng"].fillna("numpy").replace("", "numpy") == "numpy"]
    return {name: part for name, part in rb.groupby("dataset", sort=False)}


def claim1_coincide_then_diverge(results: pd.DataFrame) -> Finding:
    """At the smallest sigma train and test coincide; at the largest they have diverged."""
    out = Finding(NOT_JUDGED, ["dataset", "sigma low", "train", "test", "sigma high", "train", "test", "passes"],
                  rule=f"coincide: |train - test| <= {COINCIDE_POINTS} points (accuracy) or <= {COINCIDE_SHARE:.0%} "
                       f"of the test error at the smallest sigma; diverge: train - test >= {DIVERGE_POINTS} points "
                       f"or train error <= {DIVERGE_SHARE:.0%} of test at the largest")
    passed = []
    for name, part in _rb_by_sigma(results).items():
        g = part.groupby("sigma")[["train_metric", "test_metric"]].mean().sort_index()
        lo, hi = g.iloc[0], g.iloc[-1]
        if _is_accuracy(part):
            ok = abs(lo.train_metric - lo.test_metric) <= COINCIDE_POINTS and \
                hi.train_metric - hi.test_metric >= DIVERGE_POINTS
        else:
            ok = abs(lo.train_metric - lo.test_metric) <= COINCIDE_SHARE * lo.test_metric and \
                hi.train_metric <= DIVERGE_SHARE * hi.test_metric
        passed.append(bool(ok))
        out.rows.append([name, g.index[0], lo.train_metric, lo.test_metric, g.index[-1], hi.train_metric,
                         hi.test_metric, "yes" if ok else "no"])
    out.verdict = _overall(passed)
    return out


def claim2_best_sigma_is_cheap(results: pd.DataFrame) -> Finding:
    """The train time at the best test sigma against the cheapest sigma's."""
    out = Finding(NOT_JUDGED, ["dataset", "best sigma", "its train s", "cheapest train s", "ratio", "passes"],
                  rule=f"train time at the best sigma at most {SLIGHTLY_RATIO:g}x the cheapest sigma's")
    passed = []
    for name, part in _rb_by_sigma(results).items():
        g = part.groupby("sigma")[["test_metric", "train_s"]].mean()
        best = g["test_metric"].idxmax() if _is_accuracy(part) else g["test_metric"].idxmin()
        ratio = g.loc[best, "train_s"] / g["train_s"].min()
        passed.append(bool(ratio <= SLIGHTLY_RATIO))
        out.rows.append([name, best, g.loc[best, "train_s"], g["train_s"].min(), ratio, "yes" if passed[-1] else "no"])
    out.verdict = _overall(passed)
    return out


def claim3_steady_convergence(results: pd.DataFrame) -> Finding:
    """Test performance rises with D as R grows (Fig. 4)."""
    out = Finding(NOT_JUDGED, ["dataset", "R range", "test at smallest R", "test at largest R", "rank corr. with D",
                               "passes"],
                  rule=f"Spearman correlation of test performance (higher is better) with D >= "
                       f"{STEADY_RANK_CORRELATION}")
    passed = []
    for name, part in test_rows(results).groupby("dataset", sort=False):
        g = part.groupby("R")[["test_metric", "D"]].mean().sort_index()
        if len(g) < 3:
            continue
        perf = g["test_metric"] if _is_accuracy(part) else -g["test_metric"]
        rho = float(perf.rank().corr(g["D"].rank()))
        passed.append(rho >= STEADY_RANK_CORRELATION)
        out.rows.append([name, f"{g.index[0]}-{g.index[-1]}", g["test_metric"].iloc[0], g["test_metric"].iloc[-1],
                         rho, "yes" if passed[-1] else "no"])
    out.verdict = _overall(passed)
    return out


def _chosen_means(results: pd.DataFrame) -> pd.DataFrame:
    """(dataset, method, R) -> test metric and train time, mean over seeds at the chosen sigma."""
    ok = test_rows(results)
    ok = ok[ok["method"] != "exact"]
    if "rng" in ok:
        ok = ok[ok["rng"].fillna("numpy").replace("", "numpy") == "numpy"]
    if "selected" in ok and ok["selected"].fillna(False).astype(bool).any():
        ok = ok[ok["selected"].fillna(False).astype(bool)]
    return ok.groupby(["dataset", "method", "R"])[["test_metric", "train_s", "memory_model_entries"]].mean()


def claim4_ahead_at_equal_R(results: pd.DataFrame) -> Finding:
    """RB's test performance against the best baseline's at each R."""
    out = Finding(NOT_JUDGED, ["dataset", "R where RB leads", "R where a baseline leads (which)", "passes"],
                  rule=f"RB ahead of every baseline at >= {AHEAD_SHARE:.0%} of the (dataset, R) points for "
                       f"'holds', at some for 'holds partly'; small R means R <= {SMALL_R}")
    means = _chosen_means(results)
    ahead_all = []
    for name in dict.fromkeys(means.index.get_level_values(0)):
        part = means.loc[name]
        higher = bool((test_rows(results).query("dataset == @name")["metric"] == "accuracy").any())
        leads, behind = [], []
        for R in sorted(set(part.index.get_level_values("R"))):
            at = part.xs(R, level="R")["test_metric"]
            if "rb" not in at or len(at) < 2:
                continue
            others = at.drop("rb")
            best_other = others.idxmax() if higher else others.idxmin()
            rb_ahead = at["rb"] > others.max() if higher else at["rb"] < others.min()
            ahead_all.append(bool(rb_ahead))
            (leads if rb_ahead else behind).append(f"{R}" if rb_ahead else f"{R} ({best_other})")
        out.rows.append([name, ", ".join(leads) or "none", ", ".join(behind) or "none", "yes" if not behind else "no"])
    share = np.mean(ahead_all) if ahead_all else np.nan
    out.verdict = NOT_JUDGED if not ahead_all else HOLDS if share >= AHEAD_SHARE else PARTLY if share > 0 else FAILS
    return out


def claim5_faster_to_target(results: pd.DataFrame, config: dict | None) -> Finding:
    """Per dataset and target: RB's least train time (and memory) to reach it against the best baseline's."""
    out = Finding(NOT_JUDGED, ["dataset", "target", "RB s", "fastest baseline (s)", "time ratio", "RB entries",
                               "least baseline entries", "passes"],
                  rule=f"RB reaches the target at least {ORDER_OF_MAGNITUDE:g}x sooner than every baseline, or only "
                       f"RB reaches it; 'holds partly' when that is true of some targets")
    ok = test_rows(results)
    ok = ok[ok["method"] != "exact"]
    if "selected" in ok and ok["selected"].fillna(False).astype(bool).any():
        ok = ok[ok["selected"].fillna(False).astype(bool)]
    if "rng" in ok:
        ok = ok[ok["rng"].fillna("numpy").replace("", "numpy") == "numpy"]
    datasets = ((config or {}).get("datasets") or {})
    passed = []
    for name, part in ok.groupby("dataset", sort=False):
        higher = _is_accuracy(part)
        for target in (datasets.get(name) or {}).get("targets") or []:
            cost = {}
            for method, rows in part.groupby("method"):
                hit = rows_reaching(rows, target, higher)
                if len(hit):
                    cost[method] = (hit["train_s"].min(), hit["memory_model_entries"].min())
            if "rb" not in cost:
                out.rows.append([name, target, "not reached", "–", "–", "–", "–", "no"])
                passed.append(False)
                continue
            others = {m: c for m, c in cost.items() if m != "rb"}
            if not others:
                out.rows.append([name, target, cost["rb"][0], "none reaches it", "–", cost["rb"][1], "–", "yes"])
                passed.append(True)
                continue
            fastest = min(others, key=lambda m: others[m][0])
            ratio = others[fastest][0] / cost["rb"][0]
            passed.append(bool(ratio >= ORDER_OF_MAGNITUDE))
            out.rows.append([name, target, cost["rb"][0], f"{fastest} ({others[fastest][0]:.3g})", ratio,
                             cost["rb"][1], min(c[1] for c in others.values()), "yes" if passed[-1] else "no"])
    out.verdict = _overall(passed)
    return out


def claim6_linear_in_R(results: pd.DataFrame) -> Finding:
    """The log-log slope of train time against R, per dataset and method."""
    out = Finding(NOT_JUDGED, ["dataset", "method", "slope", "passes"],
                  rule=f"least-squares slope of log train time on log R, R >= {LINEAR_FROM_R}, within "
                       f"[{LINEAR_SLOPE[0]}, {LINEAR_SLOPE[1]}]")
    means = _chosen_means(results)
    passed = []
    for (name, method), part in means.groupby(level=["dataset", "method"], sort=False):
        part = part.droplevel([0, 1])
        part = part[part.index >= LINEAR_FROM_R]
        if len(part) < 3:
            continue
        slope = float(np.polyfit(np.log(part.index.to_numpy(float)), np.log(part["train_s"].to_numpy()), 1)[0])
        ok = LINEAR_SLOPE[0] <= slope <= LINEAR_SLOPE[1]
        passed.append(ok)
        out.rows.append([name, method, slope, "yes" if ok else "no"])
    out.verdict = _overall(passed)
    return out


def claim7_parallel_rcd(results: pd.DataFrame) -> Finding:
    """Speedup to the target objective at the most threads run, RB against RF."""
    out = Finding(NOT_JUDGED, ["dataset", "threads", "RB speedup (variant)", "RF speedup (variant)", "passes"],
                  rule=f"RB's speedup at tau threads >= {ALMOST_LINEAR_SHARE} tau (some variant) and RF's "
                       f"<= {NO_SPEEDUP} (every variant)")
    ok = results[results["status"] == "ok"]
    passed = []
    for name, part in ok.groupby("dataset", sort=False):
        table = speedups(part)
        tau = int(table["threads"].max())
        if tau < 2:
            continue
        top = table[table["threads"] == tau]
        rb, rf = top[top["method"] == "rb"], top[top["method"] == "rf"]
        if rb.empty or rf.empty:
            continue
        best_rb = rb.loc[rb["speedup"].idxmax()]
        worst_rf = rf.loc[rf["speedup"].idxmax()]
        ok_ = best_rb["speedup"] >= ALMOST_LINEAR_SHARE * tau and (rf["speedup"] <= NO_SPEEDUP).all()
        passed.append(bool(ok_))
        out.rows.append([name, tau, f"{best_rb['speedup']:.2f} ({best_rb['variant']})",
                         f"{worst_rf['speedup']:.2f} ({worst_rf['variant']})", "yes" if ok_ else "no"])
    out.verdict = _overall(passed)
    return out
