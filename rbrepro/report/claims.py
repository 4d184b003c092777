"""Each claim of the paper as a rule: evidence computed from a results CSV, and a verdict.

A rule returns a `Finding`: the verdict (one of VERDICTS), its cases (one pass or fail each),
the evidence rows (every number the report shows) and the thresholds it applied, written next to
it here. Every claim is judged by the same strict count over its cases (`verdict_of`): it holds
when at least HOLDS_SHARE of them pass, holds partly when at least PARTLY_SHARE do, and does not
hold otherwise; "not judged" when the results hold nothing to judge it on.

One statistic throughout: at each setting, the median over the seeds (repeated runs) with their
band (min-max) and n (`metrics.seed_statistic`, `analysis.rows.spread`), read at the sigma the
protocol chose (`analysis.chosen.chosen_sigma_rows`: on validation data for the fair protocol, the
authors' pick on test for theirs). Claim 0 alone reads the mean: Theorem 1 bounds an expected gap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rbrepro.analysis.chosen import chosen_numpy_rows, chosen_sigma_rows, draws_of, most_run_R, numpy_test_rows
from rbrepro.analysis.rows import higher_is_better, test_rows
from rbrepro.analysis.speedups import eq29_speedup, speedups
from rbrepro.analysis.targets import rows_reaching
from rbrepro.models.registry import SUBJECT, rcd_baseline
from rbrepro.report.markdown import band
from rbrepro.sweep.growth import LINEAR_SLOPE
from rbrepro.sweep.quiet import LOAD_FLAG_CORES, disturbed_timings

HOLDS, PARTLY, FAILS, NOT_JUDGED = "holds", "holds partly", "does not hold", "not judged"
VERDICTS = (HOLDS, PARTLY, FAILS, NOT_JUDGED)
#: the verdict's thresholds, the same for every claim: the share of its cases that pass
HOLDS_SHARE, PARTLY_SHARE = 0.8, 0.5

# Claim 1 (§5.1, Fig. 3): train and test "coincidentally" improve with sigma, then diverge.
#: up to the chosen sigma: Spearman correlation of train and test performance at least this
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
    note: str = ""     # what else the verdict's line says (how many timings were quiet)
    cases: str = "cases"
    passed: list[bool] = field(default_factory=list)

    def judge(self, ok: bool) -> str:
        """Record one case's outcome; returns its cell for the `passes` column."""
        self.passed.append(bool(ok))
        return "yes" if ok else "no"

    def close(self) -> Finding:
        self.verdict = verdict_of(self.passed)
        return self

    @property
    def count(self) -> str:
        """"k of n <cases> pass", the count the verdict follows from ("" before any case)."""
        return f"{sum(self.passed)} of {len(self.passed)} {self.cases} pass" if self.passed else ""


def verdict_of(passed: list[bool]) -> str:
    """holds: at least HOLDS_SHARE of the cases pass; partly: at least PARTLY_SHARE; else does not hold."""
    if not passed:
        return NOT_JUDGED
    share = sum(passed) / len(passed)
    return HOLDS if share >= HOLDS_SHARE else PARTLY if share >= PARTLY_SHARE else FAILS


def verdict_rule(cases: str) -> str:
    """The printed thresholds of `verdict_of`, for a claim whose cases are `cases`."""
    return (f"the claim holds when at least {HOLDS_SHARE:.0%} of its {cases} pass, holds partly when at least "
            f"{PARTLY_SHARE:.0%} do, and does not hold otherwise")


def quiet_note(rows: pd.DataFrame) -> str:
    """How many of the timed rows a timing claim reads were taken quiet (`disturbed_timings`)."""
    if rows.empty:
        return ""
    quiet = int((~disturbed_timings(rows)).sum())
    return (f"{quiet} of {len(rows)} timed rows it reads taken quiet: other processes' load at most "
            f"{LOAD_FLAG_CORES} cores, no cell beside")


