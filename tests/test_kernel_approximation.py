"""Statistical checks that Random Binning approximates the Laplacian kernel (Alg. 1)."""

import numpy as np
from sklearn.metrics.pairwise import laplacian_kernel

from rbrepro.features import RandomBinningFeatures


def _gram(X, R, sigma, seed):
    Z = RandomBinningFeatures(n_grids=R, sigma=sigma, random_state=seed).fit_transform(X)
    return (Z @ Z.T).toarray()


def test_inner_products_are_unbiased_kernel_estimates():
    """Per grid, 'same bin' is Bernoulli(k(x, y)), so z(x)^T z(y) ~ Binomial(R, k)/R."""
    rng = np.random.default_rng(0)
    sigma = 1.5
    X = rng.random((40, 3))
    K = laplacian_kernel(X, X, gamma=sigma)  # scikit-learn: exp(-gamma ||x - y||_1)
    R = 4000
    G = _gram(X, R, sigma, seed=1)
    sd = np.sqrt(K * (1 - K) / R)
    assert np.all(np.abs(G - K) <= 5 * sd + 1e-12)
    np.testing.assert_allclose(np.diag(G), 1.0)
    # pooled bias is small relative to its own standard error
    off = ~np.eye(len(X), dtype=bool)
    assert abs(np.mean((G - K)[off])) < 0.01


def test_error_falls_as_R_grows_like_one_over_sqrt_R():
    rng = np.random.default_rng(1)
    sigma = 0.8
    X = rng.random((60, 4))
    K = laplacian_kernel(X, X, gamma=sigma)
    errors = {R: np.mean([np.abs(_gram(X, R, sigma, seed) - K).mean() for seed in range(3)])
              for R in (16, 256, 4096)}
    assert errors[16] > errors[256] > errors[4096]
    # 16x more grids: about 4x less error (allow 2.5x .. 6.5x)
    assert 2.5 < errors[16] / errors[256] < 6.5
    assert 2.5 < errors[256] / errors[4096] < 6.5


def test_sigma_is_an_inverse_width_more_sigma_more_bins():
    X = np.random.default_rng(2).random((500, 5))
    D = [RandomBinningFeatures(n_grids=8, sigma=s, random_state=0).fit(X).n_bins_ for s in (0.1, 1, 10)]
    assert D[0] < D[1] < D[2]
