"""Ridge by a direct solve of the normal equations (Z^T Z + lam I) W = Z^T Y.

Dense Z (Random Fourier, Nystrom): the R x R Gram matrix in float64 and a Cholesky
solve, as the authors' library did for RF. Sparse Z (Random Binning): the D x D sparse
Gram matrix and a sparse LU factorization (SuperLU), practical only for moderate D.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg

BLOCK_ROWS = 8192


def dense_gram(Z: np.ndarray) -> np.ndarray:
    """Z^T Z in float64, accumulated over row blocks (Z may be float32)."""
    G = np.zeros((Z.shape[1], Z.shape[1]))
    for lo in range(0, Z.shape[0], BLOCK_ROWS):
        block = np.asarray(Z[lo:lo + BLOCK_ROWS], dtype=np.float64)
        G += block.T @ block
    return G


def ridge_direct(Z, Y: np.ndarray, lam: float) -> np.ndarray:
    """W = (Z^T Z + lam I)^{-1} Z^T Y for dense Z or an object with .to_csr() (RB)."""
    Y2 = np.asarray(Y, dtype=np.float64).reshape(Z.shape[0], -1)
    if hasattr(Z, "to_csr"):
        S = Z.to_csr()
        G = (S.T @ S).tocsc() + lam * sp.identity(S.shape[1], format="csc")
        lu = scipy.sparse.linalg.splu(G)
        return lu.solve(np.asarray(S.T @ Y2))
    G = dense_gram(Z)
    G[np.diag_indices_from(G)] += lam
    B = np.asarray(Z.T @ Y2, dtype=np.float64) if Z.dtype == np.float64 else \
        sum(np.asarray(Z[lo:lo + BLOCK_ROWS], np.float64).T @ Y2[lo:lo + BLOCK_ROWS]
            for lo in range(0, Z.shape[0], BLOCK_ROWS))
    try:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(G, lower=True, check_finite=False), B,
                                      check_finite=False)
    except np.linalg.LinAlgError:  # lam = 0 and a singular Gram matrix: least squares instead
        return scipy.linalg.lstsq(G, B)[0]


class DenseOperator:
    """A dense feature matrix seen by CG: Z W and Z^T V through BLAS."""

    def __init__(self, Z: np.ndarray):
        self.Z = Z
        self.shape = Z.shape

    def matvec(self, W):
        return np.asarray(self.Z @ W.astype(self.Z.dtype, copy=False), dtype=np.float64)

    def rmatvec(self, V):
        return np.asarray(self.Z.T @ V.astype(self.Z.dtype, copy=False), dtype=np.float64)
