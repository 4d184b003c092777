"""Numbers and tables as REPRODUCTION.md writes them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd


def fmt(value) -> str:
    """A cell of the report: text as it is, a missing or infinite number as –, yes/no, 4 significant digits."""
    if isinstance(value, str):
        return value
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    return f"{value:.4g}" if abs(value) < 1e4 else f"{value:,.0f}"


def table(header: list[str], rows: list[list], cell: Callable[[object], str] = fmt) -> str:
    """A markdown table, each value written by `cell`."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def band(values, digits: int = 4) -> str:
    """The median over seeds and its band, "median [min, max]" (one value, or all equal: the value)."""
    v = pd.Series(values, dtype=float).dropna()
    if v.empty:
        return "–"
    if len(v) == 1 or v.min() == v.max():
        return f"{v.median():.{digits}g}"
    return f"{v.median():.{digits}g} [{v.min():.{digits}g}, {v.max():.{digits}g}]"
