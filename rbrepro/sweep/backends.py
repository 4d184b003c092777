"""Where cells run: a local pool of worker processes, or a dask.distributed cluster, both under
one admission rule (memory estimates against a budget, one at a time when exclusive)."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing
import os
from typing import Callable

from rbrepro.errors import RbreproError
from rbrepro.memory import memory_limit_bytes
from rbrepro.models.cell import CellParams
from rbrepro.sweep.worker import run_cell_task, worker_died_row, worker_init

WORKER_RETRIES = 1

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


#: how long an interrupted sweep waits for a stopped pool's manager thread to end
MANAGER_JOIN_S = 10.0


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
                                      initializer=worker_init, initargs=(os.getpid(),), **kwargs)

    @staticmethod
    def _stop(pool) -> None:
        """Terminate the pool's worker processes now (an interrupted sweep does not wait for them),
        then let the pool's manager thread finish: CPython's exit hook wakes every live manager
        thread through a pipe that thread closes as it ends, and the race between the two printed an
        OSError traceback after the one-line interrupt message (seen once in CI)."""
        manager = getattr(pool, "_executor_manager_thread", None)  # shutdown() forgets it
        for proc in list(getattr(pool, "_processes", {}).values()):
            with contextlib.suppress(Exception):
                proc.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        if manager is not None:
            manager.join(timeout=MANAGER_JOIN_S)

    def run(self, jobs: list[tuple[str, tuple]], on_row: Callable[[str, dict], None],
            estimates: dict[str, float] | None = None) -> None:
        """Run jobs (`plan.Job`: key, task args); `estimates` maps keys to the cell's estimated bytes."""
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
                    on_row(key, worker_died_row(args[0], "killed or out of memory, also on its retry"))
                else:
                    self.on_event(f"cell {key}: its worker process died; retrying it "
                                  f"({attempts[key]}/{WORKER_RETRIES})")
                    queue.insert(0, (key, args))

class NoWorkers(RbreproError, RuntimeError):
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
        from rbrepro.distributed.cluster import connect
        from rbrepro.distributed.errors import ClusterUnavailable

        try:  # every wait has its deadline: connecting, the handshake, the first reply, a first worker
            return connect(self.address, worker_timeout_s=self.worker_timeout_s), None
        except ClusterUnavailable as exc:
            raise NoWorkers(str(exc)) from None

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
                        row = worker_died_row(args[0], why)
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
