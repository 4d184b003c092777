"""The kernel width fits the data by default (sigma="scale"), and a fit says when it cannot work."""

from __future__ import annotations

import warnings

import numba
import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler

from rbrepro.errors import InvalidParameter
from rbrepro.models import load
from rbrepro.models.persist import save
from rbrepro.models.ridge_classes import (
    NystromRegressor,
    RandomBinningClassifier,
    RandomBinningRegressor,
    RandomFourierClassifier,
)
from rbrepro.models.sigma_search import AUTO_SIGMAS, SCALE_FACTOR, median_l1, pattern_search, scale_sigma
from rbrepro.models.width_checks import WidthWarning
from tests.own_data_shapes import a9a_like, cpusmall_like


def _fit(model, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    return [w for w in caught if issubclass(w.category, WidthWarning)]


@pytest.fixture(scope="module")
def a9a_split():
    X, y = a9a_like(6000)
    return X[:4000], y[:4000], X[4000:], y[4000:]


def test_scale_is_three_over_the_median_l1_distance_and_follows_the_units():
    X, _ = cpusmall_like(2000)
    assert scale_sigma(X) == pytest.approx(SCALE_FACTOR / median_l1(X), rel=1e-2)
    assert scale_sigma(10.0 * X) == pytest.approx(scale_sigma(X) / 10.0, rel=1e-2)
    assert scale_sigma(np.ones((5, 3))) == 1.0  # no two rows differ


def test_default_width_fits_a9a_shaped_rows_where_sigma_one_is_useless(a9a_split):
    Xtr, ytr, Xte, yte = a9a_split
    model = RandomBinningClassifier(random_state=0)
    assert model.get_params()["sigma"] == "scale"
    assert _fit(model, Xtr, ytr) == []
    assert model.sigma_ == scale_sigma(Xtr) and model.features_.sigma == model.sigma_
    assert (model.predict(Xte) == yte).mean() >= 0.84
    useless = RandomBinningClassifier(sigma=1.0, random_state=0)
    caught = _fit(useless, Xtr, ytr)
    assert len(caught) == 1  # once per fit
    text = str(caught[0].message)
    assert "unscaled" in text and "sigma is too large" in text and "MaxAbsScaler" in text
    assert (useless.predict(Xte) == yte).mean() < 0.7


def test_raw_columns_on_different_scales_warn_naming_scaling_and_a_scaler_fixes_them():
    X, y = cpusmall_like(4000)
    raw = RandomBinningRegressor(random_state=0)
    caught = _fit(raw, X[:3000], y[:3000])
    assert caught and "different scales" in str(caught[0].message) and "MaxAbsScaler" in str(caught[0].message)
    scaled = make_pipeline(MaxAbsScaler(), RandomBinningRegressor(random_state=0))
    assert _fit(scaled, X[:3000], y[:3000]) == []
    err = np.linalg.norm(scaled.predict(X[3000:]) - y[3000:]) / np.linalg.norm(y[3000:])
    assert err <= 0.06


def test_every_feature_estimator_takes_scale_and_a_saved_model_keeps_its_width(tmp_path, a9a_split):
    Xtr, ytr, Xte, _ = a9a_split
    for model in (RandomFourierClassifier(n_components=32, random_state=0), RandomBinningClassifier(n_grids=16)):
        model.fit(Xtr[:500], ytr[:500])
        assert model.sigma_ == scale_sigma(Xtr[:500])
        again = load(save(model, tmp_path / "m.npz"))
        np.testing.assert_array_equal(again.predict(Xte[:50]), model.predict(Xte[:50]))
    with pytest.raises(InvalidParameter, match="sigma"):
        RandomBinningClassifier(sigma="wide").fit(Xtr[:50], ytr[:50])


def test_n_jobs_sets_the_fits_threads_as_threads_does_and_restores_them(monkeypatch):
    from rbrepro.models import feature_ridge

    seen = []
    inner = feature_ridge._FeatureRidge._fit

    def spy(self, X, y):
        seen.append(numba.get_num_threads())
        return inner(self, X, y)

    monkeypatch.setattr(feature_ridge._FeatureRidge, "_fit", spy)
    X, y = cpusmall_like(200)
    X = X / X.max(axis=0)
    before = numba.get_num_threads()
    NystromRegressor(n_components=16, n_jobs=1, random_state=0).fit(X, y)
    NystromRegressor(n_components=16, n_jobs=-1, random_state=0).fit(X, y)
    assert seen == [1, numba.config.NUMBA_NUM_THREADS] and numba.get_num_threads() == before
    with pytest.raises(InvalidParameter, match="n_jobs"):
        NystromRegressor(n_jobs=0).fit(X, y)


@pytest.mark.parametrize("cls", [RandomBinningClassifier, RandomFourierClassifier, NystromRegressor])
def test_the_api_docs_first_solver_is_the_default(cls):
    """The API pages read a parameter's first listed choice as its default."""
    line = next(ln for ln in cls.__doc__.splitlines() if ln.strip().startswith("solver :"))
    first = line.split("{", 1)[1].split(",", 1)[0].strip().strip('"')
    assert first == cls().solver and f'default="{cls().solver}"' in line


def test_a_search_started_at_the_peak_scores_three_widths():
    scored = []

    def score(i):
        scored.append(i)
        return -abs(i - 6)

    assert pattern_search(score, len(AUTO_SIGMAS), 6, "accuracy") == 6 and sorted(scored) == [5, 6, 7]


def test_auto_scores_each_width_on_several_splits_where_the_rows_are_few(monkeypatch):
    """One held-out tenth of a few thousand rows is a noisy score; large sets keep one split."""
    from types import SimpleNamespace

    from rbrepro.models import sigma_search
    from rbrepro.models.cell import CellParams
    from rbrepro.models.sigma_search import MAX_REPEATS, SUBSAMPLE_ROWS, held_out_repeats, held_out_scorer

    assert held_out_repeats(SUBSAMPLE_ROWS) == held_out_repeats(35_000) == 1
    assert held_out_repeats(6553) == 4 and held_out_repeats(300) == MAX_REPEATS
    assert held_out_repeats(300, rows=None) == 1
    seeds = []

    class Fake:
        def __init__(self, p):
            self.p = p

        def held_out_search(self, X, y):
            seeds.append(self.p.seed)
            return 0.5 + 0.1 * self.p.seed

    X, y = cpusmall_like(6553)
    data = SimpleNamespace(X_train=X, y_train=y, task="regression")
    score = held_out_scorer(CellParams(dataset="x", method="rb", seed=3), data, Fake)
    assert score(1.0) == pytest.approx(np.mean([0.5 + 0.1 * s for s in (3, 4, 5, 6)]))
    assert seeds == [3, 4, 5, 6]
    assert sigma_search.SUBSAMPLE_ROWS == SUBSAMPLE_ROWS
