"""Sweeps: cells, sigma selection, backends (worker death, SIGKILL and resume, dask on loopback)."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rbrepro.data.load import load_dataset, validation_split
from rbrepro.sweep.backends import LocalBackend
from rbrepro.sweep.cells import cells_on_test, selection_cells
from rbrepro.sweep.config import ConfigError, parse_config
from rbrepro.sweep.keys import cell_key
from rbrepro.sweep.runner import run_sweep
from rbrepro.sweep.selection import best_sigmas
from tests.cli_runner import CLI

COMPARE = ["dataset", "method", "sigma", "R", "seed", "threads", "test_metric", "train_metric", "D", "cg_iterations",
           "status"]


def test_thread_variant_and_per_dataset_method_grids():
    cfg = parse_config("name: t\nmethods: [rb, rf]\nthreads: [1, 2]\n"
                       "solver: {name: rcd, variant: [async, sync], epochs: 3}\n"
                       "datasets:\n  digits: {sigma: [1], R: [8]}\n  cadata: {sigma: [1], R: [8], methods: [rb]}\n",
                       "t.yaml")
    cells = cells_on_test(cfg)
    # per (dataset, method): 1 thread (one sequential cell) + 2 threads x 2 variants
    assert len(cells) == 3 * 3
    assert {(c.threads, c.variant) for c in cells if c.dataset == "digits" and c.method == "rb"} == \
        {(1, "async"), (2, "async"), (2, "sync")}
    assert {c.method for c in cells if c.dataset == "cadata"} == {"rb"}
    assert len({cell_key(c) for c in cells}) == len(cells)


def test_validation_split_uses_the_site_file_or_a_seeded_share():
    digits = load_dataset("digits")
    val = validation_split(digits)
    assert val.X_train.shape[0] + val.X_test.shape[0] == digits.X_train.shape[0]
    assert val.X_test.shape[0] == round(0.2 * digits.X_train.shape[0])
    assert (validation_split(digits).y_test == val.y_test).all()  # seeded


@pytest.mark.slow
def test_sigma_selection_per_R_on_validation_then_refit(tmp_path):
    cfg = parse_config("name: sel\nmethods: [rb, rf]\nprotocol: fair\nsigma_selection: validation\n"
                       "datasets:\n  digits: {sigma: [0.03, 0.3, 30], R: [16, 64]}\n", "sel.yaml")
    counts = run_sweep(cfg, tmp_path / "res", backend=LocalBackend(2))
    frame = pd.read_csv(tmp_path / "res" / "results.csv")
    assert counts["failed"] == 0 and len(frame) == 2 * 3 * 2 + 2 * 2
    sel = frame[frame["evaluate_on"] == "validation"]
    assert len(sel) == 12 and not sel["selected"].any()
    final = frame[frame["evaluate_on"] == "test"]
    assert final["selected"].all() and (final["protocol"] == "fair").all() and (final["selected_on"] == "validation").all()
    for method in ("rb", "rf"):
        for R in (16, 64):
            here = sel[(sel["method"] == method) & (sel["R"] == R)]
            best = here.sort_values("test_metric").iloc[-1]["sigma"]
            assert set(final[(final["method"] == method) & (final["R"] == R)]["sigma"]) == {best}
    assert 0.3 in set(final["sigma"])  # too wide (0.03) and too narrow (30) both lose on digits
    assert set(final["sigma_edge"].fillna("")) <= {"", "low", "high"}


@pytest.mark.slow
def test_sigma_selection_per_dataset_uses_select_R_only(tmp_path):
    cfg = parse_config("name: sel\nmethods: [rf]\nsigma_selection: {on: validation, per: dataset}\n"
                       "datasets:\n  digits: {sigma: [0.03, 0.3], R: [8, 32], select_R: 32}\n", "sel.yaml")
    run_sweep(cfg, tmp_path / "res", backend=LocalBackend(2))
    frame = pd.read_csv(tmp_path / "res" / "results.csv")
    sel = frame[frame["evaluate_on"] == "validation"]
    final = frame[frame["evaluate_on"] == "test"]
    assert set(sel["R"]) == {32} and len(sel) == 2
    assert final["sigma"].nunique() == 1 and set(final["R"]) == {8, 32}


def _choice_rows(on_validation_best: float, on_test_best: float) -> list[dict]:
    rows = []
    for sigma in (0.1, 1.0, 10.0):
        for on, best in (("validation", on_validation_best), ("test", on_test_best)):
            rows.append({"status": "ok", "dataset": "digits", "method": "rb", "R": 8, "sigma": sigma,
                         "evaluate_on": on, "metric": "accuracy", "test_metric": 90.0 if sigma == best else 50.0})
    return rows


def test_the_fair_protocol_never_chooses_on_test_rows():
    fair = parse_config("name: f\nprotocol: fair\nsigma_selection: validation\n"
                        "datasets:\n  digits: {sigma: [0.1, 1.0, 10.0], R: [8]}\n", "f.yaml")
    # the test rows favour 10.0 (at the grid's edge), the validation rows 1.0: only validation counts
    assert best_sigmas(fair, _choice_rows(1.0, 10.0)) == {("digits", "rb", 8): (1.0, "")}
    assert best_sigmas(fair, _choice_rows(10.0, 1.0)) == {("digits", "rb", 8): (10.0, "high")}
    published = parse_config("name: p\nprotocol: as-published\nsigma_selection: test\n"
                             "datasets:\n  digits: {sigma: [0.1, 1.0, 10.0], R: [8]}\n", "p.yaml")
    assert best_sigmas(published, _choice_rows(1.0, 0.1)) == {("digits", "rb", 8): (0.1, "low")}
    assert not selection_cells(fair) == [] and all(c.evaluate_on == "validation" for c in selection_cells(fair))
    assert cells_on_test(fair, {}) == []  # nothing runs on test before the choice is made


@pytest.mark.slow
def test_a_fair_sweep_chooses_the_same_whatever_the_test_labels(tmp_path):
    """Run the fair protocol twice on one training file with two test files, the second with
    shuffled labels: every choice (and every validation row) must be identical."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    def lines(X, y):
        return "".join(f"{int(t)} " + " ".join(f"{j + 1}:{v:g}" for j, v in enumerate(x) if v) + "\n"
                       for x, t in zip(X, y))
    (tmp_path / "tr").write_text(lines(X[:1200], y[:1200]))
    (tmp_path / "te").write_text(lines(X[1200:], y[1200:]))
    (tmp_path / "te2").write_text(lines(X[1200:], rng.permutation(y[1200:])))
    chosen = []
    for test in ("te", "te2"):
        (tmp_path / f"sets-{test}.yaml").write_text(
            f"datasets:\n  own:\n    train: tr\n    test: {test}\n    task: multiclass\n    n_features: 64\n")
        cfg = parse_config(f"name: f\nprotocol: fair\nmethods: [rb, rf]\nsigma_selection: validation\n"
                           f"dataset_files: [{tmp_path / f'sets-{test}.yaml'}]\n"
                           "datasets:\n  own: {sigma: [0.01, 0.1, 1, 10], R: [8, 32]}\n", "f.yaml")
        run_sweep(cfg, tmp_path / f"res-{test}", data_path=tmp_path / "data", backend=LocalBackend(2))
        frame = pd.read_csv(tmp_path / f"res-{test}" / "results.csv")
        picked = frame[frame["selected"]].sort_values(["method", "R"])
        chosen.append((picked[["method", "R", "sigma"]].values.tolist(),
                       frame[frame["evaluate_on"] == "validation"].sort_values(["method", "R", "sigma"])
                       ["test_metric"].round(9).tolist(),
                       picked["test_metric"].tolist()))
    assert chosen[0][0] == chosen[1][0] and len(chosen[0][0]) == 4
    assert chosen[0][1] == chosen[1][1]
    assert chosen[0][2] != chosen[1][2]  # the test labels did change what is reported


