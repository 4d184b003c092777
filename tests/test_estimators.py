"""The scikit-learn classes: conformance (check_estimator), Pipeline, GridSearchCV, clone,
determinism, accuracy."""

import inspect

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import ClassifierMixin, RegressorMixin, clone, is_classifier, is_regressor
from sklearn.datasets import load_digits
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import rbrepro.features
import rbrepro.models
from rbrepro.features import RandomBinningFeatures
from rbrepro.models import RandomBinningClassifier, RandomBinningRegressor

EXPORTED = [getattr(rbrepro.models, name) for name in rbrepro.models.__all__ if name not in ("load", "save")] + \
    [getattr(rbrepro.features, name) for name in rbrepro.features.__all__ if name != "BinnedMatrix"]


@parametrize_with_checks([cls() for cls in EXPORTED])
def test_scikit_learn_conformance(estimator, check):
    """Every exported estimator passes scikit-learn's own checks, none skipped or expected to fail
    (scikit-learn itself skips its array-API check unless SCIPY_ARRAY_API is set)."""
    check(estimator)


def test_every_export_is_built_without_arguments_and_has_its_role():
    for cls in EXPORTED:
        est = cls()
        name = cls.__name__
        assert name in (rbrepro.models.__all__ + rbrepro.features.__all__)
        if name.endswith("Classifier"):
            assert is_classifier(est) and issubclass(cls, ClassifierMixin) and hasattr(est, "decision_function")
        elif name.endswith("Regressor"):
            assert is_regressor(est) and issubclass(cls, RegressorMixin)
        else:
            assert hasattr(est, "transform")
        doc = inspect.getdoc(cls)  # numpydoc sections
        assert "Parameters\n----------" in doc and "Attributes\n----------" in doc, name
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
        assert all(p.kind is p.KEYWORD_ONLY for p in params), f"{name}: parameters are keyword-only"


@pytest.mark.parametrize("cls", EXPORTED)
def test_fit_never_changes_parameters_and_predict_before_fit_is_refused(cls):
    est = cls()
    before = est.get_params()
    X = np.random.default_rng(0).random((40, 3))
    with pytest.raises(NotFittedError):
        (est.transform if hasattr(est, "transform") else est.predict)(X)
    y = (X[:, 0] > 0.5).astype(int)
    est.fit(X.tolist(), y.tolist())  # any array-like
    assert est.get_params() == before


