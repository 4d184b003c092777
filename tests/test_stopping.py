"""Early stopping on held-out training rows (solvers.stopping): the split, the rule, the estimators,
the cell parameter, the sweep key and `rbrepro train`'s default."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rbrepro.errors import InvalidParameter
from rbrepro.models import RandomBinningClassifier, RandomBinningRegressor, RandomFourierRegressor
from rbrepro.models.cell import CellParams
from rbrepro.models.feature_ridge import FINAL_STEPS
from rbrepro.models.train import resolve_stopping
from rbrepro.solvers.cg import ridge_cg
from rbrepro.solvers.stopping import PATIENCE, ValidationStopping, held_out
from rbrepro.sweep.keys import params_key


def test_held_out_rows_are_a_pure_function_of_seed_and_row_number():
    whole = held_out(10_000, 0.1, seed=3)
    assert 850 < whole.sum() < 1150  # about a tenth
    parts = np.concatenate([held_out(n, 0.1, 3, first_row=lo) for lo, n in ((0, 2500), (2500, 4000), (6500, 3500))])
    assert np.array_equal(whole, parts)  # partitions hold out the very rows one machine does
    assert np.array_equal(whole, held_out(10_000, 0.1, seed=3))
    assert not np.array_equal(whole, held_out(10_000, 0.1, seed=4))
    with pytest.raises(InvalidParameter, match="validation_fraction"):
        held_out(10, 1.0, 0)


def test_validation_stopping_keeps_the_best_iterate_and_waits_patience_steps():
    scores = iter([0.1, 0.5, 0.7, 0.6, 0.7, 0.65, 0.69, 0.8])

    class Fixed:
        def matvec(self, W):
            return W

    rule = ValidationStopping(Fixed(), lambda S: next(scores), patience=3)
    stops = [rule(it, np.full((2, 1), float(it))) for it in range(1, 8)]
    # best 0.7 at iteration 3 (a tie at 5 keeps the earlier); 3 steps later it stops
    assert stops == [False, False, False, False, False, True, True][:len(stops)]
    assert rule.best_iteration == 3 and rule.best_score == 0.7
    assert np.array_equal(rule.best_coef, np.full((2, 1), 3.0))


def test_ridge_cg_stops_when_the_callback_says_so():
    rng = np.random.default_rng(0)
    Z, y = rng.normal(size=(200, 30)), rng.normal(size=200)
    seen = []
    result = ridge_cg(Z, y, 0.1, maxit=50, tol=1e-14, callback=lambda it, W: seen.append(it) or it == 4)
    assert result.iterations == 4 and seen == [1, 2, 3, 4]
    assert np.allclose(result.coef, ridge_cg(Z, y, 0.1, maxit=4, tol=1e-14).coef)


def _two_moons(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, np.pi, n)
    label = rng.integers(0, 2, n)
    X = np.c_[np.cos(t) + label, np.sin(t) * (1 - 2 * label) + 0.3 * label] + rng.normal(scale=0.15, size=(n, 2))
    return (X - X.min(0)) / (X.max(0) - X.min(0)), label


@pytest.mark.parametrize("solver", ["cg", "pcg"])
def test_the_held_out_rows_pick_the_step_count_and_the_kept_model_trains_on_every_row(solver):

    X, y = _two_moons()
    model = RandomBinningClassifier(n_grids=32, sigma=4.0, lam=1e-4, solver=solver, maxit=60, early_stopping=True,
                                    random_state=1).fit(X, y)
    held = held_out(len(y), 0.1, 1)
    assert model.n_validation_ == held.sum() and 0 <= model.best_iteration_ <= model.search_iterations_
    assert model.search_iterations_ == 60 or model.search_iterations_ - model.best_iteration_ == PATIENCE
    assert model.best_iteration_ == int(np.argmax(model.validation_scores_))  # the first best iterate
    # independent reference: the plain fit on every row (the same grids and bins), stopped by maxit at the
    # kept step count
    reference = RandomBinningClassifier(n_grids=32, sigma=4.0, lam=1e-4, solver=solver, maxit=model.best_iteration_,
                                        random_state=1).fit(X, y)
    assert reference.n_columns_ == model.n_columns_ and model.cg_iterations_ == reference.cg_iterations_
    assert np.allclose(reference.coef_, model.coef_, rtol=1e-9, atol=1e-12)
    # the search: CG on the rows not held out; its best iterate's held-out accuracy is the best score
    Z = model.features_.transform_binned(X)
    Y = np.where(y == model.classes_[1], 1.0, -1.0).reshape(-1, 1)
    search = ridge_cg(Z.rows(~held), Y[~held], 1e-4, model.best_iteration_, model.tol, preconditioned=solver == "pcg")
    accuracy = np.mean((Z.rows(held).matvec(search.coef)[:, 0] > 0) == (Y[held, 0] > 0))
    assert accuracy == pytest.approx(max(model.validation_scores_))
    assert model.train_scores_.shape[0] == len(y)


def test_regression_early_stopping_and_refusals():
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(800, 3))
    y = np.sin(6 * X[:, 0]) + X[:, 1] + rng.normal(scale=0.3, size=800)
    model = RandomBinningRegressor(n_grids=32, sigma=3.0, lam=1e-6, maxit=200, tol=1e-12, early_stopping=True,
                                   random_state=0).fit(X, y)
    assert model.search_iterations_ < 200 and model.best_iteration_ >= 1
    assert model.cg_iterations_ == model.best_iteration_ + FINAL_STEPS  # the search's best, then every row
    with pytest.raises(InvalidParameter, match="solver 'direct' has none"):
        RandomFourierRegressor(solver="direct", early_stopping=True).fit(X, y)
    with pytest.raises(InvalidParameter, match="n_iter_no_change"):
        RandomBinningRegressor(early_stopping=True, n_iter_no_change=0).fit(X, y)
    assert not held_out(3, 0.1, 1).any()
    with pytest.raises(InvalidParameter, match="some rows on each side"):
        # seeded: 3 rows unseeded hold one out in 28 % of draws (then there is nothing to refuse)
        RandomBinningRegressor(early_stopping=True, random_state=1).fit(X[:3], y[:3])


def test_a_saved_early_stopped_model_round_trips(tmp_path):
    from rbrepro.models import load

    X, y = _two_moons(600)
    model = RandomBinningClassifier(n_grids=16, sigma=4.0, solver="pcg", early_stopping=True, random_state=0).fit(X, y)
    loaded = load(model.save(tmp_path / "m.npz")).estimator
    assert loaded.best_iteration_ == model.best_iteration_ and loaded.early_stopping
    assert np.array_equal(loaded.predict(X), model.predict(X))


def test_cell_keys_stand_for_the_residual_rule_and_validation_needs_cg():
    authors = CellParams("ijcnn1", sigma=1.58, R=256, stopping="residual")
    # the authors' rule, pinned, keys as every cell did before the default was the held-out stop
    assert params_key(authors) == "a1933c262e726275"
    default = CellParams("ijcnn1", sigma=1.58, R=256)  # auto: pcg with the held-out stop, keyed as that
    assert params_key(default) == params_key(CellParams("ijcnn1", sigma=1.58, R=256, solver="pcg",
                                                        stopping="validation")) != params_key(authors)
    with pytest.raises(InvalidParameter, match="stopping 'validation' stops CG"):
        CellParams("ijcnn1", method="exact", stopping="validation").validate()
    with pytest.raises(InvalidParameter, match="stopping"):
        CellParams("ijcnn1", stopping="never").validate()


def test_auto_is_validation_with_pcg_where_the_method_solves_by_cg():
    rb = resolve_stopping(CellParams("ijcnn1"), "auto")
    assert (rb.solver, rb.stopping) == ("pcg", "validation")
    assert resolve_stopping(CellParams("ijcnn1", solver="cg"), "auto").solver == "cg"
    assert resolve_stopping(CellParams("ijcnn1", method="rf"), "auto").stopping == "residual"  # direct: no steps
    assert resolve_stopping(CellParams("ijcnn1", method="exact"), "auto").stopping == "residual"
    assert resolve_stopping(CellParams("ijcnn1"), "residual") == CellParams("ijcnn1", stopping="residual")
    assert CellParams("ijcnn1").resolved() == rb  # the default of every door is auto


def test_the_sweep_key_reaches_the_cells_and_is_refused_without_cg(tmp_path):
    from rbrepro.sweep.config import load_config
    from rbrepro.yamlconf import ConfigError

    text = ("name: es\nmethods: [rb]\nseeds: [0]\nsolver: {name: %s, stopping: validation}\n"
            "datasets: {digits: {sigma: [0.1], R: [16]}}\n")
    path = tmp_path / "es.yaml"
    path.write_text(text % "pcg")
    config = load_config(path)
    assert config.stopping == "validation"
    path.write_text(text % "direct")
    with pytest.raises(ConfigError, match="solver.stopping"):
        load_config(path)


def test_train_defaults_to_validation_stopping_and_says_so():
    from tests.cli_runner import run_cli as cli

    row = json.loads(cli("train", "digits", "--R", "16", "--sigma", "0.1", "--json", check=True).stdout)
    assert (row["solver"], row["stopping"]) == ("pcg", "validation")
    assert row["n_validation"] > 0 and 0 <= row["best_iteration"] <= row["cg_iterations"]
    plain = json.loads(cli("train", "digits", "--R", "16", "--sigma", "0.1", "--stopping", "residual",
                           "--json", check=True).stdout)
    assert (plain["solver"], plain["stopping"]) == ("cg", "residual")  # the authors' rule: 1e-3 or 50 steps
    assert plain["cg_iterations"] == 50 or (plain["cg_iterations"] < 50 and plain["cg_residual"] <= 1e-3)


def test_sigma_auto_searches_a_handful_of_widths_and_finds_the_grid_best():
    """The pattern search scores a few grid points and ends at the best of a single-peaked curve,
    whatever the start; each candidate is early stopping's held-out search, never the test rows."""
    from rbrepro.models.sigma_search import AUTO_SIGMAS, pattern_search

    for peak in range(len(AUTO_SIGMAS)):
        for start in (0, 6, 12):
            scored = []

            def score(i, peak=peak, scored=scored):
                scored.append(i)
                return -abs(i - peak)

            assert pattern_search(score, len(AUTO_SIGMAS), start, "accuracy") == peak
            assert len(scored) == len(set(scored)) and len(scored) <= 9


def test_held_out_search_is_the_fits_own_search_without_the_refit():
    X, y = _two_moons()
    model = RandomBinningClassifier(n_grids=32, sigma=4.0, lam=1e-4, solver="pcg", early_stopping=True,
                                    random_state=1)
    score = model.held_out_search(X, y)
    fitted = RandomBinningClassifier(n_grids=32, sigma=4.0, lam=1e-4, solver="pcg", early_stopping=True,
                                     random_state=1).fit(X, y)
    assert score == pytest.approx(max(fitted.validation_scores_)) and not hasattr(model, "coef_")
    with pytest.raises(InvalidParameter, match="needs early_stopping 'auto' or True"):
        RandomBinningClassifier(early_stopping=False).held_out_search(X, y)
