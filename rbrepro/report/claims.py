"""Each claim of the paper as a rule: evidence computed from a results CSV, and a verdict.

A rule returns a `Finding`: the verdict (one of VERDICTS), the per-dataset evidence rows
(every number the report shows) and the thresholds it applied, written next to it here.
A claim holds when its test passes on every dataset it is judged on (on most, where the paper
says "in most cases" or "often"), holds partly when it passes on some, and does not hold when
it passes on none; "not judged" when the results hold nothing to judge it on. Every rule
reads the same rows: test rows of numpy draws (the band's), at the sigma the protocol chose
(`fidelity.chosen_sigma_rows`) wherever one sigma per R is needed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rbrepro.analysis.growth import LINEAR_SLOPE
from rbrepro.analysis.rows import LOAD_FLAG_CORES, disturbed_timings
from rbrepro.analysis.speedups import eq29_speedup, speedups
from rbrepro.analysis.targets import rows_reaching
from rbrepro.models.registry import RCD_BASELINE, SUBJECT
from rbrepro.report.fidelity import chosen_numpy_rows, numpy_test_rows

HOLDS, PARTLY, FAILS, NOT_JUDGED = "holds", "holds partly", "does not hold", "not judged"
VERDICTS = (HOLDS, PARTLY, FAILS, NOT_JUDGED)

# Claim 1 (§5.1, Fig. 3): train and test "coincidentally" improve with sigma, then diverge.
#: up to the best test sigma: Spearman correlation of train and test performance at least this
MOVE_TOGETHER = 0.8
#: at the largest sigma: train - test at least this many points, or train error below this share of test's
DIVERGE_POINTS, DIVERGE_SHARE = 5.0, 0.5
# Claim 2 (§5.1, Fig. 3): the best sigma's train time is "only slightly" above the cheapest sigma's.
SLIGHTLY_RATIO = 2.0
# Claim 3 (§5.1, Fig. 4): performance converges "almost linearly" with D as R grows.
#: log test error (100 - accuracy, or the relative error) against log D: a falling least-squares line
#: (slope below zero) that explains at least this share of the variance (R^2)
LINEAR_FIT_R2 = 0.9
# Claim 4 (§5.2, Fig. 5): RB ahead of every baseline at equal R "on all of these datasets,
# especially when R is relatively small". A dataset passes when RB leads at every R <= SMALL_R
# and at more than half of all R.
SMALL_R = 64
# Claim 5 (abstract, §5.2, Fig. 5): one to three orders of magnitude less time (and memory) to a target.
#: RB's time to a target against the fastest baseline's: at least this ratio (one order of magnitude)
ORDER_OF_MAGNITUDE = 10.0
# Claim 6 (§5.2): train time linear in R for all low-rank methods.
#: the log-log slope of train time against R (R >= LINEAR_FROM_R) within sweep.growth.LINEAR_SLOPE
LINEAR_FROM_R = 32
# Claim 7 (§1, §5.3, Fig. 6): parallel RCD speeds up almost linearly on RB, not at all on RF.
#: with the same variant (async, the authors'): RB's speedup at tau threads at least this share
#: of tau; RF's at most NO_SPEEDUP
ALMOST_LINEAR_SHARE, NO_SPEEDUP = 0.7, 1.2
VARIANT = "async"


@dataclass
class Finding:
    verdict: str
    header: list[str] = field(default_factory=list)
    rows: list[list] = field(default_factory=list)
    rule: str = ""
    note: str = ""   # the count the verdict follows from, printed beside it


def _overall(passed: list[bool], most: bool = False) -> str:
    """holds: every case passes (most: more than half); partly: some; fails: none."""
    if not passed:
        return NOT_JUDGED
    holds = sum(passed) > len(passed) / 2 if most else all(passed)
    return HOLDS if holds else PARTLY if any(passed) else FAILS


def quiet_note(rows: pd.DataFrame) -> str:
    """How many of the timed rows a timing claim reads were taken quiet (`disturbed_timings`)."""
    if rows.empty:
        return ""
    quiet = int((~disturbed_timings(rows)).sum())
    return (f"{quiet} of {len(rows)} timed rows it reads taken quiet: other processes' load at most "
            f"{LOAD_FLAG_CORES} cores, no cell beside")


def _is_accuracy(rows: pd.DataFrame) -> bool:
    return rows["metric"].iloc[0] == "accuracy"


def _rb_by_sigma(results: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """RB's rows per dataset, at the dataset's most-run R (Fig. 3 runs one R)."""
    rb = numpy_test_rows(results)
    rb = rb[rb["method"] == SUBJECT]
    out = {}
    for name, part in rb.groupby("dataset", sort=False):
        out[name] = part[part["R"] == part["R"].value_counts().idxmax()]
    return out


def claim1_coincide_then_diverge(results: pd.DataFrame) -> Finding:
    """Up to the best test sigma train and test move together; at the largest they have diverged."""
    out = Finding(NOT_JUDGED, ["dataset", "best test sigma", "train/test rank corr. up to it", "largest sigma",
                               "train", "test", "passes"],
                  rule=f"train and test move together up to the best test sigma (Spearman >= {MOVE_TOGETHER}; "
                       f"fewer than three sigmas there: judged on divergence alone), and have diverged at the "
                       f"largest sigma (train - test >= {DIVERGE_POINTS} points, or train error <= "
                       f"{DIVERGE_SHARE:.0%} of test's)")
    passed = []
    for name, part in _rb_by_sigma(results).items():
        g = part.groupby("sigma")[["train_metric", "test_metric"]].mean().sort_index()
        if len(g) < 2:
            continue
        acc = _is_accuracy(part)
        best = g["test_metric"].idxmax() if acc else g["test_metric"].idxmin()
        upto = g[g.index <= best]
        rho = float(upto["train_metric"].rank().corr(upto["test_metric"].rank())) if len(upto) >= 3 else float("nan")
        hi = g.iloc[-1]
        diverged = (hi.train_metric - hi.test_metric >= DIVERGE_POINTS) if acc else \
            (hi.train_metric <= DIVERGE_SHARE * hi.test_metric)
        ok = bool(diverged and (not np.isfinite(rho) or rho >= MOVE_TOGETHER))
        passed.append(ok)
        out.rows.append([name, best, rho, g.index[-1], hi.train_metric, hi.test_metric, "yes" if ok else "no"])
    out.verdict = _overall(passed)
    return out


def claim2_best_sigma_is_cheap(results: pd.DataFrame) -> Finding:
    """The train time at the best test sigma against the cheapest sigma's."""
    out = Finding(NOT_JUDGED, ["dataset", "best sigma", "its train s", "cheapest train s", "ratio", "passes"],
                  rule=f"train time at the best sigma at most {SLIGHTLY_RATIO:g}x the cheapest sigma's, on most "
                       f"datasets (the paper: \"in most of cases\")")
    passed = []
    for name, part in _rb_by_sigma(results).items():
        g = part.groupby("sigma")[["test_metric", "train_s"]].mean()
        best = g["test_metric"].idxmax() if _is_accuracy(part) else g["test_metric"].idxmin()
        ratio = g.loc[best, "train_s"] / g["train_s"].min()
        passed.append(bool(ratio <= SLIGHTLY_RATIO))
        out.rows.append([name, best, g.loc[best, "train_s"], g["train_s"].min(), ratio, "yes" if passed[-1] else "no"])
    out.verdict = _overall(passed, most=True)
    return out


