"""`--sigma auto`: the kernel width chosen without test data, in a handful of fits instead of one per
grid point.

The candidates are AUTO_SIGMAS (log-spaced, three a decade, 0.01 ... 100). A pattern search walks
them: it starts at the grid point nearest sigma="scale"'s width (scale_sigma: 3 / the median L1 distance
between training rows, near where the mirror's searches end); it scores that point and its two
neighbours a third of a decade either side, and moves a third of a decade at a time while an end is
best. A smooth, single-peaked validation curve (the published Fig. 3 curves are) is searched in three
fits where the start is best, one more per step it is off; `curve` lists every point scored.

How a candidate is scored:
- by CG with early stopping (`stopping: validation`): the held-out tenth of the training rows that
  early stopping keeps apart, the best score of the search pass (feature map, then CG on the other
  rows), no final steps; on a seeded SUBSAMPLE_ROWS of the training rows where there are more (the
  width chosen so lies within one grid step, a third of a decade, of the one every row would choose
  on the mirror's sets: bench/sigma_auto.py records both); where there are fewer, the mean over
  several splits (held_out_repeats: up to MAX_REPEATS, about twice SUBSAMPLE_ROWS rows scored);
- otherwise (a direct or Cholesky solve): a fit on the validation split (the site's validation file,
  else a seeded 20 %) scored there, as the sweeps' validation cells are.
The chosen width's model is then fitted on every training row by the caller.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rbrepro.errors import InvalidParameter
from rbrepro.metrics import best_sigma, metric_name

#: the widths `--sigma auto` may choose: log-spaced, three a decade, 0.01 ... 100 (the published
#: grids' span, docs/design.md §2a)
AUTO_SIGMAS = tuple(float(f"{10 ** (k / 3):.3g}") for k in range(-6, 7))
#: grid steps of the pattern search: a decade, then a third of one
COARSE, FINE = 3, 1
#: the most training rows a held-out search scores a candidate on (a seeded sample where there are more)
SUBSAMPLE_ROWS = 10_000
SUBSAMPLE_SEED = 0
#: the most held-out splits a candidate is scored on where the training rows are few (held_out_repeats)
MAX_REPEATS = 5
#: row pairs the median L1 distance of the starting point is estimated from
DISTANCE_PAIRS = 2_000


#: sigma="scale" (the estimators' and `train`'s default): SCALE_FACTOR / the median L1 distance between
#: training rows, where the kernel of a median pair is e^-3. On the mirror's sets the widths that every
#: row's search chose lie at 2.4 to 5.2 times 1 / median (bench/results/sigma-auto.csv: cadata 2.15,
#: cod-rna 2.15, ijcnn1 1, letter 1; their 1 / median 0.90, 0.77, 0.26, 0.19)
SCALE_FACTOR = 3.0
#: what sigma="scale" says it is, in printed text and result rows
SCALE_RULE = f"scale: {SCALE_FACTOR:g} / the median L1 distance of {DISTANCE_PAIRS:,} seeded row pairs"


def median_l1(X, seed: int = 0) -> float:
    """The median L1 distance between distinct training rows, from DISTANCE_PAIRS seeded pairs (nan when
    every sampled pair is the same row)."""
    n = X.shape[0]
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, n, DISTANCE_PAIRS), rng.integers(0, n, DISTANCE_PAIRS)
    dist = np.asarray(abs(X[a] - X[b]).sum(axis=1)).ravel()
    dist = dist[dist > 0]
    return float(np.median(dist)) if dist.size else float("nan")


def scale_sigma(X, seed: int = 0) -> float:
    """sigma="scale": SCALE_FACTOR / median_l1(X), to 3 significant digits (1 where no two sampled rows
    differ)."""
    median = median_l1(X, seed)
    if not np.isfinite(median):
        return 1.0
    return float(f"{SCALE_FACTOR / median:.3g}")


def resolve_sigma(sigma, X) -> float:
    """A sigma as an estimator takes it ("scale" or a number) as the number it fits with."""
    return scale_sigma(X) if isinstance(sigma, str) and sigma == "scale" else float(sigma)


def starting_index(X, sigmas=AUTO_SIGMAS, seed: int = 0) -> int:
    """The grid index nearest sigma="scale"'s width (scale_sigma)."""
    target = np.log(scale_sigma(X, seed))
    return int(np.argmin([abs(np.log(s) - target) for s in sigmas]))


