"""Run a sweep's cells, resumably.

Layout of a results folder::

    results/<name>/
      cells/<key>.json      one finished cell's row, written atomically
      results.csv           assembled from cells/ after every cell (atomically)
      config.resolved.yaml  the validated config with every default filled in
      sweep.lock            held while a sweep runs (a second sweep on the folder refuses)

A cell's key is a hash of its parameters, so a killed sweep resumes where it stopped:
cells whose file exists are skipped, and a cell is either wholly written or absent.
A failed cell is recorded with status "failed" and its error, the sweep goes on, and
the next run retries it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd
import yaml

from rbrepro.data.atomic import atomic_path, write_text_atomic
from rbrepro.data.load import load_dataset
from rbrepro.models.cell import CellParams, run_cell
from rbrepro.provenance import provenance
from rbrepro.sweep.config import SweepConfig

CSV_NAME = "results.csv"


class SweepLocked(RuntimeError):
    """Another sweep is writing to the same results folder."""


def cell_key(params: CellParams) -> str:
    """A stable key from the cell's parameters (same parameters, same key, across runs)."""
    text = json.dumps(asdict(params), sort_keys=True, default=float)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class CellState:
    params: CellParams
    key: str
    status: str  # "done", "failed", "todo"


def select(cells: Iterable[CellParams], datasets=(), sigmas=(), Rs=(), seeds=(), methods=()) -> list[CellParams]:
    """Narrow the grid from the command line (an empty filter keeps everything)."""
    def keep(c: CellParams) -> bool:
        return ((not datasets or c.dataset in datasets)
                and (not sigmas or any(abs(c.sigma - s) <= 1e-9 * max(1.0, abs(s)) for s in sigmas))
                and (not Rs or c.R in Rs or c.method == "exact") and (not seeds or c.seed in seeds)
                and (not methods or c.method in methods))
    return [c for c in cells if keep(c)]


def cell_states(cells: list[CellParams], out: Path) -> list[CellState]:
    states = []
    for c in cells:
        key = cell_key(c)
        path = out / "cells" / f"{key}.json"
        status = "todo"
        if path.exists():
            try:
                status = "done" if json.loads(path.read_text()).get("status") == "ok" else "failed"
            except (OSError, ValueError):
                status = "todo"
        states.append(CellState(c, key, status))
    return states


def assemble_csv(out: Path) -> pd.DataFrame:
    """results.csv from every cell file, one row per cell, in a stable order."""
    rows = []
    for path in sorted((out / "cells").glob("*.json")):
        try:
            rows.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame = frame.sort_values(["dataset", "method", "R", "sigma", "seed", "cell_key"], kind="stable")
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


def _failed_row(params: CellParams, exc: BaseException) -> dict:
    return {**asdict(params), "status": "failed", "error": f"{type(exc).__name__}: {exc}".replace("\n", " "),
            "traceback": traceback.format_exc(limit=5), **provenance()}


def run_sweep(config: SweepConfig, out: Path, cells: list[CellParams], data_path=None, mirror=None,
              on_progress: Callable[[int, int, int], None] | None = None) -> dict:
    """Run the cells not yet done; returns counts {total, done, failed, ran, skipped}."""
    with sweep_lock(out):
        write_text_atomic(out / "config.resolved.yaml",
                          yaml.safe_dump({**config.to_dict(), "provenance": provenance()}, sort_keys=False))
        states = cell_states(cells, out)
        todo = [s for s in states if s.status != "done"]
        done = len(states) - len(todo)
        failed = 0
        loaded: dict[str, object] = {}
        if on_progress:
            on_progress(done, failed, len(states))
        for state in todo:
            params = state.params
            start = time.time()
            try:
                if params.dataset not in loaded:
                    loaded.clear()  # keep one dataset in memory at a time
                    loaded[params.dataset] = load_dataset(config.user_datasets.get(params.dataset, params.dataset),
                                                          data_path, mirror, progress=False)
                row = run_cell(params, loaded[params.dataset])
                done += 1
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as exc:  # a failed cell is recorded and the sweep goes on
                row = _failed_row(params, exc)
                failed += 1
            row["cell_key"] = state.key
            row["sweep"] = config.name
            row["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            row["wall_s"] = time.time() - start
            write_text_atomic(out / "cells" / f"{state.key}.json", json.dumps(row, default=_json_default) + "\n")
            assemble_csv(out)
            if on_progress:
                on_progress(done, failed, len(states))
        if not todo:
            assemble_csv(out)
        return {"total": len(states), "done": done, "failed": failed, "ran": len(todo),
                "skipped": len(states) - len(todo)}


def _json_default(value):
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot serialize {type(value).__name__}")
