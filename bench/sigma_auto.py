"""Benchmark: `--sigma auto` against one fit at the sigma it chooses, in one process.

    python -m bench.sigma_auto [DATASET ...] [--R 256] [--repeats 3]   (make bench-sigma-auto)

Per dataset (default ijcnn1, cadata, letter, cod_rna_split; RB at the default rule): the whole choice plus the final fit, as
`rbrepro train --sigma auto` runs it after loading (models.train.choose_sigma, then run_cell), and
one fit at the chosen sigma (run_cell), each timed `repeats` times after a warm-up that compiles
the kernels; the median ratio is the cost of not knowing sigma. The rows also carry how many widths
were scored, the chosen width's test metric, and the width the same search chooses when it scores
every training row instead of its sample (`sigma_every_row`, with that search's time). Rows go to bench/results/sigma-auto.csv with
provenance. Needs the mirror: RBREPRO_MIRROR=../shared/data/libsvm.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

from bench.results_csv import write_rows

OUT = Path("bench/results/sigma-auto.csv")


def measure(name: str, R: int, repeats: int) -> list[dict]:
    """One row per repeat: the auto command's time after loading, one fit's, and what was chosen."""
    from rbrepro.data.load import load_dataset
    from rbrepro.models.cell import CellParams, run_cell
    from rbrepro.models.train import choose_sigma, resolve_stopping

    data = load_dataset(name, progress=False)
    params = resolve_stopping(CellParams(name, method="rb", R=R, lam=data.info["spec"].lam), "auto")
    run_cell(replace(params, R=8), data)  # compile
    start = time.perf_counter()
    every_row = choose_sigma(params, data, rows=None)[0]
    every_row_s = time.perf_counter() - start
    rows = []
    for repeat in range(repeats):
        start = time.perf_counter()
        sigma, curve, _ = choose_sigma(params, data)
        chosen = replace(params, sigma=sigma)
        final = run_cell(chosen, data)
        auto_s = time.perf_counter() - start
        start = time.perf_counter()
        one = run_cell(chosen, data)
        one_s = time.perf_counter() - start
        rows.append({"dataset": name, "R": R, "repeat": repeat, "sigma": sigma, "widths_scored": len(curve),
                     "auto_s": auto_s, "one_fit_s": one_s, "ratio": auto_s / one_s, "metric": final["metric"],
                     "test_metric": final["test_metric"], "one_fit_test_metric": one["test_metric"],
                     "n_train": data.X_train.shape[0], "sigma_every_row": every_row, "every_row_search_s": every_row_s})
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", default=["ijcnn1", "cadata", "letter", "cod_rna_split"])
    parser.add_argument("--R", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    rows = []
    for name in args.datasets:
        mine = measure(name, args.R, args.repeats)
        rows += mine
        auto, one = (statistics.median(r[k] for r in mine) for k in ("auto_s", "one_fit_s"))
        print(f"{name} R={args.R}: --sigma auto {auto:.3f} s ({mine[0]['widths_scored']} widths, sigma "
              f"{mine[0]['sigma']:g}; every row: {mine[0]['sigma_every_row']:g}) | one fit {one:.3f} s | ratio x{auto / one:.2f} (median of {args.repeats})",
              flush=True)
    write_rows(args.out, rows, quiet_for=("auto_s", "one_fit_s"))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