def test_grid_search_over_sigma_with_default_scoring_on_digits():
    """A user's first run: GridSearchCV(make_pipeline(MinMaxScaler(), clf), sigma grid), default
    scoring (accuracy, through ClassifierMixin.score), and cross_val_score."""
    X, y = load_digits(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0)
    clf = RandomBinningClassifier(n_grids=64, random_state=0)
    search = GridSearchCV(make_pipeline(MinMaxScaler(), clf), {"randombinningclassifier__sigma": [0.1, 0.3]}, cv=3)
    search.fit(X_tr, y_tr)
    assert search.best_params_["randombinningclassifier__sigma"] == 0.3
    assert search.score(X_te, y_te) > 0.95
    scores = cross_val_score(make_pipeline(MinMaxScaler(), RandomBinningClassifier(n_grids=64, sigma=0.3, random_state=0)),
                             X, y, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.9


def test_regressor_refuses_to_be_confused_with_a_classifier():
    """A classifier is a classifier by its class: continuous targets are refused, not regressed."""
    X = np.random.default_rng(1).random((50, 3))
    with pytest.raises(ValueError, match="Unknown label type"):
        RandomBinningClassifier().fit(X, X[:, 0])
    assert RandomBinningRegressor().fit(X, X[:, 0]).score(X, X[:, 0]) > 0.5


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return train_test_split(X / 16.0, y, test_size=0.25, random_state=0)


def test_init_only_stores_parameters_and_clone_works():
    rb = RandomBinningFeatures(n_grids=7, sigma=0.5, random_state=3)
    assert rb.get_params() == {"n_grids": 7, "sigma": 0.5, "random_state": 3, "draws": "numpy", "memory_limit_gb": None}
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
    model = RandomBinningClassifier(n_grids=64, sigma=0.3, random_state=0).fit(X_tr, y_tr)
    acc = np.mean(model.predict(X_te) == y_te)
    linear = RidgeClassifier(alpha=0.01).fit(X_tr, y_tr).score(X_te, y_te)
    assert acc > 0.95 and acc > linear
    again = RandomBinningClassifier(n_grids=64, sigma=0.3, random_state=0).fit(X_tr, y_tr)
    np.testing.assert_array_equal(model.coef_, again.coef_)
    assert model.cg_iterations_ <= 50 and model.train_s_ == pytest.approx(model.featurize_s_ + model.solve_s_)


def test_rb_ridge_binary_and_regression_targets():
    rng = np.random.default_rng(0)
    X = rng.random((600, 3))
    y_reg = np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 3.0
    reg = RandomBinningRegressor(n_grids=64, sigma=2.0, lam=0.01, center=True, random_state=0).fit(X[:500],
                                                                                                  y_reg[:500])
    rel = np.linalg.norm(reg.predict(X[500:]) - y_reg[500:]) / np.linalg.norm(y_reg[500:])
    assert rel < 0.05 and reg.y_mean_[0] == pytest.approx(y_reg[:500].mean())
    y_bin = np.where(np.linalg.norm(X - 0.5, axis=1) < 0.35, "in", "out")
    clf = RandomBinningClassifier(n_grids=64, sigma=2.0, random_state=0).fit(X[:500], y_bin[:500])
    assert set(clf.predict(X[500:])) <= {"in", "out"}
    assert np.mean(clf.predict(X[500:]) == y_bin[500:]) > 0.9
    with pytest.raises(ValueError, match="solver must be one of"):
        RandomBinningRegressor(solver="lsqr").fit(X, y_reg)


@pytest.mark.parametrize("method", ["rb", "rf", "nystrom"])
def test_prediction_in_row_blocks_equals_one_block(method, monkeypatch):
    """Large test sets are featurized in row blocks; the scores must not depend on the block size."""
    import rbrepro.models.feature_ridge as feature_ridge
    from rbrepro.models.registry import method_spec

    rng = np.random.default_rng(0)
    X = rng.random((2000, 5))
    cls = method_spec(method).estimator("classification")
    model = cls(**{cls().spec.r_parameter: 64}, sigma=1.0, random_state=0).fit(X, X[:, 0] > 0.5)
    whole = model.decision_function(X)
    monkeypatch.setattr(feature_ridge, "PREDICT_BLOCK_ENTRIES", 64 * 300)  # 7 blocks, the last one short
    tol = 1e-5 if method == "rf" else 1e-12  # RF features are float32 sgemm, whose sums depend on the shape
    np.testing.assert_allclose(model.decision_function(X), whole, rtol=0, atol=tol)
    np.testing.assert_allclose(model.decision_function(sp.csr_matrix(X)), whole, rtol=0, atol=tol)


def test_cg_on_blocks_of_targets_when_all_at_once_would_exceed_the_memory_limit(digits):
    """Ten one-vs-all targets whose CG vectors exceed the limit are solved a few at a time,
    with the same coefficients (each column's CG is independent); below one column: refused."""
    from rbrepro.memory import MemoryLimitError
    from rbrepro.models.ridge_memory import cg_columns_per_pass, solve_memory

    X_tr, X_te, y_tr, y_te = digits
    whole = RandomBinningClassifier(n_grids=16, sigma=3.0, lam=0.01, random_state=0).fit(X_tr, y_tr)
    D = whole.n_columns_
    limit_gb = (8.0 * D * 10 + 3.5 * solve_memory("rb", "cg", D, 1)) / 2**30  # room for 3 columns per pass
    assert cg_columns_per_pass(D, 10, limit_gb * 2**30) == 3
    blocked = RandomBinningClassifier(n_grids=16, sigma=3.0, lam=0.01, random_state=0, memory_limit_gb=limit_gb).fit(X_tr, y_tr)
    assert whole.cg_passes_ == 1 and blocked.cg_passes_ == 4
    np.testing.assert_allclose(blocked.coef_, whole.coef_, rtol=0, atol=1e-12)
    assert blocked.cg_iterations_ == whole.cg_iterations_
    np.testing.assert_array_equal(blocked.predict(X_te), whole.predict(X_te))
    from rbrepro.features.random_binning import BYTES_PER_BIN, fit_memory

    binning = fit_memory(len(X_tr), X_tr.shape[1], 16) + BYTES_PER_BIN * D  # what the binning itself may hold
    one_column = 8.0 * D * 10 + solve_memory("rb", "cg", D, 1)
    assert binning * 1.01 < one_column  # a limit the binning fits under and one CG column does not
    with pytest.raises(MemoryLimitError, match="cg solve for D"):
        RandomBinningClassifier(n_grids=16, sigma=3.0, lam=0.01, random_state=0,
                                memory_limit_gb=binning * 1.01 / 2**30).fit(X_tr, y_tr)


def test_warm_up_compiles_every_kernel_of_the_fit_even_when_all_rows_share_a_bin():
    """A tiny sigma (cadata at 0.01) puts every warm-up row in one bin: with balanced labels Z^T y would be
    0, CG would never step, and scatter_update_vector would compile inside the timed fit."""
    from rbrepro.models.cell import compiled_since, numba_signatures

    rng = np.random.default_rng(0)
    X, y = rng.random((300, 6)), rng.normal(size=300)
    model = RandomBinningRegressor(n_grids=16, sigma=1e-3, random_state=0)
    model.warm_up(X)
    before = numba_signatures()
    model.fit(X, y).predict(X)
    assert compiled_since(before) == []


def test_warm_up_compiles_the_row_space_cg_of_a_wide_several_class_fit():
    """Plain CG on a wide Z with several targets runs in row space (solvers.cg.rows_pay), kernels the
    warm-up's 8 rows would never pick by themselves."""
    from rbrepro.models.cell import compiled_since, numba_signatures
    from rbrepro.solvers import cg

    rng = np.random.default_rng(1)
    X, y = rng.random((200, 4)), rng.integers(0, 3, 200)
    model = RandomBinningClassifier(n_grids=16, sigma=3.0, lam=0.01, solver="cg", early_stopping=False,
                                    random_state=0)
    model.warm_up(X)
    before = numba_signatures()
    model.fit(X, y).predict(X)
    assert cg.rows_pay(200, model.features_.n_bins_)
    assert compiled_since(before) == []
