"""Convergence rates fitted to the diagnostics: log-log slopes with bootstrap intervals, and verdicts.

Theorem 1 (eq. 13) bounds the EXPECTED gap, so a slope is fitted to the per-R mean over seeds:
log(mean over seeds) by least squares against log R (for RB also against log of the per-R mean of
kappa R), on the largest half of the R values (`fit_range`: the rates are asymptotic). A logarithm
needs a positive value: per-R means that are <= 0 or not finite are dropped from the fit (counted in
`n_dropped`; `n_nonpositive` counts the single rows <= 0, which one draw of RB or RF can give, see
diagnostics). The interval resamples the seeds with replacement (the same seeds at every R, so the
curves stay paired), refits, and takes the 95 % percentile interval; its generator is seeded.

At one sigma kappa barely moves with R (it is a property of the grid distribution, eq. 10), so the
slope against kappa R equals the slope against R up to kappa's drift: kappa shows in the LEVEL of the
gap, not in its slope. The verdicts therefore test RB's 1/(kappa R) by (a) the slope against kappa R
and (b) the level: the mean gap against eq. 13's bound, and RB's lead over RF at equal R against kappa
(the factor by which eq. 13 improves [33]'s O(1/R) for other random features).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from rbrepro.models.registry import SUBJECT, monte_carlo_baseline

#: claimed slopes: O(1/(kappa R)) and O(1/R) objective gaps (eq. 13, [33]); O(1/sqrt(R)) kernel errors (§2.2)
GAP_SLOPE = -1.0
KERNEL_SLOPE = -0.5
#: an interval that reaches within SLOPE_TOL of the claimed slope counts as containing it
SLOPE_TOL = 0.1
#: an interval wider than this decides nothing (too few seeds, or a gap lost in its own noise)
MAX_WIDTH = 0.5
CONFIDENCE = 0.95
N_BOOT = 1000
BOOT_SEED = 0
#: fewest R values (with a positive mean) a slope is fitted to
MIN_POINTS = 3
#: share of the R values, the largest, that the rates are fitted to (at least MIN_POINTS of them)
FIT_SHARE = 0.5
KERNEL_ERRORS = ("fro_rel", "spec_rel", "max_abs")
GROUP = ["dataset", "sigma"]


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of log y on log x over the points where both are positive and finite."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = (x > 0) & (y > 0) & np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 2:
        return np.nan
    return float(np.polyfit(np.log(x[keep]), np.log(y[keep]), 1)[0])


def _masked_slopes(lx: np.ndarray, ly: np.ndarray, min_points: int) -> np.ndarray:
    """Column-wise least-squares slopes of ly on lx (both (n_R, B)), ignoring NaN entries."""
    keep = np.isfinite(lx) & np.isfinite(ly)
    count = keep.sum(axis=0)
    lx0, ly0 = np.where(keep, lx, 0.0), np.where(keep, ly, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, my = lx0.sum(axis=0) / count, ly0.sum(axis=0) / count
        dx = np.where(keep, lx0 - mx, 0.0)
        slope = (dx * (ly0 - my)).sum(axis=0) / (dx * dx).sum(axis=0)
    return np.where(count >= min_points, slope, np.nan)


def _log_positive(values: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((values > 0) & np.isfinite(values), np.log(np.where(values > 0, values, 1.0)), np.nan)


def bootstrap_slope(Y: np.ndarray, X: np.ndarray, n_boot: int = N_BOOT, seed: int = BOOT_SEED,
                    min_points: int = MIN_POINTS) -> dict:
    """Slope of log(mean_seeds Y) on log(mean_seeds X), Y and X (n_R, n_seeds), with a percentile
    interval from resampling the seeds (columns) with replacement."""
    Y, X = np.asarray(Y, dtype=float), np.asarray(X, dtype=float)
    picks = np.random.default_rng(seed).integers(0, Y.shape[1], size=(n_boot, Y.shape[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an R whose (resampled) seeds are all NaN
        means = np.nanmean(Y, axis=1)
        slope = _masked_slopes(_log_positive(np.nanmean(X, axis=1))[:, None], _log_positive(means)[:, None],
                               min_points)[0]
        boot = _masked_slopes(_log_positive(np.nanmean(X[:, picks], axis=2)),
                              _log_positive(np.nanmean(Y[:, picks], axis=2)), min_points)
    tail = 100 * (1 - CONFIDENCE) / 2
    lo, hi = (np.nanpercentile(boot, [tail, 100 - tail]) if np.isfinite(boot).any() else (np.nan, np.nan))
    positive = np.isfinite(means) & (means > 0)
    return {"slope": float(slope), "lo": float(lo), "hi": float(hi), "n_points": int(positive.sum()),
            "n_dropped": int((~positive & ~np.isnan(means)).sum()),
            "n_nonpositive": int(np.sum(np.isfinite(Y) & (Y <= 0)))}


def _table(rows: pd.DataFrame, value) -> tuple[np.ndarray, np.ndarray]:
    """(R values, (n_R, n_seeds) table) of one method's rows at one sigma."""
    values = rows.assign(_v=value(rows)).pivot_table(index="R", columns="seed", values="_v", aggfunc="mean",
                                                      dropna=False)
    return values.index.to_numpy(dtype=float), values.to_numpy(dtype=float)


