"""RF, Nystrom, block and exact kernel ridge against independent references."""

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import laplacian_kernel as sk_laplacian

from rbrepro.features.laplacian import laplacian_kernel
from rbrepro.features.nystrom import NystromFeatures
from rbrepro.features.random_fourier import RandomFourierFeatures
from rbrepro.memory import MemoryLimitError
from rbrepro.models import RandomFeatureRidge
from rbrepro.models.kernel_ridge import ExactKernelRidge, IndependentBlockRidge


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


def test_random_fourier_is_unbiased_and_error_falls_with_R():
    rng = np.random.default_rng(2)
    X = rng.random((40, 3))
    K = sk_laplacian(X, X, gamma=1.2)
    errors = []
    for R in (64, 1024, 16384):
        gram = np.mean([(lambda Z: Z @ Z.T)(RandomFourierFeatures(R, 1.2, s).fit_transform(X).astype(np.float64))
                        for s in range(3)], axis=0)
        errors.append(np.abs(gram - K).mean())
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.01
    assert 2.0 < errors[0] / errors[1] < 8.0  # about sqrt(16) = 4 per 16x more features


def test_nystrom_reconstructs_the_kernel_statistically_and_exactly_at_R_equal_N():
    rng = np.random.default_rng(3)
    X = rng.random((200, 3))
    K = sk_laplacian(X, X, gamma=1.0)
    Z = NystromFeatures(200, 1.0, 0).fit_transform(X)
    np.testing.assert_allclose(Z @ Z.T, K, atol=1e-8)
    err = [np.abs((lambda Z: Z @ Z.T)(NystromFeatures(R, 1.0, 0).fit_transform(X)) - K).mean() for R in (10, 50, 150)]
    assert err[0] > err[1] > err[2]


def test_exact_kernel_ridge_equals_scikit_learn(regression):
    X, y, Xt, _ = regression
    ours = ExactKernelRidge(sigma=2.0, lam=0.05, center=True).fit(X, y)
    ref = KernelRidge(alpha=0.05, kernel="laplacian", gamma=2.0).fit(X, y - y.mean())
    np.testing.assert_allclose(ours.predict(Xt), ref.predict(Xt) + y.mean(), atol=1e-10)


def test_nystrom_with_all_points_as_landmarks_equals_exact(regression):
    X, y, Xt, _ = regression
    exact = ExactKernelRidge(sigma=2.0, lam=0.05).fit(X, y)
    nys = RandomFeatureRidge("nystrom", 300, 2.0, 0.05, solver="direct", random_state=0).fit(X, y)
    np.testing.assert_allclose(nys.predict(Xt), exact.predict(Xt), atol=1e-6)
    nys_cg = RandomFeatureRidge("nystrom", 300, 2.0, 0.05, solver="cg", maxit=3000, tol=1e-12).fit(X, y)
    np.testing.assert_allclose(nys_cg.predict(Xt), exact.predict(Xt), atol=1e-5)


def test_block_with_one_leaf_equals_exact_and_routes_like_training(regression):
    X, y, Xt, _ = regression
    exact = ExactKernelRidge(sigma=2.0, lam=0.05).fit(X, y)
    one_leaf = IndependentBlockRidge(leaf_size=300, sigma=2.0, lam=0.05).fit(X, y)
    np.testing.assert_allclose(one_leaf.predict(Xt), exact.predict(Xt), atol=1e-12)
    blocks = IndependentBlockRidge(leaf_size=40, sigma=2.0, lam=0.05, random_state=0).fit(X, y)
    sizes = [len(r) for r in blocks.leaf_rows_]
    assert max(sizes) <= 40 and sum(sizes) == 300 and len(sizes) == 8
    leaf_of_row = np.empty(300, int)
    for leaf, rows in enumerate(blocks.leaf_rows_):
        leaf_of_row[rows] = leaf
    np.testing.assert_array_equal(blocks.route(X), leaf_of_row)
    # each training prediction equals its own leaf's exact KRR prediction
    leaf = blocks.leaf_rows_[3]
    local = ExactKernelRidge(sigma=2.0, lam=0.05, center=False).fit(X[leaf], y[leaf] - y.mean())
    np.testing.assert_allclose(blocks.predict(X[leaf]), local.predict(X[leaf]) + y.mean(), atol=1e-10)


def test_rf_direct_and_cg_agree_and_center_default(regression):
    X, y, Xt, yt = regression
    direct = RandomFeatureRidge("rf", 64, 2.0, 0.05, random_state=0).fit(X, y)
    cg = RandomFeatureRidge("rf", 64, 2.0, 0.05, solver="cg", maxit=2000, tol=1e-12, random_state=0).fit(X, y)
    assert direct.solver_ == "direct" and direct.center_ is True
    np.testing.assert_allclose(direct.predict(Xt), cg.predict(Xt), atol=1e-5)
    rb = RandomFeatureRidge("rb", 64, 2.0, 0.05, random_state=0).fit(X, y)
    rb_direct = RandomFeatureRidge("rb", 64, 2.0, 0.05, solver="direct", random_state=0).fit(X, y)
    rb_cg = RandomFeatureRidge("rb", 64, 2.0, 0.05, maxit=5000, tol=1e-13, random_state=0).fit(X, y)
    assert rb.solver_ == "cg" and rb.center_ is False
    np.testing.assert_allclose(rb_direct.predict(Xt), rb_cg.predict(Xt), atol=1e-6)


def test_every_method_beats_the_mean_predictor(regression):
    X, y, Xt, yt = regression
    baseline = np.linalg.norm(yt - y.mean()) / np.linalg.norm(yt)
    models = [RandomFeatureRidge(m, 64, 2.0, 0.01, random_state=0) for m in ("rb", "rf", "nystrom")]
    models += [IndependentBlockRidge(64, 2.0, 0.01, random_state=0), ExactKernelRidge(2.0, 0.01)]
    for model in models:
        err = np.linalg.norm(model.fit(X, y).predict(Xt) - yt) / np.linalg.norm(yt)
        assert err < 0.6 * baseline, type(model).__name__


def test_memory_guard_refuses_before_allocating(regression):
    X, y, _, _ = regression
    with pytest.raises(MemoryLimitError, match=r"exact kernel on N = 300 rows needs about 0\.0 GB, more than the "
                                               r"memory limit of 0\.0 GB"):
        ExactKernelRidge(memory_limit_gb=1e-5).fit(X, y)
    with pytest.raises(MemoryLimitError, match="rf features"):
        RandomFeatureRidge("rf", 4096, memory_limit_gb=1e-3).fit(X, y)
    huge_n = 10**6
    from rbrepro.memory import check_memory

    with pytest.raises(MemoryLimitError, match=r"needs about 7450\.7 GB"):
        check_memory("exact", ExactKernelRidge.memory_needed(huge_n, 10))
