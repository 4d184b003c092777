"""How cost grows: power-law exponents of time and memory against N and R (claim 6).

The paper says training costs O(NRd + NRm) and grows linearly in R for every low-rank method.
A sweep over training rows N at one R, and over R at one N (`configs/scaling.yaml`), gives for
each method and each cost (featurize, solve and predict seconds, peak fit memory) the slope b
of log(cost) = a + b log(x), fitted by least squares, with a 95 % interval from Student's t.
A slope near 1 is linear growth; Nyström's dense solve bends toward R^3 (its R x R
eigendecomposition), RF's featurize toward d R per row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

#: The costs whose growth is fitted, with what each measures.
COSTS = {"train_s": "train (s)", "featurize_s": "featurize (s)", "solve_s": "solve (s)",
         "predict_s": "predict (s)", "peak_fit_mb": "peak fit memory (MB)"}
#: Points a fit needs (fewer: no exponent is claimed).
MIN_POINTS = 3
#: The interval's confidence.
CONFIDENCE = 0.95
#: Log-log slopes counted as linear growth (claim 6's rule, report.claims, reads it from here);
#: above bends upward ("faster than linear"), below grows "slower than linear" (fixed costs still
#: weigh over the range swept).
LINEAR_SLOPE = (0.7, 1.3)


@dataclass(frozen=True)
class Exponent:
    """The fitted slope of log(cost) against log(x), with its interval and the points it rests on."""
    method: str
    cost: str
    against: str      # "R" or "N"
    at: int           # the other variable's value held fixed
    slope: float
    low: float
    high: float
    points: int
    intercept: float

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.exp(self.intercept) * np.asarray(x, dtype=np.float64) ** self.slope


def fit_exponent(x, y) -> tuple[float, float, float, float]:
    """(slope, low, high, intercept) of log y = a + b log x; the interval is CONFIDENCE from
    Student's t with n - 2 degrees of freedom (n >= 3 distinct x; an exact line has width 0)."""
    lx, ly = np.log(np.asarray(x, dtype=np.float64)), np.log(np.asarray(y, dtype=np.float64))
    n = len(lx)
    if n < MIN_POINTS or len(np.unique(lx)) < 2:
        raise ValueError(f"a power law needs at least {MIN_POINTS} points at two or more x, got {n}")
    fit = stats.linregress(lx, ly)
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, n - 2) * fit.stderr
    return float(fit.slope), float(fit.slope - half), float(fit.slope + half), float(fit.intercept)


def series(rows: pd.DataFrame, against: str) -> tuple[int, pd.DataFrame] | None:
    """One method's rows of a sweep over `against` ("R" or "N"): at the value of the other variable
    that has the most distinct values of `against` (a tie: the largest). None if under MIN_POINTS."""
    x, other = ("R", "n_train") if against == "R" else ("n_train", "R")
    spans = rows.groupby(other)[x].nunique()
    if spans.empty or spans.max() < MIN_POINTS:
        return None
    at = int(spans[spans == spans.max()].index.max())
    return at, rows[rows[other] == at]


def medians(rows: pd.DataFrame, against: str, cost: str) -> tuple[int, pd.Series] | None:
    """One method's sweep over `against` (`series`): the value held fixed and the median of `cost`
    per x over seeds and repeats, positive values only (what the fit and the figure both use)."""
    picked = series(rows, against)
    if picked is None or cost not in picked[1]:
        return None
    at, part = picked
    med = part.groupby("R" if against == "R" else "n_train")[cost].median()
    return at, med[med > 0]


def exponents(results: pd.DataFrame) -> list[Exponent]:
    """Every (method, cost, against) with enough points: the median cost per x over seeds and repeats."""
    ok = results[results["status"] == "ok"] if "status" in results else results
    found = []
    for method, rows in ok.groupby("method", sort=True):
        for against in ("N", "R"):
            for cost in COSTS:
                picked = medians(rows, against, cost)
                if picked is None or len(picked[1]) < MIN_POINTS:
                    continue
                at, med = picked
                slope, low, high, intercept = fit_exponent(med.index.to_numpy(), med.to_numpy())
                found.append(Exponent(method, cost, against, at, slope, low, high, len(med), intercept))
    return found


def growth_kind(e: Exponent) -> str:
    """'linear', 'faster than linear' or 'slower than linear': the slope against LINEAR_SLOPE."""
    if e.slope > LINEAR_SLOPE[1]:
        return "faster than linear"
    if e.slope < LINEAR_SLOPE[0]:
        return "slower than linear"
    return "linear"


def training_in_R(found: list[Exponent]) -> list[Exponent]:
    """The fits of train time against R, one per method (claim 6: linear in R for every low-rank method)."""
    return [e for e in found if e.cost == "train_s" and e.against == "R"]


def exponent_table(found: list[Exponent]) -> tuple[list[str], list[list]]:
    """(header, rows) for the report and `rbrepro plot`'s table: one row per fit."""
    header = ["method", "cost", "against", "held at", "exponent", f"{CONFIDENCE:.0%} interval", "points"]
    rows = [[e.method, COSTS[e.cost], e.against, f"{'N' if e.against == 'R' else 'R'} = {e.at:,}", f"{e.slope:.2f}",
             f"{e.low:.2f} – {e.high:.2f}", e.points] for e in found]
    return header, rows
