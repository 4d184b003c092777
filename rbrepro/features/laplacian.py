"""Laplacian kernel matrices K(A, B) = exp(-sigma * distance(a, b)), computed in row blocks.

Two distances (docs/design.md §2): "l1", ||a - b||_1, the product kernel Random Binning approximates,
and "euclidean", ||a - b||_2, the isotropic kernel of the authors' baselines (§2a).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from rbrepro.features.kernels import kernel_spec

BLOCK_ROWS = 4096


def check_kernel(kernel) -> str:
    """`kernel`, once it names a declared kernel (features.kernels)."""
    return kernel_spec(kernel).name


def as_dense(X) -> np.ndarray:
    """C-contiguous dense rows (kernel methods need them; a sparse block is densified)."""
    if sp.issparse(X):
        X = X.toarray()
    return np.ascontiguousarray(X)


def laplacian_kernel(A, B, sigma: float, out: np.ndarray | None = None, kernel: str = "l1") -> np.ndarray:
    """K(A, B) as float64 (A may be sparse: it is densified a block of rows at a time)."""
    matrix = kernel_spec(kernel).matrix
    B = as_dense(B)
    n = A.shape[0]
    if out is None:
        out = np.empty((n, B.shape[0]))
    for lo in range(0, n, BLOCK_ROWS):
        hi = min(n, lo + BLOCK_ROWS)
        matrix(as_dense(A[lo:hi]), B, float(sigma), out[lo:hi])
    return out
