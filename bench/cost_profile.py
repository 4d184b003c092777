"""Where a full reproduction's time goes: summed cell wall time by run, method, dataset and phase.

    python -m bench.cost_profile [RESULTS ...] [--write results/cost-profile.md]

Reads each results folder's results.csv (default: every published run under results/) and
splits each cell's wall time into its phases as the rows record them: featurize (binning for
RB, the random projection for RF, landmarks and the kernel block for Nyström and block, the
kernel matrix for the exact kernel), solve (CG, RCD or the factorization), predict, and the
rest (loading the cached data, scaling, writing the row). It prints the totals per run, then
the largest cost centres, so every later change is judged against the same table. With
--write it also stores the table as markdown (the committed copy is the baseline).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

PHASES = ("featurize_s", "solve_s", "predict_s", "other_s")


def load_rows(folders: list[Path]) -> pd.DataFrame:
    frames = []
    for folder in folders:
        path = folder / "results.csv"
        if not path.exists():
            print(f"{folder}: no results.csv, skipped", file=sys.stderr)
            continue
        frame = pd.read_csv(path, low_memory=False)
        frame = frame[frame["status"] == "ok"].copy()
        frame["run"] = folder.name
        frames.append(frame)
    if not frames:
        raise SystemExit("no results to profile")
    rows = pd.concat(frames, ignore_index=True)
    for col in ("featurize_s", "solve_s", "predict_s", "wall_s"):
        rows[col] = pd.to_numeric(rows.get(col), errors="coerce").fillna(0.0)
    rows["other_s"] = (rows["wall_s"] - rows["featurize_s"] - rows["solve_s"] - rows["predict_s"]).clip(lower=0)
    return rows


def profile(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-run totals, per (run, method, dataset) cost centres), both in minutes."""
    agg = {"cells": ("wall_s", "size"), "wall_min": ("wall_s", "sum"),
           **{p.replace("_s", "_min"): (p, "sum") for p in PHASES}}
    runs = rows.groupby("run").agg(**agg)
    centres = rows.groupby(["run", "method", "dataset"]).agg(**agg)
    for frame in (runs, centres):
        for col in frame.columns:
            if col.endswith("_min"):
                frame[col] = frame[col] / 60.0
    total = runs["wall_min"].sum()
    centres["share_%"] = 100 * centres["wall_min"] / total
    return runs.sort_values("wall_min", ascending=False), centres.sort_values("wall_min", ascending=False)


def to_markdown(runs: pd.DataFrame, centres: pd.DataFrame, top: int) -> str:
    def table(frame: pd.DataFrame) -> str:
        frame = frame.reset_index()
        head = "| " + " | ".join(frame.columns) + " |"
        rule = "|" + "---|" * len(frame.columns)
        body = ["| " + " | ".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in row) + " |"
                for row in frame.itertuples(index=False)]
        return "\n".join([head, rule, *body])

    total = runs["wall_min"].sum()
    return (f"Summed cell wall time: {total:.1f} min over {int(runs['cells'].sum())} cells.\n\n"
            f"## By run\n\n{table(runs)}\n\n## The {top} largest cost centres\n\n{table(centres.head(top))}\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="*", type=Path, help="results folders (default: results/*/)")
    parser.add_argument("--top", type=int, default=15, help="cost centres to list")
    parser.add_argument("--write", type=Path, help="also write the markdown table here")
    args = parser.parse_args(argv)
    folders = args.results or sorted(p.parent for p in Path("results").glob("*/results.csv"))
    runs, centres = profile(load_rows(folders))
    text = to_markdown(runs, centres, args.top)
    print(text)
    if args.write:
        from rbrepro.data.atomic import write_text_atomic
        write_text_atomic(args.write, "# Cost profile of the published runs\n\n"
                          "Made by `python -m bench.cost_profile --write results/cost-profile.md`.\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
