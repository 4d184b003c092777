"""One tool, one answer: the same model through `train`, a sweep and the estimators; what was chosen is
said; the saved model behaves like an estimator; refusals come before work; every memory limit the
process lives under is read. Each through the real command line or the public API."""

from __future__ import annotations

import gzip
import json
import resource

import numpy as np
import pandas as pd
import pytest

from rbrepro.data.load import load_dataset
from rbrepro.models import RandomBinningClassifier, RandomBinningRegressor, load, save
from tests.cli_runner import one_line_error, run_cli
from tests.conftest import make_binary_problem, write_libsvm


def test_train_a_sweep_and_the_estimator_give_the_same_model_by_default(tmp_path):
    """digits, RB, R = 32, sigma 0.1, seed 0, every default: the held-out stop with pcg at each door."""
    row = json.loads(run_cli("train", "digits", "--method", "rb", "--R", 32, "--sigma", 0.1, "--json",
                             check=True).stdout)
    config = tmp_path / "own.yaml"
    config.write_text("name: own\nmethods: [rb]\nseeds: [0]\ndatasets: {digits: {sigma: [0.1], R: [32]}}\n")
    run_cli("sweep", config, "--out", tmp_path / "own", "-q", check=True)
    swept = pd.read_csv(tmp_path / "own" / "results.csv").iloc[0]
    data = load_dataset("digits")
    model = RandomBinningClassifier(n_grids=32, sigma=0.1, lam=data.info["spec"].lam, random_state=0)
    python = 100.0 * model.fit(data.X_train, data.y_train).score(data.X_test, data.y_test)
    assert (row["solver"], row["stopping"]) == (swept["solver"], swept["stopping"]) == ("pcg", "validation")
    assert model.early_stopping_ and model.best_iteration_ == row["best_iteration"] == swept["best_iteration"]
    assert row["test_metric"] == pytest.approx(swept["test_metric"], abs=1e-12)
    assert row["test_metric"] == pytest.approx(python, abs=1e-12)


def test_the_published_configs_pin_the_authors_rule():
    from pathlib import Path

    from rbrepro.sweep.cells import cells_on_test, selection_cells
    from rbrepro.sweep.config import load_config

    root = Path(__file__).resolve().parents[1] / "configs"
    for name in ("fig3", "fig3-as-published", "fig4", "fig5", "fig5-as-published", "scaling", "paper-scale"):
        config = load_config(root / f"{name}.yaml")
        cells = selection_cells(config) + cells_on_test(config)
        rb = [c for c in cells if c.method == "rb"]
        assert rb and all(c.stopping == "residual" and c.solver == "default" for c in rb), name


def test_train_names_the_test_rows_a_paired_test_file_or_the_split(tmp_path):
    X, y = make_binary_problem(600, 6, seed=3)
    write_libsvm(tmp_path / "a9", X[:450], y[:450])
    write_libsvm(tmp_path / "a9.t", X[450:], y[450:])
    write_libsvm(tmp_path / "solo.libsvm", X, y)
    paired = run_cli("train", tmp_path / "a9", "--R", 16, "--sigma", 1, check=True)
    assert "tested on test file a9.t (150 rows)" in paired.stdout
    alone = run_cli("train", tmp_path / "solo.libsvm", "--R", 16, "--sigma", 1, check=True)
    assert "tested on seeded split 480/120 (seed 0) (120 rows)" in alone.stdout


def _on_a_terminal(*args) -> tuple[int, str]:
    """`rbrepro ARGS` with stderr on a pseudo-terminal (as a user at a terminal sees it): (exit, stderr)."""
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "rbrepro", *map(str, args)], stdout=subprocess.DEVNULL,
                            stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return proc.wait(timeout=300), b"".join(chunks).decode(errors="replace")


def test_a_wait_of_seconds_is_said_on_a_terminal_and_never_breaks_an_error_line():
    code, said = _on_a_terminal("train", "digits", "--R", 8, "--sigma", "auto")
    assert code == 0 and "loading the data, then choosing sigma" in said
    quiet = run_cli("train", "digits", "--R", 8, "--sigma", 0.1, check=True)  # off a terminal: nothing said
    assert "loading" not in quiet.stderr


def test_the_saved_model_behaves_like_the_estimator(tmp_path):
    X, y = make_binary_problem(400, 6, seed=5)
    model = RandomBinningClassifier(n_grids=16, sigma=1.0, random_state=0).fit(X, y)
    saved = load(model.save(tmp_path / "m.npz"))
    assert saved.score(X, y) == pytest.approx(model.score(X, y))            # a fraction, as scikit-learn's
    assert saved.metric(X, y) == pytest.approx(100.0 * model.score(X, y))   # the paper's metric, in %
    assert np.array_equal(saved.predict(X.tolist()), model.predict(X))    # lists, as any estimator
    assert saved.task == "binary"                                         # one task vocabulary
    with pytest.raises(ValueError, match=r"1-D array of 6 values; rows are 2-D: pass one row as \[row\]"):
        saved.predict(X[0])
    reg = RandomBinningRegressor(n_grids=16, sigma=1.0, random_state=0).fit(X, X[:, 0] + X[:, 1])
    saved = load(reg.save(tmp_path / "r.npz"))
    assert saved.score(X, X[:, 0] + X[:, 1]) == pytest.approx(reg.score(X, X[:, 0] + X[:, 1]))  # R^2
    assert saved.task == "regression"


