"""Synthetic data with the shapes of the paper's largest Table 1 sets, generated from a seed.

SUSY (4,000,000 + 1,000,000 rows, 18 features), covtype (464,810 + 116,202, 54), acoustic
(78,823 + 19,705, 50, three classes) and cod_rna (59,535 + 271,617, 8) cannot be downloaded on
every machine, but the cost of each method depends on the data's *shape*: N, d, the number of
distinct values per feature (which sets how many bins a grid has, so D and κ) and the classes.
These sets reproduce those, so time, memory and D can be measured at the paper's scale. Their
accuracies are not the paper's and are never compared with it.

How a set is made (deterministic under its seed; generator version 3):
- continuous features: a share `own_share` of each is its own mixture of three Gaussians with
  random means and widths (values cluster as measured quantities do), the rest a random linear
  mix of `latent_dims` shared latent factors (each also a three-Gaussian mixture), so features are
  correlated and the rows fill fewer cells of a grid than independent features would, as real
  measurements do; min-max scaled to [0, 1], then moved `uniformize` of the way towards evenly
  spread ranks, and rounded to `decimals` places, as the real files are printed;
- binary features (covtype's 44 columns): one-hot groups as in the real file, 4 wilderness areas
  and 40 soil types, each row a 1 in exactly one column of each group, the columns drawn with
  unequal probabilities (Dirichlet(1/2)), so rows share few (area, soil) combinations. (Version 1
  drew each column independently; 2^44 combinations put every row in a bin of its own.);
- the label: a random "teacher" of 32 L1-Laplacian bumps centred on random rows, over 6 of the
  continuous features, f_c(x) = Σ_k a_ck exp(-γ ||x_S - z_k||_1), plus Gaussian noise; the class is
  the argmax over classes (binary: f above its median, so the classes balance). A kernel method can
  learn it; a linear model cannot learn it all (`python -m bench.shape_binning --learnability`
  prints RB against scikit-learn's RidgeClassifier on each shape).
Features are scaled to [0, 1] like the LIBSVM files the paper used (min-max per column).

Realistic bin counts. RB's time and memory follow from how rows fall into bins, so each shape's
three binning knobs (BINNING) were fitted to the bins the authors' own grids made on their real
training rows, which their figure data records for every Fig. 3 sigma: with their grids replayed
bit for bit, the knobs that bring our D nearest theirs over the informative sigmas (least mean
squared log ratio among `bench.shape_binning.CANDIDATES`; `python -m bench.shape_binning --search
SHAPE`). Only D, a property of the data, was used, never an accuracy or a time. The result is
committed as results/shape-binning/bins.csv (`make shape-binning`) and tabled by `rbrepro report`.
(Independent features, latent_dims 0, would give several times the real sets' bins at most sigmas
on covtype, acoustic and cod_rna: `--search` prints it.)
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass

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
    #: how the continuous features bin (fitted to the authors' bin counts, see the module's docstring):
    latent_dims: int = 0       # shared latent factors behind the continuous features (0: independent)
    own_share: float = 1.0     # each feature's own variation beside the latent factors' (1: none shared)
    uniformize: float = 0.0    # how far each feature's values move towards evenly spread ranks (0: none)
    paper_set: str = ""
    #: bumped whenever the generator changes what it makes of this shape (in its fingerprint, cache
    #: name and random stream); 2 = covtype's one-hot groups; 3 = every shape's continuous features
    #: from shared latent factors, fitted to the authors' bin counts
    version: int = 3

    def __post_init__(self):
        if sum(self.one_hot_groups) != self.binary_features:
            raise ValueError(f"one-hot groups {self.one_hot_groups} must cover the {self.binary_features} binary "
                             "columns exactly")


def shape_digest(shape: Shape) -> str:
    """12 hex digits of every field of a shape: part of its cache name and fingerprint, so a changed
    knob (a refit, a row count) never reads rows generated before it, even where `version` was
    not bumped."""
    return hashlib.sha256(repr(sorted(asdict(shape).items())).encode()).hexdigest()[:12]


#: How each shape's continuous features bin (latent_dims, own_share, uniformize), fitted to the bin
#: counts of the authors' training rows (`python -m bench.shape_binning --search`; version 3).
BINNING = {
    "susy": {"latent_dims": 8, "own_share": 0.3, "uniformize": 0.3},
    "covtype": {"latent_dims": 2, "own_share": 0.1},
    "acoustic": {"latent_dims": 4, "own_share": 0.1},
    "cod_rna": {"latent_dims": 2, "own_share": 0.1},
}
SHAPES: dict[str, Shape] = {
    "susy": Shape(4_000_000, 1_000_000, 18, paper_set="SUSY", **BINNING["susy"]),
    "covtype": Shape(464_810, 116_202, 54, binary_features=44, one_hot_groups=(4, 40), decimals=4,
                     paper_set="covtype", **BINNING["covtype"]),
    "acoustic": Shape(78_823, 19_705, 50, n_classes=3, paper_set="acoustic", **BINNING["acoustic"]),
    "cod_rna": Shape(59_535, 271_617, 8, decimals=4, paper_set="cod_rna", **BINNING["cod_rna"]),
}
#: Smaller SUSY-shaped sets for how cost grows with N (configs/scaling.yaml): training rows by tag,
#: a quarter as many test rows, the same features and generator; registered as susy_shape_<tag>.
SCALING_ROWS = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
SHAPES.update({f"susy_{tag}": Shape(n, n // 4, 18, paper_set="SUSY", **BINNING["susy"])
               for tag, n in SCALING_ROWS.items()})


def _mixture(rng, params, m: int) -> np.ndarray:
    """m draws of each column's mixture of three Gaussians (params: means, widths, weights, each (c, 3))."""
    means, widths, weights = params
    comp = (rng.random((m, len(means)))[:, :, None] > np.cumsum(weights, axis=1)[None]).sum(axis=2)
    comp = np.minimum(comp, 2)
    cols = np.arange(len(means))
    return rng.normal(means[cols, comp], widths[cols, comp])


