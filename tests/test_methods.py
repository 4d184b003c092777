"""RF, Nystrom, block and exact kernel ridge against independent references."""

from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import laplacian_kernel as sk_laplacian

from rbrepro.features.laplacian import laplacian_kernel
from rbrepro.features.nystrom import NystromFeatures
from rbrepro.features.random_fourier import RandomFourierFeatures
from rbrepro.memory import MemoryLimitError
from rbrepro.models import (
    ExactKernelRegressor,
    IndependentBlockRegressor,
    NystromRegressor,
    RandomBinningRegressor,
    RandomFourierRegressor,
)


def euclidean_laplacian(A, B, sigma):
    """Dense brute-force reference: exp(-sigma ||a - b||_2)."""
    return np.exp(-sigma * cdist(np.asarray(A, np.float64), np.asarray(B, np.float64)))


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(0)
    X = rng.random((360, 4))
    y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.standard_normal(360)
    return X[:300], y[:300], X[300:], y[300:]


def test_laplacian_kernel_matches_scikit_learn():
    rng = np.random.default_rng(1)
    A, B = rng.random((70, 6)).astype(np.float32), rng.random((30, 6))
    np.testing.assert_allclose(laplacian_kernel(A, B, 0.7), sk_laplacian(A.astype(np.float64), B, gamma=0.7),
                               rtol=1e-6)


def test_euclidean_laplacian_kernel_matches_brute_force():
    rng = np.random.default_rng(11)
    A, B = rng.random((50, 7)).astype(np.float32), rng.random((20, 7))
    np.testing.assert_allclose(laplacian_kernel(A, B, 0.9, kernel="euclidean"), euclidean_laplacian(A, B, 0.9),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="kernel must be one of"):
        laplacian_kernel(A, B, 0.9, kernel="gaussian")


@pytest.mark.parametrize("kernel, reference", [("l1", lambda X, s: sk_laplacian(X, X, gamma=s)),
                                               ("euclidean", lambda X, s: euclidean_laplacian(X, X, s))])
def test_random_fourier_expectation_matches_its_kernel(kernel, reference):
    """E[z(x)^T z(y)] = k(x, y): the mean Gram matrix over many independent draws is within a few
    standard errors of the kernel, entry by entry, and the wrong kernel is clearly rejected."""
    rng = np.random.default_rng(12)
    X = rng.random((12, 4))
    sigma = 1.5
    grams = np.array([(lambda Z: Z @ Z.T)(RandomFourierFeatures(n_components=256, sigma=sigma, kernel=kernel, random_state=s).fit_transform(X)
                                          .astype(np.float64)) for s in range(200)])
    mean, se = grams.mean(axis=0), grams.std(axis=0, ddof=1) / np.sqrt(len(grams))
    z = np.abs(mean - reference(X, sigma)) / np.maximum(se, 1e-12)
    off = ~np.eye(len(X), dtype=bool)
    assert z[off].max() < 5.0
    other = euclidean_laplacian(X, X, sigma) if kernel == "l1" else sk_laplacian(X, X, gamma=sigma)
    assert np.median((np.abs(mean - other) / se)[off]) > 5.0


def test_random_fourier_is_unbiased_and_error_falls_with_R():
    rng = np.random.default_rng(2)
    X = rng.random((40, 3))
    K = sk_laplacian(X, X, gamma=1.2)
    errors = []
    for R in (64, 1024, 16384):
        gram = np.mean([(lambda Z: Z @ Z.T)(RandomFourierFeatures(n_components=R, sigma=1.2, random_state=s).fit_transform(X).astype(np.float64))
                        for s in range(3)], axis=0)
        errors.append(np.abs(gram - K).mean())
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.01
    assert 2.0 < errors[0] / errors[1] < 8.0  # about sqrt(16) = 4 per 16x more features


def test_nystrom_reconstructs_the_kernel_statistically_and_exactly_at_R_equal_N():
    rng = np.random.default_rng(3)
    X = rng.random((200, 3))
    K = sk_laplacian(X, X, gamma=1.0)
    Z = NystromFeatures(n_components=200, sigma=1.0, random_state=0).fit_transform(X)
    np.testing.assert_allclose(Z @ Z.T, K, atol=1e-8)
    err = [np.abs((lambda Z: Z @ Z.T)(NystromFeatures(n_components=R, sigma=1.0, random_state=0).fit_transform(X)) - K).mean() for R in (10, 50, 150)]
    assert err[0] > err[1] > err[2]


