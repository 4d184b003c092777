"""Running one cell in a worker process (local or dask): the row, its timing and the load around it."""

from __future__ import annotations

import functools
import os
import time
import traceback
from dataclasses import asdict

from rbrepro.memory import memory_limit_bytes
from rbrepro.models.cell import CellParams
from rbrepro.provenance import provenance


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
                  memory_limit_gb: float | None = None, cluster: str | None = None) -> dict:
    """Run one cell and return its row; never raises for a cell's own failure. With `cluster`
    (`local:N` or `tcp://HOST:PORT`), its fit and predictions run on that dask cluster.

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
        data = _cached_dataset(dataset_ref, None if data_path is None else str(data_path), mirror, params.scaling)
        if cluster:
            from rbrepro.distributed.train import run_cell_on_cluster

            row = run_cell_on_cluster(params, data, cluster)
        else:
            row = run_cell(params, data)
    except MemoryLimitError as exc:
        row = {**asdict(params), "status": "skipped", "error": str(exc), **provenance()}
    except Exception as exc:  # a failed cell is recorded and the sweep goes on
        row = {**asdict(params), "status": "failed", "error": f"{type(exc).__name__}: {exc}".replace("\n", " "),
               "traceback": traceback.format_exc(limit=8), **provenance()}
    busy1, own1 = _busy_cpu_seconds()
    end = time.time()
    row.pop("memory_limit_gb", None)  # a setting of the run, recorded as the limit in bytes below (and
    row.pop("memory_limit_bytes", None)  # last, where every row has it, whether the cell ran or not)
    row["memory_limit_bytes"] = memory_limit_bytes(memory_limit_gb)
    row["started_at_unix"], row["ended_at_unix"], row["wall_s"] = start, end, end - start
    row["loadavg_1m_start"] = load_start
    row["load_other_cores"] = max(0.0, ((busy1 - busy0) - (own1 - own0)) / max(end - start, 1e-9))
    return row

def worker_died_row(params: CellParams, why: str) -> dict:
    return {**asdict(params), "status": "failed", "error": f"worker process died ({why})", **provenance()}

def worker_init(coordinator_pid: int) -> None:
    """In each worker process: leave SIGINT to the coordinator (it stops the workers), and exit at
    once if the coordinator dies, however it dies (kill -9, the OOM killer): a watchdog thread sees
    the worker reparented. No worker outlives its sweep."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from rbrepro.logs import configure_from_environment

    configure_from_environment()  # -v / --log-file reach the cells' fits and data loads too

    def watch():
        while True:
            if os.getppid() != coordinator_pid:
                os._exit(1)
            time.sleep(0.2)

    threading.Thread(target=watch, name="rbrepro-orphan-watchdog", daemon=True).start()
