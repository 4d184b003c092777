"""Run a sweep's cells, resumably, on local processes or a dask.distributed cluster.

Layout of a results folder::

    runs/<name>/            (the default; published results live in results/<name>/, written
                             only when asked for with --out)
      cells/<key>.json      one finished cell's row, written atomically
      cells/<key>.log       a failed cell's traceback (kept out of the CSV)
      results.csv           exactly the cells of the config that ran (atomically rebuilt)
      config.resolved.yaml  the validated config with every default filled in, plus provenance
      sweep.lock            held while a sweep runs (a second sweep on the folder refuses)

A cell's key hashes its parameters, the data's fingerprint and ALGORITHM_VERSION, so a
killed sweep resumes where it stopped (cells whose file exists are skipped, and a cell is
either wholly written or absent), while cells of other configs, other data or older code
stay on disk but out of results.csv (counted as "kept aside"; `reuse_stale` takes cells of
older code or data on purpose). Only the coordinating process writes files; cells run
elsewhere (worker processes or dask workers) and return their row. A failed cell is
recorded with status "failed" and its error, the sweep goes on, and the next run retries
it; a cell refused by the memory guard is recorded as "skipped" with the limit it was
refused under, and retried once the limit is higher. A cell whose worker dies is retried
once (and the retry reported), then recorded as failed.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import fcntl
import functools
import hashlib
import json
import multiprocessing
import os
import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd
import yaml

from rbrepro.data.atomic import atomic_path, write_text_atomic
from rbrepro.data.registry import REGISTRY, DatasetSpec
from rbrepro.memory import memory_limit_bytes
from rbrepro.models.cell import ALGORITHM_VERSION, CellParams
from rbrepro.models.feature_ridge import featurize_memory
from rbrepro.models.kernel_ridge import ExactKernelRegressor
from rbrepro.provenance import provenance
from rbrepro.sweep.config import SweepConfig

CSV_NAME = "results.csv"
WORKER_RETRIES = 1


class SweepLocked(RuntimeError):
    """Another sweep is writing to the same results folder."""


#: The CellParams fields every published key hashes, frozen: adding a field to CellParams must
#: not change the key of any committed result row (tests re-derive them all).
KEYED_FIELDS = ("dataset", "method", "sigma", "kernel", "R", "lam", "solver", "maxit", "tol", "center", "seed",
                "threads", "loss", "epochs", "variant", "evaluate_on", "scaling")
#: Fields added since, hashed only when they differ from their default (so older keys stand).
KEYED_IF_SET = {"rng": "numpy", "scoring": "standard"}


def params_key(params: CellParams) -> str:
    """A hash of the cell's parameters alone (the memory limit is a setting, not a parameter)."""
    values = asdict(params)
    fields = {name: values[name] for name in KEYED_FIELDS}
    fields.update({name: values[name] for name, default in KEYED_IF_SET.items() if values[name] != default})
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=float).encode()).hexdigest()[:16]


