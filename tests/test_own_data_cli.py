"""Own data given by path, through the command line: the default width fits it, and what is printed
says where the width came from."""

from __future__ import annotations

import json

import pytest
from sklearn.datasets import dump_svmlight_file

from tests.cli_runner import run_cli
from tests.own_data_shapes import a9a_like

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def a9a_files(tmp_path_factory):
    """a9a-shaped training rows and a paired test file beside them (name and name.t)."""
    folder = tmp_path_factory.mktemp("own")
    X, y = a9a_like(6000)
    dump_svmlight_file(X[:4000], y[:4000], str(folder / "a9s"), zero_based=False)
    dump_svmlight_file(X[4000:], y[4000:], str(folder / "a9s.t"), zero_based=False)
    return folder / "a9s"


def test_train_by_path_takes_the_scale_width_by_default_and_says_so(a9a_files, tmp_path):
    env = {"RBREPRO_DATA": str(tmp_path)}
    row = json.loads(run_cli("train", a9a_files, "--json", env=env, check=True).stdout)
    assert row["sigma_selection"].startswith("scale: 3 / the median L1 distance")
    assert row["sigma"] < 1 and row["test_metric"] >= 84.0
    text = run_cli("train", a9a_files, env=env, check=True).stdout
    assert f"sigma {row['sigma']:g} (scale: 3 / the median L1 distance" in text
    fixed = json.loads(run_cli("train", a9a_files, "--sigma", "1", "--json", env=env, check=True).stdout)
    assert fixed["sigma"] == 1.0 and "sigma_selection" not in fixed


def test_the_auto_curve_prints_sorted_and_the_exact_kernel_names_no_R(a9a_files, tmp_path):
    env = {"RBREPRO_DATA": str(tmp_path)}
    text = run_cli("train", a9a_files, "--sigma", "auto", "--R", "32", env=env, check=True).stdout
    widths = [float(line.split()[1]) for line in text.splitlines() if line.startswith("  sigma ")]
    assert len(widths) >= 3 and widths == sorted(widths)
    row = json.loads(run_cli("train", a9a_files, "--sigma", "auto", "--R", "32", "--json", env=env,
                             check=True).stdout)
    curve = [float(p.split(":")[0]) for p in row["sigma_curve"].split(";")]
    assert curve == sorted(curve)
    exact = run_cli("train", a9a_files, "--method", "exact", "--sigma", "0.2", env=env, check=True,
                    timeout=600).stdout
    assert "exact sigma=0.2" in exact and "R=" not in exact


def test_a_width_too_large_is_one_warning_line_in_the_cli(tmp_path):
    proc = run_cli("train", "digits", "--sigma", "30", "--R", "16", env={"RBREPRO_DATA": str(tmp_path)}, check=True)
    warnings = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1 and warnings[0].startswith("rbrepro: warning: Random Binning at sigma=30")
    assert "unscaled" in warnings[0] and "sigma is too large" in warnings[0]


def test_a_bad_choice_is_refused_without_a_stray_prefix():
    from tests.cli_runner import one_line_error

    line = one_line_error(run_cli("train", "digits", "--method", "foo"), "'foo' is not one of")
    assert "Value error" not in line
