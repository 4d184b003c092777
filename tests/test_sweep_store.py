"""Results you can trust: sweeps and plots never destroy, mix or mis-time results.

Each test checks one way results could be lost, mixed or mis-timed.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest

from rbrepro.models.cell import CellParams
from rbrepro.sweep import runner, store, worker
from rbrepro.sweep.backends import LocalBackend
from rbrepro.sweep.cells import cells_on_test
from rbrepro.sweep.config import parse_config
from rbrepro.sweep.keys import cell_key
from rbrepro.sweep.runner import run_sweep
from tests.cli_runner import run_cli

REPO = Path(__file__).resolve().parents[1]


def rbrepro(*args, cwd=None, env=None, check=True, timeout=300):
    return run_cli(*args, cwd=cwd, env=env, check=check, timeout=timeout)


@pytest.fixture
def project(tmp_path):
    """A folder laid out like a checkout: configs/quick.yaml and a 'published' results/quick."""
    (tmp_path / "configs").mkdir()
    shutil.copy(REPO / "configs" / "quick.yaml", tmp_path / "configs" / "quick.yaml")
    published = tmp_path / "results" / "quick"
    published.mkdir(parents=True)
    (published / "results.csv").write_text("dataset,method,sigma\n" + "digits,rb,0.3\n" * 50)
    (published / "config.resolved.yaml").write_text("name: quick\nfigure: fig3\n")
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "fig5.png").write_bytes(b"published figure")
    return tmp_path


@pytest.mark.slow
def test_a_narrowed_sweep_leaves_the_published_csv_alone(project):
    before = (project / "results" / "quick" / "results.csv").read_bytes()
    out = rbrepro("sweep", "configs/quick.yaml", "--dataset", "digits", "--sigma", "0.3", "--seed", "0", "-m", "rb",
                  "-q", cwd=project).stdout
    assert "runs/quick/results.csv" in out
    assert (project / "results" / "quick" / "results.csv").read_bytes() == before
    assert len(pd.read_csv(project / "runs" / "quick" / "results.csv")) == 1


@pytest.mark.slow
def test_plot_refuses_another_figures_results_and_draws_beside_them(project):
    rbrepro("sweep", "configs/quick.yaml", "--sigma", "0.3", "-q", cwd=project)
    bad = rbrepro("plot", "fig5", "runs/quick", cwd=project, check=False)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "a sweep for fig3 (quick), not for fig5" in bad.stderr
    assert (project / "figures" / "fig5.png").read_bytes() == b"published figure"
    paths = rbrepro("plot", "fig3", "runs/quick", cwd=project).stdout.split()
    assert paths == ["runs/quick/fig3.png", "runs/quick/fig3.pdf"]
    assert sorted(p.name for p in (project / "figures").iterdir()) == ["fig5.png"]


@pytest.mark.slow
def test_results_csv_holds_exactly_the_cells_of_the_config_that_ran(tmp_path):
    out = tmp_path / "res"
    wide = parse_config("name: s\nfigure: fig3\ndatasets:\n  digits: {sigma: [0.1, 0.3, 1], R: [16]}\n", "s.yaml")
    run_sweep(wide, out, backend=LocalBackend(2))
    assert len(pd.read_csv(out / "results.csv")) == 3
    narrow = parse_config("name: s\nfigure: fig3\ndatasets:\n  digits: {sigma: [0.3], R: [16]}\n", "s.yaml")
    counts = run_sweep(narrow, out, backend=LocalBackend(2))
    frame = pd.read_csv(out / "results.csv")
    assert list(frame["sigma"]) == [0.3] and counts["aside"] == 2 and counts["ran"] == 0
    # a changed solver setting is a different cell: it replaces the row in the CSV, never adds to it
    capped = parse_config("name: s\nfigure: fig3\nsolver: {maxit: 5}\ndatasets:\n  digits: {sigma: [0.3], R: [16]}\n",
                          "s.yaml")
    counts = run_sweep(capped, out, backend=LocalBackend(2))
    frame = pd.read_csv(out / "results.csv")
    assert len(frame) == 1 and frame["maxit"].iloc[0] == 5 and counts["ran"] == 1 and counts["aside"] == 3


@pytest.mark.slow
def test_cell_keys_cover_the_data_and_the_algorithms_version(tmp_path, monkeypatch):
    params = CellParams(dataset="digits", sigma=0.3, R=16)
    assert cell_key(params, "aaaa") != cell_key(params, "bbbb")
    assert cell_key(params, "aaaa", version=1) != cell_key(params, "aaaa", version=2)
    assert cell_key(params, "aaaa") == cell_key(CellParams(dataset="digits", sigma=0.3, R=16, memory_limit_gb=3.0),
                                                "aaaa")  # a setting, not a parameter
    cfg = parse_config("name: v\nfigure: fig3\ndatasets:\n  digits: {sigma: [0.3], R: [16]}\n", "v.yaml")
    out = tmp_path / "res"
    run_sweep(cfg, out, backend=LocalBackend(1))
    first = pd.read_csv(out / "results.csv")
    assert first["algorithm_version"].iloc[0] == runner.ALGORITHM_VERSION and first["data_fingerprint"].iloc[0]
    monkeypatch.setattr(runner, "ALGORITHM_VERSION", runner.ALGORITHM_VERSION + 1)
    monkeypatch.setattr(store, "cell_key", lambda p, fp="", version=runner.ALGORITHM_VERSION + 1:
                        cell_key(p, fp, version))
    assert run_sweep(cfg, out, backend=LocalBackend(1), reuse_stale=True)["ran"] == 0  # reused on purpose
    counts = run_sweep(cfg, out, backend=LocalBackend(1))  # by default: older code's cell is not reused
    assert counts["ran"] == 1 and counts["aside"] == 1
    assert pd.read_csv(out / "results.csv")["cell_key"].iloc[0] != first["cell_key"].iloc[0]


@pytest.mark.parametrize("args", [
    ["--R", "64", "--sigma", "0.3", "--threads", "1"],  # 10 classes: the multi-target kernels
    ["--R", "64", "--sigma", "0.3", "--threads", "2", "--solver", "pcg"],
    ["--method", "rf", "--R", "64", "--sigma", "0.3", "--solver", "cg"],
    ["--method", "nystrom", "--R", "64", "--sigma", "0.3", "--kernel", "euclidean"],
    ["--method", "block", "--R", "64", "--sigma", "0.3"],
    ["--method", "exact", "--sigma", "0.3"],
    ["--method", "rb", "--R", "16", "--sigma", "0.3", "--solver", "rcd", "--threads", "2", "--variant", "sync",
     "--epochs", "2"],
    ["--method", "rf", "--R", "16", "--sigma", "0.3", "--solver", "rcd", "--epochs", "2"],
])
@pytest.mark.slow
def test_no_timed_region_includes_compilation_on_an_empty_numba_cache(tmp_path, args):
    row = json.loads(rbrepro("train", "digits", *args, "--json", env={"NUMBA_CACHE_DIR": str(tmp_path / "nb")})
                     .stdout)
    assert row["compiled_in_timed_region"] == "", row["compiled_in_timed_region"]


def test_the_compilation_guard_sees_a_kernel_compiled_in_the_timed_region():
    import numpy as np

    from rbrepro.features import _matvec_kernels
    from rbrepro.models.cell import compiled_since, numba_signatures

    before = numba_signatures()
    _matvec_kernels.gather(np.zeros((2, 3), np.int16), np.zeros((4, 2)), np.zeros((3, 2)))  # a new type signature
    assert "rbrepro.features._matvec_kernels._gather" in compiled_since(before)  # the kernel behind the wrapper


@pytest.mark.slow
def test_cells_skipped_by_the_memory_guard_are_retried_under_a_higher_limit(tmp_path):
    config = tmp_path / "m.yaml"
    config.write_text("name: m\nfigure: fig3\nmethods: [exact]\ndatasets:\n  digits: {sigma: [0.3], R: [8]}\n")
    first = rbrepro("sweep", config, "--out", tmp_path / "res", "--memory-limit", "0.001", "-q").stdout
    assert "1 skipped by the memory guard" in first
    again = rbrepro("sweep", config, "--out", tmp_path / "res", "--memory-limit", "0.001", "-q").stdout
    assert "0 run now" in again  # the same limit: not retried
    rbrepro("sweep", config, "--out", tmp_path / "res", "--memory-limit", "4", "-q")
    frame = pd.read_csv(tmp_path / "res" / "results.csv")
    assert list(frame["status"]) == ["ok"]


def _pids(folder: Path) -> list[int]:
    return [int(p.read_text()) for p in folder.glob("worker-*")] if folder.exists() else []


def _wait(predicate, seconds=60.0):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


COORDINATOR = """
import sys
sys.path.insert(0, {repo!r})
from pathlib import Path
from rbrepro.sweep.config import parse_config
from rbrepro.sweep.backends import LocalBackend
from rbrepro.sweep.runner import run_sweep
from tests import worker_tasks
cfg = parse_config("name: o\\ndatasets:\\n  digits: {{sigma: [0.1, 0.3], R: [8]}}\\n", "o.yaml")
run_sweep(cfg, Path({out!r}), data_path={marks!r}, backend=LocalBackend(2, task=worker_tasks.sleep_cell))
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_no_worker_outlives_its_coordinator(tmp_path, how):
    marks = tmp_path / "marks"
    script = COORDINATOR.format(repo=str(REPO), out=str(tmp_path / "res"), marks=str(marks))
    coordinator = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    try:
        assert _wait(lambda: len(_pids(marks)) == 2), "the workers did not start"
        workers = _pids(marks)
        coordinator.send_signal(how)  # the coordinator alone, as the OOM killer or `kill` would
        coordinator.wait(timeout=30)
        assert _wait(lambda: not any(_alive(p) for p in workers), 15), "a worker outlived its coordinator"
    finally:
        with __import__("contextlib").suppress(ProcessLookupError):
            os.killpg(coordinator.pid, signal.SIGKILL)


