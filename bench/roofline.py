"""Benchmark: how close RB's CG comes to the machine's memory bandwidth.

Measured in one process, on ijcnn1's training split:
1. the machine's limit: a STREAM-like triad a = b + s c (numba, all threads) over float64 arrays
   as large together as Z's column ids, best of 5, counting 3 x 8 bytes per element;
2. one CG iteration on RB: `ridge_cg` with a fixed number of iterations, per iteration, and the
   bytes it must stream at least: Z's int32 ids read twice (the gather Z p and the scatter Z^T v),
   plus the N-vector written and read and the D-vectors CG updates (p, r, w, Ap: 5 passes);
3. featurize's throughput in (row, grid, feature) steps per second.

The fraction reached is the iteration's bandwidth over the triad's: near 1, the code is at the
machine's floor and only fewer bytes (or fewer iterations) can make it faster.

    python -m bench.roofline [R ...]      (default R = 64 256 1024)

Needs the mirror: RBREPRO_MIRROR=../shared/data/libsvm.
"""

from __future__ import annotations

import sys
import time

import numba as nb
import numpy as np

from bench.record import record
from rbrepro.data.load import load_dataset
from rbrepro.features import RandomBinningFeatures
from rbrepro.solvers import ridge_cg

ITERATIONS = 20
REPEATS = 5


@nb.njit(parallel=True, cache=True)
def triad(a, b, c, s):
    for i in nb.prange(a.shape[0]):
        a[i] = b[i] + s * c[i]


def triad_bandwidth(n_bytes: int) -> float:
    """Bytes per second of the triad over three float64 arrays totalling about n_bytes."""
    n = max(1 << 20, n_bytes // 24)
    a, b, c = np.zeros(n), np.random.default_rng(0).random(n), np.random.default_rng(1).random(n)
    triad(a, b, c, 3.0)  # compile
    best = min(_timed(lambda: triad(a, b, c, 3.0)) for _ in range(REPEATS))
    return 24.0 * n / best


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv: list[str]) -> int:
    Rs = [int(a) for a in argv] or [64, 256, 1024]
    data = load_dataset("ijcnn1", progress=False)
    X, y = data.X_train, np.where(data.y_train > 0, 1.0, -1.0)
    n, d = X.shape
    print(f"ijcnn1: N = {n}, d = {d}, threads = {nb.get_num_threads()}")
    for R in Rs:
        feats = RandomBinningFeatures(n_grids=R, sigma=1.58, random_state=0)
        feats.warm_up(X)
        t_feat = min(_timed(lambda: feats.fit_transform_binned(X)) for _ in range(3))
        Z = feats.fit_transform_binned(X)
        D = Z.n_columns
        ridge_cg(Z, y, 0.01, maxit=2, tol=1e-300)  # compile
        t_iter = min(_timed(lambda: ridge_cg(Z, y, 0.01, maxit=ITERATIONS, tol=1e-300))
                     for _ in range(REPEATS)) / ITERATIONS
        bytes_iter = 2 * 4 * n * R + 2 * 8 * n + 5 * 8 * D
        limit = triad_bandwidth(4 * n * R)
        achieved = bytes_iter / t_iter
        record("roofline", f"R={R} CG iteration bandwidth", achieved / 1e9, limit / 1e9, "triad (machine limit)",
               unit="GB/s", note=f"{t_iter * 1e3:.3f} ms per iteration, {bytes_iter / 1e6:.1f} MB streamed, "
                                 f"D = {D}; fraction of the limit {achieved / limit:.2f}")
        record("roofline", f"R={R} featurize throughput", n * R * d / t_feat / 1e9, unit="G steps/s",
               note=f"{t_feat:.3f} s for N x R x d = {n * R * d:.3g} (row, grid, feature) steps")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
