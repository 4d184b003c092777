"""A method is one module plus one registry entry: a linear feature map (the raw columns, R
unused) defined and registered here only, then trained, swept, saved, loaded, drawn and
tabulated by rbrepro's own code, untouched. Registration is undone after each test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from rbrepro.errors import InvalidParameter, UnknownName
from rbrepro.models.cell import CellParams
from rbrepro.models.registry import METHODS, MethodSpec, method_spec, register_method, unregister_method


class LinearFeatures(TransformerMixin, BaseEstimator):
    """Z = X: the linear kernel's exact feature map (R is taken and unused)."""

    _saved_arrays = ()
    _saved_scalars = ("n_features_in_",)

    def __init__(self, *, n_components=1, sigma=1.0, random_state=None):
        self.n_components = n_components
        self.sigma = sigma
        self.random_state = random_state

    @staticmethod
    def fit_memory(n: int, d: int, R: int) -> float:
        return 8.0 * n * d

    def fit(self, X, y=None):
        validate_data(self, X, accept_sparse="csr", dtype=np.float64)
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "n_features_in_")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return X.toarray() if sp.issparse(X) else np.asarray(X)


LINEAR = MethodSpec(name="linear", title="linear (raw columns)", role="baseline", r_meaning="unused",
                    r_parameter="n_components", default_solver="direct", solvers=("default", "cg", "pcg", "direct"),
                    kernels=("l1",), memory="features", features=LinearFeatures, center=True, randomized=False,
                    style=("linear", "tab:olive", "x"))
#: the fields a feature method must state, for the refusals below
_FIELDS = dict(title="t", role="baseline", r_meaning="x", r_parameter="n_components", default_solver="direct",
               solvers=("default", "direct"), kernels=("l1",), memory="features")


class InProcess:
    """A sweep backend that runs each cell here, in this process (spawned workers would not have
    this test's registration)."""

    description = "this process"

    def __init__(self):
        self.on_event = lambda message: None

    def run(self, jobs, on_row, estimates=None):
        from rbrepro.sweep.worker import run_cell_task

        for job in jobs:
            on_row(job.key, run_cell_task(*job.args))


@pytest.fixture
def linear():
    register_method(LINEAR)
    try:
        yield LINEAR
    finally:
        unregister_method("linear")
    assert "linear" not in METHODS


def test_an_incomplete_or_taken_entry_is_refused_by_name():
    with pytest.raises(InvalidParameter, match="'rb' is registered already"):
        register_method(METHODS["rb"])
    with pytest.raises(InvalidParameter, match="needs features"):
        register_method(MethodSpec(name="half", **_FIELDS, center=True, style=("half", "tab:gray", "o")))
    with pytest.raises(InvalidParameter, match="style"):
        register_method(MethodSpec(name="plain", **_FIELDS, center=True, features=LinearFeatures))
    with pytest.raises(InvalidParameter, match="estimators"):
        register_method(MethodSpec(name="kern", **{**_FIELDS, "r_meaning": "", "r_parameter": None,
                                                   "default_solver": "cholesky", "solvers": ("default",),
                                                   "memory": "kernel"}, style=("kern", "k", "")))
    with pytest.raises(InvalidParameter, match="default_solver"):
        register_method(MethodSpec(name="slow", **{**_FIELDS, "default_solver": "rcd", "solvers": ("default", "cg")},
                                   center=True, features=LinearFeatures, style=("slow", "tab:gray", "o")))
    # a field left unsaid is refused by name, never borrowed from another method (RF's centring, say)
    with pytest.raises(InvalidParameter, match="center"):
        register_method(MethodSpec(name="uncentred", **_FIELDS, features=LinearFeatures, style=("u", "tab:gray", "o")))
    with pytest.raises(InvalidParameter, match="title; role; r_meaning"):
        register_method(MethodSpec(name="bare", features=LinearFeatures, style=("b", "tab:gray", "o")))
    with pytest.raises(InvalidParameter, match="the subject and the reference are the paper's own"):
        register_method(MethodSpec(name="other_rb", **{**_FIELDS, "role": "subject"}, center=False,
                                   features=LinearFeatures, style=("o", "tab:gray", "o")))
    with pytest.raises(InvalidParameter, match="stays registered"):
        unregister_method("rb")
    assert not {"half", "plain", "kern", "slow", "uncentred", "bare", "other_rb"} & set(METHODS)
    with pytest.raises(UnknownName, match="'linear' is not available"):
        method_spec("linear")
    with pytest.raises(InvalidParameter, match="'linear' is not available"):
        CellParams(dataset="digits", method="linear").validate()


