"""Random Fourier features for the Laplacian kernel exp(-sigma ||x - y||_1) (Rahimi & Recht 2007).

The kernel's Fourier transform is a product of Cauchy densities, so omega_j ~ Cauchy(0,
scale sigma) per coordinate, b ~ U[0, 2 pi), z(x) = sqrt(2/R) cos(omega^T x + b) and
E[z(x)^T z(y)] = k(x, y). Featurizing is one BLAS product plus a cosine, in float32.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from rbrepro.features.params import check_count, check_sigma

BLOCK_ROWS = 16384


class RandomFourierFeatures(TransformerMixin, BaseEstimator):
    """Random Fourier feature map (dense N x R, float32) of the Laplacian kernel.

    Attributes: omegas_ (d x R float32), phases_ (R,), n_features_in_.
    """

    def __init__(self, n_components: int = 256, sigma: float = 1.0, random_state=None):
        self.n_components = n_components
        self.sigma = sigma
        self.random_state = random_state

    def fit(self, X, y=None):
        check_count("n_components (R)", self.n_components)
        check_sigma(self.sigma)
        X = check_array(X, accept_sparse="csr", dtype=[np.float32, np.float64])
        self.n_features_in_ = X.shape[1]
        rng = np.random.default_rng(self.random_state)
        self.omegas_ = (self.sigma * rng.standard_cauchy((X.shape[1], self.n_components))).astype(np.float32)
        self.phases_ = rng.uniform(0, 2 * np.pi, self.n_components).astype(np.float32)
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "omegas_")
        X = check_array(X, accept_sparse="csr", dtype=[np.float32, np.float64])
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but the map was drawn for {self.n_features_in_}")
        n, R = X.shape[0], self.n_components
        Z = np.empty((n, R), dtype=np.float32)
        scale = np.float32(np.sqrt(2.0 / R))
        for lo in range(0, n, BLOCK_ROWS):
            P = np.asarray(X[lo:lo + BLOCK_ROWS].astype(np.float32) @ self.omegas_)  # BLAS sgemm
            P += self.phases_
            np.cos(P, out=P)
            P *= scale
            Z[lo:lo + P.shape[0]] = P
        return Z