def _fig3_rb(results: pd.DataFrame) -> dict[str, tuple[pd.DataFrame, float, str]]:
    """Per dataset: RB's numpy-draw test rows at the dataset's most-run R (Fig. 3 runs one R), the
    sigma the protocol chose there (`chosen_sigma_rows`), and on what it was chosen."""
    ok = test_rows(results)
    rb = ok[ok["method"] == SUBJECT]
    out = {}
    for name, part in rb.groupby("dataset", sort=False):
        part = part[part["R"] == most_run_R(part)]
        chosen = chosen_sigma_rows(part)
        seeded = part[draws_of(part) == "numpy"]
        if chosen.empty or seeded.empty:
            continue
        on = str(chosen["selected_on"].dropna().iloc[0]) if "selected_on" in chosen and \
            chosen["selected_on"].notna().any() else "test"
        out[name] = (seeded, float(chosen["sigma"].iloc[0]), on)
    return out


def claim1_coincide_then_diverge(results: pd.DataFrame) -> Finding:
    """Up to the chosen sigma train and test move together; at the largest they have diverged."""
    out = Finding(NOT_JUDGED, ["dataset", "chosen sigma (on)", "train/test rank corr. up to it", "largest sigma",
                               "train", "test", "seeds", "passes"], cases="datasets",
                  rule=f"per dataset, on the medians over seeds at each sigma: train and test move together up to "
                       f"the sigma the protocol chose (Spearman >= {MOVE_TOGETHER}; fewer than three sigmas there: "
                       f"judged on divergence alone), and have diverged at the largest sigma (train - test >= "
                       f"{DIVERGE_POINTS} points, or train error <= {DIVERGE_SHARE:.0%} of test's); "
                       + verdict_rule("datasets"))
    for name, (part, chosen, on) in _fig3_rb(results).items():
        g = part.groupby("sigma")[["train_metric", "test_metric"]].median().sort_index()
        if len(g) < 2:
            continue
        acc = higher_is_better(part)
        upto = g[g.index <= chosen * (1 + 1e-9)]
        rho = float(upto["train_metric"].rank().corr(upto["test_metric"].rank())) if len(upto) >= 3 else float("nan")
        hi = g.iloc[-1]
        diverged = (hi.train_metric - hi.test_metric >= DIVERGE_POINTS) if acc else \
            (hi.train_metric <= DIVERGE_SHARE * hi.test_metric)
        top = part[np.isclose(part["sigma"], g.index[-1])]
        passes = out.judge(bool(diverged and (not np.isfinite(rho) or rho >= MOVE_TOGETHER)))
        out.rows.append([name, f"{chosen:g} ({on})", rho, g.index[-1], band(top["train_metric"]),
                         band(top["test_metric"]), int(part.groupby("sigma").size().min()), passes])
    return out.close()


def claim2_best_sigma_is_cheap(results: pd.DataFrame) -> Finding:
    """The train time at the chosen sigma against the cheapest sigma's, medians over seeds."""
    out = Finding(NOT_JUDGED, ["dataset", "chosen sigma (on)", "its train s", "cheapest sigma", "its train s",
                               "ratio of medians", "seeds", "passes"], cases="datasets",
                  rule=f"per dataset: the median train time at the sigma the protocol chose at most "
                       f"{SLIGHTLY_RATIO:g}x the least median train time over sigma (the paper: \"in most of "
                       f"cases\"); " + verdict_rule("datasets"))
    for name, (part, chosen, on) in _fig3_rb(results).items():
        med = part.groupby("sigma")["train_s"].median()
        at = med.index[np.isclose(med.index, chosen)]
        if at.empty:
            continue
        cheapest = med.idxmin()
        ratio = float(med.loc[at[0]] / med.min())
        out.rows.append([name, f"{chosen:g} ({on})", band(part[np.isclose(part["sigma"], chosen)]["train_s"]),
                         cheapest, band(part[np.isclose(part["sigma"], cheapest)]["train_s"]), ratio,
                         int(part.groupby("sigma").size().min()), out.judge(ratio <= SLIGHTLY_RATIO)])
    out.note = quiet_note(numpy_test_rows(results)[lambda r: r["method"] == SUBJECT])
    return out.close()


