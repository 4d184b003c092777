"""Every reader of a results folder (summary, plot, report, compare) goes through one validated loader:
a CSV without the columns its rows need, a damaged resolved config, a cell key on two rows or a CSV named
directly each get one line naming the file and the problem; the report writes only inside a checkout
of the project and never over a file it did not write."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from rbrepro.errors import InvalidParameter
from rbrepro.sweep.results_folder import load_results
from tests.cli_runner import one_line_error, run_cli

PUBLISHED = Path(__file__).resolve().parents[1] / "results" / "fig4"


@pytest.fixture
def folder(tmp_path) -> Path:
    out = tmp_path / "fig4"
    out.mkdir()
    for name in ("results.csv", "config.resolved.yaml"):
        shutil.copy(PUBLISHED / name, out / name)
    return out


def _edit(folder: Path, edit) -> pd.DataFrame:
    frame = edit(pd.read_csv(folder / "results.csv", low_memory=False))
    frame.to_csv(folder / "results.csv", index=False)
    return frame


def _failed_without_error_column(frame):
    frame.loc[frame.index[0], "status"] = "failed"
    return frame.drop(columns=["error"])


@pytest.mark.parametrize("command", [["summary"], ["plot", "fig4"]])
def test_a_failed_row_without_an_error_column_is_one_line(folder, command):
    _edit(folder, _failed_without_error_column)
    one_line_error(run_cli(*command, folder), str(folder / "results.csv"), "missing column(s) error")


def test_a_cut_resolved_config_is_one_line_naming_it(folder):
    text = (folder / "config.resolved.yaml").read_text()
    (folder / "config.resolved.yaml").write_text(text[: len(text) // 2] + "\n  - [unclosed\n")
    one_line_error(run_cli("summary", folder), "config.resolved.yaml", "not readable YAML")
    with pytest.raises(InvalidParameter, match="config.resolved.yaml"):
        load_results(folder)


def test_a_cell_key_on_two_rows_is_refused_not_counted_twice(folder):
    frame = _edit(folder, lambda f: pd.concat([f, f.iloc[[3]]]))
    line = one_line_error(run_cli("summary", folder), f"results.csv:{len(frame) + 1}", "again (first on line 5)")
    assert frame["cell_key"].iloc[3][:8] in line
    one_line_error(run_cli("compare", folder), "results.csv", "again")


def test_a_results_csv_named_directly_is_summarized_as_its_folder_is(folder):
    (folder.parent / "loose").mkdir()  # a CSV alone, in a folder without results.csv
    named = shutil.copy(folder / "results.csv", folder.parent / "loose" / "fig4-rows.csv")
    proc = run_cli("summary", named)
    assert proc.returncode == 0, proc.stderr
    assert "no results" not in proc.stdout and f"{named}: 120 cells: 120 ok" in proc.stdout


def test_the_report_outside_a_checkout_says_so_and_writes_nothing(tmp_path):
    for args in (["report", "--check"], ["report"]):
        one_line_error(run_cli(*args, cwd=tmp_path), "not a checkout of rbrepro")
    assert list(tmp_path.iterdir()) == []


def test_the_report_never_replaces_a_file_it_did_not_write(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "rbrepro"\n')
    (tmp_path / "REPRODUCTION.md").write_text("my notes\n")
    one_line_error(run_cli("report", "--root", tmp_path), "REPRODUCTION.md", "did not write")
    assert (tmp_path / "REPRODUCTION.md").read_text() == "my notes\n"