def test_nystrom_euclidean_at_R_equal_N_reconstructs_its_kernel():
    X = np.random.default_rng(13).random((120, 3))
    Z = NystromFeatures(n_components=120, sigma=0.8, kernel="euclidean", random_state=0).fit_transform(X)
    np.testing.assert_allclose(Z @ Z.T, euclidean_laplacian(X, X, 0.8), atol=1e-8)


def test_nystrom_with_more_landmarks_than_rows_uses_every_row():
    X = np.random.default_rng(14).random((30, 3))
    with pytest.warns(UserWarning, match="only 30 training rows"):
        feats = NystromFeatures(n_components=64, sigma=1.0, random_state=0).fit(X)
    assert feats.n_components_ == 30 and feats.transform(X).shape == (30, 30)


def test_exact_kernel_ridge_equals_scikit_learn(regression):
    X, y, Xt, _ = regression
    ours = ExactKernelRegressor(sigma=2.0, lam=0.05, center=True).fit(X, y)
    ref = KernelRidge(alpha=0.05, kernel="laplacian", gamma=2.0).fit(X, y - y.mean())
    np.testing.assert_allclose(ours.predict(Xt), ref.predict(Xt) + y.mean(), rtol=1e-5, atol=1e-8)  # float32 K
    euclid = ExactKernelRegressor(sigma=2.0, kernel="euclidean", lam=0.05).fit(X, y)
    ref = KernelRidge(alpha=0.05, kernel="precomputed").fit(euclidean_laplacian(X, X, 2.0), y - y.mean())
    np.testing.assert_allclose(euclid.predict(Xt), ref.predict(euclidean_laplacian(Xt, X, 2.0)) + y.mean(),
                               rtol=1e-5, atol=1e-8)


def test_nystrom_with_all_points_as_landmarks_equals_exact(regression):
    X, y, Xt, _ = regression
    exact = ExactKernelRegressor(sigma=2.0, lam=0.05).fit(X, y)
    nys = NystromRegressor(n_components=300, sigma=2.0, lam=0.05, random_state=0).fit(X, y)
    assert nys.solver_ == "direct"  # the authors' solve is the default
    np.testing.assert_allclose(nys.predict(Xt), exact.predict(Xt), atol=1e-6)
    nys_cg = NystromRegressor(n_components=300, sigma=2.0, lam=0.05, solver="cg", maxit=3000, tol=1e-12,
                              early_stopping=False).fit(X, y)
    np.testing.assert_allclose(nys_cg.predict(Xt), exact.predict(Xt), atol=1e-5)


