"""The two claims judged against a bound of the paper's theory: Theorem 1's rate (claim 0, on the
`rbrepro diagnose` rows) and parallel RCD's speedup (claim 7, against eq. 29).

Each returns a `Finding` (`outcomes`): a case whose evidence cannot separate pass from fail (a bootstrap
interval wider than the rates' MAX_WIDTH, a seed band across the threshold, a measurement outside what
the theory allows) is inconclusive, and the claim is judged on its conclusive cases.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rbrepro.analysis.rows import test_rows
from rbrepro.analysis.speedups import eq29_speedup, speedups
from rbrepro.models.registry import SUBJECT, rcd_baseline
from rbrepro.report.markdown import band
from rbrepro.report.outcomes import NOT_JUDGED, Finding, straddles, verdict_rule
from rbrepro.report.runs import EXTRA_RUNS

# Claim 0 (§3, Theorem 1, eq. 13): RB's objective gap falls as 1/(kappa R), ahead of RF's O(1/R).
#: a (dataset, sigma) passes when RB's gap slope against kappa R is -1 or steeper (rates.classify), the
#: mean gap stays under eq. 13's bound at every R, and RB's gap is below RF's (ratio >= 1) at equal R
THEOREM1_SLOPES = ("as claimed", "faster")
#: rates.classify's outcomes that decide nothing: the case is inconclusive
UNDECIDED_SLOPES = ("inconclusive", "no fit")

# Claim 7 (§1, §5.3, Fig. 6): parallel RCD speeds up almost linearly on RB, not at all on RF.
#: with the same variant (async, the authors'): RB's speedup at tau threads at least this share
#: of tau; RF's at most NO_SPEEDUP
ALMOST_LINEAR_SHARE, NO_SPEEDUP = 0.7, 1.2
VARIANT = "async"
#: the thread counts of the paper's Fig. 6
PAPER_THREADS = (1, 2, 4, 8, 16)
#: the run that measures them on a machine with that many cores; the report judges it beside fig6
THREADS_RUN = EXTRA_RUNS["fig6"][0]
THREADS_COMMAND = f"rbrepro sweep configs/{THREADS_RUN}.yaml --out results/{THREADS_RUN}"


def _bound_slack(diagnostics: pd.DataFrame, dataset: str, sigma: float) -> float:
    """The least ratio of eq. 13's mean bound to RB's mean gap over the R where both are positive."""
    rows = diagnostics[(diagnostics["dataset"] == dataset) & (diagnostics["sigma"] == sigma)
                       & (diagnostics["method"] == SUBJECT)]
    g = rows.groupby("R")[["gap", "bound"]].mean().dropna()
    g = g[(g["gap"] > 0) & (g["bound"] > 0)]
    return float((g["bound"] / g["gap"]).min()) if len(g) else float("nan")


def claim0_theorem1(diagnostics: pd.DataFrame) -> Finding:
    """Theorem 1 on the `rbrepro diagnose` rows: per dataset and sigma, the fitted rate and the bound."""
    from rbrepro.theory import rates as TR

    cases = "(dataset, sigma) pairs"
    out = Finding(NOT_JUDGED, ["dataset", "sigma", "kappa", "R fitted", "RB gap slope vs kappa R", "rate",
                               "eq. 13 bound held", "bound / gap (least)", "RF/RB gap at equal R", "passes"],
                  cases=cases,
                  rule=f"per (dataset, sigma), on the mean over seeds (the theorem bounds the expected gap): RB's "
                       f"gap against kappa R on log-log axes, fitted only to the largest {TR.FIT_SHARE:.0%} of the R "
                       f"values swept (at least {TR.MIN_POINTS}; the R fitted are shown), an R whose mean gap is at "
                       f"or below zero left out; its {TR.CONFIDENCE:.0%} bootstrap interval over seeds, widened "
                       f"by {TR.SLOPE_TOL} each side, must hold {TR.GAP_SLOPE:g} or lie below it (faster); the mean gap "
                       f"must stay under eq. 13's bound at every R (the least bound / gap ratio is shown: how "
                       f"loose the bound is); and \"RB below RF\" means the geometric mean over the common R of "
                       f"RF's mean gap over RB's is at least 1. A pair is inconclusive when the interval is wider "
                       f"than {TR.MAX_WIDTH} or no slope could be fitted; " + verdict_rule(cases))
    if diagnostics.empty:
        return out
    rates = TR.fit_rates(diagnostics)
    for v in TR.verdicts(diagnostics, rates).itertuples():
        fit = rates[(rates["dataset"] == v.dataset) & (rates["sigma"] == v.sigma) & (rates["method"] == SUBJECT)
                    & (rates["quantity"] == "gap") & (rates["against"] == "kappa_R")]
        slope = "no fit" if fit.empty or not np.isfinite(fit["slope"].iloc[0]) else \
            f"{fit['slope'].iloc[0]:+.2f} [{fit['lo'].iloc[0]:+.2f}, {fit['hi'].iloc[0]:+.2f}]"
        fitted = "–" if fit.empty else f">= {int(fit['R_from'].iloc[0])}"
        ok = bool(v.rb_gap in THEOREM1_SLOPES and v.rb_bound_held is True and v.kappa_speedup != "< 1")
        out.rows.append([v.dataset, v.sigma, v.kappa, fitted, slope, v.rb_gap, v.rb_bound_held,
                         _bound_slack(diagnostics, v.dataset, v.sigma), v.rf_over_rb_gap,
                         out.judge(ok, conclusive=v.rb_gap not in UNDECIDED_SLOPES)])
    return out.close()


def _band_of(row) -> str:
    """The median speedup [band] over the seeds that reach the target, and how many of the seeds do."""
    if not row["reached"]:
        return f"not reached (0 of {row['runs']})"
    text = band([row["speedup_min"], row["speedup"], row["speedup_max"]])
    return text if row["reached"] == row["runs"] else f"{text} ({row['reached']} of {row['runs']} reach it)"


def _claim7_rule(cases: str) -> str:
    return (f"per dataset and thread count tau > 1 measured, {VARIANT} variant on both, speedups the median "
            f"over the repeats (seeds) with their band: RB's >= {ALMOST_LINEAR_SHARE} tau and RF's <= "
            f"{NO_SPEEDUP}; beside them eq. 29's speedup tau / (1 + (omega - 1)(tau - 1)/(D - 1)) for the "
            f"measured omega (non-zeros per row: R for RB, D for RF) and D, and RB's speedup split into its "
            f"factors: epochs to the target (1 thread over tau) and seconds per epoch (1 thread over tau). A "
            f"case is inconclusive when RB's median lies above eq. 29's bound or its seconds per epoch fall "
            f"more than tau-fold (outside what tau cores allow: the 1-thread run was slower code, not evidence "
            f"either way), when RB does not reach the target, or when RB's band straddles "
            f"{ALMOST_LINEAR_SHARE} tau or RF's straddles {NO_SPEEDUP}. The paper's Fig. 6 runs tau = "
            f"{', '.join(map(str, PAPER_THREADS))}; only the tau the rows hold are judged (a 2-core machine "
            f"cannot show whether the speedup stays almost linear beyond tau = 2): `{THREADS_COMMAND}` on a "
            f"machine with {PAPER_THREADS[-1]} cores writes rows the report judges beside fig6's, each tau against "
            f"the 1-thread run of the same machine; "
            + verdict_rule(cases))


def claim7_parallel_rcd(results: pd.DataFrame) -> Finding:
    """Speedup to the target objective at every thread count run above one, RB against RF, one variant;
    each beside eq. 29's bound, and split into its two factors (epochs, seconds per epoch)."""
    out = Finding(NOT_JUDGED, ["dataset", "threads", "RB speedup", "eq. 29 for RB", "within eq. 29",
                               "RB epochs ratio", "RB per-epoch ratio", "RF speedup", "eq. 29 for RF", "seeds",
                               "passes"], cases="(dataset, threads) pairs",
                  rule=_claim7_rule("(dataset, threads) pairs"))
    ok = test_rows(results)  # the chosen sigma's test cells, never the validation cells that chose it
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
            rf_low, rf_high = (rf["speedup_min"], rf["speedup_max"]) if rf["reached"] else (0.0, 0.0)
            conclusive = within and not straddles(rb["speedup_min"], rb["speedup_max"], ALMOST_LINEAR_SHARE * tau) \
                and not straddles(rf_low, rf_high, NO_SPEEDUP)
            out.rows.append([name, int(tau), _band_of(rb), bound_rb, within, rb["epoch_ratio"],
                             rb["pass_ratio"], _band_of(rf), bound_rf, int(min(rb["runs"], rf["runs"])),
                             out.judge(rb["speedup"] >= ALMOST_LINEAR_SHARE * tau and rf_speedup <= NO_SPEEDUP,
                                       conclusive=conclusive)])
    taus = sorted({int(r[1]) for r in out.rows})
    if taus:
        out.note = (f"tau measured: {', '.join(map(str, taus))} of the paper's "
                    f"{', '.join(map(str, PAPER_THREADS[1:]))}")
    return out.close()
