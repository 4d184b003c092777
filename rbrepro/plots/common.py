"""Shared pieces of the figures: which rows count, seed spreads, reference lines, notes."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from rbrepro.data.atomic import atomic_path  # noqa: E402
from rbrepro.sweep.summary import chosen_rows  # noqa: E402,F401 - shared with the figures

METRIC_LABEL = {"accuracy": "accuracy (%)", "rel_error": "relative error"}
METHOD_STYLE = {"rb": ("RB", "tab:red", "o"), "rf": ("RF", "tab:blue", "s"), "nystrom": ("Nyström", "tab:green", "^"),
                "block": ("block", "tab:purple", "D"), "exact": ("exact", "black", "")}


def method_label(rows: pd.DataFrame, method: str) -> str:
    """The method's name, with its kernel when that is not the L1 kernel (e.g. "RF, euclidean")."""
    label = METHOD_STYLE[method][0]
    kernels = set(rows["kernel"].dropna()) if "kernel" in rows else set()
    return f"{label}, {'/'.join(sorted(kernels))}" if kernels - {"l1"} else label


def edge_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Chosen rows whose sigma sits at the edge of its grid (the choice may lie beyond it)."""
    if "sigma_edge" not in rows:
        return rows.iloc[:0]
    return rows[rows["sigma_edge"].fillna("").astype(str).isin(["low", "high"])]


def unavailable_note(names) -> str:
    """The grey footer for datasets a sweep could not have here (named once, no cells run)."""
    return f"not available here (no cells run): {', '.join(sorted(names))}" if names else ""


def published_points(dataset: str, panel: str, method: str | None = None) -> pd.DataFrame:
    """The authors' published rows for one panel of a dataset (empty when they published none)."""
    from rbrepro.published import published_table

    table = published_table()
    rows = table[(table["panel"] == panel) & (table["dataset"] == dataset)]
    return rows if method is None else rows[rows["method"] == method]


def test_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Successful rows evaluated on test data (sigma-selection rows are left out)."""
    if frame.empty:
        return frame
    keep = frame["status"] == "ok" if "status" in frame else pd.Series(True, index=frame.index)
    if "evaluate_on" in frame:
        keep &= frame["evaluate_on"].fillna("test") == "test"
    return frame[keep]


def higher_is_better(rows: pd.DataFrame) -> bool:
    return rows["metric"].iloc[0] == "accuracy"


def spread(rows: pd.DataFrame, x: str, column: str) -> pd.DataFrame:
    """Mean, min and max of `column` over seeds at each x."""
    return rows.groupby(x)[column].agg(["mean", "min", "max"]).sort_index()


def line_with_spread(ax, rows, x, column, **style):
    """The mean over seeds as a line, the min-max band in the line's own colour."""
    s = spread(rows, x, column)
    (line,) = ax.plot(s.index, s["mean"], **style)
    if (s["max"] > s["min"]).any():
        ax.fill_between(s.index, s["min"], s["max"], alpha=0.2, color=line.get_color(), lw=0)
    return s


def exact_reference(frame: pd.DataFrame, dataset: str) -> tuple[float | None, str]:
    """The exact kernel's test performance on `dataset` at its chosen sigma (the best test value
    when the sweep chose nothing), or a note why there is none."""
    ok = test_rows(frame)
    rows = ok[(ok["dataset"] == dataset) & (ok["method"] == "exact")] if len(ok) else ok
    if len(rows):
        picked = chosen_rows(rows)
        kernel = f", {picked['kernel'].iloc[0]}" if "kernel" in picked and picked["kernel"].iloc[0] != "l1" else ""
        if picked is not rows:
            on = picked["selected_on"].iloc[0] if "selected_on" in picked else "validation"
            return float(picked["test_metric"].mean()), f"exact kernel{kernel} (sigma chosen on {on})"
        value = rows["test_metric"].max() if higher_is_better(rows) else rows["test_metric"].min()
        return float(value), f"exact kernel{kernel} (best test)"
    refused = frame[(frame["dataset"] == dataset) & (frame["method"] == "exact")] if "method" in frame else frame
    if len(refused) and "error" in refused:
        for text in refused["error"].dropna().astype(str):
            match = re.search(r"needs about ([0-9.]+ GB)", text)
            if match:
                return None, f"exact kernel: needs {match.group(1)}, not run"
    return None, "exact kernel: not in these results"


#: other processes keeping more than this many cores busy during a cell flag its timings
LOAD_FLAG_CORES = 0.25


def disturbed_timings(frame: pd.DataFrame) -> pd.Series:
    """Rows whose timings were taken under load (other processes busy) or beside other cells."""
    flags = pd.Series(False, index=frame.index)
    if "load_other_cores" in frame:
        flags |= frame["load_other_cores"].fillna(0) > LOAD_FLAG_CORES
    if "concurrent_cells" in frame:
        flags |= frame["concurrent_cells"].fillna(0) > 0
    return flags


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


def new_figure(n_rows: int, n_cols: int, width: float = 4.2, height: float = 3.2):
    return plt.subplots(max(1, n_rows), n_cols, figsize=(width * n_cols, height * max(1, n_rows)), squeeze=False)


DETERMINISTIC_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "ModDate": None, "Producer": None,
                                                              "Creator": None}}


def finish(fig, out_base: Path, title: str, note: str = "", info: str = "", top: float = 0.96) -> list[Path]:
    """Title, problems in red and plain facts (e.g. datasets not available here) in grey at the
    bottom, PNG and PDF written atomically."""
    fig.suptitle(title, fontsize=11)
    if note:
        fig.text(0.5, 0.005, note, ha="center", fontsize=8, color="darkred", wrap=True)
    if info:
        fig.text(0.5, 0.025 if note else 0.005, info, ha="center", fontsize=8, color="0.35", wrap=True)
    fig.tight_layout(rect=(0, 0.015 + 0.02 * bool(note) + 0.02 * bool(info), 1, top))
    out_base = Path(out_base)
    out_base.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "pdf"):
        path = out_base.with_suffix(f".{ext}")
        with atomic_path(path) as tmp:  # no timestamps: the same CSV gives the same bytes (make plots is a no-op)
            fig.savefig(tmp, dpi=130, format=ext, metadata=DETERMINISTIC_METADATA[ext])
        paths.append(path)
    plt.close(fig)
    return paths


def empty_panel(ax, text: str):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=9, color="0.3", wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def ladder(values: np.ndarray, higher_better: bool, n: int = 3) -> list[float]:
    """Default Fig. 5 targets: n levels from the best worst-case up to the performance every
    method reaches (values: per method, (worst, best))."""
    worst = np.array([v[0] for v in values])
    best = np.array([v[1] for v in values])
    if higher_better:
        top, bottom = best.min(), worst.max()
        return list(np.linspace(min(bottom, top), top, n)) if bottom < top else [float(top)]
    top, bottom = best.max(), worst.min()
    return list(np.linspace(max(bottom, top), top, n)) if bottom > top else [float(top)]