def claim3_steady_convergence(results: pd.DataFrame) -> Finding:
    """log test error falls linearly in log D as R grows (Fig. 4)."""
    out = Finding(NOT_JUDGED, ["dataset", "R range", "test at smallest R", "test at largest R", "slope in log D",
                               "R^2", "passes"],
                  rule=f"least-squares line of log test error (100 - accuracy, or the relative error) on log D: "
                       f"slope below zero and R^2 >= {LINEAR_FIT_R2}")
    ok_rows = numpy_test_rows(results)
    passed = []
    for name, part in ok_rows[ok_rows["method"] == SUBJECT].groupby("dataset", sort=False):
        g = part.groupby("R")[["test_metric", "D"]].mean().sort_index()
        if len(g) < 3:
            continue
        error = 100.0 - g["test_metric"] if _is_accuracy(part) else g["test_metric"]
        x, y = np.log(g["D"].to_numpy(float)), np.log(np.maximum(error.to_numpy(float), 1e-12))
        slope, intercept = np.polyfit(x, y, 1)
        r2 = 1.0 - np.sum((y - (slope * x + intercept)) ** 2) / max(np.sum((y - y.mean()) ** 2), 1e-300)
        ok = bool(slope < 0 and r2 >= LINEAR_FIT_R2)
        passed.append(ok)
        out.rows.append([name, f"{g.index[0]}-{g.index[-1]}", g["test_metric"].iloc[0], g["test_metric"].iloc[-1],
                         float(slope), float(r2), "yes" if ok else "no"])
    out.verdict = _overall(passed)
    return out