def fit_range(Rs, share: float = FIT_SHARE) -> int:
    """The smallest R fitted: rates are asymptotic (eq. 13 holds for R' = R - c > 0, and no gap exceeds
    F(0) - F*, so small R saturate), so the fit takes the largest `share` of the R values, at least
    MIN_POINTS of them."""
    Rs = np.unique(np.asarray(Rs))
    keep = min(len(Rs), max(MIN_POINTS, int(np.ceil(share * len(Rs)))))
    return int(Rs[-keep])


def fit_rates(frame: pd.DataFrame, n_boot: int = N_BOOT, seed: int = BOOT_SEED, min_R: int | None = None) -> pd.DataFrame:
    """One row per (dataset, sigma, method, quantity, against) with slope, lo, hi, n_points,
    n_dropped, n_nonpositive, R_from: gap and each kernel error against R, and RB's gap against
    kappa R. Only R >= min_R enter the fit (None: `fit_range` of the group's R values)."""
    out = []
    for (dataset, sigma, method), rows in frame.groupby(["dataset", "sigma", "method"], sort=True):
        R_from = fit_range(rows["R"]) if min_R is None else int(min_R)
        rows = rows[rows["R"] >= R_from]
        fits = [(q, "R", lambda r, q=q: r[q], lambda r: r["R"]) for q in ("gap", *KERNEL_ERRORS)]
        if method == SUBJECT:
            fits.append(("gap", "kappa_R", lambda r: r["gap"], lambda r: r["kappa"] * r["R"]))
        for quantity, against, yv, xv in fits:
            _, Y = _table(rows, yv)
            _, X = _table(rows, xv)
            fit = bootstrap_slope(Y, X, n_boot=n_boot, seed=seed)
            out.append({"dataset": dataset, "sigma": sigma, "method": method, "quantity": quantity,
                        "against": against, **fit, "R_from": R_from})
    return pd.DataFrame(out)


