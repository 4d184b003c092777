"""Random Fourier features for Laplacian kernels (Rahimi & Recht 2007; docs/design.md §2).

k(x, y) = exp(-sigma d(x, y)) is the characteristic function of omega's distribution:
- L1 distance: a product of Cauchy densities, omega_j ~ Cauchy(0, scale sigma) per coordinate;
- Euclidean distance: the multivariate Cauchy (Student t, one degree of freedom),
  omega = sigma g / |s| with g ~ N(0, I_d), s ~ N(0, 1), as the authors' library draws it.
Then b ~ U[0, 2 pi), z(x) = sqrt(2/R) cos(omega^T x + b) and E[z(x)^T z(y)] = k(x, y).
Featurizing is one BLAS product plus a cosine, in float32.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from rbrepro.constraints import check_count, check_sigma, seed_of
from rbrepro.features.kernels import kernel_spec
from rbrepro.features.laplacian import check_kernel
from rbrepro.memory import check_memory

BLOCK_ROWS = 16384


def draw_frequencies(rng, d: int, R: int, sigma: float, kernel: str) -> np.ndarray:
    """d x R frequencies whose characteristic function is exp(-sigma * distance): the kernel's own
    (features.kernels)."""
    return kernel_spec(kernel).frequencies(rng, d, R, sigma)


def fit_memory(n: int, d: int, R: int) -> float:
    """Bytes of RF's big arrays: the n x R features (and a block of products) and the d x R frequencies."""
    return 4.0 * n * R * 2 + 4.0 * d * R


class RandomFourierFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Random Fourier feature map (dense N x R, float32) of a Laplacian kernel.

    z(x) = sqrt(2/R) cos(omega^T x + b), with the R frequencies omega drawn from the kernel's
    Fourier transform (Rahimi & Recht 2007) and b ~ U[0, 2 pi), so that E[z(x)^T z(y)] = k(x, y):
    for the L1 kernel each omega_j ~ Cauchy(0, sigma); for the Euclidean one omega = sigma g / |s|,
    g ~ N(0, I), s ~ N(0, 1) (a multivariate Cauchy, as the authors' library draws it).

    Parameters
    ----------
    n_components : int, default=256
        R, the number of features.
    sigma : float, default=1.0
        Inverse kernel width of exp(-sigma * distance(x, y)).
    kernel : {"l1", "euclidean"}, default="l1"
        The distance: ||x - y||_1 or ||x - y||_2.
    random_state : int, RandomState instance or None, default=None
        Seed of the frequency draw.
    memory_limit_gb : float or None, default=None
        Refuse, before allocating, work whose estimate exceeds this many GB.

    Attributes
    ----------
    omegas_ : ndarray of shape (n_features_in_, R), float32
        The frequencies.
    phases_ : ndarray of shape (R,), float32
        The phases b.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    rbrepro.models.RandomFourierClassifier, rbrepro.models.RandomFourierRegressor : Ridge on these features.
    RandomBinningFeatures : Random Binning features of the L1 kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from rbrepro.features import RandomFourierFeatures
    >>> X = np.random.default_rng(0).uniform(size=(100, 4))
    >>> Z = RandomFourierFeatures(n_components=256, sigma=1.0, random_state=0).fit_transform(X)
    >>> Z.shape, Z.dtype
    ((100, 256), dtype('float32'))
    >>> K = np.exp(-1.0 * np.abs(X[:, None] - X[None]).sum(axis=2))  # the kernel matrix
    >>> float(np.abs(Z @ Z.T - K).mean()) < 0.1
    True
    """

    #: its fitted state, as a saved model holds it (models.persist): arrays, then scalars
    _saved_arrays = ("omegas_", "phases_")
    _saved_scalars = ("n_features_in_",)
    fit_memory = staticmethod(fit_memory)

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
        tags.transformer_tags.preserves_dtype = ["float32"]  # features are float32 whatever the input
        return tags

    def fit(self, X, y=None):
        check_count("n_components (R)", self.n_components)
        check_sigma(self.sigma)
        check_kernel(self.kernel)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float32, np.float64])
        check_memory(f"rf frequencies for d = {X.shape[1]} at R = {self.n_components}",
                     12.0 * X.shape[1] * self.n_components, self.memory_limit_gb)
        rng = np.random.default_rng(seed_of(self.random_state))
        self.omegas_ = self._frequencies(rng, X.shape[1]).astype(np.float32)
        self.phases_ = rng.uniform(0, 2 * np.pi, self.n_components).astype(np.float32)
        self._n_features_out = self.n_components
        return self

    def _frequencies(self, rng, d: int) -> np.ndarray:
        """The d x R frequencies (`draw_frequencies`); a subclass draws them otherwise (a plug-in's
        orthogonal or quasi-random frequencies) and keeps everything else."""
        return draw_frequencies(rng, d, self.n_components, self.sigma, self.kernel)

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "omegas_")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float32, np.float64], reset=False)
        n, R = X.shape[0], self.n_components
        check_memory(f"rf features of {n} rows at R = {R}", fit_memory(n, X.shape[1], R), self.memory_limit_gb)
        Z = np.empty((n, R), dtype=np.float32)
        scale = np.float32(np.sqrt(2.0 / R))
        for lo in range(0, n, BLOCK_ROWS):
            P = np.asarray(X[lo:lo + BLOCK_ROWS].astype(np.float32) @ self.omegas_)  # BLAS sgemm
            P += self.phases_
            np.cos(P, out=P)
            P *= scale
            Z[lo:lo + P.shape[0]] = P
        return Z

    def _check_saved(self, model, d: int) -> None:
        """A loaded model's frequencies, phases and weights fit together (ValueError says what not)."""
        if self.omegas_.shape != (d, self.n_components) or self.phases_.shape != (self.n_components,) \
                or model.coef_.shape[0] != self.n_components:
            raise ValueError("its Fourier frequencies, phases and weights do not fit together")
