"""Laplacian kernel matrices K(A, B) = exp(-sigma ||a - b||_1), computed in row blocks."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from rbrepro.features._laplacian_kernels import laplacian_matrix

BLOCK_ROWS = 4096


def as_dense(X) -> np.ndarray:
    """C-contiguous dense rows (kernel methods need them; a sparse block is densified)."""
    if sp.issparse(X):
        X = X.toarray()
    return np.ascontiguousarray(X)


def laplacian_kernel(A, B, sigma: float, out: np.ndarray | None = None) -> np.ndarray:
    """K(A, B) as float64 (A may be sparse: it is densified a block of rows at a time)."""
    B = as_dense(B)
    n = A.shape[0]
    if out is None:
        out = np.empty((n, B.shape[0]))
    for lo in range(0, n, BLOCK_ROWS):
        hi = min(n, lo + BLOCK_ROWS)
        laplacian_matrix(as_dense(A[lo:hi]), B, float(sigma), out[lo:hi])
    return out
