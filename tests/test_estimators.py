"""The scikit-learn-style classes: Pipeline, GridSearchCV, clone, determinism, accuracy."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline

from rbrepro.features import RandomBinningFeatures
from rbrepro.models import RandomBinningRidge


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return train_test_split(X / 16.0, y, test_size=0.25, random_state=0)


def test_init_only_stores_parameters_and_clone_works():
    rb = RandomBinningFeatures(n_grids=7, sigma=0.5, random_state=3)
    assert rb.get_params() == {"n_grids": 7, "sigma": 0.5, "random_state": 3}
    assert clone(rb).get_params() == rb.get_params()
    assert not hasattr(RandomBinningFeatures(n_grids=-1), "n_bins_")  # validation happens at fit


def test_pipeline_and_grid_search(digits):
    X_tr, X_te, y_tr, y_te = digits
    pipe = Pipeline([("rb", RandomBinningFeatures(n_grids=32, random_state=0)), ("clf", RidgeClassifier(alpha=1.0))])
    search = GridSearchCV(pipe, {"rb__sigma": [0.03, 0.3, 30.0]}, cv=3)
    search.fit(X_tr, y_tr)
    assert search.best_params_["rb__sigma"] == 0.3  # too wide and too narrow both lose
    assert search.score(X_te, y_te) > 0.9


def test_sparse_input_in_a_pipeline(digits):
    X_tr, X_te, y_tr, y_te = digits
    pipe = Pipeline([("rb", RandomBinningFeatures(n_grids=32, sigma=0.3, random_state=0)), ("clf", Ridge(alpha=1.0))])
    dense_pred = pipe.fit(X_tr, y_tr).predict(X_te)
    sparse_pred = pipe.fit(sp.csr_matrix(X_tr), y_tr).predict(sp.csr_matrix(X_te))
    np.testing.assert_allclose(dense_pred, sparse_pred)


def test_rb_ridge_classifies_digits_and_is_deterministic(digits):
    X_tr, X_te, y_tr, y_te = digits
    model = RandomBinningRidge(n_grids=64, sigma=0.3, task="classification", random_state=0).fit(X_tr, y_tr)
    acc = np.mean(model.predict(X_te) == y_te)
    linear = RidgeClassifier(alpha=0.01).fit(X_tr, y_tr).score(X_te, y_te)
    assert acc > 0.95 and acc > linear
    again = RandomBinningRidge(n_grids=64, sigma=0.3, task="classification", random_state=0).fit(X_tr, y_tr)
    np.testing.assert_array_equal(model.coef_, again.coef_)
    assert model.cg_iterations_ <= 50 and model.train_s_ == pytest.approx(model.featurize_s_ + model.solve_s_)


def test_rb_ridge_binary_and_regression_targets():
    rng = np.random.default_rng(0)
    X = rng.random((600, 3))
    y_reg = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 3.0
    reg = RandomBinningRidge(n_grids=64, sigma=2.0, lam=0.01, center=True, random_state=0).fit(X[:500], y_reg[:500])
    rel = np.linalg.norm(reg.predict(X[500:]) - y_reg[500:]) / np.linalg.norm(y_reg[500:])
    assert rel < 0.05 and reg.y_mean_[0] == pytest.approx(y_reg[:500].mean())
    y_bin = np.where(np.linalg.norm(X - 0.5, axis=1) < 0.35, "in", "out")
    clf = RandomBinningRidge(n_grids=64, sigma=2.0, task="classification", random_state=0).fit(X[:500], y_bin[:500])
    assert set(clf.predict(X[500:])) <= {"in", "out"}
    assert np.mean(clf.predict(X[500:]) == y_bin[500:]) > 0.9
    with pytest.raises(ValueError):
        RandomBinningRidge(task="ranking").fit(X, y_reg)


@pytest.mark.parametrize("method", ["rb", "rf", "nystrom"])
def test_prediction_in_row_blocks_equals_one_block(method, monkeypatch):
    """Large test sets are featurized in row blocks; the scores must not depend on the block size."""
    import rbrepro.models.feature_ridge as feature_ridge
    from rbrepro.models import RandomFeatureRidge

    rng = np.random.default_rng(0)
    X = rng.random((2000, 5))
    model = RandomFeatureRidge(method, 64, 1.0, 0.01, task="classification", random_state=0).fit(X, X[:, 0] > 0.5)
    whole = model.decision_function(X)
    monkeypatch.setattr(feature_ridge, "PREDICT_BLOCK_ENTRIES", 64 * 300)  # 7 blocks, the last one short
    tol = 1e-5 if method == "rf" else 1e-12  # RF features are float32 sgemm, whose sums depend on the shape
    np.testing.assert_allclose(model.decision_function(X), whole, rtol=0, atol=tol)
    np.testing.assert_allclose(model.decision_function(sp.csr_matrix(X)), whole, rtol=0, atol=tol)


def test_cg_on_blocks_of_targets_when_all_at_once_would_exceed_the_memory_limit(digits):
    """Ten one-vs-all targets whose CG vectors exceed the limit are solved a few at a time,
    with the same coefficients (each column's CG is independent); below one column: refused."""
    from rbrepro.memory import MemoryLimitError
    from rbrepro.models import RandomFeatureRidge
    from rbrepro.models.feature_ridge import cg_columns_per_pass, solve_memory

    X_tr, X_te, y_tr, y_te = digits
    whole = RandomFeatureRidge("rb", 16, 3.0, 0.01, task="classification", random_state=0).fit(X_tr, y_tr)
    D = whole.n_columns_
    limit_gb = (8.0 * D * 10 + 3.5 * solve_memory("rb", "cg", D, 1)) / 2**30  # room for 3 columns per pass
    assert cg_columns_per_pass(D, 10, limit_gb * 2**30) == 3
    blocked = RandomFeatureRidge("rb", 16, 3.0, 0.01, task="classification", random_state=0,
                                 memory_limit_gb=limit_gb).fit(X_tr, y_tr)
    assert whole.cg_passes_ == 1 and blocked.cg_passes_ == 4
    np.testing.assert_allclose(blocked.coef_, whole.coef_, rtol=0, atol=1e-12)
    assert blocked.cg_iterations_ == whole.cg_iterations_
    np.testing.assert_array_equal(blocked.predict(X_te), whole.predict(X_te))
    with pytest.raises(MemoryLimitError, match="cg solve for D"):
        RandomFeatureRidge("rb", 16, 3.0, 0.01, task="classification", random_state=0,
                           memory_limit_gb=8.0 * D * 10.5 / 2**30).fit(X_tr, y_tr)