def _mixture_params(rng, columns: int):
    return rng.normal(0.0, 1.0, (columns, 3)), rng.uniform(0.1, 0.6, (columns, 3)), rng.dirichlet(np.ones(3), columns)


def _spread(column: np.ndarray, uniformize: float) -> np.ndarray:
    """Min-max to [0, 1], then moved `uniformize` of the way to the column's ranks / (n - 1), equal
    values sharing their average rank (so equal inputs stay equal)."""
    lo, hi = column.min(), column.max()
    out = (column - lo) / (hi - lo if hi > lo else 1.0)
    if uniformize > 0:
        values, inverse, counts = np.unique(column, return_inverse=True, return_counts=True)
        first = np.cumsum(counts) - counts  # rank of each distinct value's first row
        ranks = (first + (counts - 1) / 2.0) / max(len(column) - 1, 1)
        out = (1.0 - uniformize) * out + uniformize * ranks[inverse]
    return out


def generate(shape: Shape, seed: int = 0, n_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(X float32 in [0, 1], y float64 labels: 0 ... C-1, or -1/+1 for two classes) of `n_rows`
    rows (default: the shape's n_train + n_test), deterministic under `seed`. Rows come in chunks
    and features are spread one column at a time, so peak memory is X plus a chunk's or a
    column's temporaries."""
    n = shape.n_train + shape.n_test if n_rows is None else int(n_rows)
    rng = np.random.default_rng([shape.version, seed])
    n_cont = shape.d - shape.binary_features
    own = _mixture_params(rng, n_cont)
    latent = _mixture_params(rng, shape.latent_dims)
    mixing = rng.normal(0.0, 1.0, (shape.latent_dims, n_cont)) / np.sqrt(max(shape.latent_dims, 1))
    group_p = [rng.dirichlet(np.full(size, 0.5)) for size in shape.one_hot_groups]
    n_bumps = 32
    amplitudes = rng.normal(0.0, 1.0, (max(shape.n_classes, 2), n_bumps))
    X = np.empty((n, shape.d), dtype=np.float32)
    for start in range(0, n, CHUNK_ROWS):
        stop = min(n, start + CHUNK_ROWS)
        part = np.random.default_rng([shape.version, seed, start])
        m = stop - start
        values = _mixture(part, own, m)
        if shape.latent_dims:
            values = shape.own_share * values + (1.0 - shape.own_share) * (_mixture(part, latent, m) @ mixing)
        X[start:stop, :n_cont] = values
        if shape.one_hot_groups:
            X[start:stop, n_cont:] = 0.0
            first = n_cont
            for size, p in zip(shape.one_hot_groups, group_p):
                X[np.arange(start, stop), first + part.choice(size, m, p=p)] = 1.0
                first += size
    for j in range(n_cont):  # one column's temporaries at a time
        X[:, j] = np.round(_spread(X[:, j], shape.uniformize), shape.decimals)
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