@pytest.mark.slow
def test_reuse_from_takes_the_same_cells_of_another_sweep_and_runs_the_rest(tmp_path):
    """Cells with the same key in another sweep's folder are taken, not run (and say so); an
    exclusive sweep takes only cells that were themselves run exclusively."""
    grid = "datasets:\n  digits: {sigma: [0.3, 3], R: [8]}\n"
    first = parse_config(f"name: a\nmethods: [rb]\n{grid}", "a.yaml")
    counts_a = run_sweep(first, tmp_path / "a", backend=LocalBackend(2))
    assert counts_a["ran"] == 2 and counts_a["reused"] == 0
    second = parse_config(f"name: b\nmethods: [rb, rf]\n{grid}", "b.yaml")
    counts_b = run_sweep(second, tmp_path / "b", backend=LocalBackend(2), reuse_from=[tmp_path / "a"])
    assert counts_b["reused"] == 2 and counts_b["ran"] == 2 and counts_b["done"] == 4
    a, b = (pd.read_csv(tmp_path / n / "results.csv") for n in ("a", "b"))
    rb = b[b["method"] == "rb"].sort_values("sigma")
    assert (rb["reused_from"] == "a").all() and (rb["sweep"] == "b").all()
    assert rb["test_metric"].tolist() == a.sort_values("sigma")["test_metric"].tolist()
    assert rb["finished_at"].tolist() == a.sort_values("sigma")["finished_at"].tolist()  # provenance kept
    assert b[b["method"] == "rf"]["reused_from"].isna().all()
    exclusive = parse_config(f"name: c\nexclusive: true\nmethods: [rb]\n{grid}", "c.yaml")
    counts_c = run_sweep(exclusive, tmp_path / "c", backend=LocalBackend(1, exclusive=True),
                         reuse_from=[tmp_path / "a"])
    assert counts_c["reused"] == 0 and counts_c["ran"] == 2  # a's timings were taken beside other cells
    counts_d = run_sweep(first, tmp_path / "d", backend=LocalBackend(2), reuse_from=[tmp_path / "c"])
    assert counts_d["reused"] == 2 and counts_d["ran"] == 0


