"""Shared pieces of the paper's figures: labels, seed spreads as bands, the authors' points and the
notes under a figure. Which rows count is decided in rbrepro.analysis, drawing basics live in
rbrepro.drawing."""

from __future__ import annotations

import pandas as pd

from rbrepro.analysis.chosen import draws_of
from rbrepro.analysis.rows import spread, test_rows
from rbrepro.drawing import METHOD_STYLE, steady
from rbrepro.sweep.quiet import LOAD_FLAG_CORES, disturbed_timings

METRIC_LABEL = {"accuracy": "accuracy (%)", "rel_error": "relative error"}


def method_label(rows: pd.DataFrame, method: str) -> str:
    """The method's name, with its kernel when that is not the L1 kernel (e.g. "RF, euclidean")."""
    label = METHOD_STYLE[method][0]
    kernels = set(rows["kernel"].dropna()) if "kernel" in rows else set()
    return f"{label}, {'/'.join(sorted(kernels))}" if kernels - {"l1"} else label


def unavailable_note(names) -> str:
    """The grey footer for datasets a sweep could not have here (named once, no cells run)."""
    return f"not available here (no cells run): {', '.join(sorted(names))}" if names else ""


def published_points(dataset: str, panel: str, method: str | None = None) -> pd.DataFrame:
    """The authors' published rows for one panel of a dataset (empty when they published none)."""
    from rbrepro.published import published_table

    table = published_table()
    rows = table[(table["panel"] == panel) & (table["dataset"] == dataset)]
    return rows if method is None else rows[rows["method"] == method]


def split_draws(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(our seeds' rows, the authors' replayed draws' rows): a line and its band are our seeds alone
    (numpy draws), the authors' one draw is a point of its own, never inside our band."""
    draws = draws_of(rows)
    return rows[draws == "numpy"], rows[draws == "authors"]


#: the label's tail and the marker of the authors' draws replayed (RB as published)
REPLAYED = ", the authors' draw replayed"
REPLAYED_MARKER = "*"


def replayed_points(ax, rows: pd.DataFrame, x: str, column: str, color: str, label: str, ms: float = 9) -> None:
    """The authors' replayed draw at each x (one row each; several: their median), a star of its own."""
    if rows.empty:
        return
    values = rows.groupby(x)[column].median().sort_index()
    ax.plot(values.index, steady(values.to_numpy()), ls="none", marker=REPLAYED_MARKER, ms=ms, color=color,
            mec="black", mew=0.4, zorder=4, label=label + REPLAYED)


def line_with_spread(ax, rows, x, column, **style):
    """The median over seeds as a line, the min-max band in the line's own colour. A series of one
    point draws no line and no band: a marker large enough to see, the spread as an error bar.
    The numbers drawn are `steady`: the same rows give the same pixels on any machine."""
    s = spread(rows, x, column)
    s[["median", "min", "max"]] = steady(s[["median", "min", "max"]].to_numpy())
    if len(s) == 1:
        style = {**style, "marker": style.get("marker") or "o", "ms": max(style.get("ms", 0), 7)}
    (line,) = ax.plot(s.index, s["median"], **style)
    if (s["max"] > s["min"]).any():
        if len(s) == 1:
            ax.errorbar(s.index, s["median"], yerr=[s["median"] - s["min"], s["max"] - s["median"]], fmt="none",
                        ecolor=line.get_color(), capsize=4, lw=1)
        else:
            ax.fill_between(s.index, s["min"], s["max"], alpha=0.2, color=line.get_color(), lw=0)
    return s


def one_point_note(ax, x_name: str, xs) -> bool:
    """Where every series of a panel is one point (one R swept, or one sigma run on test), say so
    under the panel's title: a lone dot reads as a drawing fault otherwise. True when it was said."""
    xs = sorted(set(float(v) for v in xs))
    if len(xs) != 1:
        return False
    ax.set_title(f"{ax.get_title()}\n(one point: {x_name} = {xs[0]:g}; a curve needs several)", fontsize=9)
    return True


def problems_note(frame: pd.DataFrame, expected: list[str] | None, shown: list[str],
                  unavailable: list[str] | tuple = ()) -> str:
    notes = []
    ok = test_rows(frame)
    flagged = int(disturbed_timings(ok).sum()) if len(ok) else 0
    if flagged:
        notes.append(f"{flagged} of {len(ok)} timings taken under load (> {LOAD_FLAG_CORES:g} other cores busy) "
                     "or beside other cells")
    missing = [d for d in (expected or []) if d not in shown and d not in (unavailable or ())]
    if missing:
        notes.append(f"no results for: {', '.join(missing)} (not run yet, or every cell failed)")
    if "status" in frame:
        failed = frame[frame["status"] == "failed"]
        if len(failed):
            notes.append(f"{len(failed)} failed cell(s) not shown ({', '.join(sorted(set(failed['dataset'])))})")
    return "; ".join(notes)