def claim3_steady_convergence(results: pd.DataFrame) -> Finding:
    """log test error falls linearly in log D as R grows (Fig. 4), medians over seeds."""
    out = Finding(NOT_JUDGED, ["dataset", "R range", "test at smallest R", "test at largest R", "slope in log D",
                               "R^2", "seeds", "passes"], cases="datasets",
                  rule=f"per dataset, on the medians over seeds at each R: the least-squares line of log test error "
                       f"(100 - accuracy, or the relative error) on log D falls (slope below zero) and fits "
                       f"(R^2 >= {LINEAR_FIT_R2}); " + verdict_rule("datasets"))
    ok_rows = numpy_test_rows(results)
    for name, part in ok_rows[ok_rows["method"] == SUBJECT].groupby("dataset", sort=False):
        g = part.groupby("R")[["test_metric", "D"]].median().sort_index()
        if len(g) < 3:
            continue
        error = 100.0 - g["test_metric"] if higher_is_better(part) else g["test_metric"]
        x, y = np.log(g["D"].to_numpy(float)), np.log(np.maximum(error.to_numpy(float), 1e-12))
        slope, intercept = np.polyfit(x, y, 1)
        r2 = 1.0 - np.sum((y - (slope * x + intercept)) ** 2) / max(np.sum((y - y.mean()) ** 2), 1e-300)
        low, high = part[part["R"] == g.index[0]], part[part["R"] == g.index[-1]]
        out.rows.append([name, f"{g.index[0]}-{g.index[-1]}", band(low["test_metric"]), band(high["test_metric"]),
                         float(slope), float(r2), int(part.groupby("R").size().min()),
                         out.judge(bool(slope < 0 and r2 >= LINEAR_FIT_R2))])
    return out.close()


def _medians(chosen: pd.DataFrame) -> pd.DataFrame:
    """(dataset, method, R) -> test metric, train time and memory: medians over seeds (of `chosen_numpy_rows`)."""
    return chosen.groupby(["dataset", "method", "R"])[["test_metric", "train_s", "memory_model_entries"]].median()


def claim4_ahead_at_equal_R(results: pd.DataFrame) -> Finding:
    """RB's median test performance against the best baseline's at each R."""
    out = Finding(NOT_JUDGED, ["dataset", "R where RB leads", "R where a baseline leads (which: its median vs RB's)",
                               "seeds", "passes"], cases="datasets",
                  rule=f"per dataset, on the medians over seeds at the chosen sigma: RB ahead of every baseline at "
                       f"every R <= {SMALL_R} and at more than half of all R; " + verdict_rule("datasets"))
    chosen = chosen_numpy_rows(results)
    medians = _medians(chosen)
    for name in dict.fromkeys(medians.index.get_level_values(0)):
        part = medians.loc[name]
        higher = higher_is_better(chosen[chosen["dataset"] == name])
        leads, behind, small_ok, n = [], [], True, 0
        for R in sorted(set(part.index.get_level_values("R"))):
            at = part.xs(R, level="R")["test_metric"]
            if SUBJECT not in at or len(at) < 2:
                continue
            others = at.drop(SUBJECT)
            best_other = others.idxmax() if higher else others.idxmin()
            rb_ahead = bool(at[SUBJECT] > others.max() if higher else at[SUBJECT] < others.min())
            n += 1
            small_ok &= rb_ahead or R > SMALL_R
            if rb_ahead:
                leads.append(f"{R}")
            else:
                behind.append(f"{R} ({best_other}: {others[best_other]:.4g} vs {at[SUBJECT]:.4g})")
        if not n:
            continue
        seeds = int(chosen[chosen["dataset"] == name].groupby(["method", "R"]).size().min())
        out.rows.append([name, ", ".join(leads) or "none", ", ".join(behind) or "none", seeds,
                         out.judge(small_ok and len(leads) > n / 2)])
    return out.close()