def cell_key(params: CellParams, data_fingerprint: str = "", version: int = ALGORITHM_VERSION) -> str:
    """A stable key from the cell's parameters, its data's fingerprint and the algorithms'
    version: the same cell of the same code on the same data has the same key across runs."""
    text = json.dumps({"params": params_key(params), "data": data_fingerprint, "algorithms": version},
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class CellState:
    params: CellParams
    key: str
    status: str  # "done", "skipped", "failed", "todo"
    row: dict | None = None


ROW_REQUIRED = {"ok": ("dataset", "method", "test_metric", "train_metric", "train_s"), "skipped": ("error",),
                "failed": ("error",)}


def valid_row(row) -> bool:
    """A cell file's row as a sweep wrote it: a mapping with a known status and that status's fields
    (a damaged or hand-made file is run again, never taken as a finished cell)."""
    if not isinstance(row, dict) or row.get("status") not in ROW_REQUIRED:
        return False
    if not all(k in row for k in ROW_REQUIRED[row["status"]]):
        return False
    return row["status"] != "ok" or all(isinstance(row[k], (int, float)) and not isinstance(row[k], bool)
                                        for k in ("test_metric", "train_metric", "train_s"))


def select(cells: Iterable[CellParams], datasets=(), sigmas=(), Rs=(), seeds=(), methods=()) -> list[CellParams]:
    """Narrow the grid from the command line (an empty filter keeps everything)."""
    def keep(c: CellParams) -> bool:
        return ((not datasets or c.dataset in datasets)
                and (not sigmas or any(abs(c.sigma - s) <= 1e-9 * max(1.0, abs(s)) for s in sigmas))
                and (not Rs or c.R in Rs or c.method == "exact") and (not seeds or c.seed in seeds)
                and (not methods or c.method in methods))
    return [c for c in cells if keep(c)]


def _read_row(path: Path) -> dict | None:
    try:
        row = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return row if valid_row(row) else None


def _stale_index(out: Path) -> dict[str, tuple[str, dict]]:
    """params_key -> (key, row) of every valid cell file (for reusing cells of older code or data)."""
    index = {}
    for path in sorted((out / "cells").glob("*.json")):
        row = _read_row(path)
        if row is not None and row.get("params_key"):
            index[row["params_key"]] = (path.stem, row)
    return index


def cell_states(cells: list[CellParams], out: Path, fingerprints: dict | None = None, reuse_stale: bool = False,
                memory_limit: float | None = None) -> list[CellState]:
    """Each cell's state in `out`. A skipped cell is due again when the memory limit now in force
    (`memory_limit` bytes; default: the configured one) is above the one it was refused under."""
    fingerprints = fingerprints or {}
    limit = memory_limit_bytes() if memory_limit is None else memory_limit
    stale = _stale_index(out) if reuse_stale else {}
    states = []
    for c in cells:
        key = cell_key(c, fingerprints.get(c.dataset, ""))
        row = _read_row(out / "cells" / f"{key}.json")
        if row is None and reuse_stale and params_key(c) in stale:
            key, row = stale[params_key(c)]
        if row is None:
            status = "todo"
        elif row["status"] == "skipped" and float(row.get("memory_limit_bytes") or 0) < limit:
            status = "todo"
        else:
            status = {"ok": "done", "skipped": "skipped"}.get(row["status"], "failed")
        states.append(CellState(c, key, status, row))
    return states


CSV_ORDER = ("dataset", "method", "evaluate_on", "R", "sigma", "threads", "variant", "seed", "cell_key")


def assemble_csv(out: Path, keys: Iterable[str] | None = None,
                 annotate_rows: Callable[[pd.DataFrame], pd.DataFrame] | None = None) -> tuple[pd.DataFrame, int]:
    """results.csv from the cell files of `keys` (default: every cell file), one row per cell, in a
    stable order, passed through `annotate_rows` if given; returns it and the number of cell files
    kept aside (not in `keys`)."""
    paths = sorted((out / "cells").glob("*.json"))
    wanted = None if keys is None else set(keys)
    rows, aside = [], 0
    for path in paths:
        if wanted is not None and path.stem not in wanted:
            aside += 1
            continue
        row = _read_row(path)
        if row is not None:
            row.pop("traceback", None)  # older cell files: the traceback goes to the .log, not the CSV
            rows.append(row)
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame = frame.sort_values([c for c in CSV_ORDER if c in frame], kind="stable")
    if annotate_rows is not None:
        frame = annotate_rows(frame)
    with atomic_path(out / CSV_NAME) as tmp:
        frame.to_csv(tmp, index=False)
    return frame, aside


@contextlib.contextmanager
def sweep_lock(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    fh = open(out / "sweep.lock", "a+")
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SweepLocked(f"{out}: another sweep is running on this results folder "
                              f"(it holds {out / 'sweep.lock'}); wait for it or use --out") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}\n")
        fh.flush()
        yield
    finally:
        fh.close()


# --- running one cell (in a worker) ------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _cached_dataset(ref, data_path, mirror, scaling="default"):
    from rbrepro.data.load import load_dataset

    return load_dataset(ref, data_path, mirror, progress=False, scaling=scaling)


def _busy_cpu_seconds() -> tuple[float, float]:
    """(CPU seconds the whole machine spent busy, CPU seconds this process spent) so far."""
    import psutil

    total = psutil.cpu_times()
    busy = sum(total) - total.idle - getattr(total, "iowait", 0.0)
    own = psutil.Process().cpu_times()
    return busy, own.user + own.system


def run_cell_task(params: CellParams, dataset_ref, data_path=None, mirror=None,
                  memory_limit_gb: float | None = None) -> dict:
    """Run one cell and return its row; never raises for a cell's own failure.

    The row also says how loaded the machine was around the cell: `load_other_cores`, the
    cores kept busy by other processes while it ran (another cell, another program), and the
    1-minute load average at its start."""
    from dataclasses import replace

    from rbrepro.memory import MemoryLimitError
    from rbrepro.models.cell import run_cell

    if memory_limit_gb is not None:
        params = replace(params, memory_limit_gb=memory_limit_gb)
    start, load_start = time.time(), os.getloadavg()[0]
    busy0, own0 = _busy_cpu_seconds()
    try:
        row = run_cell(params, _cached_dataset(dataset_ref, None if data_path is None else str(data_path), mirror,
                                              params.scaling))
    except MemoryLimitError as exc:
        row = {**asdict(params), "status": "skipped", "error": str(exc), **provenance()}
    except Exception as exc:  # a failed cell is recorded and the sweep goes on
        row = {**asdict(params), "status": "failed", "error": f"{type(exc).__name__}: {exc}".replace("\n", " "),
               "traceback": traceback.format_exc(limit=8), **provenance()}
    busy1, own1 = _busy_cpu_seconds()
    end = time.time()
    row.pop("memory_limit_gb", None)  # a setting of the run, recorded as the limit in bytes below
    row["memory_limit_bytes"] = memory_limit_bytes(memory_limit_gb)
    row["started_at_unix"], row["ended_at_unix"], row["wall_s"] = start, end, end - start
    row["loadavg_1m_start"] = load_start
    row["load_other_cores"] = max(0.0, ((busy1 - busy0) - (own1 - own0)) / max(end - start, 1e-9))
    return row


def _worker_died_row(params: CellParams, why: str) -> dict:
    return {**asdict(params), "status": "failed", "error": f"worker process died ({why})", **provenance()}


def _worker_init(coordinator_pid: int) -> None:
    """In each worker process: leave SIGINT to the coordinator (it stops the workers), and exit at
    once if the coordinator dies, however it dies (kill -9, the OOM killer): a watchdog thread sees
    the worker reparented. No worker outlives its sweep."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch():
        while True:
            if os.getppid() != coordinator_pid:
                os._exit(1)
            time.sleep(0.2)

    threading.Thread(target=watch, name="rbrepro-orphan-watchdog", daemon=True).start()


# --- backends ----------------------------------------------------------------------------

class Admission:
    """Which queued job may start now: the first whose estimated memory fits beside the running
    ones within the budget (any job when nothing runs), at most `slots` at once; with `exclusive`,
    one at a time. Both backends use it, so a dask sweep keeps the rules of a local one."""

    def __init__(self, slots: int, memory_budget: float, exclusive: bool = False):
        self.slots = 1 if exclusive else max(1, slots)
        self.memory_budget = memory_budget

    def next_job(self, queue: list, running: dict, estimates: dict) -> int | None:
        if len(running) >= self.slots:
            return None
        running_bytes = sum(estimates.get(key, 0.0) for key, _ in running.values())
        for i, (key, _) in enumerate(queue):
            if not running or running_bytes + estimates.get(key, 0.0) <= self.memory_budget:
                return i
        return None


class _Overlap:
    """For each job, the most other jobs that ran at the same time (recorded in its row)."""

    def __init__(self):
        self.most: dict[str, int] = {}

    def update(self, running_keys: list[str]) -> None:
        for key in running_keys:
            self.most[key] = max(self.most.get(key, 0), len(running_keys) - 1)


class LocalBackend:
    """Cells in a pool of worker processes (spawned, so numba threads start fresh), at most
    `workers` at once and only while their memory estimates fit; a pool broken by a dying worker
    is replaced and its cells retried. Interrupted (SIGINT, SIGTERM), it stops its workers."""

    def __init__(self, workers: int, fresh_process: bool = False, task: Callable = run_cell_task,
                 memory_budget: float | None = None, exclusive: bool = False):
        self.workers = 1 if exclusive else max(1, workers)
        self.fresh_process = fresh_process
        self.task = task  # a module-level function (it is sent to spawned workers by name)
        # cells run together only while their estimated memory fits this (default: the memory limit)
        self.memory_budget = memory_limit_bytes() if memory_budget is None else memory_budget
        self.description = f"{self.workers} local worker process{'es' if self.workers > 1 else ''}"
        self.on_event: Callable[[str], None] = lambda message: None

    def _pool(self):
        kwargs = {"max_tasks_per_child": 1} if self.fresh_process else {}
        return cf.ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                      initializer=_worker_init, initargs=(os.getpid(),), **kwargs)

    @staticmethod
    def _stop(pool) -> None:
        """Terminate the pool's worker processes now (an interrupted sweep does not wait for them)."""
        for proc in list(getattr(pool, "_processes", {}).values()):
            with contextlib.suppress(Exception):
                proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)

    def run(self, jobs: list[tuple[str, tuple]], on_row: Callable[[str, dict], None],
            estimates: dict[str, float] | None = None) -> None:
        """Run jobs (key, task args); `estimates` maps keys to the cell's estimated bytes."""
        estimates = estimates or {}
        admission = Admission(self.workers, self.memory_budget)
        overlap = _Overlap()
        queue = list(jobs)
        attempts: dict[str, int] = {}
        while queue:
            pool = self._pool()
            running: dict[cf.Future, tuple[str, tuple]] = {}
            lost: list[tuple[str, tuple]] = []
            broken = False
            try:
                while (queue or running) and not broken:
                    while queue:
                        i = admission.next_job(queue, running, estimates)
                        if i is None:
                            break
                        try:
                            fut = pool.submit(self.task, *queue[i][1])
                        except cf.process.BrokenProcessPool:
                            broken = True  # the job stays queued: it never started
                            break
                        running[fut] = queue.pop(i)
                        overlap.update([k for k, _ in running.values()])
                    if broken or not running:
                        break
                    done, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
                    for fut in done:
                        job = running.pop(fut)
                        try:
                            row = fut.result()
                        except cf.process.BrokenProcessPool:
                            lost.append(job)
                            broken = True
                            continue
                        row["concurrent_cells"] = overlap.most.get(job[0], 0)
                        row["attempts"] = attempts.get(job[0], 0) + 1
                        on_row(job[0], row)
                lost.extend(running.values())  # a broken pool takes every cell in flight with it
            except BaseException:
                self._stop(pool)
                raise
            pool.shutdown(wait=not broken, cancel_futures=True)
            for key, args in reversed(lost):
                attempts[key] = attempts.get(key, 0) + 1
                if attempts[key] > WORKER_RETRIES:
                    on_row(key, _worker_died_row(args[0], "killed or out of memory, also on its retry"))
                else:
                    self.on_event(f"cell {key}: its worker process died; retrying it "
                                  f"({attempts[key]}/{WORKER_RETRIES})")
                    queue.insert(0, (key, args))


