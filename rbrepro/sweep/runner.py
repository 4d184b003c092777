"""Run a sweep's cells, resumably, on local processes or a dask.distributed cluster.

Layout of a results folder::

    results/<name>/
      cells/<key>.json      one finished cell's row, written atomically
      results.csv           assembled from cells/ after every cell (atomically)
      config.resolved.yaml  the validated config with every default filled in, plus provenance
      sweep.lock            held while a sweep runs (a second sweep on the folder refuses)

A cell's key is a hash of its parameters, so a killed sweep resumes where it stopped:
cells whose file exists are skipped, and a cell is either wholly written or absent. Only
the coordinating process writes files; cells run elsewhere (worker processes or dask
workers) and return their row. A failed cell is recorded with status "failed" and its
error, the sweep goes on, and the next run retries it; a cell refused by the memory
guard is recorded as "skipped" with the estimate and is not retried. A cell whose
worker process dies is retried once, then recorded as failed.
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
from rbrepro.models.cell import CellParams
from rbrepro.models.feature_ridge import featurize_memory
from rbrepro.models.kernel_ridge import ExactKernelRegressor
from rbrepro.provenance import provenance
from rbrepro.sweep.config import SweepConfig

CSV_NAME = "results.csv"
WORKER_RETRIES = 1


class SweepLocked(RuntimeError):
    """Another sweep is writing to the same results folder."""


def cell_key(params: CellParams) -> str:
    """A stable key from the cell's parameters (same parameters, same key, across runs)."""
    fields = asdict(params)
    if fields.get("evaluate_on") == "test":
        fields.pop("evaluate_on")  # keys of plain cells stay those of earlier versions
    text = json.dumps(fields, sort_keys=True, default=float)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class CellState:
    params: CellParams
    key: str
    status: str  # "done", "skipped", "failed", "todo"
    row: dict | None = None


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
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def cell_states(cells: list[CellParams], out: Path) -> list[CellState]:
    states = []
    for c in cells:
        key = cell_key(c)
        row = _read_row(out / "cells" / f"{key}.json")
        status = "todo" if row is None else {"ok": "done", "skipped": "skipped"}.get(row.get("status"), "failed")
        states.append(CellState(c, key, status, row))
    return states


def assemble_csv(out: Path) -> pd.DataFrame:
    """results.csv from every cell file, one row per cell, in a stable order."""
    rows = [row for path in sorted((out / "cells").glob("*.json")) if (row := _read_row(path)) is not None]
    frame = pd.DataFrame(rows)
    if not frame.empty:
        order = [c for c in ("dataset", "method", "evaluate_on", "R", "sigma", "threads", "variant", "seed",
                             "cell_key") if c in frame]
        frame = frame.sort_values(order, kind="stable")
    with atomic_path(out / CSV_NAME) as tmp:
        frame.to_csv(tmp, index=False)
    return frame


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
def _cached_dataset(ref, data_path, mirror):
    from rbrepro.data.load import load_dataset

    return load_dataset(ref, data_path, mirror, progress=False)


def run_cell_task(params: CellParams, dataset_ref, data_path=None, mirror=None) -> dict:
    """Run one cell and return its row; never raises for a cell's own failure."""
    from rbrepro.memory import MemoryLimitError
    from rbrepro.models.cell import run_cell

    start = time.time()
    try:
        row = run_cell(params, _cached_dataset(dataset_ref, None if data_path is None else str(data_path), mirror))
    except MemoryLimitError as exc:
        row = {**asdict(params), "status": "skipped", "error": str(exc), **provenance()}
    except Exception as exc:  # a failed cell is recorded and the sweep goes on
        row = {**asdict(params), "status": "failed", "error": f"{type(exc).__name__}: {exc}".replace("\n", " "),
               "traceback": traceback.format_exc(limit=5), **provenance()}
    row["wall_s"] = time.time() - start
    return row


def _worker_died_row(params: CellParams, why: str) -> dict:
    return {**asdict(params), "status": "failed", "error": f"worker process died ({why})", **provenance()}


# --- backends ----------------------------------------------------------------------------

class LocalBackend:
    """Cells in a pool of worker processes (spawned, so numba threads start fresh), at most
    `workers` at once; a pool broken by a dying worker is replaced and its cells retried."""

    def __init__(self, workers: int, fresh_process: bool = False, task: Callable = run_cell_task,
                 memory_budget: float | None = None):
        self.workers = max(1, workers)
        self.fresh_process = fresh_process
        self.task = task  # a module-level function (it is sent to spawned workers by name)
        # cells run together only while their estimated memory fits this (default: the memory limit)
        self.memory_budget = memory_limit_bytes() if memory_budget is None else memory_budget
        self.description = f"{self.workers} local worker process{'es' if self.workers > 1 else ''}"

    def _pool(self):
        kwargs = {"max_tasks_per_child": 1} if self.fresh_process else {}
        return cf.ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"), **kwargs)

    def _next_job(self, queue: list, running_bytes: float, n_running: int, estimates: dict) -> int | None:
        """Index of the first queued job whose estimated memory fits beside the running ones
        (any job when nothing runs), or None: two 10 GB exact-kernel cells never run together."""
        for i, (key, _) in enumerate(queue):
            if n_running == 0 or running_bytes + estimates.get(key, 0.0) <= self.memory_budget:
                return i
        return None

    def run(self, jobs: list[tuple[str, tuple]], on_row: Callable[[str, dict], None],
            estimates: dict[str, float] | None = None) -> None:
        """Run jobs (key, task args); `estimates` maps keys to the cell's estimated bytes."""
        estimates = estimates or {}
        queue = list(jobs)
        attempts: dict[str, int] = {}
        while queue:
            pool = self._pool()
            running: dict[cf.Future, tuple[str, tuple]] = {}
            lost: list[tuple[str, tuple]] = []
            broken = False
            try:
                while (queue or running) and not broken:
                    while queue and len(running) < self.workers:
                        i = self._next_job(queue, sum(estimates.get(k, 0.0) for k, _ in running.values()),
                                           len(running), estimates)
                        if i is None:
                            break
                        try:
                            fut = pool.submit(self.task, *queue[i][1])
                        except cf.process.BrokenProcessPool:
                            broken = True  # the job stays queued: it never started
                            break
                        running[fut] = queue.pop(i)
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
                        on_row(job[0], row)
                lost.extend(running.values())  # a broken pool takes every cell in flight with it
            finally:
                pool.shutdown(wait=not broken, cancel_futures=True)
            for key, args in reversed(lost):
                attempts[key] = attempts.get(key, 0) + 1
                if attempts[key] > WORKER_RETRIES:
                    on_row(key, _worker_died_row(args[0], "killed or out of memory, also on its retry"))
                else:
                    queue.insert(0, (key, args))