def pattern_search(score, n_points: int, start: int, metric: str) -> int:
    """The grid index a pattern search over `score(index)` (cached) ends at: the start and its FINE
    neighbours, then, while an end of what is scored is best, a step beyond it (FINE, then COARSE once
    it has moved), and last the FINE neighbours of the best. The best is `metrics.best_sigma`'s (the
    smaller index on a tie, as the smaller sigma)."""
    seen: dict[int, float] = {}

    def best_of(indices) -> int:
        for i in indices:
            if 0 <= i < n_points and i not in seen:
                seen[i] = score(i)
        return int(best_sigma({i: [seen[i]] for i in seen}, metric))

    best, step = best_of([start - FINE, start, start + FINE]), FINE
    while True:
        edge = best - step if best == min(seen) else best + step if best == max(seen) else None
        if edge is None or not 0 <= edge < n_points or edge in seen:
            break
        moved = best_of([edge])
        if moved == best:
            break
        best, step = moved, COARSE
    return best_of([best - FINE, best + FINE])


def held_out_repeats(n: int, rows: int | None = SUBSAMPLE_ROWS) -> int:
    """How many held-out splits a candidate is scored on: one where the training rows fill the sample
    (`rows`), else enough that about 2 `rows` rows are scored in all, at most MAX_REPEATS (one held-out
    tenth of a few thousand rows is a noisy score: cpusmall's chose 2.15 where 1 tests better)."""
    if rows is None or n >= rows:
        return 1
    return int(min(MAX_REPEATS, -(-2 * rows // max(n, 1))))


def held_out_scorer(params, data, make_model, rows: int | None = SUBSAMPLE_ROWS):
    """score(sigma) of a CG method with early stopping: the best held-out score of its search pass
    (accuracy %, or the relative error of the held-out rows for regression), on a seeded
    `rows` of the training rows where there are more (None: every row); where there are fewer, the
    mean over held_out_repeats splits (seeds seed, seed + 1, ...: other held-out rows and features)."""
    X, y = data.X_train, data.y_train
    repeats = held_out_repeats(X.shape[0], rows)
    if rows is not None and X.shape[0] > rows:
        keep = np.sort(np.random.default_rng(SUBSAMPLE_SEED).permutation(X.shape[0])[:rows])
        X, y = X[keep], y[keep]

    def score(sigma: float) -> float:
        best = np.mean([make_model(replace(params, sigma=sigma, seed=params.seed + k)).held_out_search(X, y)
                        for k in range(repeats)])
        return float(100.0 * best if data.task != "regression" else best)

    return score


def search_sigma(params, data, make_model, evaluate, on_point=None, sigmas=AUTO_SIGMAS,
                 rows: int | None = SUBSAMPLE_ROWS) -> tuple[float, list, str]:
    """(the chosen sigma, [(sigma, its score)] in the order scored, "low"/"high" when it is a grid end).
    `make_model(params)` builds the estimator of `params`; `evaluate(params)` fits on the validation
    split and returns its validation metric (the path of methods without early stopping); `rows`: the
    held-out search's sample size (None: every training row)."""
    metric = metric_name(data.task)
    held = params.stopping == "validation"
    score_of = held_out_scorer(params, data, make_model, rows) if held else (lambda s: evaluate(replace(params, sigma=s)))
    curve = []

    def score(index: int) -> float:
        value = float(score_of(sigmas[index]))
        curve.append((sigmas[index], value))
        if on_point:
            on_point(sigmas[index], value, metric)
        return value if np.isfinite(value) else (-np.inf if metric == "accuracy" else np.inf)

    index = pattern_search(score, len(sigmas), starting_index(data.X_train, sigmas), metric)
    if not any(np.isfinite(v) for _, v in curve):
        raise InvalidParameter(f"{data.name}: no sigma of {sigmas[0]:g} ... {sigmas[-1]:g} gave a finite validation "
                               f"metric; give --sigma")
    best = sigmas[index]
    edge = "low" if index == 0 else "high" if index == len(sigmas) - 1 else ""
    return best, curve, edge
