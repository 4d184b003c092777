"""Nystrom features for Laplacian kernels (Williams & Seeger 2001; docs/design.md §2).

R landmarks drawn uniformly without replacement from the training rows (all of them when
R exceeds their number, with a warning, as scikit-learn's Nystroem does);
Z = K(X, L) K(L, L)^{-1/2}, with the symmetric pseudo-inverse square root (eigenvalues
below 1e-12 of the largest cut off), so Z Z^T = K_nm K_mm^+ K_mn.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from rbrepro.constraints import check_count, check_sigma, seed_of
from rbrepro.features.laplacian import as_dense, check_kernel, laplacian_kernel
from rbrepro.memory import check_memory

EIGEN_CUTOFF = 1e-12


def fit_memory(n: int, d: int, R: int) -> float:
    """Bytes of Nystrom's big arrays: n x R kernel values and features, R x R eigen-work, R x d landmarks."""
    return 8.0 * n * R * 2 + 8.0 * R * R * 3 + 8.0 * R * d


class NystromFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Nystrom feature map (dense N x R, float64) of a Laplacian kernel.

    Z = K(X, L) K(L, L)^(-1/2) for R landmark rows L drawn uniformly without replacement from the
    training rows (Williams & Seeger 2001), with the symmetric pseudo-inverse square root, so that
    Z Z^T = K_nL K_LL^+ K_Ln approximates the kernel matrix (exactly on the landmarks).

    Parameters
    ----------
    n_components : int, default=256
        R, the number of landmarks (at most the number of training rows: all of them, with a
        warning, when R exceeds it).
    sigma : float, default=1.0
        Inverse kernel width of exp(-sigma * distance(x, y)).
    kernel : {"l1", "euclidean"}, default="l1"
        The distance: ||x - y||_1 or ||x - y||_2.
    random_state : int, RandomState instance or None, default=None
        Seed of the landmark draw.
    memory_limit_gb : float or None, default=None
        Refuse, before allocating, work whose estimate exceeds this many GB.

    Attributes
    ----------
    landmarks_ : ndarray of shape (n_components_, n_features_in_)
        The landmark rows L.
    landmark_indices_ : ndarray of shape (n_components_,)
        Their indices among the training rows.
    normalization_ : ndarray of shape (n_components_, n_components_)
        K_LL^(-1/2).
    n_components_ : int
        Landmarks used (min(R, N)).
    rank_ : int
        Eigenvalues of K_LL kept.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    rbrepro.models.NystromClassifier, rbrepro.models.NystromRegressor : Ridge on these features.

    Examples
    --------
    >>> import numpy as np
    >>> from rbrepro.features import NystromFeatures
    >>> X = np.random.default_rng(0).uniform(size=(100, 4))
    >>> Z = NystromFeatures(n_components=50, sigma=1.0, random_state=0).fit(X).transform(X)
    >>> Z.shape
    (100, 50)
    >>> K = np.exp(-1.0 * np.abs(X[:, None] - X[None]).sum(axis=2))  # the kernel matrix
    >>> float(np.abs(Z @ Z.T - K).mean()) < 0.1
    True
    """

    #: its fitted state, as a saved model holds it (models.persist): arrays, then scalars
    _saved_arrays = ("landmarks_", "landmark_indices_", "normalization_")
    _saved_scalars = ("n_features_in_", "rank_")
    fit_memory = staticmethod(fit_memory)
    #: R landmarks are at most the n training rows (memory is modelled at min(R, n))
    R_at_most_rows = True

    def __init__(self, *, n_components: int = 256, sigma: float = 1.0, kernel: str = "l1", random_state=None,
                 memory_limit_gb=None):
        self.n_components = n_components
        self.sigma = sigma
        self.kernel = kernel
        self.random_state = random_state
        self.memory_limit_gb = memory_limit_gb

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y=None):
        check_count("n_components (R)", self.n_components)
        check_sigma(self.sigma)
        check_kernel(self.kernel)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32])
        n = X.shape[0]
        R = self.n_components
        if R > n:
            warnings.warn(f"n_components = {R} landmarks requested, but there are only {n} training rows: "
                          f"using {n}", UserWarning, stacklevel=2)
        check_memory(f"nystrom landmarks of d = {X.shape[1]} at R = {min(R, n)}",
                     fit_memory(min(R, n), X.shape[1], min(R, n)), self.memory_limit_gb)
        self.landmark_indices_ = self.draw_landmarks(n)
        return self.set_landmarks(as_dense(X[self.landmark_indices_]))

    def draw_landmarks(self, n_rows: int) -> np.ndarray:
        """The sorted indices of the R landmarks among n_rows training rows (uniform, without replacement)."""
        rng = np.random.default_rng(seed_of(self.random_state))
        return np.sort(rng.choice(n_rows, min(self.n_components, n_rows), replace=False))

    def set_landmarks(self, landmarks: np.ndarray):
        """Fit K_mm^{-1/2} on the landmark rows (the second half of a fit; a distributed fit gathers the
        landmark rows from the workers that hold them)."""
        R = landmarks.shape[0]
        self.n_components_ = R
        self.landmarks_ = landmarks
        K_mm = laplacian_kernel(self.landmarks_, self.landmarks_, self.sigma, kernel=self.kernel)
        vals, vecs = np.linalg.eigh(K_mm)
        keep = vals > EIGEN_CUTOFF * vals.max()
        self.rank_ = int(keep.sum())
        self.normalization_ = (vecs[:, keep] / np.sqrt(vals[keep])) @ vecs[:, keep].T
        self._n_features_out = R
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "normalization_")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        m = self.landmarks_.shape[0]
        check_memory(f"nystrom features of {X.shape[0]} rows at R = {m}", fit_memory(X.shape[0], X.shape[1], m),
                     self.memory_limit_gb)
        K_nm = laplacian_kernel(X, self.landmarks_, self.sigma, kernel=self.kernel)
        return K_nm @ self.normalization_

    def _check_saved(self, model, d: int) -> None:
        """A loaded model's landmarks, normalization and weights fit together (ValueError says what not)."""
        m = self.landmarks_.shape[0]
        if self.landmarks_.shape != (m, d) or self.normalization_.shape[0] != m \
                or model.coef_.shape[0] != self.normalization_.shape[1]:
            raise ValueError("its landmarks, normalization and weights do not fit together")
