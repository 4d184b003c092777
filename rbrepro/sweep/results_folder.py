"""A results folder read back, validated once for every reader (summary, plot, report, compare): its
results CSV (the folder's results.csv, or a CSV named directly) and the resolved config beside it.

Refused in one line naming the file (and line) and the problem: a path that is neither, a CSV that is
not one, without rows or without the columns its rows need, a cell key that appears twice (a sweep
writes each cell once: rows counted twice would make every median, band and count wrong), a finished
row whose metric or time is not a finite number, a resolved config that is not readable YAML.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from rbrepro.errors import InvalidParameter, MissingData
from rbrepro.sweep.store import CSV_NAME

#: the columns every results CSV has, those a failed row needs, and those a finished row needs
ALWAYS = ("dataset", "method")
FAILED = ("error",)
FINISHED = ("sigma", "R", "seed", "metric", "train_metric", "test_metric", "train_s", "D")
#: the columns of a finished row that figures and verdicts read as numbers
FINITE_COLUMNS = ("train_metric", "test_metric", "train_s")
RESOLVED_NAME = "config.resolved.yaml"


def results_csv(path: str | Path) -> Path:
    """The results CSV a path names: a folder's results.csv, or the file itself."""
    path = Path(path)
    if path.is_dir():
        csv = path / CSV_NAME
        if not csv.is_file():
            raise MissingData(f"{path}: no {CSV_NAME} in this folder; run `rbrepro sweep CONFIG --out {path}` first")
        return csv
    if not path.exists():
        raise MissingData(f"{path}: no such results folder or CSV")
    if not path.is_file():
        raise InvalidParameter(f"{path}: not a results folder or CSV file")
    return path


def load_results(path: str | Path) -> tuple[pd.DataFrame, dict | None]:
    """The rows of a results CSV (a folder holding results.csv, or the CSV) and the resolved config
    beside it (None where there is none), each validated (module docstring)."""
    csv = results_csv(path)
    try:
        frame = pd.read_csv(csv, low_memory=False)
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame()
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidParameter(f"{csv}: not a readable results CSV ({str(exc).splitlines()[0][:160]})") from None
    if frame.empty:
        raise InvalidParameter(f"{csv}: the results CSV has no rows")
    _refuse_missing_columns(csv, frame)
    _refuse_repeated_cells(csv, frame)
    _refuse_non_finite(csv, frame)
    return frame, resolved_config(csv.parent / RESOLVED_NAME)


def resolved_config(path: Path) -> dict | None:
    """A results folder's resolved config as a mapping (None where the file is absent)."""
    if not path.exists():
        return None
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        where = getattr(exc, "problem_mark", None)
        line = f":{where.line + 1}" if where is not None else ""
        raise InvalidParameter(f"{path}{line}: the resolved config is not readable YAML "
                               f"({str(getattr(exc, 'problem', None) or exc).splitlines()[0][:120]})") from None
    if config is None:
        return None
    if not isinstance(config, dict) or not isinstance(config.get("datasets", {}), dict):
        raise InvalidParameter(f"{path}: the resolved config is not a sweep's (a mapping with a datasets "
                               f"mapping); it was edited or damaged")
    return config


def _status_ok(frame: pd.DataFrame) -> np.ndarray:
    return (frame["status"] == "ok").to_numpy() if "status" in frame else np.ones(len(frame), dtype=bool)


def _refuse_missing_columns(csv: Path, frame: pd.DataFrame) -> None:
    ok = _status_ok(frame)
    needed = [*ALWAYS, *(FINISHED if ok.any() else ()), *(FAILED if not ok.all() else ())]
    lacking = [c for c in needed if c not in frame]
    if lacking:
        raise InvalidParameter(f"{csv}: missing column(s) {', '.join(lacking)}; is this an rbrepro results CSV?")


def _refuse_repeated_cells(csv: Path, frame: pd.DataFrame) -> None:
    """A cell key on two rows: counted twice, it would skew every count, median and band."""
    if "cell_key" not in frame:
        return
    keys = frame["cell_key"].astype(str)
    again = np.flatnonzero(keys.duplicated().to_numpy())
    if len(again):
        i = int(again[0])
        first = int(np.flatnonzero((keys == keys.iloc[i]).to_numpy())[0])
        raise InvalidParameter(f"{csv}:{i + 2}: cell key {keys.iloc[i][:40]!r} again (first on line {first + 2}); "
                               f"a sweep writes each cell once: the CSV was edited or joined ({len(again)} "
                               f"repeated row(s))")


def _refuse_non_finite(csv: Path, frame: pd.DataFrame) -> None:
    """A finished row (status ok) whose metric or time is NaN, inf or text was not written by a sweep:
    refused naming its line and value, never drawn as an empty panel or boxed as the "best"."""
    ok = _status_ok(frame)
    for column in FINITE_COLUMNS:
        if column not in frame:
            continue
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(ok & ~np.isfinite(values))
        if len(bad):
            i = int(bad[0])
            raise InvalidParameter(f"{csv}:{i + 2}: {column} is {str(frame[column].iloc[i])!r} in a finished row "
                                   f"({frame['dataset'].iloc[i]} {frame['method'].iloc[i]}); a sweep writes finite "
                                   f"numbers there: the CSV was edited or damaged ({len(bad)} such row(s))")
