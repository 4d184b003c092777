"""Facts defined once: the CG-family solver set and its refusal, and the validation rules every door
shares (rbrepro.constraints)."""

from __future__ import annotations

import numpy as np
import pytest

from rbrepro.constraints import check_count, check_nonnegative, check_sigma
from rbrepro.errors import InvalidParameter
from rbrepro.models.cell import CellParams
from rbrepro.vocabulary import CG_SOLVERS, RIDGE_SOLVERS, needs_cg

ADVICE = "choose solver " + " or ".join(CG_SOLVERS)


def test_the_cg_family_is_among_the_ridge_solvers_and_has_one_refusal():
    assert set(CG_SOLVERS) < set(RIDGE_SOLVERS)
    assert needs_cg("early_stopping", "pcg") is None
    assert needs_cg("stopping 'validation'", "default", "cg") is None
    message = needs_cg("stopping 'validation'", "default", "cholesky", "stopping 'residual'")
    assert "stops CG's iterations" in message and "cholesky" in message and ADVICE in message


def test_every_door_refuses_validation_stopping_without_cg_with_the_same_advice(tmp_path):
    from rbrepro.models import RandomFourierRegressor
    from rbrepro.sweep.config import load_config
    from rbrepro.yamlconf import ConfigError

    with pytest.raises(InvalidParameter, match=ADVICE):
        CellParams("ijcnn1", method="exact", stopping="validation").validate()
    X = np.random.default_rng(0).uniform(size=(40, 2))
    with pytest.raises(InvalidParameter, match=ADVICE):
        RandomFourierRegressor(solver="direct", early_stopping=True).fit(X, X[:, 0])
    path = tmp_path / "es.yaml"
    path.write_text("name: es\nmethods: [rf]\nseeds: [0]\nsolver: {name: direct, stopping: validation}\n"
                    "datasets: {digits: {sigma: [0.1], R: [16]}}\n")
    with pytest.raises(ConfigError, match=ADVICE):
        load_config(path)


@pytest.mark.parametrize("field, value, words", [
    ("R", 2.5, "R must be a positive integer"),
    ("threads", 1.5, "threads must be an integer >= 0"),
    ("lam", float("nan"), "lam must be a finite number >= 0"),
    ("tol", 0.0, "tol must be a number > 0"),
    ("maxit", -1, "maxit must be an integer >= 0"),
    ("sigma", True, "sigma must be a positive finite number"),
])
def test_a_cells_numbers_are_checked_by_the_estimators_rules(field, value, words):
    with pytest.raises(InvalidParameter, match=words):
        CellParams("ijcnn1", **{field: value}).validate()


def test_the_shared_rules_keep_their_messages():
    with pytest.raises(InvalidParameter, match=r"^sigma must be a positive finite number, got -1\.0$"):
        check_sigma(-1.0)
    with pytest.raises(InvalidParameter, match=r"^R must be a positive integer, got 0$"):
        check_count("R", 0)
    with pytest.raises(InvalidParameter, match=r"^lam must be a finite number >= 0, got inf$"):
        check_nonnegative("lam", float("inf"))
    check_count("R", 10**400)  # an integer too large for a float is still an integer


def test_the_same_sigma_is_one_tolerance():
    from rbrepro.metrics import same_sigma

    assert same_sigma(1.58, 1.58 * (1 + 1e-12)) and not same_sigma(1.58, 1.58 * (1 + 1e-6))
    assert same_sigma(0.01 + 5e-10, 0.01)  # absolute below 1: a value read back from text
    assert list(same_sigma(np.array([0.1, 0.2, 0.1 + 1e-11]), 0.1)) == [True, False, True]


def test_the_figures_drawn_are_the_vocabularys_and_rbs_draws_are_its_rngs():
    from rbrepro import vocabulary
    from rbrepro.features import RandomBinningFeatures
    from rbrepro.plots import FIGURES

    assert tuple(FIGURES) == vocabulary.FIGURES and all(callable(f) for f in FIGURES.values())
    with pytest.raises(InvalidParameter, match="draws must be one of " + ", ".join(vocabulary.RNGS)):
        RandomBinningFeatures(draws="other").fit(np.zeros((4, 2)))


