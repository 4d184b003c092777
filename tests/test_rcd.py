"""L1 randomized coordinate descent against scikit-learn's L1 solvers, a numpy reference, and threads."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import Lasso, LogisticRegression
from sklearn.svm import LinearSVC

from rbrepro.features import RandomBinningFeatures
from rbrepro.features.random_fourier import RandomFourierFeatures
from rbrepro.features.reference import dense_features
from rbrepro.solvers import _rcd_kernels as k
from rbrepro.solvers.rcd import l1_rcd, objective, prepare
from rbrepro.solvers.reference import rcd_epoch


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.random((400, 3))
    y_cls = np.where(np.linalg.norm(X - 0.5, axis=1) < 0.4, 1.0, -1.0)
    y_reg = np.sin(3 * X[:, 0]) + X[:, 1]
    Z = RandomBinningFeatures(n_grids=16, sigma=2.0, random_state=0).fit_transform_binned(X)
    return X, y_cls, y_reg, Z, dense_features(Z.ids, Z.n_columns)


def test_csc_of_the_compact_layout(problem):
    _, _, _, Z, dense = problem
    cols = prepare(Z)
    for j in (0, 5, Z.n_columns - 1):
        rows = np.sort(cols.col_rows[cols.col_ptr[j]:cols.col_ptr[j + 1]])
        np.testing.assert_array_equal(rows, np.flatnonzero(dense[:, j]))


@pytest.mark.parametrize("loss", ["square", "squared_hinge", "logistic"])
def test_numba_epochs_equal_the_numpy_reference(problem, loss):
    _, y_cls, y_reg, Z, dense = problem
    y = y_reg if loss == "square" else y_cls
    order = np.random.default_rng(1).permutation(Z.n_columns)
    ref = rcd_epoch(dense, y, np.zeros(Z.n_columns), 1e-3, loss, order)
    code = k.LOSSES[loss]
    cols = prepare(Z)
    w, yhat = np.zeros(Z.n_columns), np.zeros(len(y))
    k.binned_epoch(order, cols.col_ptr, cols.col_rows, cols.value, w, yhat, y, 1e-3, k.CURVATURE[code], code)
    np.testing.assert_allclose(w, ref, atol=1e-12)
    np.testing.assert_allclose(yhat, dense @ w, atol=1e-12)
    dcols = prepare(dense)
    w2, yhat2 = np.zeros(Z.n_columns), np.zeros(len(y))
    k.dense_epoch(order, dcols.ZT, dcols.col_sq, w2, yhat2, y, 1e-3, k.CURVATURE[code], code)
    np.testing.assert_allclose(w2, ref, atol=1e-12)


def _sk_objective(loss, lam, w, Z, y):
    return objective(loss, lam, w, Z @ w, y)


def test_square_loss_matches_lasso(problem):
    _, _, y, Z, dense = problem
    lam = 2e-3
    ours = l1_rcd(Z, y, lam, "square", epochs=300)
    ref = Lasso(alpha=lam, fit_intercept=False, tol=1e-12, max_iter=100000).fit(dense, y).coef_
    f_ref = _sk_objective("square", lam, ref, dense, y)
    assert ours.objective == pytest.approx(f_ref, rel=1e-5)
    assert ours.objective <= f_ref + 1e-9


def test_squared_hinge_matches_linear_svc(problem):
    _, y, _, Z, dense = problem
    lam, n = 1e-3, len(y)
    ours = l1_rcd(Z, y, lam, "squared_hinge", epochs=3000)
    svc = LinearSVC(penalty="l1", loss="squared_hinge", dual=False, C=1 / (2 * n * lam), fit_intercept=False,
                    tol=1e-10, max_iter=100000).fit(dense, y)
    f_ref = _sk_objective("squared_hinge", lam, svc.coef_.ravel(), dense, y)
    assert ours.objective == pytest.approx(f_ref, rel=1e-4)


@pytest.mark.slow
def test_logistic_matches_logistic_regression(problem):
    _, y, _, Z, dense = problem
    lam, n = 1e-3, len(y)
    ours = l1_rcd(Z, y, lam, "logistic", epochs=600)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lr = LogisticRegression(penalty="l1", C=1 / (n * lam), solver="liblinear", fit_intercept=False, tol=1e-12,
                                max_iter=100000).fit(dense, y)
    f_ref = _sk_objective("logistic", lam, lr.coef_.ravel(), dense, y)
    assert ours.objective == pytest.approx(f_ref, rel=1e-4)


@pytest.mark.parametrize("variant", ["async", "sync"])
def test_two_threads_reach_the_single_thread_objective(problem, variant):
    _, y, _, Z, _ = problem
    single = l1_rcd(Z, y, 1e-3, "squared_hinge", epochs=3000, threads=1)
    multi = l1_rcd(Z, y, 1e-3, "squared_hinge", epochs=3000, threads=2, variant=variant)
    assert multi.variant == variant and multi.threads == 2
    assert multi.objective == pytest.approx(single.objective, rel=2e-4)
    if variant == "sync":
        assert multi.damping > 1.0  # eq. 29: 1 + (R - 1)(S - 1)/(D - 1)
        assert multi.damping == pytest.approx(1 + 15 * 127 / (Z.n_columns - 1))


def test_rf_features_and_traces():
    rng = np.random.default_rng(4)
    X = rng.random((300, 3))
    y = np.where(X[:, 0] > 0.5, 1.0, -1.0)
    Z = RandomFourierFeatures(n_components=40, sigma=1.0, random_state=0).fit_transform(X)
    res = l1_rcd(Z, y, 1e-3, "logistic", epochs=30, threads=2, variant="sync")
    objs = [t[1] for t in res.trace]
    assert len(res.trace) == 31 and objs[-1] < objs[0]
    assert res.damping == pytest.approx(1 + 39 * 127 / 39)  # dense rows: omega = D, so damping = S
    times = [t[0] for t in res.trace]
    assert times == sorted(times)
    target = l1_rcd(Z, y, 1e-3, "logistic", epochs=1000, target=objs[5])
    assert target.epochs <= 10


def test_bad_arguments():
    Z = np.ones((3, 2))
    with pytest.raises(ValueError, match="loss"):
        l1_rcd(Z, np.ones(3), 0.1, "hinge")
    with pytest.raises(ValueError, match="variant"):
        l1_rcd(Z, np.ones(3), 0.1, "square", variant="wild")
