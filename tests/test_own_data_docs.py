"""What a user copies from README and docs works on their own data as scikit-learn loads it, and a
config that names a file where a dataset name belongs says where the file goes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import scipy.sparse as sp

from rbrepro.sweep.config import ConfigError, parse_config

ROOT = Path(__file__).resolve().parents[1]


def _grid_search_block(page: str) -> str:
    text = (ROOT / page).read_text()
    return next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "GridSearchCV" in b)


@pytest.mark.parametrize("page", ["README.md", "docs/examples.md"])
def test_the_grid_search_recipe_runs_on_a_sparse_matrix(page):
    """load_svmlight_file returns CSR; MinMaxScaler refuses it, so every fit of the search failed."""
    block = _grid_search_block(page)
    sparse_digits = ("X, y = load_digits(return_X_y=True)\n"
                     "X = __import__('scipy.sparse').sparse.csr_matrix(X)\n")
    code = block.replace("X, y = load_digits(return_X_y=True)\n", sparse_digits)
    code = code.replace("cv=5", "cv=2")
    scope: dict = {}
    exec(compile(code, page, "exec"), scope)  # noqa: S102 - the documented recipe itself
    assert sp.issparse(scope["X"]) and scope["search"].best_score_ > 0.8


def test_a_file_path_under_datasets_points_to_dataset_files():
    text = "name: t\ndefaults: {sigma: [1], R: [8]}\ndatasets:\n  data/mine.libsvm: {}\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, "t.yaml")
    message = str(info.value)
    assert "t.yaml:4: datasets.data/mine.libsvm" in message and "dataset_files" in message and "\n" not in message


def test_results_csv_holds_every_finished_cell_after_an_interrupt(tmp_path, monkeypatch):
    """The CSV is rebuilt at most every CSV_EVERY_S while cells finish; Ctrl-C between two rebuilds
    left it with fewer rows than the cell files kept."""
    import pandas as pd

    from rbrepro.sweep import runner

    monkeypatch.setattr(runner, "CSV_EVERY_S", 1e9)

    class StopAfterThree:
        def run(self, jobs, on_row, estimates):
            for job in jobs[:3]:
                on_row(job.key, _row(job.args.params))
            raise KeyboardInterrupt

    def _row(params):
        from dataclasses import asdict
        return {**asdict(params), "status": "ok", "test_metric": 90.0, "wall_s": 0.1}

    cfg = parse_config("name: t\nmethods: [rb]\ndefaults: {sigma: [0.1, 0.3, 1, 3, 10], R: [8]}\ndatasets: [digits]\n",
                       "t.yaml")
    with pytest.raises(KeyboardInterrupt):
        runner.run_sweep(cfg, tmp_path / "res", backend=StopAfterThree())
    assert len(list((tmp_path / "res" / "cells").glob("*.json"))) == 3
    assert len(pd.read_csv(tmp_path / "res" / "results.csv")) == 3


@pytest.mark.slow
def test_installing_the_example_plugin_leaves_its_folder_as_it_was(tmp_path):
    import subprocess
    import sys

    example = ROOT / "examples" / "rbrepro-orf"
    before = sorted(p.name for p in example.iterdir() if p.name != "__pycache__")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check",
                    "--target", str(tmp_path), str(example)], check=True, capture_output=True)
    assert sorted(p.name for p in example.iterdir() if p.name != "__pycache__") == before
    entry_points = next(tmp_path.glob("rbrepro_orf-*.dist-info")) / "entry_points.txt"
    assert "orf=rbrepro_orf:METHOD" in entry_points.read_text().replace(" ", "")