def _costs_to_targets(results: pd.DataFrame, config: dict | None):
    """Per (dataset, target): each method's least median train time over the R whose median reaches the
    target, the least median memory there and the seeds behind it (`rows_reaching`), and the direction."""
    ok = chosen_numpy_rows(results)
    datasets = ((config or {}).get("datasets") or {})
    for name, part in ok.groupby("dataset", sort=False):
        higher = higher_is_better(part)
        for target in (datasets.get(name) or {}).get("targets") or []:
            cost = {}
            for method, rows in part.groupby("method"):
                hit = rows_reaching(rows, target, higher)
                if len(hit):
                    fastest_R = hit["train_s"].idxmin()
                    cost[method] = (float(hit.loc[fastest_R, "train_s"]), float(hit["memory_model_entries"].min()),
                                    int(hit.loc[fastest_R, "runs"]), int(fastest_R))
            best = part.groupby(["method", "R"])["test_metric"].median().groupby("method")
            yield name, target, cost, (best.max() if higher else best.min())


def claim5_faster_to_target(results: pd.DataFrame, config: dict | None) -> Finding:
    """Targets that RB and a baseline both reach: RB's least train time and memory against the baselines'."""
    out = Finding(NOT_JUDGED, ["dataset", "target", "RB s (R)", "seeds", "fastest baseline s (R)", "time ratio",
                               "RB entries", "least baseline entries", "passes"],
                  cases="targets that RB and a baseline both reach",
                  rule=f"the paper's ratio, on the targets that RB and at least one baseline reach: per method the "
                       f"least median train time over the R whose median test performance reaches the target; a "
                       f"target passes when RB reaches it at least {ORDER_OF_MAGNITUDE:g}x sooner than every "
                       f"baseline that does, with no more memory-model entries per point than any of them; "
                       + verdict_rule("targets"))
    for name, target, cost, _ in _costs_to_targets(results, config):
        others = {m: c for m, c in cost.items() if m != SUBJECT}
        if SUBJECT not in cost or not others:
            continue
        rb = cost[SUBJECT]
        fastest = min(others, key=lambda m: others[m][0])
        ratio = others[fastest][0] / rb[0]
        least_memory = min(c[1] for c in others.values())
        out.rows.append([name, target, f"{rb[0]:.4g} ({rb[3]})", rb[2],
                         f"{fastest} {others[fastest][0]:.3g} ({others[fastest][3]})", ratio, rb[1], least_memory,
                         out.judge(ratio >= ORDER_OF_MAGNITUDE and rb[1] <= least_memory)])
    out.note = quiet_note(chosen_numpy_rows(results))
    return out.close()


def claim5b_reaches_alone(results: pd.DataFrame, config: dict | None) -> Finding:
    """Of the targets any method reaches, those RB alone reaches at the R swept."""
    out = Finding(NOT_JUDGED, ["dataset", "target", "RB s (R)", "seeds", "RB entries",
                               "best baseline median (which)", "passes"],
                  cases="targets some method reaches",
                  rule="a different claim from the paper's ratio: on the targets at least one method reaches (its "
                       "median test performance at some R swept), a target passes when RB reaches it and no baseline "
                       "does; " + verdict_rule("targets"))
    for name, target, cost, best in _costs_to_targets(results, config):
        if not cost:
            continue
        baselines = best.drop(SUBJECT, errors="ignore")
        higher = higher_is_better(chosen_numpy_rows(results)[lambda r: r["dataset"] == name])
        which = (baselines.idxmax() if higher else baselines.idxmin()) if len(baselines) else None
        rb = cost.get(SUBJECT)
        alone = rb is not None and not any(m != SUBJECT for m in cost)
        out.rows.append([name, target, "not reached" if rb is None else f"{rb[0]:.4g} ({rb[3]})",
                         "–" if rb is None else rb[2], "–" if rb is None else rb[1],
                         "–" if which is None else f"{baselines[which]:.4g} ({which})", out.judge(alone)])
    return out.close()