def _means(chosen: pd.DataFrame) -> pd.DataFrame:
    """(dataset, method, R) -> test metric, train time and memory, mean over seeds (of `chosen_numpy_rows`)."""
    return chosen.groupby(["dataset", "method", "R"])[["test_metric", "train_s", "memory_model_entries"]].mean()


def claim4_ahead_at_equal_R(results: pd.DataFrame) -> Finding:
    """RB's test performance against the best baseline's at each R."""
    out = Finding(NOT_JUDGED, ["dataset", "R where RB leads", "R where a baseline leads (which)", "passes"],
                  rule=f"per dataset: RB ahead of every baseline at every R <= {SMALL_R} and at more than half of "
                       f"all R; holds when every dataset passes")
    chosen = chosen_numpy_rows(results)
    means, metrics = _means(chosen), chosen.groupby("dataset")["metric"].first()
    passed = []
    for name in dict.fromkeys(means.index.get_level_values(0)):
        part = means.loc[name]
        higher = metrics.get(name) == "accuracy"
        leads, behind, small_ok, n = [], [], True, 0
        for R in sorted(set(part.index.get_level_values("R"))):
            at = part.xs(R, level="R")["test_metric"]
            if "rb" not in at or len(at) < 2:
                continue
            others = at.drop("rb")
            best_other = others.idxmax() if higher else others.idxmin()
            rb_ahead = bool(at["rb"] > others.max() if higher else at["rb"] < others.min())
            n += 1
            small_ok &= rb_ahead or R > SMALL_R
            (leads if rb_ahead else behind).append(f"{R}" if rb_ahead else f"{R} ({best_other})")
        if not n:
            continue
        ok = small_ok and len(leads) > n / 2
        passed.append(ok)
        out.rows.append([name, ", ".join(leads) or "none", ", ".join(behind) or "none", "yes" if ok else "no"])
    out.verdict = _overall(passed)
    return out


