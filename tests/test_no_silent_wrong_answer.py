"""No silent wrong answer on the user's own data. The saved model is the whole model,
the task is said or refused, widths are checked, sigma can be chosen in one option, and each class
of hostile input ends in one line naming what is at fault."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rbrepro import models
from rbrepro.data.checks import ContentError
from rbrepro.data.load import load_dataset
from rbrepro.errors import InvalidParameter
from rbrepro.memory import MemoryLimitError
from tests.cli_runner import one_line_error, run_cli
from tests.conftest import write_libsvm


@pytest.fixture
def quantity_file(tmp_path):
    """A regression set whose features span 0 ... 1000 (not already in [0, 1]) and whose targets are
    whole numbers with many distinct values, like LIBSVM's cpusmall."""
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1000, (1500, 6))
    y = np.round(X[:, 0] / 25 + X[:, 1] / 50 + rng.normal(0, 1, len(X))).clip(0, None)
    return write_libsvm(tmp_path / "cpu.libsvm", X, y), X, y


def test_a_loaded_model_predicts_raw_rows_as_the_command_line_does(quantity_file, tmp_path):
    path, X, y = quantity_file
    model_path = tmp_path / "cpu.npz"
    run_cli("train", path, "--R", "64", "--sigma", "0.5", "--task", "regression", "--save-model", model_path, "-q",
            check=True)
    cli = json.loads(run_cli("predict", model_path, path, "--json", check=True).stdout)
    saved = models.load(model_path)
    assert saved.task == "regression" and saved.n_features_in_ == 6 and saved.scaler is not None
    ours = np.linalg.norm(y - saved.predict(X)) / np.linalg.norm(y)
    assert ours == pytest.approx(cli["value"], abs=1e-9) and ours < 0.2
    assert saved.metric(X, y) == pytest.approx(cli["value"], abs=1e-9)
    raw = saved.estimator.predict(X.astype(np.float32))  # the bare estimator expects scaled rows
    assert np.linalg.norm(y - raw) / np.linalg.norm(y) > 0.5


def test_whole_number_targets_with_many_values_are_not_guessed_as_classes(quantity_file, tmp_path):
    path, _, _ = quantity_file
    one_line_error(run_cli("train", path, "--R", "16"), "distinct whole numbers", "--task regression")
    row = json.loads(run_cli("train", path, "--R", "16", "--task", "regression", "--json", check=True).stdout)
    assert row["task"] == "regression" and row["metric"] == "rel_error"
    one_line_error(run_cli("train", "digits", "--R", "8", "--task", "regression"), "built-in", "--task")


def test_predict_refuses_rows_of_another_width_unless_padding_is_asked(quantity_file, tmp_path):
    path, X, y = quantity_file
    model_path = tmp_path / "m.npz"
    run_cli("train", path, "--R", "16", "--task", "regression", "--save-model", model_path, "-q", check=True)
    narrow = write_libsvm(tmp_path / "narrow.libsvm", X[:, :4], y)  # dense rows, 4 features
    one_line_error(run_cli("predict", model_path, narrow), "4 features", "takes 6", "--pad")
    assert run_cli("predict", model_path, narrow, "--pad").returncode == 0
    wide = write_libsvm(tmp_path / "wide.libsvm", np.hstack([X, X]), y)
    one_line_error(run_cli("predict", model_path, wide), "wide.libsvm:1:", "(6)")
    csv = tmp_path / "bare.csv"
    csv.write_text("".join(",".join(f"{v:.3f}" for v in row) + "\n" for row in np.hstack([X, X[:, :3]])))
    one_line_error(run_cli("predict", model_path, csv), "9 columns", "6 features")


def test_a_sparse_file_that_omits_trailing_zero_features_is_padded_and_said(tmp_path):
    rng = np.random.default_rng(0)
    X = (rng.random((400, 10)) < 0.3) * rng.random((400, 10))
    y = np.where(X[:, 0] + X[:, 1] > 0.3, 1, -1)
    train = write_libsvm(tmp_path / "t.libsvm", X, y)
    model_path = tmp_path / "s.npz"
    run_cli("train", train, "--R", "16", "--save-model", model_path, "-q", check=True)
    sparse = write_libsvm(tmp_path / "s.libsvm", X[:, :8], y)
    proc = run_cli("predict", model_path, sparse)
    assert proc.returncode == 0 and "up to 8 of the model's 10" in proc.stderr


