"""The committed benchmark store: each benchmark writes its rows to bench/results/<name>.csv with the
provenance a reader needs to trust or rerun them, and README's and the docs' generated blocks read
them back (rbrepro.report.sections.bench). One run replaces the file: the rows are one measurement.

Every row carries: when, the commit and whether the tree was dirty, the versions, the machine (CPU
model, logical cores, RAM), the threads numba used, and how busy the other cores were over the whole
run (`load_other_cores`, as the sweep measures each cell: CPU seconds of other processes per second
of wall time) with `quiet` (at most the sweep's LOAD_FLAG_CORES).
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import numba

from rbrepro.data.atomic import atomic_path
from rbrepro.provenance import provenance
from rbrepro.sweep.quiet import LOAD_FLAG_CORES

PROVENANCE = ("git_commit", "git_dirty", "rbrepro_version", "python", "numpy", "scipy", "numba", "scikit_learn",
              "blas", "cpu", "cpu_cores", "ram_bytes")


def _busy_cpu_seconds() -> tuple[float, float]:
    """(CPU seconds the whole machine spent busy, CPU seconds this process and the children it waited
    for spent) so far: a reference program the benchmark runs (bench.authors) is its own work."""
    import psutil

    total = psutil.cpu_times()
    busy = sum(total) - total.idle - getattr(total, "iowait", 0.0)
    own = psutil.Process().cpu_times()
    return busy, own.user + own.system + own.children_user + own.children_system


_START = (time.time(), *_busy_cpu_seconds())  # the run's start: this module is imported before any timing
_PROVENANCE = provenance()  # the code that runs, read at the start (a later edit of the tree is not it)


def load_other_cores() -> float:
    """Cores kept busy by other processes since the benchmark started (this module's import)."""
    t0, busy0, own0 = _START
    busy1, own1 = _busy_cpu_seconds()
    return max(0.0, ((busy1 - busy0) - (own1 - own0)) / max(time.time() - t0, 1e-9))


def write_rows(path: Path, rows: list[dict], quiet_for: tuple[str, ...] = ()) -> Path:
    """Write `rows` (one dict each, the same keys) with provenance to `path`, atomically. `quiet_for`
    names the timed columns; rows say whether the run was quiet enough for them to count."""
    load = load_other_cores()
    prov = _PROVENANCE
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    extra = {"finished_at": stamp, "numba_threads": numba.get_num_threads(), "load_other_cores": round(load, 4),
             "quiet": load <= LOAD_FLAG_CORES if quiet_for else "", "timed_columns": " ".join(quiet_for),
             **{k: prov.get(k, "") for k in PROVENANCE}}
    full = [{**row, **extra} for row in rows]
    fields = list(dict.fromkeys(k for row in full for k in row))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(full)
    return path