class DaskBackend:
    """Cells as tasks on a dask.distributed cluster (a scheduler address, or a local cluster).
    The scheduler reschedules a task whose worker dies; past its allowed failures the cell is
    recorded as failed."""

    def __init__(self, address: str | None, workers: int):
        self.address = address
        self.workers = max(1, workers)
        self.description = f"dask scheduler {address}" if address else f"dask local cluster ({self.workers} workers)"

    def run(self, jobs, on_row, estimates: dict[str, float] | None = None) -> None:
        """Run jobs as tasks; `estimates` is not used (dask workers enforce their own memory limits)."""
        from distributed import Client, LocalCluster, as_completed

        cluster = None
        if self.address:
            client = Client(self.address, timeout="30s")
        else:
            cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
        try:
            futures = {client.submit(run_cell_task, *args, key=f"rbrepro-cell-{key}", pure=False, retries=1): (key, args)
                       for key, args in jobs}
            for fut in as_completed(futures):
                key, args = futures[fut]
                try:
                    row = fut.result()
                except Exception as exc:  # KilledWorker and friends: the cell is recorded, not lost
                    row = _worker_died_row(args[0], f"{type(exc).__name__}: {exc}")
                on_row(key, row)
        finally:
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

def _chosen_sigma(config: SweepConfig, out: Path) -> dict:
    """(dataset, method) -> sigma with the best selection metric among finished selection cells."""
    best: dict = {}
    for state in cell_states(config.selection_cells(), out):
        if state.status != "done":
            continue
        row, p = state.row, state.params
        better_high = row.get("metric") == "accuracy"
        key = (p.dataset, p.method)
        value = row["test_metric"]
        if key not in best or (value > best[key][0] if better_high else value < best[key][0]):
            best[key] = (value, p.sigma)
    return {k: v[1] for k, v in best.items()}


def run_sweep(config: SweepConfig, out: Path, cells: list[CellParams] | None = None, data_path=None, mirror=None,
              backend=None, on_progress: Callable[[int, int, int], None] | None = None,
              narrow: Callable[[list[CellParams]], list[CellParams]] | None = None) -> dict:
    """Run the cells not yet done; returns counts {total, done, failed, skipped, ran}.

    With sigma selection, the selection cells run first and the chosen sigma defines the
    remaining cells. `narrow` filters every phase's cells (command-line filters)."""
    narrow = narrow or (lambda cs: cs)
    with sweep_lock(out):
        for stale in [*(out / "cells").glob(".*.part"), *out.glob(".*.part")]:
            stale.unlink(missing_ok=True)  # temp files of a killed run: never read, now removed
        write_text_atomic(out / "config.resolved.yaml",
                          yaml.safe_dump({**config.to_dict(), "provenance": provenance()}, sort_keys=False))
        phases = [narrow(config.selection_cells())] if config.sigma_selection != "grid" else []
        counts = {"total": 0, "done": 0, "failed": 0, "skipped": 0, "ran": 0}
        for phase in range(len(phases) + 1):
            if phase == len(phases):
                todo_cells = narrow(config.cells(_chosen_sigma(config, out)) if cells is None else cells)
            else:
                todo_cells = phases[phase]
            states = cell_states(todo_cells, out)
            _run_states(config, out, states, data_path, mirror, backend, on_progress, counts)
        assemble_csv(out)
        return counts


def _run_states(config, out, states, data_path, mirror, backend, on_progress, counts):
    todo = [s for s in states if s.status in ("todo", "failed")]
    counts["total"] += len(states)
    counts["done"] += sum(s.status == "done" for s in states)
    counts["skipped"] += sum(s.status == "skipped" for s in states)
    counts["ran"] += len(todo)
    if on_progress:
        on_progress(counts["done"] + counts["skipped"], counts["failed"], counts["total"])
    if not todo:
        return
    backend = backend or LocalBackend(default_workers([s.params for s in todo], config.exclusive))
    by_key = {s.key: s for s in todo}

    def on_row(key: str, row: dict) -> None:
        row["cell_key"] = key
        row["sweep"] = config.name
        row["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        write_text_atomic(out / "cells" / f"{key}.json", json.dumps(row, default=_json_default) + "\n")
        status = row.get("status")
        counts["done" if status == "ok" else "skipped" if status == "skipped" else "failed"] += 1
        assemble_csv(out)
        if on_progress:
            on_progress(counts["done"] + counts["skipped"], counts["failed"], counts["total"])

    jobs = [(s.key, (s.params, config.user_datasets.get(s.params.dataset, s.params.dataset), data_path, mirror))
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