@pytest.mark.slow
@pytest.mark.parametrize("how, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_sigint_and_sigterm_print_one_line_and_leave_a_resumable_folder(tmp_path, how, code):
    config = tmp_path / "i.yaml"
    config.write_text("name: i\nfigure: fig3\nseeds: [0, 1, 2]\n"
                      "datasets:\n  digits: {sigma: [0.1, 0.3, 1, 3, 10, 30], R: [4096]}\n")
    out = tmp_path / "res"

    def default_signals():  # whatever this test process ignores (an earlier test, a library), the child may not
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    proc = subprocess.Popen([sys.executable, "-m", "rbrepro", "sweep", str(config), "--out", str(out), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)
    assert _wait(lambda: len(list((out / "cells").glob("*.json"))) >= 1, 120)
    children = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
    at_signal = len(list((out / "cells").glob("*.json")))
    proc.send_signal(how)
    out_text, err = proc.communicate(timeout=120)
    assert proc.returncode == code, (proc.returncode, at_signal, out_text, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"interrupted by {signal.Signals(how).name}" in lines[0] and "resume" in lines[0]
    assert _wait(lambda: not any(_alive(p) for p in children), 15)
    done = len(list((out / "cells").glob("*.json")))
    resumed = rbrepro("sweep", config, "--out", out, "-q", timeout=600).stdout
    assert f"18/18 cells done ({18 - done} run now" in resumed


def test_each_row_records_the_machine_load_around_the_cell():
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        row = worker.run_cell_task(CellParams(dataset="digits", sigma=0.3, R=1024, threads=1), "digits")
    finally:
        spinner.kill()
        spinner.wait()
    assert row["status"] == "ok" and row["load_other_cores"] > 0.5 and row["loadavg_1m_start"] >= 0
    assert row["ended_at_unix"] > row["started_at_unix"]


@pytest.mark.slow
def test_failed_cells_keep_their_traceback_in_a_log_beside_the_cell_not_in_the_csv(tmp_path):
    (tmp_path / "bad.txt").write_text("1 1:0.5\n-1 1:0.2 2:oops\n")
    (tmp_path / "sets.yaml").write_text("datasets:\n  bad: {train: bad.txt, task: binary}\n")
    cfg = parse_config(f"name: f\nfigure: fig3\ndataset_files: [{tmp_path / 'sets.yaml'}]\n"
                       "datasets:\n  digits: {sigma: [0.3], R: [8]}\n  bad: {sigma: [1], R: [8]}\n", "f.yaml")
    out = tmp_path / "res"
    counts = run_sweep(cfg, out, data_path=tmp_path / "data", backend=LocalBackend(2))
    assert counts["unavailable"] == {}  # a damaged file is not "unavailable": its cell fails and says why
    frame = pd.read_csv(out / "results.csv")
    assert "traceback" not in frame and len(frame) == 2
    failed = frame[frame["status"] == "failed"].iloc[0]
    assert (out / "cells" / f"{failed['cell_key']}.log").read_text().startswith("Traceback")
    assert sum(1 for _ in open(out / "results.csv")) == 3  # one line a row: nothing multi-line inside


def test_help_shows_every_default_and_there_is_a_version():
    help_text = rbrepro("train", "--help").stdout
    assert "[default: 256; x>=1]" in " ".join(help_text.split())
    assert "Ridge lambda [default: the dataset's, usually 0.01]" in " ".join(help_text.split())
    sweep_help = " ".join(rbrepro("sweep", "--help").stdout.split())
    assert "[default: runs/<config name>" in sweep_help and "[default: 60.0; x>=1.0]" in sweep_help
    from rbrepro import __version__

    assert rbrepro("--version").stdout.startswith(f"rbrepro {__version__}")


def test_fetch_list_columns_line_up_for_every_name():
    lines = rbrepro("fetch", "--list", env={"RBREPRO_DATA": "/nonexistent-data"}).stdout.splitlines()
    task_column = {line.index(line.split()[1], len(line.split()[0])) for line in lines}
    assert len(task_column) == 1 and "cod_rna_split" in "".join(lines), lines


def test_figures_flag_timings_taken_under_load_or_beside_other_cells():
    from rbrepro.plots.common import problems_note

    frame = pd.DataFrame({"dataset": ["a"] * 3, "status": ["ok"] * 3, "evaluate_on": ["test"] * 3,
                          "load_other_cores": [0.0, 0.9, 0.0], "concurrent_cells": [0, 0, 1]})
    assert "2 of 3 timings taken under load" in problems_note(frame, ["a"], ["a"])
    assert problems_note(frame.assign(load_other_cores=0.0, concurrent_cells=0), ["a"], ["a"]) == ""


@pytest.mark.slow
def test_a_user_dataset_not_supplied_is_named_unavailable_not_run_as_failed_cells(tmp_path):
    """census comes only from the user (`fetch census --from`); without it, no cells and one line."""
    cfg = parse_config("name: u\nfigure: fig3\ndatasets:\n  digits: {sigma: [0.3], R: [8]}\n"
                       "  census: {sigma: [1, 2], R: [8]}\n", "u.yaml")
    out = tmp_path / "res"
    counts = run_sweep(cfg, out, data_path=tmp_path / "data", backend=LocalBackend(1))
    assert list(counts["unavailable"]) == ["census"] and "fetch census --from" in counts["unavailable"]["census"]
    frame = pd.read_csv(out / "results.csv")
    assert frame["dataset"].tolist() == ["digits"] and (frame["status"] == "ok").all()
    assert "census" in json.loads((out / "unavailable.json").read_text())


@pytest.mark.slow
def test_failed_cells_of_a_dataset_that_is_now_unavailable_leave_the_csv(tmp_path):
    """Cells recorded as failed before a dataset was known to be unavailable (an older run) stay on
    disk but are not rows of the results: the rerun names the dataset once instead."""
    cfg = parse_config("name: u\nfigure: fig3\ndatasets:\n  digits: {sigma: [0.3], R: [8]}\n"
                       "  census: {sigma: [1], R: [8]}\n", "u.yaml")
    out = tmp_path / "res"
    run_sweep(cfg, out, data_path=tmp_path / "data", backend=LocalBackend(1))
    census = next(c for c in cells_on_test(cfg, {}) if c.dataset == "census")
    fake = {**json.loads(next((out / "cells").glob("*.json")).read_text()), "dataset": "census",
            "status": "failed", "error": "FileNotFoundError: census ..."}
    # as an older version left it: keyed by the fingerprint it gave a dataset it could not fetch
    (out / "cells" / f"{cell_key(census, 'unavailable')}.json").write_text(json.dumps(fake))
    counts = run_sweep(cfg, out, data_path=tmp_path / "data", backend=LocalBackend(1))
    frame = pd.read_csv(out / "results.csv")
    assert frame["dataset"].tolist() == ["digits"] and list(counts["unavailable"]) == ["census"]


@pytest.mark.slow
def test_stopping_a_pool_ends_its_manager_thread_before_the_sweep_exits():
    """An interrupted sweep leaves no pool manager thread running: CPython's exit hook would race it
    (it wakes the thread through a pipe the thread closes as it ends: an OSError traceback after the
    one-line interrupt message)."""
    from tests import worker_tasks

    backend = LocalBackend(1, task=worker_tasks.sleep_long)
    pool = backend._pool()
    future = pool.submit(worker_tasks.sleep_long, 600)
    deadline = time.monotonic() + 60
    while not future.running() and time.monotonic() < deadline:
        time.sleep(0.05)
    workers, manager = list(pool._processes.values()), pool._executor_manager_thread
    assert future.running() and manager.is_alive()
    LocalBackend._stop(pool)
    assert not manager.is_alive()
    assert all(not w.is_alive() for w in workers)
