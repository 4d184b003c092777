"""A results folder read back: its CSV and the resolved config beside it."""

from __future__ import annotations

from pathlib import Path

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
    resolved = csv.parent / "config.resolved.yaml"
    config = yaml.safe_load(resolved.read_text()) if resolved.exists() else None
    return frame, config


def swept_for(frame: pd.DataFrame, config: dict | None) -> str | None:
    """The figure a results CSV was swept for: its resolved config's `figure`, else the rows' own."""
    if config and config.get("figure"):
        return str(config["figure"])
    if "figure" in frame and frame["figure"].notna().any():
        return str(frame["figure"].dropna().iloc[0])
    return None