def _slope(R: np.ndarray, seconds: np.ndarray) -> float:
    keep = (R >= LINEAR_FROM_R) & np.isfinite(seconds) & (seconds > 0)
    if keep.sum() < 3:
        return float("nan")
    return float(np.polyfit(np.log(R[keep]), np.log(seconds[keep]), 1)[0])


def claim6_linear_in_R(results: pd.DataFrame) -> Finding:
    """The log-log slope of the median train time against R, per dataset and method; beside it the
    band of the slopes fitted to each seed alone."""
    out = Finding(NOT_JUDGED, ["dataset", "method", "slope of medians", "per-seed slopes", "seeds", "passes"],
                  cases="(dataset, method) pairs",
                  rule=f"the least-squares slope of log median train time on log R, R >= {LINEAR_FROM_R}, within "
                       f"[{LINEAR_SLOPE[0]}, {LINEAR_SLOPE[1]}]; beside it, the band of the same slope fitted to "
                       f"each seed's times alone; " + verdict_rule("(dataset, method) pairs"))
    chosen = chosen_numpy_rows(results)
    medians = _medians(chosen)
    for (name, method), part in medians.groupby(level=["dataset", "method"], sort=False):
        part = part.droplevel([0, 1])
        slope = _slope(part.index.to_numpy(float), part["train_s"].to_numpy(float))
        if not np.isfinite(slope):
            continue
        rows = chosen[(chosen["dataset"] == name) & (chosen["method"] == method)]
        per_seed = [_slope(g["R"].to_numpy(float), g["train_s"].to_numpy(float)) for _, g in rows.groupby("seed")]
        per_seed = [s for s in per_seed if np.isfinite(s)]
        seeds = int(rows[rows["R"] >= LINEAR_FROM_R].groupby("R").size().min())
        out.rows.append([name, method, slope, band(per_seed), seeds,
                         out.judge(LINEAR_SLOPE[0] <= slope <= LINEAR_SLOPE[1])])
    out.note = quiet_note(chosen)
    return out.close()


def claim7_parallel_rcd(results: pd.DataFrame) -> Finding:
    """Speedup to the target objective at every thread count run above one, RB against RF, one variant;
    each beside eq. 29's bound, and split into its two factors (epochs, seconds per epoch)."""
    out = Finding(NOT_JUDGED, ["dataset", "threads", "RB speedup", "eq. 29 for RB", "within eq. 29",
                               "RB epochs ratio", "RB per-epoch ratio", "RF speedup", "eq. 29 for RF", "seeds",
                               "passes"], cases="(dataset, threads) pairs",
                  rule=f"at every thread count tau > 1 measured, {VARIANT} variant on both, speedups the median over "
                       f"the repeats (seeds) with their band: RB's >= {ALMOST_LINEAR_SHARE} tau and RF's <= "
                       f"{NO_SPEEDUP}; beside them eq. 29's speedup tau / (1 + (omega - 1)(tau - 1)/(D - 1)) for "
                       f"the measured omega (non-zeros per row: R for RB, D for RF) and D, and RB's speedup split "
                       f"into its factors: epochs to the target (1 thread over tau) and seconds per epoch (1 thread "
                       f"over tau). A case passes only when RB's median also stays within eq. 29's bound: a speedup "
                       f"above it, or seconds per epoch falling more than tau-fold, says the 1-thread run was slower "
                       f"code, not that the threads did more than tau cores can; " + verdict_rule("(dataset, threads) pairs"))
    ok = results[results["status"] == "ok"]
    for name, part in ok.groupby("dataset", sort=False):
        table = speedups(part)
        if table.empty:
            continue
        for tau in sorted(t for t in set(table["threads"]) if np.isfinite(t) and t > 1):
            top = table[(table["threads"] == tau) & (table["variant"] == VARIANT)]
            rb, rf = top[top["method"] == SUBJECT], top[top["method"] == rcd_baseline()]
            if rb.empty or rf.empty or not rb["runs"].iloc[0] or not rf["runs"].iloc[0]:
                continue
            rb, rf = rb.iloc[0], rf.iloc[0]
            rf_speedup = rf["speedup"] if rf["reached"] else 0.0  # RF never reaching its target: no speedup
            bound_rb, bound_rf = float(eq29_speedup(tau, rb["R"], rb["D"])), float(eq29_speedup(tau, rf["D"], rf["D"]))
            within = bool(rb["reached"] and rb["speedup"] <= bound_rb and not rb["pass_ratio"] > tau)
            out.rows.append([name, int(tau), _band_of(rb), bound_rb, within, rb["epoch_ratio"],
                             rb["pass_ratio"], _band_of(rf), bound_rf, int(min(rb["runs"], rf["runs"])),
                             out.judge(within and rb["speedup"] >= ALMOST_LINEAR_SHARE * tau
                                       and rf_speedup <= NO_SPEEDUP)])
    return out.close()


