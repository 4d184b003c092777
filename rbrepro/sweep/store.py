"""The results folder: its layout, cell files, states, the assembled CSV and the sweep lock.

Layout of a results folder::

    runs/<name>/            (the default; published results live in results/<name>/, written
                             only when asked for with --out)
      cells/<key>.json      one finished cell's row, written atomically
      cells/<key>.log       a failed cell's traceback (kept out of the CSV)
      results.csv           exactly the cells of the config that ran (atomically rebuilt)
      config.resolved.yaml  the validated config with every default filled in, plus provenance
      unavailable.json      datasets whose files cannot be had here, and why
      sweep.lock            held while a sweep runs (a second sweep on the folder refuses)

Only the coordinating process writes here; cells run elsewhere and return their row.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd

from rbrepro.data.atomic import atomic_path, write_text_atomic
from rbrepro.errors import RbreproError
from rbrepro.memory import memory_limit_bytes
from rbrepro.models.cell import CellParams
from rbrepro.sweep.keys import cell_key, params_key
from rbrepro.sweep.quiet import row_disturbed

CSV_NAME = "results.csv"

UNAVAILABLE_NAME = "unavailable.json"

class SweepLocked(RbreproError, RuntimeError):
    """Another sweep is writing to the same results folder."""


class FolderOfAnotherSweep(RbreproError, ValueError):
    """The results folder holds another config's results (its config.resolved.yaml says whose)."""


#: the temporary files this store's atomic writes leave behind when killed (atomic_path's names)
_OWN_PARTIAL = re.compile(r"^\.(results\.csv|config\.resolved\.yaml|unavailable\.json|[0-9a-f]{16}\.(json|log))\."
                          r"[^/]*\.part$")


def own_partial_files(out: Path) -> list[Path]:
    """The partial files a killed sweep of this folder left: its own temporary names only, never
    another program's hidden files."""
    found = [*Path(out).glob(".*.part"), *(Path(out) / "cells").glob(".*.part")]
    return [p for p in found if _OWN_PARTIAL.match(p.name)]


def claim_folder(out: Path, name: str) -> None:
    """Refuse a folder whose results are another config's: a sweep would replace its results.csv."""
    resolved = Path(out) / "config.resolved.yaml"
    if not resolved.exists():
        if (Path(out) / CSV_NAME).exists():
            raise FolderOfAnotherSweep(f"{Path(out) / CSV_NAME}: a results CSV that no sweep wrote here (no "
                                       f"config.resolved.yaml beside it), which this sweep would replace; move it "
                                       f"or give the sweep its own --out folder")
        return
    import yaml

    try:
        owner = (yaml.safe_load(resolved.read_text()) or {}).get("name")
    except (OSError, yaml.YAMLError):
        return
    if owner and owner != name:
        raise FolderOfAnotherSweep(f"{out} holds the results of config {owner!r} ({resolved}); this config is "
                                   f"{name!r}, and its sweep would replace them. Give it its own --out folder")

@dataclass
class CellState:
    params: CellParams
    key: str
    status: str  # "done", "skipped", "failed", "todo", "retime" (ok, but timed under load: runs again)
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


def cell_path(out: Path, key: str, suffix: str = ".json") -> Path:
    return Path(out) / "cells" / f"{key}{suffix}"


def read_row(path: Path) -> dict | None:
    """A cell file's row, or None when it is absent, unreadable or not a row a sweep wrote."""
    try:
        row = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return row if valid_row(row) else None


def json_default(value):
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot serialize {type(value).__name__}")


def write_row(out: Path, key: str, row: dict) -> None:
    """Write a finished cell atomically; its traceback, if any, goes to cells/<key>.log."""
    log = cell_path(out, key, ".log")
    trace = row.pop("traceback", None)
    if trace:
        write_text_atomic(log, trace)
    elif log.exists():
        log.unlink()
    write_text_atomic(cell_path(out, key), json.dumps(row, default=json_default) + "\n")


