"""Ridge by a direct solve of the normal equations (Z^T Z + lam I) W = Z^T Y.

Dense Z (Random Fourier, Nystrom): the R x R Gram matrix in float64 and a Cholesky
solve, as the authors' library did for RF. Sparse Z (Random Binning): the D x D sparse
Gram matrix and a sparse LU factorization (SuperLU), practical only for moderate D.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg
from threadpoolctl import threadpool_limits

BLOCK_ROWS = 8192
#: the largest matrix (rows) OpenBLAS factors on several threads. Its threaded Cholesky (potrf
#: through its threaded syrk; scipy's OpenBLAS 0.3.30, SkylakeX kernels) dies of SIGSEGV on a
#: float32 matrix of 32,561 rows at 2 threads within seconds, while 26,048 rows pass; a larger
#: factorization and its solves run on one BLAS thread (slower, and it finishes).
THREADED_FACTOR_MAX_N = 24_576


@contextmanager
def factor_threads(n: int):
    """BLAS threads for factoring (and solving with) an n x n matrix: as set around the call up to
    THREADED_FACTOR_MAX_N rows, one above it."""
    if n <= THREADED_FACTOR_MAX_N:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def dense_gram(Z: np.ndarray) -> np.ndarray:
    """Z^T Z in float64, accumulated over row blocks (Z may be float32)."""
    G = np.zeros((Z.shape[1], Z.shape[1]))
    for lo in range(0, Z.shape[0], BLOCK_ROWS):
        block = np.asarray(Z[lo:lo + BLOCK_ROWS], dtype=np.float64)
        G += block.T @ block
    return G


def ridge_direct(Z, Y: np.ndarray, lam: float) -> np.ndarray:
    """W = (Z^T Z + lam I)^{-1} Z^T Y for a dense Z, or a sparse operator (solvers.operator: RB's to_csr)."""
    Y2 = np.asarray(Y, dtype=np.float64).reshape(Z.shape[0], -1)
    if not isinstance(Z, np.ndarray):
        S = Z.to_csr()
        G = (S.T @ S).tocsc() + lam * sp.identity(S.shape[1], format="csc")
        lu = scipy.sparse.linalg.splu(G)
        return lu.solve(np.asarray(S.T @ Y2))
    return solve_gram(*dense_gram_rhs(Z, Y2), lam)


def dense_gram_rhs(Z: np.ndarray, Y2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Z^T Z, Z^T Y) in float64 for a dense Z (sums over rows: a distributed fit adds them up over
    the workers' row blocks)."""
    B = np.asarray(Z.T @ Y2, dtype=np.float64) if Z.dtype == np.float64 else \
        sum((np.asarray(Z[lo:lo + BLOCK_ROWS], np.float64).T @ Y2[lo:lo + BLOCK_ROWS]
             for lo in range(0, Z.shape[0], BLOCK_ROWS)), np.zeros((Z.shape[1], Y2.shape[1])))
    return dense_gram(Z), B


def solve_gram(G: np.ndarray, B: np.ndarray, lam: float) -> np.ndarray:
    """W = (G + lam I)^{-1} B by Cholesky (G is overwritten: lam is added to its diagonal)."""
    G[np.diag_indices_from(G)] += lam
    with factor_threads(G.shape[0]):
        try:
            return scipy.linalg.cho_solve(scipy.linalg.cho_factor(G, lower=True, check_finite=False), B,
                                          check_finite=False)
        except np.linalg.LinAlgError:  # lam = 0 and a singular Gram matrix: least squares instead
            return scipy.linalg.lstsq(G, B)[0]


MATVEC_ROWS = 4096


def _spd_matvec(K32: np.ndarray, lam: float, V: np.ndarray) -> np.ndarray:
    """(K32 + lam I) V in float64: each row block of the float32 matrix is widened before the product,
    so nothing but the stored entries is rounded to float32."""
    out = np.empty_like(V)
    for lo in range(0, K32.shape[0], MATVEC_ROWS):
        out[lo:lo + MATVEC_ROWS] = K32[lo:lo + MATVEC_ROWS].astype(np.float64) @ V
    out += lam * V
    return out


def refined_cholesky_solve(K32: np.ndarray, lam: float, B: np.ndarray, tol: float = 1e-10,
                           maxit: int = 50) -> tuple[np.ndarray, int, float]:
    """Solve (K32 + lam I) C = B to float64 accuracy at about half the cost of a float64 Cholesky.

    The factorization is float32 (a copy of K32: twice as fast as float64, the same memory as
    one float64 matrix), used as the preconditioner of a conjugate-gradient iteration whose
    residuals are float64 (Higham, *Accuracy and Stability of Numerical Algorithms*, §12.1, and
    mixed-precision PCG). Stops when every column's relative residual is at most `tol`.
    Returns (C, iterations, largest relative residual). Raises LinAlgError if the float32
    factorization fails (lam too small for single precision): the caller falls back to float64.
    """
    B = np.asarray(B, dtype=np.float64).reshape(K32.shape[0], -1)
    F = K32.T.copy(order="K")  # K32 is symmetric: its transpose is the Fortran-order array LAPACK wants
    F[np.diag_indices_from(F)] += np.float32(lam)
    with factor_threads(F.shape[0]):
        factor = scipy.linalg.cho_factor(F, lower=False, overwrite_a=True, check_finite=False)

    def precondition(R: np.ndarray, factor=factor) -> np.ndarray:
        with factor_threads(factor[0].shape[0]):
            return scipy.linalg.cho_solve(factor, R.astype(np.float32), check_finite=False).astype(np.float64)

    norm_b = np.maximum(np.linalg.norm(B, axis=0), np.finfo(float).tiny)
    C = precondition(B)
    Rs = B - _spd_matvec(K32, lam, C)
    rel = np.linalg.norm(Rs, axis=0) / norm_b
    Zs = precondition(Rs)
    P = Zs.copy()
    rz = np.einsum("ij,ij->j", Rs, Zs)
    it = 0
    while rel.max() > tol and it < maxit:
        it += 1
        AP = _spd_matvec(K32, lam, P)
        pap = np.einsum("ij,ij->j", P, AP)
        alpha = np.where(pap > 0, rz / np.where(pap > 0, pap, 1.0), 0.0)
        C += alpha * P
        Rs -= alpha * AP
        rel = np.linalg.norm(Rs, axis=0) / norm_b
        Zs = precondition(Rs)
        rz_new = np.einsum("ij,ij->j", Rs, Zs)
        beta = np.where(rz > 0, rz_new / np.where(rz > 0, rz, 1.0), 0.0)
        P = Zs + beta * P
        rz = rz_new
    del F, factor, precondition  # free the float32 factor before the last float64 product
    true_rel = np.linalg.norm(B - _spd_matvec(K32, lam, C), axis=0) / norm_b
    return C, it, float(true_rel.max())