def classify(lo: float, hi: float, claimed: float, tol: float = SLOPE_TOL, max_width: float = MAX_WIDTH) -> str:
    """'as claimed' when [lo - tol, hi + tol] holds the claimed slope, else 'faster' or 'slower';
    'inconclusive' when the interval is wider than max_width, 'no fit' when there is none."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "no fit"
    if hi - lo > max_width:
        return "inconclusive"
    if lo - tol <= claimed <= hi + tol:
        return "as claimed"
    return "faster" if hi + tol < claimed else "slower"


def _fit(rates: pd.DataFrame, method: str, quantity: str, against: str = "R") -> dict:
    rows = rates[(rates["method"] == method) & (rates["quantity"] == quantity) & (rates["against"] == against)]
    return rows.iloc[0].to_dict() if len(rows) else {"slope": np.nan, "lo": np.nan, "hi": np.nan}


def _mean_gaps(rows: pd.DataFrame, method: str) -> pd.Series:
    return rows[rows["method"] == method].groupby("R")["gap"].mean()


def _equal_R(rows: pd.DataFrame) -> dict:
    """Where RB is ahead of RF (smaller mean gap) at equal R, and the geometric-mean gap ratio RF / RB."""
    rb, rf = _mean_gaps(rows, SUBJECT), _mean_gaps(rows, monte_carlo_baseline())
    common = rb.index.intersection(rf.index)
    ahead = [int(R) for R in common if rb[R] < rf[R]]
    behind = [int(R) for R in common if rb[R] >= rf[R]]
    both = [R for R in common if rb[R] > 0 and rf[R] > 0]
    ratio = float(np.exp(np.mean(np.log(rf[both] / rb[both])))) if both else np.nan
    return {"rb_ahead_at": ahead, "rb_behind_at": behind, "rf_over_rb_gap": ratio}


def _bound_held(rows: pd.DataFrame, method: str):
    """Whether the mean gap is at most the mean eq. 13 bound at every R where the bound is defined."""
    sel = rows[rows["method"] == method].groupby("R")[["gap", "bound"]].mean().dropna()
    return bool((sel["gap"] <= sel["bound"]).all()) if len(sel) else None


def verdicts(frame: pd.DataFrame, rates: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (dataset, sigma): the rate checks of Theorem 1, [33] and Monte Carlo.

    rb_gap: 'as claimed' when RB's gap-vs-kappa R slope interval holds -1 (SLOPE_TOL slack), 'faster'
    or 'slower' otherwise (eq. 13 is an upper bound: 'faster' agrees with it), 'inconclusive' when the
    interval is wider than MAX_WIDTH (`classify`). rf_gap: the same for
    RF against R. <method>_<error>: the kernel error's slope against -1/2. rb_bound_held,
    rf_bound_held: mean gap <= eq. 13's bound wherever it is defined. kappa_speedup: RB's lead over
    RF at equal R (geometric-mean gap ratio) reaches kappa ('>= kappa'), lies between 1 and kappa, or
    RB is behind ('< 1')."""
    rates = fit_rates(frame) if rates is None else rates
    out = []
    for (dataset, sigma), rows in frame.groupby(GROUP, sort=True):
        r = rates[(rates["dataset"] == dataset) & (rates["sigma"] == sigma)]
        kappa = float(rows.loc[rows["method"] == SUBJECT, "kappa"].mean())
        row = {"dataset": dataset, "sigma": sigma, "kappa": kappa,
               "D_over_kappa_R": float(rows.loc[rows["method"] == SUBJECT, "D_over_kappa_R"].mean())}
        rb_kR, rf_R = _fit(r, SUBJECT, "gap", "kappa_R"), _fit(r, monte_carlo_baseline(), "gap")
        row["rb_gap"] = classify(rb_kR["lo"], rb_kR["hi"], GAP_SLOPE)
        row["rf_gap"] = classify(rf_R["lo"], rf_R["hi"], GAP_SLOPE)
        for method in sorted(set(rows["method"])):
            for err in KERNEL_ERRORS:
                fit = _fit(r, method, err)
                row[f"{method}_{err}"] = classify(fit["lo"], fit["hi"], KERNEL_SLOPE)
        row["rb_bound_held"] = _bound_held(rows, SUBJECT)
        row["rf_bound_held"] = _bound_held(rows, monte_carlo_baseline())
        row.update(_equal_R(rows))
        ratio = row["rf_over_rb_gap"]
        row["kappa_speedup"] = ("n/a" if not (np.isfinite(ratio) and np.isfinite(kappa)) else ">= kappa" if ratio >= kappa
                                else "< 1" if ratio < 1 else "1 to kappa")
        out.append(row)
    return pd.DataFrame(out)
