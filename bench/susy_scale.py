"""Benchmark: the paper's largest run, SUSY at R = 1024, on a SUSY-shaped synthetic set here
(issue 16, item 5).

5,000,000 x 18 seeded Gaussian-mixture rows (bench.growth's generator, min-max scaled like
SUSY), 4,000,000 train / 1,000,000 test; RB ridge classifier at R = 1024, lambda 0.01, 50 CG
iterations, all threads. sigma puts D near N R / 200 (bisection on the training rows). Prints
featurize, CG and predict times, the peak memory of the whole fit and predict, test
accuracy, and the memory model: the column ids take 4 N R bytes (16.4 GB at N = 4 M, R =
1024), the CG vectors about 7 x 8 D bytes. The authors' SUSY R = 1024 run took 2,783 s on
16 threads (as issue 16 reports it).

    python -m bench.susy_scale [--rows N] [--R R] [--memory-limit GB]    (default 5000000, 1024, 22)
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from bench.growth import mixture, sigma_for_share
from bench.record import record
from rbrepro.memory import PeakMemory
from rbrepro.models import RandomBinningClassifier

AUTHORS_SUSY_R1024_S = 2783.0  # their train time, 16 threads
SHARE = 1 / 200


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--R", type=int, default=1024)
    parser.add_argument("--memory-limit", type=float, default=22.0)
    args = parser.parse_args(argv)
    n_train = args.rows * 4 // 5
    X, y = mixture(args.rows, 18)
    X_train, y_train, X_test, y_test = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    sigma = sigma_for_share(X_train, SHARE)
    model = RandomBinningClassifier(n_grids=args.R, sigma=sigma, lam=0.01, maxit=50, tol=1e-12, random_state=0,
                                    memory_limit_gb=args.memory_limit)
    model.warm_up(X_train[:8])  # compile the kernels outside the timing
    with PeakMemory() as peak:
        model.fit(X_train, y_train)
        t0 = time.perf_counter()
        accuracy = 100.0 * float(np.mean(model.predict(X_test) == y_test))
        predict_s = time.perf_counter() - t0
    note = (f"N={n_train} train / {len(y_test)} test, d=18, R={args.R}, sigma={sigma:.3g}, D={model.n_columns_}, "
            f"featurize {model.featurize_s_:.1f} s, CG {model.solve_s_:.1f} s ({model.cg_iterations_} it), "
            f"predict {predict_s:.1f} s, peak {peak.peak_mb / 1024:.2f} GB, test accuracy {accuracy:.2f} %, "
            f"ids {4 * n_train * args.R / 1e9:.1f} GB, {numba.get_num_threads()} threads")
    record("susy_scale", f"SUSY-shaped R={args.R}: train (featurize + CG)", model.train_s_, AUTHORS_SUSY_R1024_S,
           "authors' SUSY R=1024 train, 16 threads (paper)", note=note)


if __name__ == "__main__":
    main()