def claim5_faster_to_target(results: pd.DataFrame, config: dict | None) -> Finding:
    """Per dataset and target: RB's least train time and memory to reach it against the baselines'."""
    out = Finding(NOT_JUDGED, ["dataset", "target", "RB s", "runs", "fastest baseline (s)", "time ratio",
                               "RB entries", "least baseline entries", "passes"],
                  rule=f"times are medians over the seeds (repeated runs) at each R; a target passes when RB reaches it at least {ORDER_OF_MAGNITUDE:g}x sooner than every "
                       f"baseline, or only RB reaches it, and with no more memory-model entries per point than any "
                       f"baseline that reaches it; holds when most targets pass (the paper: \"often\")")
    ok = chosen_numpy_rows(results)
    datasets = ((config or {}).get("datasets") or {})
    passed = []
    for name, part in ok.groupby("dataset", sort=False):
        higher = _is_accuracy(part)
        for target in (datasets.get(name) or {}).get("targets") or []:
            cost = {}
            for method, rows in part.groupby("method"):
                hit = rows_reaching(rows, target, higher)
                if len(hit):
                    fastest_R = hit["train_s"].idxmin()
                    cost[method] = (hit.loc[fastest_R, "train_s"], hit["memory_model_entries"].min(),
                                    int(hit.loc[fastest_R, "runs"]))
            if "rb" not in cost:
                out.rows.append([name, target, "not reached", "–", "–", "–", "–", "–", "no"])
                passed.append(False)
                continue
            others = {m: c for m, c in cost.items() if m != SUBJECT}
            if not others:
                out.rows.append([name, target, cost["rb"][0], cost["rb"][2], "none reaches it", "–", cost["rb"][1], "–",
                                 "yes"])
                passed.append(True)
                continue
            fastest = min(others, key=lambda m: others[m][0])
            ratio = others[fastest][0] / cost["rb"][0]
            least_memory = min(c[1] for c in others.values())
            passed.append(bool(ratio >= ORDER_OF_MAGNITUDE and cost["rb"][1] <= least_memory))
            out.rows.append([name, target, cost["rb"][0], cost["rb"][2], f"{fastest} ({others[fastest][0]:.3g})", ratio,
                             cost["rb"][1], least_memory, "yes" if passed[-1] else "no"])
    out.verdict = _overall(passed, most=True)
    out.note = quiet_note(ok)
    return out


def claim6_linear_in_R(results: pd.DataFrame) -> Finding:
    """The log-log slope of train time against R, per dataset and method."""
    out = Finding(NOT_JUDGED, ["dataset", "method", "slope", "passes"],
                  rule=f"least-squares slope of log train time on log R, R >= {LINEAR_FROM_R}, within "
                       f"[{LINEAR_SLOPE[0]}, {LINEAR_SLOPE[1]}]")
    means = _means(chosen_numpy_rows(results))
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
    out.note = quiet_note(chosen_numpy_rows(results))
    return out


def claim7_parallel_rcd(results: pd.DataFrame) -> Finding:
    """Speedup to the target objective at the most threads run, RB against RF, the same variant."""
    out = Finding(NOT_JUDGED, ["dataset", "threads", "RB speedup", "eq. 29 for RB", "RF speedup", "eq. 29 for RF",
                               "runs", "passes"],
                  rule=f"speedups are medians over the repeats (seeds); {VARIANT} variant on both: RB's speedup at tau threads >= {ALMOST_LINEAR_SHARE} tau and "
                       f"RF's <= {NO_SPEEDUP}; beside them eq. 29's speedup tau / (1 + (omega - 1)(tau - 1)/(D - 1)) "
                       f"for the measured omega (non-zeros per row: R for RB, D for RF) and D")
    ok = results[results["status"] == "ok"]
    passed = []
    for name, part in ok.groupby("dataset", sort=False):
        table = speedups(part)
        if table.empty or not np.isfinite(table["threads"].max()):
            continue
        tau = int(table["threads"].max())
        top = table[(table["threads"] == tau) & (table["variant"] == VARIANT)]
        rb, rf = top[top["method"] == SUBJECT]["speedup"], top[top["method"] == RCD_BASELINE]["speedup"]
        if tau < 2 or rb.empty or rf.empty or not (np.isfinite(rb.iloc[0]) and np.isfinite(rf.iloc[0])):
            continue
        ok_ = bool(rb.iloc[0] >= ALMOST_LINEAR_SHARE * tau and rf.iloc[0] <= NO_SPEEDUP)
        passed.append(ok_)
        rb_row, rf_row = top[top["method"] == SUBJECT].iloc[0], top[top["method"] == RCD_BASELINE].iloc[0]
        out.rows.append([name, tau, float(rb.iloc[0]), float(eq29_speedup(tau, rb_row["R"], rb_row["D"])),
                         float(rf.iloc[0]), float(eq29_speedup(tau, rf_row["D"], rf_row["D"])),
                         int(min(rb_row["runs"], rf_row["runs"])),
                         "yes" if ok_ else "no"])
    out.verdict = _overall(passed)
    return out


