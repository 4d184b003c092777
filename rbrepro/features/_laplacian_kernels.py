"""numba kernel for Laplacian kernel matrices exp(-sigma ||a - b||_1).

L1 distances have no BLAS shortcut (unlike the Gaussian kernel's ||a||^2 - 2ab + ||b||^2),
so this loop is the cost of Nystrom's K_nm, the block leaves and the exact kernel.
Reference: scikit-learn's `laplacian_kernel(A, B, gamma=sigma)`.
"""

import numba as nb
import numpy as np


@nb.njit(parallel=True, cache=True, fastmath=True)
def laplacian_matrix(A, B, sigma, out):
    """out[i, j] = exp(-sigma * sum_k |A[i, k] - B[j, k]|) (rows of A split across threads)."""
    n, d = A.shape
    m = B.shape[0]
    for i in nb.prange(n):
        for j in range(m):
            s = 0.0
            for k in range(d):
                s += abs(np.float64(A[i, k]) - np.float64(B[j, k]))
            out[i, j] = np.exp(-sigma * s)


@nb.njit(parallel=True, cache=True, fastmath=True)
def euclidean_laplacian_matrix(A, B, sigma, out):
    """out[i, j] = exp(-sigma * ||A[i] - B[j]||_2) (the authors' baselines' IsotropicLaplace,
    with sigma = 1 / width). Differences are summed directly, not as ||a||^2 - 2ab + ||b||^2,
    so near-duplicate rows get distance ~0, not the square root of a rounding error."""
    n, d = A.shape
    m = B.shape[0]
    for i in nb.prange(n):
        for j in range(m):
            s = 0.0
            for k in range(d):
                t = np.float64(A[i, k]) - np.float64(B[j, k])
                s += t * t
            out[i, j] = np.exp(-sigma * np.sqrt(s))
