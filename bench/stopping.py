"""Benchmark: `rbrepro train`'s default against the authors' 50 CG steps, on every mirror dataset.

    python -m bench.stopping [DATASET ...] [--R 256] [--seeds 0 1 2]   (make bench-stopping)

Two rules on the same grids (each seed its own draw), RB at R = 256 by default:
- the authors' rule: plain CG, relative residual 1e-3 or 50 iterations (every as-published run);
- the default (`--stopping auto`): PCG on nine tenths of the training rows, keeping the iterate that
  scores best on the held-out tenth, then a few more steps from it on every row (no test data).
Per dataset: the median over the seeds of the test metric and of the train time (featurize + solve,
compilation excluded), and the default's difference and time ratio. sigma is the authors' width
where their data names one (ijcnn1 1.58, cadata 4.46, letter 1/0.79, mnist 0.03), cod_rna_split (the
mirror lacks cod-rna.t) 1.58; lambda the dataset's (0.01). Rows go to bench/results/stopping.csv with
provenance. Needs the mirror: RBREPRO_MIRROR=../shared/data/libsvm.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from bench.results_csv import write_rows

SIGMAS = {"ijcnn1": 1.58, "cadata": 4.46, "letter": 1.2658, "mnist": 0.03, "cod_rna_split": 1.58}
RULES = (("authors: cg, 50 steps", "cg", "residual"), ("default: pcg, held-out stop, all rows", "pcg", "validation"))
OUT = Path("bench/results/stopping.csv")


def measure(name: str, R: int, seeds: list[int], data) -> list[dict]:
    """One row per (rule, seed): the cell's test metric, train time, steps."""
    from rbrepro.models.cell import CellParams, run_cell

    rows = []
    for seed in seeds:
        for rule, solver, stopping in RULES:
            params = CellParams(name, method="rb", sigma=SIGMAS[name], R=R, lam=data.info["spec"].lam,
                                solver=solver, stopping=stopping, seed=seed)
            row = run_cell(params, data)
            rows.append({"dataset": name, "R": R, "sigma": SIGMAS[name], "rule": rule, "seed": seed,
                         "metric": row["metric"], "test_metric": row["test_metric"], "train_s": row["train_s"],
                         "cg_iterations": row["cg_iterations"], "search_iterations": row.get("search_iterations", 0),
                         "D": row["D"]})
    return rows


def summary(rows: list[dict]) -> list[str]:
    """Markdown lines: per dataset, each rule's medians and the default against the authors'."""
    out = ["| dataset | R | rule | test (median) | train s (median) | default - authors | time ratio |",
           "|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(r["dataset"] for r in rows):
        med = {}
        for rule, *_ in RULES:
            mine = [r for r in rows if r["dataset"] == name and r["rule"] == rule]
            med[rule] = (statistics.median(r["test_metric"] for r in mine), statistics.median(r["train_s"] for r in mine))
        (a_test, a_s), (d_test, d_s) = med[RULES[0][0]], med[RULES[1][0]]
        for rule, (test, secs) in med.items():
            extra = f"{d_test - a_test:+.4g} | x{a_s / d_s:.2f} faster" if rule == RULES[1][0] else "| "
            out.append(f"| {name} | {rows[0]['R']} | {rule} | {test:.4g} | {secs:.3f} | {extra} |")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", default=list(SIGMAS))
    parser.add_argument("--R", type=int, default=256)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    from rbrepro.data.load import load_dataset
    from rbrepro.models.cell import CellParams, run_cell

    rows = []
    for name in args.datasets:
        data = load_dataset(name, progress=False)
        run_cell(CellParams(name, sigma=SIGMAS[name], R=8, solver="pcg", stopping="validation"), data)  # warm
        rows += measure(name, args.R, args.seeds, data)
        print("\n".join(summary([r for r in rows if r["dataset"] == name])[2 if name != args.datasets[0] else 0:]),
              flush=True)
    write_rows(args.out, rows, quiet_for=("train_s",))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
