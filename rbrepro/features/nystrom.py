"""Nystrom features for the Laplacian kernel (Williams & Seeger 2001; DESIGN §2).

R landmarks drawn uniformly without replacement from the training rows;
Z = K(X, L) K(L, L)^{-1/2}, with the symmetric pseudo-inverse square root (eigenvalues
below 1e-12 of the largest cut off), so Z Z^T = K_nm K_mm^+ K_mn.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from rbrepro.features.laplacian import as_dense, laplacian_kernel
from rbrepro.features.params import check_count, check_sigma

EIGEN_CUTOFF = 1e-12


class NystromFeatures(TransformerMixin, BaseEstimator):
    """Nystrom feature map (dense N x R, float64) of the Laplacian kernel.

    Attributes: landmarks_ (R x d), landmark_indices_, normalization_ (R x R, K_mm^{-1/2}),
    rank_ (eigenvalues kept).
    """

    def __init__(self, n_components: int = 256, sigma: float = 1.0, random_state=None):
        self.n_components = n_components
        self.sigma = sigma
        self.random_state = random_state

    def fit(self, X, y=None):
        check_count("n_components (R)", self.n_components)
        check_sigma(self.sigma)
        X = check_array(X, accept_sparse="csr", dtype=[np.float32, np.float64])
        n = X.shape[0]
        if self.n_components > n:
            raise ValueError(f"R = {self.n_components} landmarks requested, but there are only {n} training rows")
        self.n_features_in_ = X.shape[1]
        rng = np.random.default_rng(self.random_state)
        self.landmark_indices_ = np.sort(rng.choice(n, self.n_components, replace=False))
        self.landmarks_ = as_dense(X[self.landmark_indices_])
        K_mm = laplacian_kernel(self.landmarks_, self.landmarks_, self.sigma)
        vals, vecs = np.linalg.eigh(K_mm)
        keep = vals > EIGEN_CUTOFF * vals.max()
        self.rank_ = int(keep.sum())
        self.normalization_ = (vecs[:, keep] / np.sqrt(vals[keep])) @ vecs[:, keep].T
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "normalization_")
        X = check_array(X, accept_sparse="csr", dtype=[np.float32, np.float64])
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but the landmarks have {self.n_features_in_}")
        K_nm = laplacian_kernel(X, self.landmarks_, self.sigma)
        return K_nm @ self.normalization_
