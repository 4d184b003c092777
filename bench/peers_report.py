"""bench.peers' rows as they are kept and shown: the CSVs (written atomically), the markdown table,
the count of targets each method reaches first, and the figure, each from the rows alone."""

from __future__ import annotations

import csv
import os
from pathlib import Path

from rbrepro.metrics import higher_is_better


def write_csv(path: Path, rows: list[dict], fields: list[str]) -> None:
    """All rows at once, atomically: a .part beside it, then os.replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    with open(part, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    os.replace(part, path)


def ladder_rows(dataset: str, outcome) -> list[dict]:
    """One row per rung of a method's ladder (bench.peers.Outcome)."""
    return [{"dataset": dataset, "method": outcome.method, "R": "" if R is None else R, "fit_s": s,
             "test_metric": m} for R, s, m in outcome.ladder]


def markdown(rows: list[dict]) -> str:
    """One line per (dataset, target), one column per method: 'R = 64: 0.81 s' or 'not reached'."""
    methods = list(dict.fromkeys(r["method"] for r in rows if r["target"] != "exact kernel (reference)"))
    lines = ["| dataset | target | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    cells = {}
    for r in rows:
        R = r["reached_R"]
        if R in ("not reached", "not run"):
            text = R if R == "not run" else f"not reached ({float(r['test_metric']):.4g})"
        elif R in ("-", ""):
            text = f"{r['median_s']:.3g} s"
        else:
            text = f"R = {R}: {r['median_s']:.3g} s"
        cells[r["dataset"], r["target"], r["target_value"], r["method"]] = text
    for (dataset, target, value) in dict.fromkeys((r["dataset"], r["target"], r["target_value"]) for r in rows):
        if target == "exact kernel (reference)":
            continue
        line = [cells.get((dataset, target, value, m), "") for m in methods]
        lines.append(f"| {dataset} | {target} = {value:.4g} | " + " | ".join(line) + " |")
    return "\n".join(lines)


def firsts(rows: list[dict]) -> str:
    """Per method, at how many targets it is the first (the least median time among those reaching it)."""
    targets = [k for k in dict.fromkeys((r["dataset"], r["target"], r["target_value"]) for r in rows)
               if k[1] != "exact kernel (reference)"]
    count = dict.fromkeys((r["method"] for r in rows if r["target"] != "exact kernel (reference)"), 0)
    for key in targets:
        reached = [r for r in rows if (r["dataset"], r["target"], r["target_value"]) == key
                   and r["reached_R"] not in ("not reached", "not run")]
        if reached:
            count[min(reached, key=lambda r: float(r["median_s"]))["method"]] += 1
    return "first to the target: " + "; ".join(f"{m} {n} of {len(targets)}" for m, n in count.items())


def read_rows(path: Path) -> list[dict]:
    """The rows CSV back, with its numbers as numbers (what markdown and firsts read)."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for name in ("target_value", "median_s", "min_s", "max_s", "test_metric"):
            r[name] = float(r[name]) if r.get(name) not in (None, "") else float("nan")
    return rows


def draw(out_csv: Path, ladder_csv: Path, png: Path) -> None:
    """The figure from the two CSVs alone: per dataset, each method's test metric against its
    fit time (log x; the ladder as a line, a single fit as a marker), the targets as lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(out_csv, newline="") as fh:
        rows = list(csv.DictReader(fh))
    with open(ladder_csv, newline="") as fh:
        ladder = list(csv.DictReader(fh))
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    if not datasets:
        return
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.5 * len(datasets), 4.2), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        mine = [r for r in ladder if r["dataset"] == dataset]
        for method in dict.fromkeys(r["method"] for r in mine):
            pts = [(float(r["fit_s"]), float(r["test_metric"]), r["R"]) for r in mine if r["method"] == method]
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            ax.plot(xs, ys, marker="o" if len(pts) > 1 else "*", ms=5 if len(pts) > 1 else 12, label=method)
        for r in rows:
            if r["dataset"] == dataset and r["target"] != "exact kernel (reference)":
                ax.axhline(float(r["target_value"]), color="0.6", lw=0.8, ls="--")
        metric = next(r["metric"] for r in rows if r["dataset"] == dataset)
        goals = [float(r["target_value"]) for r in rows if r["dataset"] == dataset]
        if higher_is_better(metric):  # the region around the targets, not the smallest R's misses
            ax.set_ylim(min(goals) - 4.0, max(goals) + 1.5)
        else:
            ax.set_ylim(min(goals) - 0.01, max(goals) + 0.06)
        ax.set_xscale("log")
        ax.set_xlabel("fit time (s, featurize + solve)")
        ax.set_ylabel(metric)
        ax.set_title(f"{dataset}: targets (dashed) = exact kernel -/+ 0.5, 1, 2 pt")
        ax.legend(fontsize=7)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    part = png.with_name(png.stem + ".part.png")
    fig.savefig(part, dpi=120)
    plt.close(fig)
    os.replace(part, png)
