"""Synthetic data with the shapes of the paper's largest Table 1 sets, generated from a seed.

SUSY (4,000,000 + 1,000,000 rows, 18 features), covtype (464,810 + 116,202, 54), acoustic
(78,823 + 19,705, 50, three classes) and cod_rna (59,535 + 271,617, 8) cannot be downloaded on
every machine, but the cost of each method depends on the data's *shape*: N, d, the number of
distinct values per feature (which sets how many bins a grid has, so D and κ) and the classes.
These sets reproduce those, so time, memory and D can be measured at the paper's scale. Their
accuracies are not the paper's and are never compared with it.

How a set is made (deterministic under its seed):
- continuous features: each a mixture of three Gaussians with random means and widths, so
  values cluster as measured physical quantities do; then rounded to `decimals` places, as the
  real files are printed, which bounds the distinct values per feature;
- binary features (covtype's 44 columns): one-hot groups as in the real file, 4 wilderness areas
  and 40 soil types, each row a 1 in exactly one column of each group, the columns drawn with
  unequal probabilities (Dirichlet(1/2)), so rows share few (area, soil) combinations and a grid
  has as many bins as the continuous features make. (Version 1 drew each column independently;
  2^44 combinations put every row in a bin of its own: at sigma 6.3, D = N R.);
- the label: a random "teacher" of 32 L1-Laplacian bumps centred on random rows, over 6 of the
  continuous features, f_c(x) = Σ_k a_ck exp(-γ ||x_S - z_k||_1), plus Gaussian noise; the class is the argmax over
  classes (binary: f above its median, so the classes balance). A kernel method can learn it; a
  linear model cannot learn it all.
Features are scaled to [0, 1] like the LIBSVM files the paper used (min-max per column).

Measured at generation version 1 (covtype's shape is at version 2 since, not measured again; 10,000 training and 2,000 test rows, R = 128, the best of
σ = 0.3, 1, 3, 10, against scikit-learn's RidgeClassifier): RB leads a linear model on the
cod_rna shape (0.89 vs 0.80) and the SUSY shape (0.86 vs 0.78); on the covtype and acoustic
shapes, whose 48 and 44 features beside the 6 informative ones dilute an L1 kernel, the linear model leads at this
size (0.79 vs 0.74, 0.70 vs 0.66). These sets are for cost (time, memory, D), not accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CHUNK_ROWS = 250_000
#: continuous features the label depends on (the rest are nuisance, as most measured features are)
INFORMATIVE = 6


@dataclass(frozen=True)
class Shape:
    """The shape of one of the paper's sets."""

    n_train: int
    n_test: int
    d: int
    n_classes: int = 2
    binary_features: int = 0   # the last columns are 0/1 (covtype's one-hot soil and wilderness types)
    one_hot_groups: tuple[int, ...] = ()  # the binary columns as one-hot groups (sizes summing to binary_features)
    decimals: int = 6          # continuous values as printed in the real files
    paper_set: str = ""
    #: bumped whenever the generator changes what it makes of this shape (in its fingerprint, cache
    #: name and random stream); 2 = covtype's one-hot groups
    version: int = 1


SHAPES: dict[str, Shape] = {
    "susy": Shape(4_000_000, 1_000_000, 18, paper_set="SUSY"),
    "covtype": Shape(464_810, 116_202, 54, binary_features=44, one_hot_groups=(4, 40), decimals=4,
                     paper_set="covtype", version=2),
    "acoustic": Shape(78_823, 19_705, 50, n_classes=3, paper_set="acoustic"),
    "cod_rna": Shape(59_535, 271_617, 8, decimals=4, paper_set="cod_rna"),
}
#: Smaller SUSY-shaped sets for how cost grows with N (configs/scaling.yaml): training rows by tag,
#: a quarter as many test rows, the same features and generator; registered as susy_shape_<tag>.
SCALING_ROWS = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
SHAPES.update({f"susy_{tag}": Shape(n, n // 4, 18, paper_set="SUSY") for tag, n in SCALING_ROWS.items()})


def generate(shape: Shape, seed: int = 0, n_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(X float32 in [0, 1], y float64 labels: 0 ... C-1, or -1/+1 for two classes) of `n_rows`
    rows (default: the shape's n_train + n_test), deterministic under `seed`. Rows come in chunks,
    so peak memory is X plus one chunk's kernel values."""
    n = shape.n_train + shape.n_test if n_rows is None else int(n_rows)
    rng = np.random.default_rng([shape.version, seed])
    n_cont = shape.d - shape.binary_features
    means = rng.normal(0.0, 1.0, (n_cont, 3))
    widths = rng.uniform(0.1, 0.6, (n_cont, 3))
    weights = rng.dirichlet(np.ones(3), n_cont)
    p_one = rng.uniform(0.02, 0.3, shape.binary_features)
    group_p = [rng.dirichlet(np.full(size, 0.5)) for size in shape.one_hot_groups]
    n_bumps = 32
    amplitudes = rng.normal(0.0, 1.0, (max(shape.n_classes, 2), n_bumps))
    X = np.empty((n, shape.d), dtype=np.float32)
    for start in range(0, n, CHUNK_ROWS):
        stop = min(n, start + CHUNK_ROWS)
        part = np.random.default_rng([shape.version, seed, start])
        m = stop - start
        comp = (part.random((m, n_cont))[:, :, None] > np.cumsum(weights, axis=1)[None]).sum(axis=2)
        comp = np.minimum(comp, 2)
        cols = np.arange(n_cont)
        X[start:stop, :n_cont] = part.normal(means[cols, comp], widths[cols, comp])
        if shape.one_hot_groups:
            X[start:stop, n_cont:] = 0.0
            first = n_cont
            for size, p in zip(shape.one_hot_groups, group_p):
                X[np.arange(start, stop), first + part.choice(size, m, p=p)] = 1.0
                first += size
        elif shape.binary_features:
            X[start:stop, n_cont:] = part.random((m, shape.binary_features)) < p_one
    lo, hi = X[:, :n_cont].min(axis=0), X[:, :n_cont].max(axis=0)
    X[:, :n_cont] = np.round((X[:, :n_cont] - lo) / np.where(hi > lo, hi - lo, 1.0), shape.decimals)
    informative = np.sort(rng.choice(n_cont, min(n_cont, INFORMATIVE), replace=False))
    centres = X[rng.choice(n, n_bumps, replace=False)][:, informative].astype(np.float64)
    gamma = 4.0 / max(1e-9, float(np.abs(X[:1000, informative][:, None, :] - centres[None]).sum(axis=2).mean()))
    scores = np.zeros((n, amplitudes.shape[0]))
    for start in range(0, n, CHUNK_ROWS):
        stop = min(n, start + CHUNK_ROWS)
        rows = X[start:stop, informative].astype(np.float64)
        for k, centre in enumerate(centres):  # one bump at a time: a chunk's distances, never chunk x bumps
            scores[start:stop] += np.exp(-gamma * np.abs(rows - centre).sum(axis=1))[:, None] * amplitudes[:, k]
    scores += rng.normal(0.0, 0.05 * scores.std(), scores.shape)
    if shape.n_classes == 2:
        margin = scores[:, 1] - scores[:, 0]
        y = np.where(margin > np.median(margin), 1.0, -1.0)
    else:  # each class's score standardized first, so no class takes nearly every row
        y = ((scores - scores.mean(axis=0)) / scores.std(axis=0)).argmax(axis=1).astype(np.float64)
    return X, y
