"""Benchmark: the paper's largest run, SUSY at R = 1024, on the registered SUSY-shaped set here.

`susy_shape` (rbrepro.data.synthetic: 4,000,000 training and 1,000,000 test rows, 18 features,
generated from a seed on first use and cached) trained by RB ridge at R = 1024 with the authors'
own sigma for that run (their Fig. 5 data: 0.56), lambda 0.01, 50 CG iterations, all threads.
Prints featurize, CG and predict times, the peak memory of the fit and predict, D and the test
accuracy (the synthetic set's, not SUSY's), beside the authors' figures for the real SUSY at the
same R and sigma: their train time (16 threads) and D, read from their figure data. The column
ids alone take 4 N R bytes (16.4 GB at N = 4 M, R = 1024); the memory model refuses the run up
front if it cannot fit under --memory-limit.

    python -m bench.susy_scale [--R R] [--sigma S] [--memory-limit GB]    (default 1024, 0.56, 22)
"""

from __future__ import annotations

import argparse
import os
import time

import numba
import numpy as np

from bench.record import record
from rbrepro.data.load import load_dataset
from rbrepro.memory import PeakMemory
from rbrepro.models import RandomBinningClassifier
from rbrepro.published import published_table


def authors_run(R: int) -> tuple[float, float, float]:
    """(sigma, train seconds, D) of the authors' SUSY RB point at R in their Fig. 5 data."""
    table = published_table()
    row = table[(table["panel"] == "fig5") & (table["dataset"] == "SUSY") & (table["method"] == "rb")
                & (table["R"] == R)]
    if row.empty:
        raise SystemExit(f"the authors' Fig. 5 data has no SUSY RB point at R = {R} (they ran 8 ... 1024)")
    return float(row["sigma"].iloc[0]), float(row["train_s"].iloc[0]), float(row["D"].iloc[0])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--R", type=int, default=1024)
    parser.add_argument("--sigma", type=float, default=None, help="default: the authors' sigma at this R")
    parser.add_argument("--memory-limit", type=float, default=22.0)
    args = parser.parse_args(argv)
    their_sigma, their_train_s, their_D = authors_run(args.R)
    sigma = their_sigma if args.sigma is None else args.sigma
    t0 = time.perf_counter()
    data = load_dataset("susy_shape", os.environ.get("RBREPRO_DATA"), progress=False)
    load_s = time.perf_counter() - t0
    model = RandomBinningClassifier(n_grids=args.R, sigma=sigma, lam=0.01, maxit=50, tol=1e-12, random_state=0,
                                    memory_limit_gb=args.memory_limit)
    model.warm_up(data.X_train[:8])  # compile the kernels outside the timing
    with PeakMemory() as peak:
        model.fit(data.X_train, data.y_train)
        t0 = time.perf_counter()
        accuracy = 100.0 * float(np.mean(model.predict(data.X_test) == data.y_test))
        predict_s = time.perf_counter() - t0
    n_train = data.X_train.shape[0]
    note = (f"susy_shape N={n_train} train / {data.X_test.shape[0]} test, d=18, R={args.R}, sigma={sigma:g}, "
            f"D={model.n_columns_} (authors' SUSY: {their_D:.0f}), featurize {model.featurize_s_:.1f} s, "
            f"CG {model.solve_s_:.1f} s ({model.cg_iterations_} it), predict {predict_s:.1f} s, "
            f"peak {peak.peak_mb / 1024:.2f} GB, test accuracy {accuracy:.2f} % (synthetic), ids "
            f"{4 * n_train * args.R / 1e9:.1f} GB, {numba.get_num_threads()} threads; load (cached) {load_s:.1f} s")
    record("susy_scale", f"SUSY-shaped R={args.R}: train (featurize + CG)", model.train_s_, their_train_s,
           f"authors' SUSY R={args.R} train, 16 threads (their Fig. 5 data)", note=note)


if __name__ == "__main__":
    main()
