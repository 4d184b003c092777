"""Where a reproduction's time goes, from the committed rows: summed cell wall time by run, method,
dataset and phase (featurize, solve, predict, the rest), and what cells reused from another run add.

The generated cost block (docs/figures-and-report.md) and `results/cost-profile.md` are both made from these numbers by
`rbrepro report`, so they describe the committed CSVs and nothing older (`bench/cost_profile.py`
prints the same for any folders).
"""

from __future__ import annotations

import pandas as pd

PHASES = ("featurize_s", "solve_s", "predict_s", "other_s")

def cost_rows(frames: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The successful rows of each run (`run` column added), each cell's wall time split into phases
    (`frames` holds one run at least)."""
    parts = []
    for run, frame in frames.items():
        ok = frame[frame["status"] == "ok"].copy() if "status" in frame else frame.copy()
        ok["run"] = run
        parts.append(ok)
    rows = pd.concat(parts, ignore_index=True)
    for col in ("featurize_s", "solve_s", "predict_s", "wall_s"):
        rows[col] = pd.to_numeric(rows[col], errors="coerce").fillna(0.0) if col in rows else 0.0
    rows["other_s"] = (rows["wall_s"] - rows["featurize_s"] - rows["solve_s"] - rows["predict_s"]).clip(lower=0)
    reused = rows["reused_from"] if "reused_from" in rows else pd.Series(None, index=rows.index)
    rows["reused"] = reused.notna() & reused.astype(str).str.strip().ne("")
    return rows


def profile(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-run totals, per (run, method, dataset) cost centres), both in minutes."""
    agg = {"cells": ("wall_s", "size"), "wall_min": ("wall_s", "sum"),
           **{p.replace("_s", "_min"): (p, "sum") for p in PHASES}}
    runs = rows.groupby("run").agg(**agg)
    runs["reused_min"] = rows[rows["reused"]].groupby("run")["wall_s"].sum().reindex(runs.index).fillna(0.0)
    centres = rows.groupby(["run", "method", "dataset"]).agg(**agg)
    for frame in (runs, centres):
        for col in frame.columns:
            if col.endswith("_min"):
                frame[col] = frame[col] / 60.0
    total = runs["wall_min"].sum()
    centres["share_%"] = 100 * centres["wall_min"] / total if total else 0.0
    return runs.sort_values("wall_min", ascending=False), centres.sort_values("wall_min", ascending=False)


def _markdown(frame: pd.DataFrame) -> str:
    frame = frame.reset_index()
    head = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in row) + " |"
            for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def total_line(runs: pd.DataFrame) -> str:
    """The summed cell time, and how much of it is cells reused from another run (recorded twice, run once)."""
    total, reused = runs["wall_min"].sum(), runs["reused_min"].sum()
    return (f"Summed cell wall time of the {len(runs)} runs below: {total:.1f} min over {int(runs['cells'].sum())} "
            f"cells, of which {reused:.1f} min "
            f"are cells reused from another run (recorded in both, computed once): {total - reused:.1f} min computed.")


def to_markdown(runs: pd.DataFrame, centres: pd.DataFrame, top: int = 15) -> str:
    """The profile as markdown: the total, per run, and the `top` largest cost centres."""
    return (f"{total_line(runs)}\n\n## By run\n\n{_markdown(runs)}\n\n"
            f"## The {top} largest cost centres\n\n{_markdown(centres.head(top))}\n")