def _stale_index(out: Path) -> dict[str, tuple[str, dict]]:
    """params_key -> (key, row) of every valid cell file (for reusing cells of older code or data)."""
    index = {}
    for path in sorted((out / "cells").glob("*.json")):
        row = read_row(path)
        if row is not None and row.get("params_key"):
            index[row["params_key"]] = (path.stem, row)
    return index

def retimes_left(row: dict, retime: int) -> int:
    """How many more times a finished row's cell runs to be timed quiet: none for a row timed quiet
    (`sweep.quiet.row_disturbed`) or not ok, else what `retime` leaves after the row's own `retimes`."""
    if retime <= 0 or row.get("status") != "ok" or not row_disturbed(row):
        return 0
    return max(0, retime - int(row.get("retimes") or 0))


def cell_states(cells: list[CellParams], out: Path, fingerprints: dict | None = None, reuse_stale: bool = False,
                memory_limit: float | None = None, retime: int = 0) -> list[CellState]:
    """Each cell's state in `out`. A skipped cell is due again when the memory limit now in force
    (`memory_limit` bytes; default: the configured one) is above the one it was refused under. With
    `retime` (an exclusive config's), an ok row timed under load whose retimes are not spent is due
    again too ("retime"): a resumed sweep retimes it rather than trust it, and the row on disk
    (rewritten after every attempt with its `retimes`) says how many are spent, so a sweep killed
    mid-retime resumes with the rest."""
    fingerprints = fingerprints or {}
    limit = memory_limit_bytes() if memory_limit is None else memory_limit
    stale = _stale_index(out) if reuse_stale else {}
    states = []
    for c in cells:
        key = cell_key(c, fingerprints.get(c.dataset, ""))
        row = read_row(cell_path(out, key))
        if row is None and reuse_stale and params_key(c) in stale:
            key, row = stale[params_key(c)]
        if row is None:
            status = "todo"
        elif row["status"] == "skipped" and float(row.get("memory_limit_bytes") or 0) < limit:
            status = "todo"
        elif retimes_left(row, retime):
            status = "retime"
        else:
            status = {"ok": "done", "skipped": "skipped"}.get(row["status"], "failed")
        states.append(CellState(c, key, status, row))
    return states

CSV_ORDER = ("dataset", "method", "evaluate_on", "R", "sigma", "threads", "variant", "seed", "cell_key")

def assemble_csv(out: Path, keys: Iterable[str] | None = None,
                 annotate_rows: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
                 known: dict[str, dict] | None = None) -> tuple[pd.DataFrame, int]:
    """results.csv from the cell files of `keys` (default: every cell file), one row per cell, in a
    stable order, passed through `annotate_rows` if given; returns it and the number of cell files
    kept aside (not in `keys`). `known` (key -> row) holds rows already read or just written: they
    are not read again (a sweep rebuilds the CSV as cells finish; re-reading every file each time
    made that quadratic)."""
    paths = sorted((out / "cells").glob("*.json"))
    wanted = None if keys is None else set(keys)
    rows, aside = [], 0
    for path in paths:
        if wanted is not None and path.stem not in wanted:
            aside += 1
            continue
        row = dict(known[path.stem]) if known is not None and path.stem in known else read_row(path)
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


def published_rows(folder: Path) -> dict[str, dict]:
    """cell_key -> row of a folder's results.csv (a published folder commits the CSV, not its cell
    files), each row as a sweep wrote it: empty fields are None. Rows that are not valid are left out."""
    csv = Path(folder) / CSV_NAME
    if not csv.exists():
        return {}
    try:
        frame = pd.read_csv(csv, low_memory=False)
    except (OSError, ValueError):
        return {}
    if "cell_key" not in frame:
        return {}
    rows = {}
    for record in frame.astype(object).where(frame.notna(), None).to_dict("records"):
        if valid_row(record):
            rows[str(record["cell_key"])] = record
    return rows
