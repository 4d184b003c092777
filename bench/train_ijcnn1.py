"""Benchmark: `rbrepro train ijcnn1 --method rb` at R = 256 and 1024 (sigma 1.58, lam 0.01).

Prints train_s (featurize + solve, after loading, without compilation), test accuracy
and D, and featurize/solve times with 1 thread against 2 threads measured in the same
process (the baseline), with their ratio. Needs the mirror: RBREPRO_MIRROR=../shared/data/libsvm.
"""

from __future__ import annotations

import statistics
import time

import numba

from bench.record import record
from rbrepro.data.load import load_dataset
from rbrepro.features import RandomBinningFeatures
from rbrepro.models.cell import CellParams, run_cell
from rbrepro.solvers import ridge_cg

REPEATS = 3


def best_of(fn, repeats=REPEATS):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def main():
    data = load_dataset("ijcnn1")
    cores = numba.config.NUMBA_NUM_THREADS
    print(f"ijcnn1: {data.X_train.shape[0]} train / {data.X_test.shape[0]} test rows; numba threads available: {cores}")
    print(f"{'R':>5} {'train_s':>8} {'featurize_s':>11} {'solve_s':>8} {'CG it':>5} {'test acc %':>10} {'D':>9}")
    for R in (256, 1024):
        rows = [run_cell(CellParams("ijcnn1", sigma=1.58, R=R, threads=cores, stopping="residual"), data)
                for _ in range(REPEATS)]
        row = min(rows, key=lambda r: r["train_s"])
        print(f"{R:>5} {row['train_s']:8.3f} {row['featurize_s']:11.3f} {row['solve_s']:8.3f} {row['cg_iterations']:5d} "
              f"{row['test_metric']:10.3f} {row['D']:9d}")
        record("train_ijcnn1", f"ijcnn1 RB R={R} train_s", row["train_s"], 1.5 if R == 256 else None,
               "target" if R == 256 else "", note=f"test {row['test_metric']:.3f}%, D={row['D']}")
    print("\nthreads: 1 thread (baseline) vs all threads, best of", REPEATS)
    y = data.y_train.reshape(-1, 1)
    for R in (256, 1024):
        results = {}
        for threads in (1, cores):
            numba.set_num_threads(threads)
            rb = RandomBinningFeatures(n_grids=R, sigma=1.58, random_state=0)
            rb.warm_up(data.X_train)
            feat, _ = best_of(lambda: rb.fit_transform_binned(data.X_train))
            Z = rb.fit_transform_binned(data.X_train)
            solve, _ = best_of(lambda: ridge_cg(Z, y, 0.01, 50, 1e-3))
            results[threads] = (feat, solve)
        (f1, s1), (fn, sn) = results[1], results[cores]
        record("threads", f"ijcnn1 RB R={R} featurize, {cores} threads", fn, f1, "1 thread")
        record("threads", f"ijcnn1 RB R={R} CG solve, {cores} threads", sn, s1, "1 thread")
    numba.set_num_threads(cores)


if __name__ == "__main__":
    main()