def test_the_kernels_are_declared_once_and_a_registered_one_is_taken_by_name():
    """A kernel is its functions plus one KernelSpec: here exp(-sigma ||x - y||_1 / 2), whose
    frequencies are the L1 kernel's at sigma / 2; the feature maps and the exact kernel take it."""
    from rbrepro import vocabulary
    from rbrepro.features import NystromFeatures, RandomFourierFeatures
    from rbrepro.features.kernels import (
        KERNEL_SPECS,
        KernelSpec,
        cauchy_frequencies,
        register_kernel,
        unregister_kernel,
    )
    from rbrepro.models.kernel_ridge import ExactKernelRegressor

    assert tuple(KERNEL_SPECS) == vocabulary.KERNELS

    def half_l1(A, B, sigma, out):
        out[:] = np.exp(-0.5 * sigma * np.abs(A[:, None, :] - B[None, :, :]).sum(axis=2))

    register_kernel(KernelSpec(name="half_l1", distance="||x - y||_1 / 2", matrix=half_l1,
                               frequencies=lambda rng, d, R, sigma: cauchy_frequencies(rng, d, R, sigma / 2)))
    try:
        with pytest.raises(InvalidParameter, match="registered already"):
            register_kernel(KERNEL_SPECS["half_l1"])
        X = np.random.default_rng(0).uniform(size=(60, 3))
        K = np.empty((60, 60))
        half_l1(X, X, 2.0, K)
        Z = RandomFourierFeatures(n_components=20000, sigma=2.0, kernel="half_l1", random_state=0).fit(X).transform(X)
        assert np.abs(Z.astype(float) @ Z.T.astype(float) - K).max() < 0.05
        Zn = NystromFeatures(n_components=60, sigma=2.0, kernel="half_l1", random_state=0).fit(X).transform(X)
        assert np.allclose(Zn @ Zn.T, K, atol=1e-6)
        exact = ExactKernelRegressor(sigma=2.0, kernel="half_l1", lam=1e-8).fit(X, X[:, 0])
        assert np.abs(exact.predict(X) - X[:, 0]).max() < 1e-3
    finally:
        unregister_kernel("half_l1")
    with pytest.raises(InvalidParameter, match="kernel must be one of"):
        RandomFourierFeatures(kernel="half_l1").fit(X)


def test_a_solver_is_one_module_and_one_registration(tmp_path):
    """examples/lstsq_solver.py registers a ridge solver: the estimators, a cell's parameters and a
    sweep config then take it by name, it solves as the direct solve does, and early stopping is
    refused as for any solver without CG; unregistered, every door refuses it again."""
    import importlib.util
    from pathlib import Path

    from rbrepro import vocabulary
    from rbrepro.models import RandomBinningRegressor, RandomFourierClassifier
    from rbrepro.solver_registry import SOLVER_SPECS, is_cg, ridge_solvers, solver_names, unregister_solver
    from rbrepro.sweep.config import load_config
    from rbrepro.yamlconf import ConfigError

    assert tuple(SOLVER_SPECS) == vocabulary.SOLVERS[1:] and ridge_solvers() == RIDGE_SOLVERS
    assert tuple(name for name in SOLVER_SPECS if is_cg(name)) == CG_SOLVERS
    example = Path(__file__).resolve().parents[1] / "examples" / "lstsq_solver.py"
    module_spec = importlib.util.spec_from_file_location("lstsq_solver", example)
    module_spec.loader.exec_module(importlib.util.module_from_spec(module_spec))
    config = tmp_path / "lstsq.yaml"
    config.write_text("name: lstsq\nmethods: [rf]\nseeds: [0]\nsolver: {name: lstsq}\n"
                      "datasets: {digits: {sigma: [0.1], R: [16]}}\n")
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(90, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int) + (X[:, 2] > 0.5)
    try:
        assert "lstsq" in solver_names() and "lstsq" in ridge_solvers() and not is_cg("lstsq")
        fits = {s: RandomFourierClassifier(n_components=24, sigma=1.0, lam=1e-3, solver=s, random_state=0).fit(X, y)
                for s in ("lstsq", "direct")}
        assert fits["lstsq"].solver_ == "lstsq" and fits["lstsq"].cg_iterations_ == 0
        assert np.allclose(fits["lstsq"].coef_, fits["direct"].coef_, atol=1e-8)
        assert (fits["lstsq"].predict(X) == fits["direct"].predict(X)).all()
        binned = RandomBinningRegressor(n_grids=8, sigma=1.0, solver="lstsq", random_state=0).fit(X, X[:, 0])
        assert not binned.early_stopping_ and binned.score(X, X[:, 0]) > 0.5
        with pytest.raises(InvalidParameter, match=ADVICE):
            RandomFourierClassifier(solver="lstsq", early_stopping=True).fit(X, y)
        CellParams("ijcnn1", method="rf", solver="lstsq").validate()
        with pytest.raises(InvalidParameter, match="Cholesky"):
            CellParams("ijcnn1", method="exact", solver="lstsq").validate()
        assert load_config(config).solver == "lstsq"
    finally:
        unregister_solver("lstsq")
    with pytest.raises(InvalidParameter, match="solver"):
        RandomFourierClassifier(solver="lstsq").fit(X, y)
    with pytest.raises(InvalidParameter, match="not available"):
        CellParams("ijcnn1", method="rf", solver="lstsq").validate()
    with pytest.raises(ConfigError, match="lstsq"):
        load_config(config)
    with pytest.raises(InvalidParameter, match="built in"):
        unregister_solver("direct")


