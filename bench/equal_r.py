"""Benchmark: costs at equal R on the same data, same process.

- RB featurize vs RF featurize (RF: one float32 BLAS product plus a cosine);
- the CG mat-vec pair Z^T (Z p) on RB's compact layout vs scipy.sparse CSR of the same Z.
Usage: RBREPRO_MIRROR=../shared/data/libsvm python -m bench.equal_r
"""

from __future__ import annotations

import numpy as np

from bench.record import record
from bench.timing import fastest
from rbrepro.data.load import load_dataset
from rbrepro.features import RandomBinningFeatures
from rbrepro.features.random_fourier import RandomFourierFeatures


def best_of(fn, repeats=3):
    return fastest(fn, repeats, warm=False)


def main():
    for name, sigma in (("ijcnn1", 1.58), ("mnist", 1.58)):
        data = load_dataset(name)
        X = data.X_train
        RandomBinningFeatures(n_grids=2, sigma=sigma, random_state=0).warm_up(X)
        for R in (256, 1024):
            rb = RandomBinningFeatures(n_grids=R, sigma=sigma, random_state=0)
            rf = RandomFourierFeatures(n_components=R, sigma=sigma, random_state=0).fit(X)
            t_rb = best_of(lambda: rb.fit_transform_binned(X))
            t_rf = best_of(lambda: rf.transform(X))
            record("equal_r", f"{name} featurize R={R}: RB", t_rb, t_rf, "RF featurize (BLAS)",
                   note=f"N={X.shape[0]}, d={X.shape[1]}, D_RB={rb.n_bins_}")
    data = load_dataset("ijcnn1")
    for R in (256, 1024):
        Z = RandomBinningFeatures(n_grids=R, sigma=1.58, random_state=0).fit_transform_binned(data.X_train)
        p = np.random.default_rng(0).random(Z.n_columns)
        Z.rmatvec(Z.matvec(p))
        csr = Z.to_csr()
        csr_t = csr.T.tocsr()
        t_ours = best_of(lambda: Z.rmatvec(Z.matvec(p)), 10)
        t_csr = best_of(lambda: csr_t @ (csr @ p), 10)
        record("equal_r", f"ijcnn1 Z^T(Z p) R={R}: compact layout", t_ours, t_csr, "scipy CSR",
               note=f"D={Z.n_columns}, nnz={Z.nnz}")


if __name__ == "__main__":
    main()