def test_predict_reads_a_csv_with_the_training_label_column(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.random((300, 3))
    y = np.where(X[:, 0] > 0.5, "yes", "no")
    csv = tmp_path / "own.csv"
    csv.write_text("".join(f"{a:.4f},{b:.4f},{c:.4f},{t}\n" for (a, b, c), t in zip(X, y)))
    model_path = tmp_path / "own.npz"
    run_cli("train", csv, "--label-column", "-1", "--R", "32", "--save-model", model_path, "-q", check=True)
    out = json.loads(run_cli("predict", model_path, csv, "--json", check=True).stdout)
    assert out["value"] is not None and out["value"] > 80  # the label read from the last column, as trained
    assert models.load(model_path).label_column == -1


def test_sigma_auto_chooses_on_validation_and_records_the_curve(tmp_path):
    row = json.loads(run_cli("train", "digits", "--R", "32", "--sigma", "auto", "--json", check=True).stdout)
    curve = dict(point.split(":") for point in row["sigma_curve"].split(";"))
    assert row["sigma_selection"].startswith("held-out tenth") and 3 <= len(curve) <= 13
    assert row["sigma_selection"].endswith(f"{len(curve)} sigmas")
    best = max(curve, key=lambda s: (float(curve[s]), -float(s)))
    assert row["sigma"] == pytest.approx(float(best)) and row["test_metric"] > 90
    text = run_cli("train", "digits", "--R", "16", "--sigma", "auto", check=True).stdout
    assert "chosen on the held-out tenth" in text and text.count("held-out accuracy") >= 3


def test_misleading_names_get_the_right_message(tmp_path):
    one_line_error(run_cli("train", "data/nope.libsvm", cwd=tmp_path), "data/nope.libsvm: no such file")
    one_line_error(run_cli("train", "ijcnn11"), "did you mean 'ijcnn1'")


@pytest.mark.parametrize("content, needle", [
    ("1\n-1\n1\n-1\n", "no line names a feature"),
    ("".join(f"{1e200 * (i + 1)} 1:{i / 50}\n" for i in range(50)), "label 1e+200"),
    ("".join(f"{i % 2} 1:{3e38 if i % 3 else -3e38} 2:{i}\n" for i in range(50)), "feature 1 spans"),
    ("1 200000000:1\n", "feature index 200000000"),
])
def test_numbers_at_the_edge_of_float64_and_the_index_range_are_named(tmp_path, content, needle):
    path = tmp_path / "edge.libsvm"
    path.write_text(content)
    one_line_error(run_cli("train", path, "--R", "8"), str(path), needle)
    with pytest.raises(ContentError, match=needle.replace("+", r"\+")):
        load_dataset(str(path), tmp_path / "d")


def test_negative_seeds_are_refused_by_name():
    one_line_error(run_cli("train", "digits", "--R", "8", "--seed", "-1"), "--seed")
    X, y = np.random.default_rng(0).random((30, 3)), np.arange(30) % 2
    for name in ("RandomBinningClassifier", "IndependentBlockClassifier", "RandomFourierClassifier"):
        with pytest.raises(InvalidParameter, match="random_state"):
            getattr(models, name)(random_state=-1).fit(X, y)


def test_every_feature_map_refuses_what_cannot_fit_by_name():
    from rbrepro.features import NystromFeatures, RandomBinningFeatures, RandomFourierFeatures

    X = np.random.default_rng(0).random((50, 4))
    with pytest.raises(MemoryLimitError, match="rf"):
        RandomFourierFeatures(n_components=10**9).fit(X)
    with pytest.raises(MemoryLimitError, match="nystrom"):
        NystromFeatures(n_components=40, memory_limit_gb=1e-6).fit(X)
    with pytest.raises(MemoryLimitError, match="rb"):
        RandomBinningFeatures(n_grids=8, memory_limit_gb=1e-6).fit(X)


def test_binning_refuses_lookup_tables_that_outgrow_the_limit():
    """A large sigma puts every row in a bin of its own: the tables grow with D, which only the
    binning itself learns; it refuses, naming D, before the tables are built."""
    from rbrepro.features import RandomBinningFeatures
    from rbrepro.features.random_binning import fit_memory

    X = np.random.default_rng(0).random((20000, 3))
    limit_gb = (fit_memory(20000, 3, 64) + 20000 * 64 * 20) / 2**30  # room for the ids, not ~56 B a bin
    with pytest.raises(MemoryLimitError, match="lookup tables for D"):
        RandomBinningFeatures(n_grids=64, sigma=1000.0, memory_limit_gb=limit_gb).fit(X)
    RandomBinningFeatures(n_grids=64, sigma=0.5, memory_limit_gb=limit_gb).fit(X)  # few bins: fits


def test_terminal_escape_codes_from_files_are_not_sent_raw(tmp_path):
    path = tmp_path / "esc\x1b[31m.libsvm"
    proc = run_cli("train", path)
    assert "\x1b[31m" not in proc.stderr and "\\x1b[31m" in proc.stderr


def test_figures_refuse_finished_rows_whose_metrics_are_not_finite(tmp_path):
    import pandas as pd

    from rbrepro.sweep.results_folder import load_results

    rows = pd.DataFrame({"dataset": ["d", "d"], "method": ["rb", "rb"], "sigma": [1.0, 2.0], "R": [8, 8],
                         "seed": [0, 0], "metric": ["accuracy"] * 2, "train_metric": [90.0, 91.0],
                         "test_metric": [89.0, float("inf")], "train_s": [0.1, 0.1], "D": [10, 12],
                         "status": ["ok", "ok"]})
    rows.to_csv(tmp_path / "results.csv", index=False)
    with pytest.raises(InvalidParameter, match=r"results.csv:3: test_metric is .inf."):
        load_results(tmp_path)
    one_line_error(run_cli("plot", "fig3", tmp_path), "results.csv:3", "test_metric")


def test_a_sweep_does_not_replace_a_results_csv_it_did_not_write(tmp_path):
    (tmp_path / "res").mkdir()
    foreign = tmp_path / "res" / "results.csv"
    foreign.write_text("a,b\n1,2\n")
    one_line_error(run_cli("sweep", "configs/quick.yaml", "--out", tmp_path / "res", "-q",
                           cwd=__import__("pathlib").Path(__file__).parents[1]), "results.csv", "no sweep wrote")
    assert foreign.read_text() == "a,b\n1,2\n"


def test_a_killed_writer_s_partial_file_is_removed_by_the_next_write(tmp_path):
    import subprocess
    import sys

    from rbrepro.data.atomic import write_text_atomic

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = tmp_path / f".fig3.pdf.{dead.stdout.strip()}.abc123.part"
    left.write_text("")
    live = tmp_path / f".fig3.pdf.{__import__('os').getpid()}.def456.part"  # this process: a live writer's
    live.write_text("")
    write_text_atomic(tmp_path / "fig3.pdf", "x")
    assert not left.exists() and live.exists() and (tmp_path / "fig3.pdf").read_text() == "x"


def test_a_decompression_bomb_of_valid_lines_stops_at_the_memory_model(tmp_path):
    import gzip

    from rbrepro.data.delimited import parse_csv
    from rbrepro.data.libsvm import parse_libsvm

    bomb = tmp_path / "bomb.libsvm.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as fh:
        for _ in range(40):
            fh.write(b"1 1:1 2:1\n" * 100_000)  # 4 M valid lines from a 200 kB file
    with pytest.raises(MemoryLimitError, match=r"bomb.libsvm.gz: parsing .* by line"):
        parse_libsvm(bomb, 0, memory_limit_gb=0.05)
    assert parse_libsvm(bomb, 0, memory_limit_gb=1.0).X.shape == (4_000_000, 2)
    csv = tmp_path / "bomb.csv.gz"
    with gzip.open(csv, "wb", compresslevel=1) as fh:
        for _ in range(40):
            fh.write(b"1,0.5,0.25\n" * 100_000)
    with pytest.raises(MemoryLimitError, match="bomb.csv.gz: reading its CSV text"):
        parse_csv(csv, memory_limit_gb=0.05)


def test_a_dry_run_counts_the_cells_reuse_from_will_take(tmp_path):
    from pathlib import Path

    root = Path(__file__).parents[1]
    run_cli("sweep", "configs/quick.yaml", "--out", tmp_path / "a", "-q", "--seed", "0", cwd=root, check=True)
    out = run_cli("sweep", "configs/quick.yaml", "--out", tmp_path / "b", "--dry-run", "--reuse-from",
                  tmp_path / "a", cwd=root, check=True).stdout
    taken = out.count(" reuse ")
    assert taken > 0 and f"{taken} to take from --reuse-from" in out.splitlines()[-1]


def test_an_offline_download_error_is_short_and_says_why():
    import requests

    from rbrepro.data.transfer import REASON_CHARS, network_reason

    offline = requests.ConnectionError(
        "HTTPSConnectionPool(host='www.csie.ntu.edu.tw', port=443): Max retries exceeded with url: /x (Caused by "
        "NameResolutionError(\"HTTPSConnection(host='www.csie.ntu.edu.tw', port=443): Failed to resolve "
        "'www.csie.ntu.edu.tw' ([Errno -2] Name or service not known)\"))")
    assert network_reason(offline) == "cannot resolve www.csie.ntu.edu.tw (no network, or no DNS here?)"
    refused = requests.ConnectionError("HTTPConnectionPool(host='127.0.0.1', port=9): Max retries exceeded "
                                       "(Caused by NewConnectionError('[Errno 111] Connection refused'))")
    assert network_reason(refused) == "connection refused by 127.0.0.1"
    assert len(network_reason(requests.HTTPError("x" * 1000))) <= REASON_CHARS