@pytest.mark.slow
def test_reuse_from_a_published_folder_takes_rows_from_its_results_csv(tmp_path):
    """A published folder commits results.csv, not its cells: extending it with one more dataset
    takes the committed rows (same keys) and runs only the new cells."""
    import shutil

    grid = "datasets:\n  digits: {sigma: [0.3, 3], R: [8]}\n"
    run_sweep(parse_config(f"name: p\nmethods: [rb]\n{grid}", "p.yaml"), tmp_path / "p", backend=LocalBackend(2))
    shutil.rmtree(tmp_path / "p" / "cells")  # as committed: results.csv and the resolved config only
    more = parse_config("name: p2\nmethods: [rb]\ndatasets:\n  digits: {sigma: [0.3, 3, 10], R: [8]}\n", "p2.yaml")
    counts = run_sweep(more, tmp_path / "p2", backend=LocalBackend(2), reuse_from=[tmp_path / "p"])
    assert counts["reused"] == 2 and counts["ran"] == 1
    old, new = pd.read_csv(tmp_path / "p" / "results.csv"), pd.read_csv(tmp_path / "p2" / "results.csv")
    kept = new[new["reused_from"] == "p"].sort_values("sigma")
    assert kept["test_metric"].tolist() == old.sort_values("sigma")["test_metric"].tolist()


def test_choosing_on_test_needs_the_as_published_protocol():
    for text in ("sigma_selection: test\n", "protocol: fair\nsigma_selection: {on: test}\n"):
        with pytest.raises(ConfigError, match=r"t.yaml:\d+: sigma_selection: choosing sigma on test data"):
            parse_config(f"name: t\n{text}datasets: [digits]\ndefaults: {{sigma: [1]}}\n", "t.yaml")
    with pytest.raises(ConfigError, match="fair protocol uses the L1 kernel"):
        parse_config("name: t\nprotocol: fair\nkernel: euclidean\ndatasets: [digits]\ndefaults: {sigma: [1]}\n",
                     "t.yaml")


