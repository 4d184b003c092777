"""Benchmark: preconditioned CG (--solver pcg) vs plain CG (the authors' solver) on RB ridge.

Iterations and seconds to the same relative residual ||r|| / ||Z^T y||, in one process,
plain CG as the baseline. The preconditioner is (diag(Z^T Z) + lam)^(1/2) (solvers.cg).
Usage: RBREPRO_MIRROR=../shared/data/libsvm python bench/pcg_vs_cg.py
"""

from __future__ import annotations

import time

import numpy as np

from bench.record import record
from rbrepro.data.load import load_dataset
from rbrepro.features import RandomBinningFeatures
from rbrepro.solvers.cg import ridge_cg

CASES = [("ijcnn1", 1.58, 256, 0.01), ("cadata", 2.0, 256, 0.01)]
TOLS = (1e-3, 1e-4, 1e-6)


def main():
    for name, sigma, R, lam in CASES:
        data = load_dataset(name)
        Z = RandomBinningFeatures(n_grids=R, sigma=sigma, random_state=0).fit_transform_binned(data.X_train)
        y = np.where(data.y_train == data.y_train.max(), 1.0, -1.0) if data.task == "binary" else data.y_train
        ridge_cg(Z, y, lam, 2, 1e-3, preconditioned=True)  # warm the kernels
        print(f"{name}: RB R={R} sigma={sigma} lam={lam}, D={Z.n_columns}")
        for tol in TOLS:
            out = {}
            for preconditioned in (False, True):
                t0 = time.perf_counter()
                res = ridge_cg(Z, y, lam, 5000, tol, preconditioned=preconditioned)
                out[preconditioned] = (res.iterations, time.perf_counter() - t0, res.converged)
            (ic, tc, _), (ip, tp, conv) = out[False], out[True]
            record("pcg", f"{name} RB R={R} PCG to residual {tol:g}", tp, tc, "plain CG",
                   note=f"iterations {ip} vs {ic}")
            print(f"  tol {tol:g}: CG {ic} it {tc:.2f} s | PCG {ip} it {tp:.2f} s{'' if conv else ' (cap)'}"
                  f" | ratio (CG/PCG) time x{tc / tp:.2f}")


if __name__ == "__main__":
    main()