# Claim 0 (§3, Theorem 1, eq. 13): RB's objective gap falls as 1/(kappa R), ahead of RF's O(1/R).
#: a (dataset, sigma) passes when RB's gap slope against kappa R is -1 or steeper (rates.classify), the
#: mean gap stays under eq. 13's bound at every R, and RB's gap is below RF's (ratio >= 1) at equal R
THEOREM1_SLOPES = ("as claimed", "faster")


def claim0_theorem1(diagnostics: pd.DataFrame) -> Finding:
    """Theorem 1 on the `rbrepro diagnose` rows: per dataset and sigma, the fitted rate and the bound."""
    from rbrepro.theory.rates import CONFIDENCE, GAP_SLOPE, MAX_WIDTH, SLOPE_TOL, fit_rates, verdicts

    out = Finding(NOT_JUDGED, ["dataset", "sigma", "kappa", "RB gap slope vs kappa R", "rate", "eq. 13 bound held",
                               "RF/RB gap at equal R", "passes"],
                  rule=f"per (dataset, sigma): RB's gap slope against kappa R within {SLOPE_TOL} of {GAP_SLOPE:g} or "
                       f"steeper ({CONFIDENCE:.0%} bootstrap interval over seeds, at most {MAX_WIDTH} wide), the mean "
                       f"gap under eq. 13's bound at every R, and RB's gap below RF's at equal R; the claim holds when "
                       f"every dataset passes at every sigma, holds partly when at least one (dataset, sigma) passes, "
                       f"and does not hold when none does")
    if diagnostics.empty:
        return out
    rates = fit_rates(diagnostics)
    checks = verdicts(diagnostics, rates)
    per_dataset: dict[str, list[bool]] = {}
    for v in checks.itertuples():
        fit = rates[(rates["dataset"] == v.dataset) & (rates["sigma"] == v.sigma) & (rates["method"] == SUBJECT)
                    & (rates["quantity"] == "gap") & (rates["against"] == "kappa_R")]
        slope = "no fit" if fit.empty or not np.isfinite(fit["slope"].iloc[0]) else \
            f"{fit['slope'].iloc[0]:+.2f} [{fit['lo'].iloc[0]:+.2f}, {fit['hi'].iloc[0]:+.2f}]"
        ok = bool(v.rb_gap in THEOREM1_SLOPES and v.rb_bound_held is True and v.kappa_speedup != "< 1")
        per_dataset.setdefault(v.dataset, []).append(ok)
        out.rows.append([v.dataset, v.sigma, v.kappa, slope, v.rb_gap, v.rb_bound_held, v.rf_over_rb_gap,
                         "yes" if ok else "no"])
    out.verdict = theorem1_verdict(per_dataset)
    passing = sum(sum(v) for v in per_dataset.values())
    out.note = (f"{passing} of {sum(len(v) for v in per_dataset.values())} (dataset, sigma) pairs pass; "
                f"{sum(all(v) for v in per_dataset.values())} of {len(per_dataset)} datasets pass at every sigma")
    return out


def theorem1_verdict(per_dataset: dict[str, list[bool]]) -> str:
    """Claim 0's verdict, as its printed rule says: holds when every dataset passes at every sigma, holds
    partly when at least one (dataset, sigma) passes, does not hold when none does."""
    if not per_dataset:
        return NOT_JUDGED
    if all(all(v) for v in per_dataset.values()):
        return HOLDS
    return PARTLY if any(any(v) for v in per_dataset.values()) else FAILS