class NoWorkers(RuntimeError):
    """No dask worker joined the scheduler in time."""


DASK_TOPIC = "rbrepro-cell-start"


def dask_cell_task(key: str, *args) -> dict:
    """run_cell_task on a dask worker, announcing each start to the coordinator first: a second
    start of the same cell means its worker was lost and the scheduler ran it again."""
    from distributed import get_worker

    address = None
    with contextlib.suppress(Exception):
        worker = get_worker()
        address = worker.address
        worker.log_event(DASK_TOPIC, {"key": key, "worker": address})
    row = run_cell_task(*args)
    row["dask_worker"] = address  # the row itself says where it ran: start events may arrive after it
    return row


def _worker_deaths(client, task_key: str) -> int:
    """How many workers died while running this task, as the scheduler counts them (its
    `suspicious` count): the authoritative rerun count, where start events may arrive late
    or never from a worker killed mid-cell. 0 if the scheduler cannot be asked."""
    def count(dask_scheduler=None, key=task_key):  # runs on the scheduler (pickled by value)
        task = dask_scheduler.tasks.get(key)
        return int(task.suspicious) if task is not None else 0

    try:
        return int(client.run_on_scheduler(count))
    except Exception:  # noqa: BLE001 - an older scheduler or one that refuses remote calls
        return 0