@pytest.mark.slow
def test_as_published_selection_marks_the_test_grid(tmp_path):
    cfg = parse_config("name: p\nprotocol: as-published\nkernel: euclidean\nmethods: [rb, rf]\n"
                       "sigma_selection: {on: test, per: {rb: R, default: dataset}}\n"
                       "datasets:\n  digits: {sigma: [0.03, 0.3, 3], R: [8, 32]}\n", "p.yaml")
    run_sweep(cfg, tmp_path / "res", backend=LocalBackend(2))
    frame = pd.read_csv(tmp_path / "res" / "results.csv")
    assert len(frame) == 2 * 3 * 2 and (frame["evaluate_on"] == "test").all()
    assert set(frame[frame["method"] == "rf"]["kernel"]) == {"euclidean"} and set(frame[frame["method"] == "rb"]["kernel"]) == {"l1"}
    picked = frame[frame["selected"]]
    assert len(picked) == 4 and picked[picked["method"] == "rf"]["sigma"].nunique() == 1
    for R in (8, 32):
        rb = frame[(frame["method"] == "rb") & (frame["R"] == R)]
        assert picked[(picked["method"] == "rb") & (picked["R"] == R)]["sigma"].item() == \
            rb.sort_values("test_metric").iloc[-1]["sigma"]


@pytest.mark.slow
def test_a_dead_worker_is_replaced_and_its_cell_retried(tmp_path):
    sys.path.insert(0, str(Path(__file__).parent.parent))
    from tests import worker_tasks

    cfg = parse_config("name: w\ndatasets:\n  digits: {sigma: [0.1, 0.3, 1], R: [8]}\n", "w.yaml")
    run_sweep(cfg, tmp_path / "res", data_path=tmp_path / "markers",
              backend=LocalBackend(2, task=worker_tasks.die_on_first_attempt))
    frame = pd.read_csv(tmp_path / "res" / "results.csv")
    assert len(frame) == 3 and (frame["status"] == "ok").all()
    run_sweep(cfg, tmp_path / "res2", backend=LocalBackend(1, task=worker_tasks.always_die))
    frame = pd.read_csv(tmp_path / "res2" / "results.csv")
    dead = frame[frame["sigma"] == 0.3].iloc[0]
    assert len(frame) == 3 and dead["status"] == "failed" and "worker process died" in dead["error"]
    assert (frame[frame["sigma"] != 0.3]["status"] == "ok").all()


KILL_CONFIG = "name: k\nseeds: [0, 1, 2, 3]\ndatasets:\n  digits: {sigma: [0.1, 0.3, 1, 3, 10], R: [32, 128]}\n"


def _sweep_cmd(config, out, *extra):
    return [*CLI, "sweep", str(config), "--out", str(out), "-q", *extra]


def _kill(proc, target: str, rng) -> None:
    """SIGKILL the sweep's whole process group, its coordinator alone, or one of its worker processes."""
    import psutil

    if target == "group":
        os.killpg(proc.pid, signal.SIGKILL)
        return
    if target == "worker":
        children = psutil.Process(proc.pid).children(recursive=True)
        if children:
            children[int(rng.integers(len(children)))].send_signal(signal.SIGKILL)
            return
    proc.send_signal(signal.SIGKILL)  # the coordinator alone: its workers must not go on writing


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume_gives_the_uninterrupted_csv(tmp_path):
    """Kills at random times (not at cell boundaries), of the whole group, the coordinator alone or
    one worker; then a resume must give the uninterrupted run's CSV exactly."""
    config = tmp_path / "k.yaml"
    config.write_text(KILL_CONFIG)
    started = time.monotonic()
    subprocess.run(_sweep_cmd(config, tmp_path / "clean"), check=True, timeout=600)
    clean_s = time.monotonic() - started
    clean = pd.read_csv(tmp_path / "clean" / "results.csv")
    killed = tmp_path / "killed"
    soak = int(os.environ.get("RBREPRO_SOAK", "0"))  # make soak: many more kills at random moments
    seed = soak or int(time.time())
    print(f"kill moments drawn with seed {seed}")  # shown on failure, to replay it
    rng = np.random.default_rng(seed)
    targets = ["group", "coordinator", "worker"] * max(1, soak)
    for target in targets:
        proc = subprocess.Popen(_sweep_cmd(config, killed), start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.2, 0.8) * clean_s)  # any moment: import, featurize, solve, write
        if proc.poll() is None:
            _kill(proc, target, rng)
        try:
            proc.wait(timeout=120)  # a worker's death alone: the sweep reruns its cell and finishes
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # nothing of this attempt outlives it
    subprocess.run(_sweep_cmd(config, killed), check=True, timeout=600)
    assert not list((killed / "cells").glob(".*.part"))  # temp files of killed writes are cleaned, never read
    resumed = pd.read_csv(killed / "results.csv")
    assert len(resumed) == len(clean) == 40 and resumed["cell_key"].is_unique
    a = clean.sort_values("cell_key")[COMPARE].reset_index(drop=True)
    b = resumed.sort_values("cell_key")[COMPARE].reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


