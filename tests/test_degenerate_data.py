"""Data nothing can be learnt from is refused with its file and its real cause (too few rows to hold any
out, one class among the training rows, constant targets), and a metric that cannot be computed is
stated as such, never a silent NaN."""

from __future__ import annotations

import pytest

from tests.cli_runner import one_line_error, run_cli


def _rows(path, labels, width=2):
    path.write_text("".join(f"{y} " + " ".join(f"{j + 1}:{(7 * i + 3 * j) % 10 / 10 + 0.05:.2f}"
                                               for j in range(width)) + "\n" for i, y in enumerate(labels)))
    return path


@pytest.mark.parametrize("labels, sigma", [([1, -1], "1"), ([1, -1], "auto"), ([1, -1, 1], "auto")])
def test_a_split_that_leaves_one_class_says_the_file_has_more(tmp_path, labels, sigma):
    path = _rows(tmp_path / "few.txt", labels)
    proc = run_cli("train", path, "--R", 8, "--sigma", sigma)
    one_line_error(proc, str(path), "hold 2 classes", "too few rows to hold any out")


def test_one_class_in_the_file_is_named_as_such(tmp_path):
    path = _rows(tmp_path / "one.txt", [1] * 30)
    one_line_error(run_cli("train", path, "--R", 8), str(path), "every label is 1", "one class")


@pytest.mark.parametrize("sigma", ["1", "auto"])
def test_constant_regression_targets_are_refused_before_a_sigma_is_chosen(tmp_path, sigma):
    path = _rows(tmp_path / "flat.txt", [2.5] * 40)
    proc = run_cli("train", path, "--task", "regression", "--R", 8, "--sigma", sigma)
    line = one_line_error(proc, str(path), "constant targets")
    assert "chosen" not in proc.stdout and "nan" not in line.lower()


def test_a_relative_error_of_zero_targets_is_stated_not_silent(tmp_path):
    train = _rows(tmp_path / "tr.txt", [i / 10 for i in range(30)])
    test = _rows(tmp_path / "te.txt", [0] * 10)
    proc = run_cli("train", train, "--test", test, "--task", "regression", "--R", 8)
    assert proc.returncode == 0 and "rel_error NaN (undefined: the targets scored are all 0)" in proc.stdout


def test_the_sweep_of_a_tiny_file_names_the_cause_in_its_rows(tmp_path):
    from rbrepro.data.load import load_dataset
    from rbrepro.errors import InvalidParameter
    from rbrepro.models.cell import CellParams, run_cell

    path = _rows(tmp_path / "few.txt", [1, -1, 1])
    data = load_dataset(str(path), tmp_path / "d", progress=False)
    with pytest.raises(InvalidParameter, match="too few rows to hold any out"):
        run_cell(CellParams(dataset=data.name, R=8), data)


def test_a_json_row_says_null_and_why_for_a_metric_that_cannot_be_computed(tmp_path):
    import json

    train = _rows(tmp_path / "tr.txt", [i / 10 for i in range(30)])
    test = _rows(tmp_path / "te.txt", [0] * 10)
    proc = run_cli("train", train, "--test", test, "--task", "regression", "--R", 8, "--json")
    row = json.loads(proc.stdout)
    assert row["test_metric"] is None and "targets scored are all 0" in row["test_metric_undefined"]
