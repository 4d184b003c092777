"""Benchmark: speedup of parallel L1 RCD (paper Sec. 4, Fig. 6) on ijcnn1, RB vs RF.

Speedup = time(1 thread) / time(tau threads) to reach F(w) <= F* + eps (F(0) - F*),
eps = 1e-3, with F* the best objective of a long single-thread run (docs/design.md §2) - not
iterations per second. Squared-hinge loss; RB at R = 256, sigma = 1.58 and RF at R = 256,
sigma = 0.3 (its better sigma here); lam = 1e-5 (a sparse but useful model, recorded).
Both parallel variants are measured: the authors' asynchronous updates and the damped
synchronous rounds of eq. 29. Before them, the machine's own limit: scattered adds into one shared
array of N doubles, one thread against all, plain and atomic (RCD's yhat updates, without RCD).
Usage: RBREPRO_MIRROR=../shared/data/libsvm python bench/rcd_speedup.py
"""

from __future__ import annotations

import time

import numba
import numpy as np

from bench.record import record
from rbrepro.data.load import load_dataset
from rbrepro.features import RandomBinningFeatures
from rbrepro.features.random_fourier import RandomFourierFeatures
from rbrepro.solvers._rcd_kernels import atomic_add
from rbrepro.solvers.rcd import l1_rcd, prepare

LAM = 1e-5
EPS = 1e-3
LONG_EPOCHS = 300
MAX_EPOCHS = 400


def time_to(target, Z, y, columns, threads, variant):
    res = l1_rcd(Z, y, LAM, "squared_hinge", MAX_EPOCHS, threads, variant, seed=1, target=target, columns=columns)
    reached = [t for t, f, _ in res.trace if f <= target]
    return (reached[0] if reached else float("inf")), res


@numba.njit(parallel=True, cache=True)
def _scattered_adds(rows, yhat, parts, atomic):
    """Each of `parts` threads adds to yhat at its share of `rows`, as RCD's column steps do."""
    size = (rows.shape[0] + parts - 1) // parts
    for t in numba.prange(parts):
        for p in range(t * size, min(rows.shape[0], (t + 1) * size)):
            if atomic:
                atomic_add(yhat, rows[p], 1e-9)
            else:
                yhat[rows[p]] += 1e-9


def shared_writes_probe(n_rows: int, updates: int, threads: int) -> None:
    """The machine's limit for RCD's parallel steps: scattered adds into one shared array of n_rows
    doubles (ijcnn1's predictions), one thread against `threads`, plain and atomic. Where the cores
    hand cache lines back and forth slowly, more threads are slower, whatever the solver does."""
    rows = np.random.default_rng(0).integers(0, n_rows, updates).astype(np.int32)
    yhat = np.zeros(n_rows)
    for atomic in (False, True):
        seconds = {}
        for t in (1, threads):
            numba.set_num_threads(t)
            _scattered_adds(rows[:8], yhat, t, atomic)
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                _scattered_adds(rows, yhat, t, atomic)
                best = min(best, time.perf_counter() - t0)
            seconds[t] = best
        numba.set_num_threads(threads)
        kind = "atomic" if atomic else "plain"
        record("threads", f"{updates:,} scattered {kind} adds into {n_rows:,} shared doubles, {threads} threads",
               seconds[threads], seconds[1], "1 thread", note="the machine's limit for parallel RCD steps")


def main():
    data = load_dataset("ijcnn1")
    y = data.y_train
    cores = numba.config.NUMBA_NUM_THREADS
    feats = {
        "RB": lambda: RandomBinningFeatures(n_grids=256, sigma=1.58, random_state=0).fit_transform_binned(data.X_train),
        "RF": lambda: RandomFourierFeatures(n_components=256, sigma=0.3, random_state=0).fit_transform(data.X_train),
    }
    print(f"ijcnn1, squared hinge, lam = {LAM}, eps = {EPS}; threads available: {cores}")
    if cores > 1:  # one RB epoch at R = 256 adds N R = 9.0 M times into the N predictions
        shared_writes_probe(len(y), len(y) * 256, cores)
    for name, make in feats.items():
        Z = make()
        cols = prepare(Z)
        l1_rcd(Z, y, LAM, "squared_hinge", 1, 2, "async", columns=cols)  # compile / load all kernels
        l1_rcd(Z, y, LAM, "squared_hinge", 1, 2, "sync", columns=cols)
        long = l1_rcd(Z, y, LAM, "squared_hinge", LONG_EPOCHS, 1, seed=0, columns=cols)
        f_star, f0 = long.objective, long.trace[0][1]
        target = f_star + EPS * (f0 - f_star)
        t1, r1 = time_to(target, Z, y, cols, 1, "async")
        epoch_s = r1.seconds / max(1, r1.epochs)
        print(f"\n{name}: D = {Z.shape[1]}, F(0) = {f0:.5f}, F* = {f_star:.6f} ({LONG_EPOCHS} epochs), "
              f"nnz(w*) = {np.count_nonzero(long.coef)}; 1 thread: {epoch_s:.3f} s/epoch")
        print(f"  1 thread          : {t1:7.3f} s to target ({r1.epochs} epochs)")
        for variant in ("async", "sync"):
            for threads in range(2, cores + 1):
                tt, rt = time_to(target, Z, y, cols, threads, variant)
                if tt == float("inf"):
                    print(f"  {threads} threads {variant:5s}: target not reached in {MAX_EPOCHS} epochs "
                          f"({rt.seconds:.3f} s, damping {rt.damping:.3g}) -> no speedup")
                    continue
                print(f"  {threads} threads {variant:5s}: {tt:7.3f} s ({rt.epochs} epochs, damping "
                      f"{rt.damping:.3g}) -> speedup x{t1 / tt:.2f}")
                record("threads", f"ijcnn1 {name} RCD time to objective, {threads} threads {variant}", tt, t1,
                       "1 thread", note=f"D={Z.shape[1]}, damping {rt.damping:.3g}")


if __name__ == "__main__":
    main()
