"""Quiet timings: the one rule that says a row's timings were taken under load (other processes
busy on the other cores) or beside other cells. The sweep reads it to retime such cells of an
exclusive config (`retime`), the figures and the report to count them (rbrepro.analysis.rows
re-exports it), so what is retimed and what is flagged can never differ."""

from __future__ import annotations

import pandas as pd

#: other processes keeping more than this many cores busy during a cell flag its timings
LOAD_FLAG_CORES = 0.25


def disturbed_timings(frame: pd.DataFrame) -> pd.Series:
    """Rows whose timings were taken under load (other processes busy) or beside other cells."""
    flags = pd.Series(False, index=frame.index)
    if "load_other_cores" in frame:
        flags |= pd.to_numeric(frame["load_other_cores"], errors="coerce").fillna(0) > LOAD_FLAG_CORES
    if "concurrent_cells" in frame:
        flags |= pd.to_numeric(frame["concurrent_cells"], errors="coerce").fillna(0) > 0
    return flags


def row_disturbed(row: dict) -> bool:
    """`disturbed_timings` of one row as a sweep writes it (a dict)."""
    columns = ("load_other_cores", "concurrent_cells")
    return bool(disturbed_timings(pd.DataFrame([{c: row.get(c) for c in columns if c in row}])).iloc[0])


def quietness(row: dict) -> tuple[bool, float]:
    """Sorts a cell's attempts quietest first: undisturbed before disturbed, then the lowest load."""
    load = pd.to_numeric(pd.Series([row.get("load_other_cores")]), errors="coerce").fillna(0).iloc[0]
    return row_disturbed(row), float(load)