def test_a_pipeline_of_a_scaler_and_a_model_saves_without_pickle(tmp_path):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = make_binary_problem(300, 6, seed=9)
    X = X * 50 + 7
    pipe = make_pipeline(StandardScaler(), RandomBinningClassifier(n_grids=16, sigma=1.0, random_state=0)).fit(X, y)
    saved = load(save(pipe, tmp_path / "p.npz"))
    assert np.array_equal(saved.predict(X), pipe.predict(X)) and saved.score(X, y) == pytest.approx(pipe.score(X, y))
    raw = np.load(tmp_path / "p.npz", allow_pickle=False)  # arrays and a JSON header, nothing pickled
    assert all(raw[name].dtype != object for name in raw.files)
    from sklearn.decomposition import PCA

    other = make_pipeline(PCA(3), RandomBinningClassifier(n_grids=8, random_state=0)).fit(X, y)
    with pytest.raises(ValueError, match="cannot save the Pipeline step 'pca'"):
        save(other, tmp_path / "q.npz")


def test_a_model_file_whose_scaling_is_not_finite_is_refused_naming_the_array(tmp_path):
    X, y = make_binary_problem(300, 6, seed=2)
    write_libsvm(tmp_path / "tr.libsvm", X, y)
    run_cli("train", tmp_path / "tr.libsvm", "--R", 8, "--sigma", 1, "--save-model", tmp_path / "m.npz", check=True)
    _rewrite_array(tmp_path / "m.npz", "scaler.inv", lambda a: np.where(np.arange(a.size) == 0, np.inf, a))
    proc = run_cli("predict", tmp_path / "m.npz", tmp_path / "tr.libsvm")
    one_line_error(proc, "its scaling array 'scaler.inv' holds a value that is not finite")


def _rewrite_array(path, name, change):
    """Rewrite one array of a model file with its checksum renewed (a crafted, well-formed file)."""
    from rbrepro.models import persist

    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    header = json.loads(str(arrays.pop("__header__")))
    arrays[name] = change(arrays[name])
    header["checksums"][name] = persist._checksum(arrays[name])
    header["header_sha256"] = persist._header_checksum(header)
    with open(path, "wb") as fh:
        np.savez(fh, __header__=np.array(json.dumps(header)), **arrays)


def test_the_cluster_refuses_a_solver_it_cannot_run_before_it_starts(tmp_path):
    proc = run_cli("train", "digits", "--R", 8, "--sigma", 0.1, "--solver", "direct", "--cluster", "local:2")
    one_line_error(proc, "rb with solver direct factors the D x D matrix")
    code, said = _on_a_terminal("train", "digits", "--R", 8, "--sigma", 0.1, "--solver", "direct", "--cluster",
                                "local:2")
    assert code == 2 and "starting the dask cluster" not in said and "loading the data" not in said


def test_the_memory_guard_reads_the_address_space_limit(tmp_path):
    """A gzip bomb (zeros) under `ulimit -v`: refused in one line naming the file, never a MemoryError
    traceback; the default limit reads RLIMIT_AS."""
    bomb = tmp_path / "bomb.libsvm.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as fh:
        chunk = b"\0" * (1 << 20)
        for _ in range(1024):  # 1 GB of zeros in about 1 MB
            fh.write(chunk)
    limit = 3 << 30

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "rbrepro", "train", str(bomb), "--R", "8", "--sigma", "1"],
                          capture_output=True, text=True, preexec_fn=cap, timeout=300)
    line = one_line_error(proc, str(bomb))
    assert "Traceback" not in proc.stderr and "MemoryError" not in line
    probe = subprocess.run([sys.executable, "-c", "from rbrepro.memory import memory_limit_bytes as m; print(m())"],
                           capture_output=True, text=True, preexec_fn=cap, timeout=120, check=True)
    assert int(probe.stdout) < 0.6 * limit


def test_summary_gives_the_best_sigma_and_metric_per_method_and_R(tmp_path):
    config = tmp_path / "grid.yaml"
    config.write_text("name: grid\nmethods: [rb]\nseeds: [0, 1]\n"
                      "datasets: {digits: {sigma: [0.03, 0.1], R: [16]}}\n")
    run_cli("sweep", config, "--out", tmp_path / "grid", "-q", check=True)
    out = run_cli("summary", tmp_path / "grid", check=True).stdout
    rows = pd.read_csv(tmp_path / "grid" / "results.csv")
    medians = rows.groupby("sigma")["test_metric"].median()
    best = medians.idxmax()
    line = next(line for line in out.splitlines() if line.strip().startswith("digits"))
    assert f"{best:g}" in line.split() and "best median on test" in line and f"{medians[best]:.4g}" in line


def test_predict_quiet_prints_only_the_predictions(tmp_path):
    X, y = make_binary_problem(300, 6, seed=4)
    write_libsvm(tmp_path / "tr.libsvm", X, y)
    run_cli("train", tmp_path / "tr.libsvm", "--R", 8, "--sigma", 1, "--save-model", tmp_path / "m.npz", "-q",
            check=True)
    proc = run_cli("predict", tmp_path / "m.npz", tmp_path / "tr.libsvm", "-q", check=True)
    assert proc.stderr == "" and len(proc.stdout.splitlines()) == 300


def test_edge_rows_read_a_float_column_without_a_pandas_warning():
    import warnings

    from rbrepro.analysis.rows import edge_rows

    rows = pd.DataFrame({"sigma_edge": [np.nan, np.nan], "sigma": [1.0, 2.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert edge_rows(rows).empty