def _band_of(row) -> str:
    """The median speedup [band] over the seeds that reach the target, and how many of the seeds do."""
    if not row["reached"]:
        return f"not reached (0 of {row['runs']})"
    text = band([row["speedup_min"], row["speedup"], row["speedup_max"]])
    return text if row["reached"] == row["runs"] else f"{text} ({row['reached']} of {row['runs']} reach it)"


# Claim 0 (§3, Theorem 1, eq. 13): RB's objective gap falls as 1/(kappa R), ahead of RF's O(1/R).
#: a (dataset, sigma) passes when RB's gap slope against kappa R is -1 or steeper (rates.classify), the
#: mean gap stays under eq. 13's bound at every R, and RB's gap is below RF's (ratio >= 1) at equal R
THEOREM1_SLOPES = ("as claimed", "faster")


def claim0_theorem1(diagnostics: pd.DataFrame) -> Finding:
    """Theorem 1 on the `rbrepro diagnose` rows: per dataset and sigma, the fitted rate and the bound."""
    from rbrepro.theory.rates import CONFIDENCE, GAP_SLOPE, MAX_WIDTH, SLOPE_TOL, fit_rates, verdicts

    cases = "(dataset, sigma) pairs"
    out = Finding(NOT_JUDGED, ["dataset", "sigma", "kappa", "RB gap slope vs kappa R", "rate", "eq. 13 bound held",
                               "RF/RB gap at equal R", "passes"], cases=cases,
                  rule=f"per (dataset, sigma): RB's gap slope against kappa R within {SLOPE_TOL} of {GAP_SLOPE:g} or "
                       f"steeper ({CONFIDENCE:.0%} bootstrap interval over seeds, at most {MAX_WIDTH} wide), the mean "
                       f"gap under eq. 13's bound at every R, and RB's gap below RF's at equal R (the theorem bounds "
                       f"the expected gap, so these read the mean over seeds); " + verdict_rule(cases))
    if diagnostics.empty:
        return out
    rates = fit_rates(diagnostics)
    for v in verdicts(diagnostics, rates).itertuples():
        fit = rates[(rates["dataset"] == v.dataset) & (rates["sigma"] == v.sigma) & (rates["method"] == SUBJECT)
                    & (rates["quantity"] == "gap") & (rates["against"] == "kappa_R")]
        slope = "no fit" if fit.empty or not np.isfinite(fit["slope"].iloc[0]) else \
            f"{fit['slope'].iloc[0]:+.2f} [{fit['lo'].iloc[0]:+.2f}, {fit['hi'].iloc[0]:+.2f}]"
        ok = bool(v.rb_gap in THEOREM1_SLOPES and v.rb_bound_held is True and v.kappa_speedup != "< 1")
        out.rows.append([v.dataset, v.sigma, v.kappa, slope, v.rb_gap, v.rb_bound_held, v.rf_over_rb_gap,
                         out.judge(ok)])
    return out.close()