def reference_leaf_sizes(n: int, r: int) -> list[int]:
    """RLCM's rule on a plain recursion: a node of at least 2r rows splits at its median."""
    if n < 2 * r:
        return [n]
    return reference_leaf_sizes(n // 2, r) + reference_leaf_sizes(n - n // 2, r)


@pytest.mark.parametrize("n, r", [(300, 40), (300, 150), (300, 151), (1000, 7), (17, 1), (64, 64)])
def test_block_leaves_follow_rlcm_rule(n, r):
    X = np.random.default_rng(15).random((n, 3))
    model = IndependentBlockRegressor(leaf_size=r, random_state=0).fit(X, X[:, 0])
    sizes = sorted(len(rows) for rows in model.leaf_rows_)
    assert sizes == sorted(reference_leaf_sizes(n, r))
    assert min(sizes) >= min(r, n) and max(sizes) <= max(2 * r - 1, n if n < 2 * r else 0)


def test_block_with_one_leaf_equals_exact_and_routes_like_training(regression):
    X, y, Xt, _ = regression
    exact = ExactKernelRegressor(sigma=2.0, lam=0.05).fit(X, y)
    one_leaf = IndependentBlockRegressor(leaf_size=151, sigma=2.0, lam=0.05).fit(X, y)  # 300 < 2 * 151: no split
    assert len(one_leaf.leaf_rows_) == 1
    np.testing.assert_allclose(one_leaf.predict(Xt), exact.predict(Xt), rtol=1e-5, atol=1e-8)  # exact: float32 K
    blocks = IndependentBlockRegressor(leaf_size=40, sigma=2.0, lam=0.05, random_state=0).fit(X, y)
    sizes = [len(r) for r in blocks.leaf_rows_]
    assert min(sizes) >= 40 and max(sizes) <= 79 and sum(sizes) == 300 and len(sizes) == 4
    leaf_of_row = np.empty(300, int)
    for leaf, rows in enumerate(blocks.leaf_rows_):
        leaf_of_row[rows] = leaf
    np.testing.assert_array_equal(blocks.route(X), leaf_of_row)
    # each training prediction equals its own leaf's exact KRR prediction
    leaf = blocks.leaf_rows_[3]
    local = ExactKernelRegressor(sigma=2.0, lam=0.05, center=False).fit(X[leaf], y[leaf] - y.mean())
    np.testing.assert_allclose(blocks.predict(X[leaf]), local.predict(X[leaf]) + y.mean(), rtol=1e-5, atol=1e-8)


def test_rf_direct_and_cg_agree_and_center_default(regression):
    X, y, Xt, yt = regression
    direct = RandomFourierRegressor(n_components=64, sigma=2.0, lam=0.05, random_state=0).fit(X, y)
    cg = RandomFourierRegressor(n_components=64, sigma=2.0, lam=0.05, solver="cg", maxit=2000, tol=1e-12,
                                early_stopping=False, random_state=0).fit(X, y)
    assert direct.solver_ == "direct" and direct.center_ is True
    np.testing.assert_allclose(direct.predict(Xt), cg.predict(Xt), atol=1e-5)
    rb = RandomBinningRegressor(n_grids=64, sigma=2.0, lam=0.05, random_state=0).fit(X, y)
    rb_direct = RandomBinningRegressor(n_grids=64, sigma=2.0, lam=0.05, solver="direct", random_state=0).fit(X, y)
    rb_cg = RandomBinningRegressor(n_grids=64, sigma=2.0, lam=0.05, maxit=5000, tol=1e-13, early_stopping=False,
                                   random_state=0).fit(X, y)
    assert rb.solver_ == "pcg" and rb.center_ is False
    np.testing.assert_allclose(rb_direct.predict(Xt), rb_cg.predict(Xt), atol=1e-6)


def test_every_method_beats_the_mean_predictor(regression):
    X, y, Xt, yt = regression
    baseline = np.linalg.norm(yt - y.mean()) / np.linalg.norm(yt)
    models = [RandomBinningRegressor(n_grids=64, sigma=2.0, random_state=0), RandomFourierRegressor(n_components=64, sigma=2.0, random_state=0),
              NystromRegressor(n_components=64, sigma=2.0, random_state=0), IndependentBlockRegressor(leaf_size=64, sigma=2.0, random_state=0),
              ExactKernelRegressor(sigma=2.0)]
    models += [cls(**{"leaf_size" if cls is IndependentBlockRegressor else "n_components": 64}, sigma=2.0,
                   kernel="euclidean", random_state=0)
               for cls in (RandomFourierRegressor, NystromRegressor, IndependentBlockRegressor)]
    for model in models:
        err = np.linalg.norm(model.fit(X, y).predict(Xt) - yt) / np.linalg.norm(yt)
        assert err < 0.6 * baseline, type(model).__name__


def test_memory_guard_refuses_before_allocating(regression):
    X, y, _, _ = regression
    with pytest.raises(MemoryLimitError, match=r"exact kernel on N = 300 rows needs about 0\.[0-9]+ MB, more than the "
                                               r"memory limit of 0\.0102 MB \(raise it with memory_limit_gb in Python"):
        ExactKernelRegressor(memory_limit_gb=1e-5).fit(X, y)
    with pytest.raises(MemoryLimitError, match="rf features"):
        RandomFourierRegressor(n_components=4096, memory_limit_gb=1e-3).fit(X, y)
    huge_n = 10**6
    from rbrepro.memory import check_memory

    with pytest.raises(MemoryLimitError, match=r"needs about 7450\.7 GB"):
        check_memory("exact", ExactKernelRegressor.memory_needed(huge_n, 10))


def _reads_the_high_water_mark() -> bool:
    """PeakMemory reads VmHWM after resetting it (Linux, where /proc/self/clear_refs is writable) and
    hands freed memory back with glibc's malloc_trim; elsewhere it samples and cannot see a
    millisecond's allocation."""
    from rbrepro.memory import release_free_memory

    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return release_free_memory()


@pytest.mark.skipif(not _reads_the_high_water_mark(), reason="needs Linux's VmHWM reset and glibc's malloc_trim")
def test_peak_memory_counts_a_fit_that_reuses_memory_freed_before_it():
    """glibc keeps freed blocks under its mmap threshold resident: without handing them back first,
    the second and later identical fits in one process read as using no memory at all."""
    from rbrepro.memory import PeakMemory

    np.ones(3_000_000).sum()  # a freed 24 MB mmapped block raises glibc's mmap threshold above 5 MB
    block_mb = 655_360 * 8 / 2**20  # 5 MB, served from the heap from now on

    def fit_like():
        z = np.ones(655_360)
        return float(z.sum())

    peaks = []
    for _ in range(4):
        with PeakMemory() as peak:
            fit_like()
        peaks.append(peak.peak_mb)
    assert min(peaks) >= 0.9 * block_mb, peaks


@pytest.mark.parametrize("kernel", ["l1", "euclidean"])
def test_the_float32_factorization_refined_to_float64_residuals_matches_the_float64_solve(kernel):
    """The exact kernel's solve (float32 K and factor, PCG with float64 residuals) agrees with a
    float64 Cholesky solve of the same float32 K to 1e-9 relative, and with the float64 K's
    solution to 1e-5: the only difference left is K's entries rounded to float32."""
    import scipy.linalg

    from rbrepro.features.laplacian import laplacian_kernel
    from rbrepro.solvers.direct import refined_cholesky_solve

    rng = np.random.default_rng(3)
    X = rng.random((1500, 6)).astype(np.float32)
    Y = rng.standard_normal((1500, 3))
    K64 = laplacian_kernel(X, X, 2.0, kernel=kernel)
    K32 = K64.astype(np.float32)
    C, iterations, residual = refined_cholesky_solve(K32, 1e-3, Y)
    same_K = scipy.linalg.solve(K32.astype(np.float64) + 1e-3 * np.eye(1500), Y, assume_a="pos")
    true_K = scipy.linalg.solve(K64 + 1e-3 * np.eye(1500), Y, assume_a="pos")
    assert residual <= 1e-10 and 0 < iterations <= 10
    assert np.linalg.norm(C - same_K) / np.linalg.norm(same_K) < 1e-9
    assert np.linalg.norm(C - true_K) / np.linalg.norm(true_K) < 1e-5
    # without refinement, the float32 factor alone is far less accurate: the refinement does the work
    alone = scipy.linalg.cho_solve(scipy.linalg.cho_factor(K32 + np.float32(1e-3) * np.eye(1500, dtype=np.float32)),
                                   Y.astype(np.float32))
    assert np.linalg.norm(alone - same_K) / np.linalg.norm(same_K) > 1e3 * np.linalg.norm(C - same_K) / np.linalg.norm(same_K)


def test_the_exact_kernel_falls_back_to_float64_when_float32_cannot_factor():
    """lam = 0 with duplicated rows: K is singular, float32 Cholesky fails; the fit still ends."""
    from rbrepro.models import ExactKernelRegressor

    X = np.repeat(np.random.default_rng(0).random((20, 3)), 2, axis=0)
    y = X.sum(axis=1)
    model = ExactKernelRegressor(sigma=1.0, lam=0.0).fit(X, y)
    assert np.isfinite(model.predict(X)).all() and model.cg_iterations_ == 0


@pytest.mark.parametrize("cls", [ExactKernelRegressor, IndependentBlockRegressor])
def test_set_params_after_fit_leaves_a_fitted_kernel_models_predictions_alone(cls, regression):
    X, y, Xt, _ = regression
    model = cls(sigma=2.0).fit(X, y)
    before = model.predict(Xt)
    model.set_params(sigma=-5.0)  # invalid, and different: prediction must use the fitted state
    np.testing.assert_array_equal(model.predict(Xt), before)
    with pytest.raises(ValueError, match="sigma"):
        model.fit(X, y)  # a refit validates the new parameters