def _start(cmd, **kw):
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)


DASK = str(Path(sys.executable).parent / "dask")


@pytest.fixture
def dask_scheduler(tmp_path):
    """A real dask scheduler on 127.0.0.1 (no workers yet): yields its address and a worker starter."""
    sched_file = tmp_path / "scheduler.json"
    procs = [_start([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(sched_file)])]
    try:
        deadline = time.time() + 60
        while not sched_file.exists() and time.time() < deadline:
            time.sleep(0.2)
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")

        def start_worker(name):
            procs.append(_start([DASK, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                 "--name", name, "--host", "127.0.0.1"]))
            return procs[-1]

        yield address, start_worker
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=30)


@pytest.mark.slow
def test_dask_scheduler_and_workers_on_loopback_with_a_worker_killed_mid_cell(tmp_path, dask_scheduler):
    address, start_worker = dask_scheduler
    victim = start_worker("w1")
    start_worker("w2")
    config = tmp_path / "d.yaml"
    config.write_text("name: d\nseeds: [0, 1]\ndatasets:\n  digits: {sigma: [0.1, 0.3, 1, 3], R: [256, 1024]}\n")
    sweep = subprocess.Popen(_sweep_cmd(config, tmp_path / "res", "--scheduler", address),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    from distributed import Client

    deadline = time.time() + 120
    with Client(address, timeout="60s") as watcher:  # kill the victim while the scheduler has a cell on it
        while time.time() < deadline and sweep.poll() is None:
            done = len(list((tmp_path / "res" / "cells").glob("*.json")))
            names = {a: w.get("name") for a, w in watcher.scheduler_info()["workers"].items()}
            on_victim = [k for a, ks in watcher.processing().items() if names.get(a) == "w1" for k in ks]
            if done >= 2 and any(str(k).startswith("rbrepro-cell-") for k in on_victim):
                victim.send_signal(signal.SIGKILL)
                break
            time.sleep(0.02)
    out, err = sweep.communicate(timeout=300)
    frame = pd.read_csv(tmp_path / "res" / "results.csv")
    assert len(frame) == 16 and frame["cell_key"].is_unique, err
    # every cell is there once: rescheduled on the surviving worker (and said so), or recorded as failed
    assert set(frame["status"]) <= {"ok", "failed"}
    assert (frame["status"] == "ok").sum() >= 14
    assert "/16 cells done (16 run now" in out, out
    assert "started again on" in err or "retrying it" in err, err  # the lost cell is reported
    assert frame["attempts"].max() == 2, err


@pytest.mark.slow
def test_dask_exclusive_cells_never_overlap_and_memory_is_honoured(tmp_path, dask_scheduler):
    address, start_worker = dask_scheduler
    start_worker("w1")
    start_worker("w2")
    config = tmp_path / "x.yaml"
    config.write_text("name: x\nexclusive: true\nseeds: [0, 1]\n"
                      "datasets:\n  digits: {sigma: [0.1, 0.3, 1], R: [512]}\n")
    subprocess.run(_sweep_cmd(config, tmp_path / "res", "--scheduler", address), check=True, timeout=300)
    frame = pd.read_csv(tmp_path / "res" / "results.csv").sort_values("started_at_unix")
    assert len(frame) == 6 and (frame["status"] == "ok").all()
    starts, ends = frame["started_at_unix"].to_numpy(), frame["ended_at_unix"].to_numpy()
    assert (starts[1:] >= ends[:-1]).all(), "two exclusive cells ran at the same time"
    assert (frame["concurrent_cells"] == 0).all()


def test_dask_admission_follows_the_local_rules():
    from rbrepro.sweep.backends import Admission

    jobs = [("big1", ()), ("big2", ()), ("small", ())]
    est = {"big1": 10e9, "big2": 10e9, "small": 1e9}
    rules = Admission(slots=4, memory_budget=15e9)
    assert rules.next_job(jobs, {}, est) == 0
    assert rules.next_job(jobs[1:], {"f": jobs[0]}, est) == 1  # big2 does not fit beside big1; small does
    assert Admission(slots=4, memory_budget=15e9, exclusive=True).next_job(jobs[1:], {"f": jobs[0]}, est) is None


@pytest.mark.slow
def test_a_dask_scheduler_without_workers_is_a_clear_error(tmp_path, dask_scheduler):
    address, _ = dask_scheduler
    config = tmp_path / "n.yaml"
    config.write_text("name: n\ndatasets:\n  digits: {sigma: [0.3], R: [8]}\n")
    proc = subprocess.run(_sweep_cmd(config, tmp_path / "res", "--scheduler", address, "--worker-timeout", "3"),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and f"no dask worker joined the scheduler at {address} within 3 s" \
        in proc.stderr


@pytest.mark.slow
def test_local_backend_never_runs_cells_together_beyond_the_memory_budget(tmp_path):
    """Two 10 GB cells with a 15 GB budget run one after the other; a small cell runs beside either."""
    from rbrepro.sweep.backends import LocalBackend
    from tests import worker_tasks

    partners = {"big1": ["small"], "big2": [], "small": ["big1"]}
    jobs = [(k, (k, str(tmp_path), partners[k])) for k in ("big1", "big2", "small")]
    rows = {}
    LocalBackend(2, task=worker_tasks.overlap_probe, memory_budget=15e9).run(
        jobs, rows.__setitem__, {"big1": 10e9, "big2": 10e9, "small": 1e9})
    assert set(rows) == {"big1", "big2", "small"}
    seen = {k: json.loads((tmp_path / k).read_text()) for k in rows}  # file order, not clock stamps
    assert "big1" not in seen["big2"]["running_at_start"] and "big2" not in seen["big1"]["running_at_start"]
    assert seen["big1"]["met"] and seen["small"]["met"]  # small ran beside big1


def test_cell_memory_estimate_uses_the_published_sizes():
    from rbrepro.models.cell import CellParams
    from rbrepro.sweep.runner import cell_memory_estimate

    exact = CellParams(dataset="ijcnn1", method="exact", sigma=1.0, R=0)
    assert 9.7e9 < cell_memory_estimate(exact, "ijcnn1") < 9.9e9  # 35,000^2 doubles
    rb = CellParams(dataset="ijcnn1", method="rb", sigma=1.0, R=17500)
    assert cell_memory_estimate(rb, "ijcnn1") >= 4 * 35000 * 17500
    assert cell_memory_estimate(exact, "no-such-set") == 0.0


@pytest.mark.slow
def test_a_folder_of_another_config_is_refused_and_other_programs_files_are_left(tmp_path):
    out = tmp_path / "res"
    grid = "datasets:\n  digits: {sigma: [0.3], R: [8]}\n"
    run_sweep(parse_config(f"name: first\n{grid}", "a.yaml"), out, backend=LocalBackend(1))
    theirs, ours = out / ".someone-else.part", out / "cells" / ".0123456789abcdef.json.x1y2.part"
    theirs.write_text("not ours")
    ours.write_text("{")
    with pytest.raises(ValueError, match="holds the results of config 'first'.*its own --out folder"):
        run_sweep(parse_config(f"name: second\n{grid}", "b.yaml"), out, backend=LocalBackend(1))
    run_sweep(parse_config(f"name: first\n{grid}", "a.yaml"), out, backend=LocalBackend(1))  # resumes
    assert theirs.exists() and not ours.exists()
