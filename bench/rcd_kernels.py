"""Benchmark: seconds per RCD epoch of each kernel, the 1-thread baselines of Fig. 6's speedups.

A speedup compares a tau-thread run with a 1-thread run; it measures parallelism only when the
1-thread run is the fastest sequential code. Per epoch, on the same features and the same
coordinate orders, interleaved so that drift of the machine hits all alike:

- `sequential`: the 1-thread kernel every speedup divides (Alg. 2's plain steps);
- `async-1`: the parallel kernel (atomic adds) on one thread;
- `async-tau`: the parallel kernel on tau threads.

RB (ijcnn1, R = 256, sigma 1.58) and RF (R = 256, sigma 0.3), squared hinge, lam 1e-5: the settings
of configs/fig6.yaml and bench/rcd_speedup.py. Rows go to bench/results/rcd-kernels.csv with
provenance (one run replaces the last one's rows).
Usage: RBREPRO_MIRROR=../shared/data/libsvm python -m bench.rcd_kernels
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numba
import numpy as np

from bench.results_csv import write_rows
from rbrepro.data.load import load_dataset
from rbrepro.features import RandomBinningFeatures
from rbrepro.features.random_fourier import RandomFourierFeatures
from rbrepro.solvers import _rcd_kernels as k
from rbrepro.solvers.rcd import prepare

OUT = Path("bench/results/rcd-kernels.csv")
LAM = 1e-5
KERNELS = ("sequential", "async-1", "async-tau")


def _epoch(cols, kind: str, tau: int, order, w, yhat, y) -> float:
    """One timed epoch of `kind` on the column structure `cols` (RB's CSC or RF's dense Z^T)."""
    code, curvature = k.SQUARED_HINGE, k.CURVATURE[k.SQUARED_HINGE]
    numba.set_num_threads(tau if kind == KERNELS[2] else 1)
    parts = tau if kind == KERNELS[2] else 1
    if cols.binned:
        args = (cols.col_ptr, cols.col_rows, cols.value, w, yhat, y, LAM, curvature, code)
        run = (lambda: k.binned_epoch(order, *args)) if kind == KERNELS[0] else \
            (lambda: k.binned_epoch_async(order, parts, *args))
    else:
        args = (cols.ZT, cols.col_sq, w, yhat, y, LAM, curvature, code)
        run = (lambda: k.dense_epoch(order, *args)) if kind == KERNELS[0] else \
            (lambda: k.dense_epoch_async(order, parts, *args))
    t0 = time.perf_counter()
    run()
    return time.perf_counter() - t0


def measure(cols, y, tau: int, epochs: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Seconds per epoch of each kernel over `epochs` shared coordinate orders, interleaved."""
    states = {kind: (np.zeros(cols.n_cols), np.zeros(cols.n_rows)) for kind in KERNELS}
    rng = np.random.default_rng(seed)
    for kind, (w, yhat) in states.items():  # compile, and one epoch to leave the all-zero start
        _epoch(cols, kind, tau, rng.permutation(cols.n_cols), w, yhat, y)
    times = {kind: [] for kind in KERNELS}
    for _ in range(epochs):
        order = rng.permutation(cols.n_cols)
        for kind, (w, yhat) in states.items():
            times[kind].append(_epoch(cols, kind, tau, order, w, yhat, y))
    return {kind: np.array(v) for kind, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rcd_kernels", description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    tau = numba.config.NUMBA_NUM_THREADS
    data = load_dataset("ijcnn1", mirror=os.environ.get("RBREPRO_MIRROR"), progress=False)
    y = np.where(data.y_train == data.y_train.max(), 1.0, -1.0)
    features = {"rb": RandomBinningFeatures(n_grids=256, sigma=1.58, random_state=0).fit_transform_binned,
                "rf": lambda X: RandomFourierFeatures(n_components=256, sigma=0.3, random_state=0).fit_transform(X)}
    rows = []
    for method, make in features.items():
        cols = prepare(make(data.X_train))
        times = measure(cols, y, tau, args.epochs)
        base = float(np.median(times[KERNELS[0]]))
        for kind in KERNELS:
            median = float(np.median(times[kind]))
            rows.append({"dataset": "ijcnn1", "method": method, "D": cols.n_cols, "kernel": kind,
                         "threads": tau if kind == KERNELS[2] else 1, "epochs": args.epochs,
                         "seconds_per_epoch": median, "min_s": float(times[kind].min()),
                         "max_s": float(times[kind].max()), "sequential_over_this": base / median})
            print(f"{method} {kind:17s} {median:.4f} s/epoch  (sequential / this: x{base / median:.2f})", flush=True)
    write_rows(args.out, rows, quiet_for=("seconds_per_epoch",))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
