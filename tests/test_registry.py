"""The methods and vocabularies are defined once (rbrepro.models.registry, rbrepro.vocabulary) and
every consumer offers exactly those: the command line's choices, the config reader, the cell
validation, the estimators and the numba kernels' codes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rbrepro import vocabulary
from rbrepro.errors import InvalidParameter, UnknownName
from rbrepro.models.cell import CellParams, make_model
from rbrepro.models.registry import (
    METHODS,
    baselines,
    feature_methods,
    method_names,
    method_spec,
    monte_carlo_baseline,
    rcd_baseline,
    rcd_methods,
)

METHOD_NAMES = method_names()


def test_registry_describes_the_five_methods():
    assert METHOD_NAMES == ("rb", "rf", "nystrom", "block", "exact")
    assert feature_methods() == ("rb", "rf", "nystrom") and rcd_methods() == ("rb", "rf")
    assert baselines() == ("rf", "nystrom", "block") and rcd_baseline() == monte_carlo_baseline() == "rf"
    assert [m for m in METHOD_NAMES if METHODS[m].distributed] == ["block", "exact"]
    assert {m: METHODS[m].center for m in feature_methods()} == {"rb": False, "rf": True, "nystrom": True}
    assert [m for m in METHOD_NAMES if not METHODS[m].has_R] == ["exact"]
    assert [m for m in METHOD_NAMES if METHODS[m].cholesky] == ["block", "exact"]
    assert [m for m in METHOD_NAMES if METHODS[m].authors_draws] == ["rb"]
    with pytest.raises(UnknownName, match="choose from rb, rf, nystrom, block, exact"):
        method_spec("svm")


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_make_model_passes_R_to_the_parameter_the_registry_names(name):
    spec = METHODS[name]
    params = CellParams(dataset="x", method=name, R=37, sigma=0.5, kernel=spec.kernels[0]).validate()
    model = make_model(params, "classification", 1)
    if spec.has_R:
        assert model.get_params()[spec.r_parameter] == 37
    assert model.get_params()["sigma"] == 0.5


def test_cell_validation_reads_the_registry():
    with pytest.raises(InvalidParameter, match="Cholesky"):
        CellParams(dataset="x", method="exact", solver="cg").validate()
    with pytest.raises(InvalidParameter, match="rb or rf"):
        CellParams(dataset="x", method="nystrom", solver="rcd").validate()
    with pytest.raises(InvalidParameter, match="Random Binning approximates the l1 kernel only"):
        CellParams(dataset="x", method="rb", kernel="euclidean").validate()
    with pytest.raises(InvalidParameter, match="needs method rb"):
        CellParams(dataset="x", method="rf", rng="authors").validate()
    CellParams(dataset="x", method="exact", R=0).validate()  # no R, so R = 0 is fine


def test_rcd_kernel_codes_cover_the_loss_vocabulary_in_order():
    from rbrepro.solvers import _rcd_kernels

    assert tuple(_rcd_kernels.LOSSES) == vocabulary.LOSSES


def test_figures_drawn_are_the_vocabulary():
    from rbrepro.plots import FIGURES

    assert tuple(FIGURES) == vocabulary.FIGURES


def test_cli_choices_are_the_vocabularies_and_load_no_numba():
    code = ("import sys; from rbrepro.cli import common as c;"
            "print([[m.value for m in c.Method], [m.value for m in c.Solver], [m.value for m in c.Scaling],"
            " [m.value for m in c.Variant], [m.value for m in c.Loss], [m.value for m in c.Kernel],"
            " [m.value for m in c.FeatureMethod], [m.value for m in c.Figure]]);"
            "print('numba' in sys.modules, 'matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == str([list(METHOD_NAMES), list(vocabulary.SOLVERS), list(vocabulary.SCALINGS),
                          list(vocabulary.VARIANTS), list(vocabulary.LOSSES), list(vocabulary.KERNELS),
                          list(feature_methods()), list(vocabulary.FIGURES)])
    assert out[1] == "False False"
