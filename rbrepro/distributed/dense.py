"""Random Fourier and Nystrom across workers: the feature map is fitted on the client (RF's draw
needs only d; Nystrom's landmarks are gathered from the partitions that hold them) and sent to the
workers, which featurize their rows; the R x R Gram matrix Z^T Z and Z^T Y are summed over the
workers once and solved on the client, as the single-process direct solve does."""

from __future__ import annotations

import warnings

import numpy as np

from rbrepro.constraints import check_count, check_sigma
from rbrepro.distributed.partitions import take_rows
from rbrepro.features.laplacian import as_dense, check_kernel
from rbrepro.features.nystrom import NystromFeatures
from rbrepro.models.feature_ridge import features_of
from rbrepro.solvers.direct import dense_gram_rhs
from rbrepro.solvers.operator import DenseOperator


def fit_map(features, runner, parts: list, sizes: list[int], n_features: int) -> None:
    """Fit an RF or Nystrom map as its fit on all N rows would (the same draw, the same landmarks)."""
    check_count("n_components (R)", features.n_components)
    check_sigma(features.sigma)
    check_kernel(features.kernel)
    if not isinstance(features, NystromFeatures):
        features.fit(np.zeros((1, n_features)))  # the draw depends on d, R, sigma, kernel and seed only
        return
    n = int(sum(sizes))
    if features.n_components > n:
        warnings.warn(f"n_components = {features.n_components} landmarks requested, but there are only {n} "
                      f"training rows: using {n}", UserWarning, stacklevel=2)
    indices = features.draw_landmarks(n)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    owner = np.searchsorted(starts, indices, side="right") - 1
    pieces = [runner.submit(take_rows, parts[p], indices[owner == p] - starts[p]) for p in np.unique(owner)]
    rows = [as_dense(block) for block in runner.gather(pieces, "gathering the Nystrom landmarks")]
    features.landmark_indices_ = indices
    features.n_features_in_ = n_features
    features.set_landmarks(np.vstack(rows))


def dense_matrix(part, features) -> DenseOperator:
    """On a worker: the partition's dense Z (no rows: an empty one of the right width and type)."""
    X = part[0]
    if X.shape[0] == 0:
        width = features.n_components_ if isinstance(features, NystromFeatures) else features.n_components
        return DenseOperator(np.zeros((0, width), dtype=np.float64 if isinstance(features, NystromFeatures)
                                      else np.float32))
    return DenseOperator(features_of(features, X))  # a plug-in's output checked at its boundary


def gram_rhs(Z: DenseOperator, Y: np.ndarray, y_mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """On a worker: this partition's share of Z^T Z and Z^T (Y - y_mean)."""
    return dense_gram_rhs(Z.Z, Y - y_mean)
