"""A results folder read back: its CSV and the resolved config beside it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from rbrepro.errors import InvalidParameter, MissingData


def load_results(path: str | Path) -> tuple[pd.DataFrame, dict | None]:
    """A results CSV (or a results folder holding results.csv) and the resolved config beside it."""
    path = Path(path)
    csv = path / "results.csv" if path.is_dir() else path
    if not csv.exists():
        raise MissingData(f"{csv}: no results CSV here; run `rbrepro sweep CONFIG` first")
    try:
        frame = pd.read_csv(csv)
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame()
    if frame.empty:
        raise InvalidParameter(f"{csv}: the results CSV has no rows")
    required = {"dataset", "method", "sigma", "R", "seed", "metric", "train_metric", "test_metric", "train_s", "D"}
    lacking = sorted(required - set(frame.columns))
    if lacking and not ("status" in frame and (frame["status"] != "ok").all()):
        raise InvalidParameter(f"{csv}: missing columns {', '.join(lacking)}; is this an rbrepro results CSV?")
    _refuse_non_finite(csv, frame)
    resolved = csv.parent / "config.resolved.yaml"
    config = yaml.safe_load(resolved.read_text()) if resolved.exists() else None
    return frame, config


#: the columns of a finished row that figures and verdicts read as numbers
FINITE_COLUMNS = ("train_metric", "test_metric", "train_s")


def _refuse_non_finite(csv: Path, frame: pd.DataFrame) -> None:
    """A finished row (status ok) whose metric or time is NaN, inf or text was not written by a sweep:
    refused naming its line and value, never drawn as an empty panel or boxed as the "best"."""
    ok = frame["status"] == "ok" if "status" in frame else pd.Series(True, index=frame.index)
    for column in FINITE_COLUMNS:
        if column not in frame:
            continue
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(ok.to_numpy() & ~np.isfinite(values))
        if len(bad):
            i = int(bad[0])
            raise InvalidParameter(f"{csv}:{i + 2}: {column} is {str(frame[column].iloc[i])!r} in a finished row "
                                   f"({frame['dataset'].iloc[i]} {frame['method'].iloc[i]}); a sweep writes finite "
                                   f"numbers there: the CSV was edited or damaged ({len(bad)} such row(s))")


def swept_for(frame: pd.DataFrame, config: dict | None) -> str | None:
    """The figure a results CSV was swept for: its resolved config's `figure`, else the rows' own."""
    if config and config.get("figure"):
        return str(config["figure"])
    if "figure" in frame and frame["figure"].notna().any():
        return str(frame["figure"].dropna().iloc[0])
    return None