class DaskBackend:
    """Cells as tasks on a dask.distributed cluster (a scheduler address, or a local cluster),
    under the same admission rules as local runs: at most one task per worker thread, memory
    estimates honoured against the smallest worker's memory limit (or this machine's limit),
    one at a time when the sweep is exclusive. A task whose worker dies is retried once by the
    coordinator and the retry reported; past that the cell is recorded as failed."""

    def __init__(self, address: str | None, workers: int, exclusive: bool = False, worker_timeout_s: float = 60.0):
        self.address = address
        self.workers = max(1, workers)
        self.exclusive = exclusive
        self.worker_timeout_s = worker_timeout_s
        self.description = f"dask scheduler {address}" if address else f"dask local cluster ({self.workers} workers)"
        self.on_event: Callable[[str], None] = lambda message: None

    def _connect(self):
        from distributed import Client, LocalCluster

        if not self.address:
            cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            return Client(cluster), cluster
        try:
            client = Client(self.address, timeout=f"{self.worker_timeout_s}s")
        except OSError as exc:
            raise NoWorkers(f"cannot reach the dask scheduler at {self.address}: {exc}") from None
        try:
            client.wait_for_workers(1, timeout=self.worker_timeout_s)
        except Exception:  # dask's own TimeoutError: nobody joined in time
            client.close()
            raise NoWorkers(f"no dask worker joined the scheduler at {self.address} within "
                            f"{self.worker_timeout_s:g} s; start one with `dask worker {self.address}`") from None
        return client, None

    @staticmethod
    def _capacity(client) -> tuple[int, float]:
        workers = client.scheduler_info().get("workers", {})
        threads = sum(int(w.get("nthreads", 1)) for w in workers.values()) or 1
        limits = [float(w.get("memory_limit") or 0) for w in workers.values()]
        limits = [m for m in limits if m > 0]
        return threads, (min(limits) if limits else memory_limit_bytes())

    def run(self, jobs, on_row, estimates: dict[str, float] | None = None) -> None:
        from distributed import wait

        estimates = estimates or {}
        client, cluster = self._connect()
        overlap = _Overlap()
        attempts: dict[str, int] = {}
        starts: dict[str, list[str]] = {}
        queue = list(jobs)
        running: dict = {}

        def on_start(event):  # called on the client's event loop for every cell start
            message = event[1] if isinstance(event, tuple) else event
            key, worker = message.get("key"), message.get("worker")
            starts.setdefault(key, []).append(worker)
            if len(starts[key]) > 1:
                self.on_event(f"cell {key}: started again on {worker} (the scheduler lost "
                              f"{starts[key][-2]} while it ran the cell)")

        client.subscribe_topic(DASK_TOPIC, on_start)
        try:
            threads, budget = self._capacity(client)
            admission = Admission(threads, budget, self.exclusive)
            while queue or running:
                while queue:
                    i = admission.next_job(queue, running, estimates)
                    if i is None:
                        break
                    key, args = queue.pop(i)
                    attempt = attempts.get(key, 0)
                    fut = client.submit(dask_cell_task, key, *args, key=f"rbrepro-cell-{key}-{attempt}",
                                        pure=False, retries=0)
                    running[fut] = (key, args)
                    overlap.update([k for k, _ in running.values()])
                done = wait(list(running), return_when="FIRST_COMPLETED").done
                for fut in done:
                    key, args = running.pop(fut)
                    try:
                        row = fut.result()
                        fut.release()  # the row is ours: the scheduler must not recompute it if its worker dies now
                    except Exception as exc:  # KilledWorker and friends: retried once, then recorded
                        attempts[key] = attempts.get(key, 0) + 1
                        why = f"{type(exc).__name__}: {exc}"
                        if attempts[key] <= WORKER_RETRIES:
                            self.on_event(f"cell {key}: its dask worker failed ({why[:120]}); retrying it "
                                          f"({attempts[key]}/{WORKER_RETRIES})")
                            queue.insert(0, (key, args))
                            continue
                        row = _worker_died_row(args[0], why)
                    row["concurrent_cells"] = overlap.most.get(key, 0)
                    # a row from another worker than the cell's first start is a rerun, even when the
                    # rerun's start event has not reached us yet
                    ran_on = {w for w in (*starts.get(key, ()), row.get("dask_worker")) if w}
                    deaths = _worker_deaths(client, fut.key)
                    row["attempts"] = max(attempts.get(key, 0) + 1, len(starts.get(key, ())), len(ran_on), 1 + deaths)
                    if deaths and len(starts.get(key, ())) < 2:  # lost before its start event reached us
                        self.on_event(f"cell {key}: started again on {row.get('dask_worker')} (the scheduler lost "
                                      f"the worker it was given to first)")
                    on_row(key, row)
        finally:
            with contextlib.suppress(Exception):
                client.unsubscribe_topic(DASK_TOPIC)
            for fut in running:
                fut.cancel()
            client.close()
            if cluster is not None:
                cluster.close()