def test_a_figure_is_one_function_and_one_registration(tmp_path):
    """A FigureSpec registered at run time: a config may sweep for it, make_figure draws it by its
    spec (and refuses its results as another figure), the report's tables and the publisher's redraw
    read its runs and tables; unregistered, it is unknown again. The built-in figures' facts are
    the registry's."""
    from rbrepro import vocabulary
    from rbrepro.figure_registry import FIGURE_SPECS, FigureSpec, register_figure, unregister_figure
    from rbrepro.plots import make_figure
    from rbrepro.published.publish import redraw_commands
    from rbrepro.report.runs import RUNS
    from rbrepro.report.sections.configs import SEEDED_RUNS
    from rbrepro.report.tables import tables
    from rbrepro.sweep.backends import LocalBackend
    from rbrepro.sweep.config import parse_config
    from rbrepro.sweep.runner import run_sweep
    from rbrepro.yamlconf import ConfigError

    assert tuple(FIGURE_SPECS) == vocabulary.FIGURES
    assert all(RUNS[name] == spec.runs for name, spec in FIGURE_SPECS.items())
    assert SEEDED_RUNS == tuple(run for spec in FIGURE_SPECS.values() if spec.seeded for run in spec.runs)

    def plot_tiny(frame, out_base, config):
        path = out_base.with_suffix(".txt")
        path.write_text(f"{config['name']}: {len(frame)} rows, {sorted(frame['method'].unique())}\n")
        return [path]

    text = "name: tiny\nfigure: tiny\nmethods: [rb]\nseeds: [0]\ndatasets: {digits: {sigma: [0.3], R: [8]}}\n"
    register_figure(FigureSpec(name="tiny", title="the tiny figure", help="rows per method", draw=plot_tiny,
                               runs=("tiny",), tables=lambda results, config: f"{len(results)} rows"))
    try:
        with pytest.raises(InvalidParameter, match="registered already"):
            register_figure(FIGURE_SPECS["tiny"])
        out = tmp_path / "tiny"
        run_sweep(parse_config(text, str(tmp_path / "tiny.yaml")), out, data_path=tmp_path / "data",
                  backend=LocalBackend(1))
        paths = make_figure("tiny", out, tmp_path / "drawn")
        assert paths == [tmp_path / "drawn.txt"] and paths[0].read_text() == "tiny: 1 rows, ['rb']\n"
        with pytest.raises(InvalidParameter, match="not for fig3; plot them as tiny"):
            make_figure("fig3", out, tmp_path / "other")
        assert tables(out).endswith("(tiny)\n\n1 rows")
        assert ["plot", "tiny", "results/tiny", "--out", "figures/tiny"] in [c[3:] for c in redraw_commands(("tiny",), "py")]
    finally:
        unregister_figure("tiny")
    with pytest.raises(InvalidParameter, match="unknown figure 'tiny'"):
        make_figure("tiny", out, tmp_path / "again")
    with pytest.raises(ConfigError, match="tiny"):
        parse_config(text, str(tmp_path / "tiny.yaml"))
    with pytest.raises(InvalidParameter, match="built in"):
        unregister_figure("fig3")
