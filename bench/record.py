"""Benchmark bookkeeping: print a figure beside its same-run baseline and their ratio, and
append it with provenance to results/bench.csv (one row per figure; RBREPRO_BENCH_CSV names another
file, as `make bench-roofline` does to commit its rows under bench/results/). Each row says how busy
the other cores were since the benchmark started (bench.results_csv) and whether that was quiet."""

from __future__ import annotations

import csv
import os
import time
from pathlib import Path

import numba

from bench.results_csv import load_other_cores  # imported first: the load is measured from here on
from rbrepro.provenance import provenance
from rbrepro.sweep.quiet import LOAD_FLAG_CORES

CSV = Path(os.environ.get("RBREPRO_BENCH_CSV", "results/bench.csv"))
FIELDS = ["when", "bench", "figure", "value", "baseline", "baseline_name", "ratio", "unit", "note", "threads",
          "load_other_cores", "quiet", "rbrepro_version", "git_commit", "git_dirty", "python", "numpy", "scipy",
          "numba", "blas", "cpu", "cpu_cores", "ram_bytes", "host"]


def record(bench: str, figure: str, value: float, baseline: float | None = None, baseline_name: str = "",
           unit: str = "s", note: str = "") -> None:
    """Print and append one benchmark figure; ratio = baseline / value (> 1: we are faster)."""
    ratio = (baseline / value) if baseline and value and value == value and baseline == baseline else float("nan")
    text = f"{figure}: {value:.4g} {unit}"
    if baseline is not None:
        text += f" | {baseline_name}: {baseline:.4g} {unit} | ratio x{ratio:.2f}"
    print(text + (f"  ({note})" if note else ""), flush=True)
    prov, load = provenance(), load_other_cores()
    row = {"when": time.strftime("%Y-%m-%dT%H:%M:%S"), "bench": bench, "figure": figure, "value": value,
           "baseline": baseline if baseline is not None else "", "baseline_name": baseline_name, "ratio": ratio,
           "unit": unit, "note": note, "threads": numba.get_num_threads(),
           "load_other_cores": round(load, 4), "quiet": load <= LOAD_FLAG_CORES,
           **{k: prov.get(k, "") for k in FIELDS if k in prov}}
    CSV.parent.mkdir(parents=True, exist_ok=True)
    if CSV.exists() and CSV.read_text().split("\n", 1)[0] != ",".join(FIELDS):  # written by an older version
        CSV.rename(CSV.with_suffix(".old.csv"))
        print(f"{CSV}: other columns; moved to {CSV.with_suffix('.old.csv')}")
    new = not CSV.exists()
    with open(CSV, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        writer.writerow(row)