def test_train_save_load_predict(linear, tmp_path):
    import rbrepro.models
    from rbrepro.data.load import load_dataset
    from rbrepro.metrics import score
    from rbrepro.models.train import train

    row = train(CellParams(dataset="digits", method="linear", R=4), save_model=tmp_path / "m.npz", progress=False)
    assert row["status"] == "ok" and row["method"] == "linear" and row["solver"] == "direct"
    assert row["D"] == 64 and row["test_metric"] > 85  # ridge on digits' 64 pixels
    saved = rbrepro.models.load(tmp_path / "m.npz")
    assert type(saved.estimator).__name__ == "LinearRidgeClassifier"
    assert isinstance(saved.estimator.features_, LinearFeatures)
    data = load_dataset("digits", progress=False)
    assert score(data.task, data.y_test, saved.estimator.predict(data.X_test)) == pytest.approx(row["test_metric"])
    with pytest.raises(InvalidParameter, match="rcd solver runs on rb or rf"):
        CellParams(dataset="digits", method="linear", solver="rcd").validate()
    from rbrepro.theory.diagnostics import feature_matrix

    with pytest.raises(InvalidParameter, match="method must be one of"):
        feature_matrix("linear", data.X_train[:5], 1.0, 4, 0)


def test_its_ridge_classes_are_documented_with_examples_that_run(linear):
    """The pair made for a method without estimators of its own has the built-ins' numpydoc sections,
    and its Examples section runs as written (the doctest finder never reaches a class made at run time)."""
    import doctest

    for task in ("classification", "regression"):
        cls = linear.estimator(task)
        assert all(f"{name}\n    {'-' * len(name)}" in cls.__doc__ for name in ("Parameters", "Attributes", "Examples"))
        test = doctest.DocTestParser().get_doctest(cls.__doc__, {}, cls.__name__, None, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        assert runner.summarize(verbose=False) == (0, len(test.examples)) and test.examples


def test_sweep_figure_and_tables(linear, tmp_path):
    from rbrepro.plots import make_figure
    from rbrepro.report.tables import tables
    from rbrepro.sweep.config import parse_config
    from rbrepro.sweep.runner import run_sweep

    cfg = parse_config("name: lin\nfigure: fig5\nmethods: [linear, rb]\n"
                       "datasets:\n  digits: {sigma: [0.3], R: [4, 16], targets: [80]}\n", "lin.yaml")
    counts = run_sweep(cfg, tmp_path / "res", backend=InProcess())
    frame = pd.read_csv(tmp_path / "res" / "results.csv")
    assert counts["failed"] == 0 and (frame["status"] == "ok").all()
    assert set(frame["method"]) == {"linear", "rb"} and len(frame[frame["method"] == "linear"]) == 2
    png = make_figure("fig5", tmp_path / "res", tmp_path / "fig5")[0]
    assert png.exists() and png.stat().st_size > 10_000
    header = next(line for line in tables(tmp_path / "res", "fig5").splitlines() if line.startswith("| R |"))
    assert set(header.strip("| ").split(" | ")) == {"R", "linear", "rb"}


@pytest.fixture(scope="module")
def orf_installed(tmp_path_factory):
    """The example plug-in package (examples/rbrepro-orf) installed into a folder of its own, which a
    process sees by PYTHONPATH: installed for the commands given `env`, absent for any other."""
    import subprocess
    import sys
    from pathlib import Path

    target = tmp_path_factory.mktemp("plugin")
    example = Path(__file__).resolve().parents[1] / "examples" / "rbrepro-orf"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--disable-pip-version-check", "--target", str(target), str(example)], check=True,
                   capture_output=True)
    return {"PYTHONPATH": str(target)}


@pytest.mark.slow
def test_an_installed_plugin_is_a_method_everywhere_and_refused_once_gone(orf_installed, tmp_path):
    import os
    import subprocess
    import sys

    from tests.cli_runner import one_line_error, run_cli

    assert "orf" in run_cli("train", "--help", env=orf_installed, check=True).stdout
    row = run_cli("train", "digits", "--method", "orf", "--kernel", "euclidean", "--R", 128, "--sigma", 0.05,
                  "--json", "--save-model", tmp_path / "orf.npz", env=orf_installed, check=True).stdout
    import json

    row = json.loads(row)
    assert row["method"] == "orf" and row["test_metric"] > 80 and row["solver"] == "direct"
    config = tmp_path / "orf.yaml"
    config.write_text("name: orf\nmethods: [orf, rf]\nkernel: euclidean\nseeds: [0, 1]\n"
                      "datasets: {digits: {sigma: [0.05], R: [64]}}\n")
    run_cli("sweep", config, "--out", tmp_path / "orf", "--workers", 2, "-q", env=orf_installed, check=True)
    rows = pd.read_csv(tmp_path / "orf" / "results.csv")
    assert set(rows["method"]) == {"orf", "rf"} and (rows["status"] == "ok").all()  # cells in worker processes
    loaded = subprocess.run([sys.executable, "-c", f"import rbrepro.models as m; print(type(m.load({str(tmp_path / 'orf.npz')!r}).estimator.features_).__name__)"],
                            capture_output=True, text=True, env={**os.environ, **orf_installed}, check=True)
    assert loaded.stdout.strip() == "OrthogonalRandomFeatures"  # a saved model of it loads where it is installed
    gone = run_cli("train", "digits", "--method", "orf", "--R", 8)  # not installed for this process
    one_line_error(gone, "'orf'", "rb", "exact")
    swept = run_cli("sweep", config, "--out", tmp_path / "gone", "--dry-run")
    one_line_error(swept, "methods", "orf")