def default_workers(cells: list[CellParams], exclusive: bool, cores: int | None = None) -> int:
    """Concurrent cells: the cores divided by the largest per-cell thread budget (1 if exclusive)."""
    cores = cores or os.cpu_count() or 1
    if exclusive:
        return 1
    budget = max((c.threads or cores) for c in cells) if cells else 1
    return max(1, cores // budget)


# --- the sweep -----------------------------------------------------------------------------

def _chosen_sigma(config: SweepConfig, out: Path, fingerprints: dict, reuse_stale: bool = False) -> dict:
    """(dataset, method, R) -> (sigma, edge), chosen from the finished cells of `out`: the
    validation cells, or the test grid when choosing on test (SweepConfig.choose_sigma)."""
    if config.selection is None:
        return {}
    source = config.selection_cells() if config.selection.on == "validation" else config.cells()
    rows = [s.row for s in cell_states(source, out, fingerprints, reuse_stale) if s.status == "done"]
    return config.choose_sigma(rows)


def fingerprints_for(config: SweepConfig, cells: Iterable[CellParams], data_path=None, mirror=None,
                     unavailable: dict | None = None) -> dict:
    """dataset -> fingerprint of the data its cells would train on (fetching what is missing).
    Datasets whose files cannot be had are put in `unavailable` (name -> why), if given."""
    from rbrepro.data.load import dataset_availability

    names = sorted({c.dataset for c in cells})
    found = {}
    for n in names:
        found[n], why = dataset_availability(config.user_datasets.get(n, n), data_path, mirror)
        if why and unavailable is not None:
            unavailable[n] = why
    return found


UNAVAILABLE_NAME = "unavailable.json"


def annotate(frame: pd.DataFrame, config: SweepConfig, chosen: dict) -> pd.DataFrame:
    """Mark the rows sigma selection chose: `selected` (the chosen sigma of its dataset, method
    and R, on test data), `sigma_edge` (low / high: the choice sits at the grid's edge) and
    `selected_on` (validation / test / "" without selection)."""
    if frame.empty or "dataset" not in frame:
        return frame
    frame = frame.copy()
    frame["selected_on"] = "" if config.selection is None else config.selection.on
    if config.selection is None:
        frame["selected"] = False
        frame["sigma_edge"] = ""
        return frame
    picked = [chosen.get((d, m, int(r))) if e == "test" else None
              for d, m, r, e in zip(frame["dataset"], frame["method"], frame["R"].fillna(0),
                                    frame.get("evaluate_on", pd.Series("test", index=frame.index)).fillna("test"))]
    frame["selected"] = [p is not None and abs(float(s) - p[0]) <= 1e-9 * max(1.0, p[0])
                         for p, s in zip(picked, frame["sigma"])]
    frame["sigma_edge"] = [p[1] if ok else "" for p, ok in zip(picked, frame["selected"])]
    return frame


def run_sweep(config: SweepConfig, out: Path, cells: list[CellParams] | None = None, data_path=None, mirror=None,
              backend=None, on_progress: Callable[[int, int, int], None] | None = None,
              narrow: Callable[[list[CellParams]], list[CellParams]] | None = None, reuse_stale: bool = False,
              memory_limit_gb: float | None = None, reuse_from: Iterable[Path] = ()) -> dict:
    """Run the cells not yet done; returns counts {total, done, failed, skipped, ran, reused,
    aside, unavailable}.

    With sigma selection on validation data, the selection cells run first and the chosen
    sigma defines the test cells; choosing on test (as-published only), the test grid runs
    and the choice is read from it. Datasets whose files cannot be had here get no cells:
    they are named once, in `unavailable` and in unavailable.json. `narrow` filters every
    phase's cells (command-line filters). results.csv then holds every finished cell of the
    whole config (not only the narrowed ones), with the choice marked (`annotate`), and
    nothing else: cells of other configs, data or code in the folder are counted in `aside`.

    `reuse_from`: other sweeps' folders whose finished cells of the same key (the same
    parameters, data and algorithms, so the same computation) are taken instead of run again
    (`reused_row`); counted in `reused`."""
    narrow_cli = narrow or (lambda cs: cs)
    limit = memory_limit_bytes(memory_limit_gb)
    with sweep_lock(out):
        for stale in [*(out / "cells").glob(".*.part"), *out.glob(".*.part")]:
            stale.unlink(missing_ok=True)  # temp files of a killed run: never read, now removed
        write_text_atomic(out / "config.resolved.yaml",
                          yaml.safe_dump({**config.to_dict(), "provenance": provenance()}, sort_keys=False))
        unavailable: dict = {}
        selection_cells = config.selection_cells()
        fingerprints = fingerprints_for(config, [*selection_cells, *config.cells(), *(cells or [])],
                                        data_path, mirror, unavailable)
        write_text_atomic(out / UNAVAILABLE_NAME, json.dumps(unavailable, indent=1, sort_keys=True) + "\n")

        def narrow(cs):
            return [c for c in narrow_cli(cs) if c.dataset not in unavailable]

        def run(todo_cells):
            _run_states(config, out, cell_states(todo_cells, out, fingerprints, reuse_stale, limit), data_path,
                        mirror, backend, on_progress, counts, fingerprints, memory_limit_gb, sources)

        sources = [Path(p) for p in reuse_from if Path(p).resolve() != Path(out).resolve()]
        counts = {"total": 0, "done": 0, "failed": 0, "skipped": 0, "ran": 0, "aside": 0, "reused": 0}
        if selection_cells:  # choosing on validation data: those cells first, then the chosen sigmas on test
            run(narrow(selection_cells))
        chosen = _chosen_sigma(config, out, fingerprints, reuse_stale)
        sigma_of = {k: v[0] for k, v in chosen.items()}
        run(narrow(config.cells(sigma_of) if cells is None else cells))
        if config.selection is not None and config.selection.on == "test":  # the test grid just ran: its rows choose
            chosen = _chosen_sigma(config, out, fingerprints, reuse_stale)
            sigma_of = {k: v[0] for k, v in chosen.items()}
            if cells is None:  # methods that take another's choice (per: exact) run now
                run(narrow(config.cells(sigma_of)))
        band = config.band_cells(sigma_of) if cells is None else []
        if band:  # the extra seeds that make each published point a band
            run(narrow(band))
        config_cells = [c for c in (*selection_cells, *config.cells(sigma_of), *band, *(cells or []))
                        if c.dataset not in unavailable]  # cells of a dataset gone since are not results
        keys = [s.key for s in cell_states(config_cells, out, fingerprints, reuse_stale, limit)]
        _, counts["aside"] = assemble_csv(out, keys, lambda frame: annotate(frame, config, chosen))
        counts.pop("keys", None)
        counts["unavailable"] = unavailable
        return counts


def reused_row(key: str, sources: Iterable[Path], config: SweepConfig) -> dict | None:
    """A finished row of cell `key` from another sweep's folder, relabelled for `config`, or None.

    The key fixes the parameters, the data and the algorithms' version, so the row is the
    result this sweep would compute. Its provenance (git_commit, finished_at, timings) is kept,
    and `reused_from` names the sweep that ran it. An exclusive config (timings on an idle
    machine) takes only rows that were themselves run exclusively."""
    for source in sources:
        row = _read_row(Path(source) / "cells" / f"{key}.json")
        if row is None or row["status"] != "ok" or (config.exclusive and not row.get("exclusive")):
            continue
        return {**row, "reused_from": row.get("reused_from") or row.get("sweep", str(source)), "sweep": config.name,
                "figure": config.figure, "protocol": config.protocol}
    return None


def _run_states(config, out, states, data_path, mirror, backend, on_progress, counts, fingerprints,
                memory_limit_gb=None, sources=()):
    todo = [s for s in states if s.status in ("todo", "failed")]
    finished_keys = counts.setdefault("keys", [])  # every phase's finished cells, for the CSV mid-sweep
    if sources:
        still = []
        for s in todo:
            row = reused_row(s.key, sources, config)
            if row is None:
                still.append(s)
                continue
            write_text_atomic(out / "cells" / f"{s.key}.json", json.dumps(row, default=_json_default) + "\n")
            s.status, s.row = "done", row
            counts["reused"] += 1
        todo = still
    finished_keys.extend(s.key for s in states if s.status in ("done", "skipped"))
    counts["total"] += len(states)
    counts["done"] += sum(s.status == "done" for s in states)
    counts["skipped"] += sum(s.status == "skipped" for s in states)
    counts["ran"] += len(todo)
    if on_progress:
        on_progress(counts["done"] + counts["skipped"], counts["failed"], counts["total"])
    if not todo:
        return
    backend = backend or LocalBackend(default_workers([s.params for s in todo], config.exclusive),
                                      memory_budget=memory_limit_bytes(memory_limit_gb), exclusive=config.exclusive)
    by_key = {s.key: s for s in todo}

    def on_row(key: str, row: dict) -> None:
        params = by_key[key].params
        row["cell_key"] = key
        row["params_key"] = params_key(params)
        row["algorithm_version"] = ALGORITHM_VERSION
        row["data_fingerprint"] = fingerprints.get(params.dataset, "")
        row["sweep"] = config.name
        row["figure"] = config.figure
        row["protocol"] = config.protocol
        row["exclusive"] = bool(config.exclusive)
        row["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        log = out / "cells" / f"{key}.log"
        trace = row.pop("traceback", None)
        if trace:
            write_text_atomic(log, trace)
        elif log.exists():
            log.unlink()
        write_text_atomic(out / "cells" / f"{key}.json", json.dumps(row, default=_json_default) + "\n")
        status = row.get("status")
        counts["done" if status == "ok" else "skipped" if status == "skipped" else "failed"] += 1
        finished_keys.append(key)
        assemble_csv(out, finished_keys)
        if on_progress:
            on_progress(counts["done"] + counts["skipped"], counts["failed"], counts["total"])

    jobs = [(s.key, (s.params, config.user_datasets.get(s.params.dataset, s.params.dataset), data_path, mirror,
                     memory_limit_gb))
            for s in by_key.values()]
    backend.run(jobs, on_row, {key: cell_memory_estimate(args[0], args[1]) for key, args in jobs})


def cell_memory_estimate(params: CellParams, dataset) -> float:
    """Bytes a cell's big arrays need, from the dataset's published size (0 when unknown):
    the exact kernel's N x N matrix, or the feature matrix of RB, RF and Nystrom."""
    spec = dataset if isinstance(dataset, DatasetSpec) else REGISTRY.get(dataset)
    if spec is None or not spec.n_train or not spec.n_features:
        return 0.0
    n, d = spec.n_train, spec.n_features
    if params.method == "exact":
        return ExactKernelRegressor.memory_needed(n, d)
    if params.method in ("rb", "rf", "nystrom"):
        return featurize_memory(params.method, n, d, params.R)
    return 0.0


def _json_default(value):
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot serialize {type(value).__name__}")
