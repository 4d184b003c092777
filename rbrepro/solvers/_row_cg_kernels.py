"""numba kernels for the vector updates of CG run in row space (solvers.cg, `ridge_cg_rows`).

There every D-length vector of plain CG is Z^T of an N-length one (p = Z^T a, r = Z^T s, W = Z^T c), and
the updates and dots run on (N, C) arrays: two passes a step, split across threads in blocks of
`_cg_kernels.ROW_BLOCK` rows, each block's partial sums added row by row and then block by block
(the same bits on any number of threads). Plain-numpy references: `reference_rows_step`,
`reference_rows_direction`; the order of the sums is `_cg_kernels.reference_in_order`'s for several
targets.
"""

import numba as nb
import numpy as np

from rbrepro.solvers._cg_kernels import _block_rows, _block_sums, _sum_blocks


@nb.njit(parallel=True, cache=True)
def rows_step(c, s, y, a, z, u, alpha, lam, sy):
    """c += alpha a; s -= alpha (z + lam a); y -= alpha (u + lam z) (per column; y = Z Z^T s is kept
    alongside s, u = Z Z^T z); sy = s^T y afterwards, the new residual's |r|^2."""
    n, n_cols = s.shape
    parts = _block_sums(n, n_cols)
    for b in nb.prange(parts.shape[0]):
        lo, hi = _block_rows(b, n)
        for j in range(lo, hi):
            for k in range(n_cols):
                al = alpha[k]
                c[j, k] += al * a[j, k]
                sj = s[j, k] - al * (z[j, k] + lam * a[j, k])
                yj = y[j, k] - al * (u[j, k] + lam * z[j, k])
                s[j, k] = sj
                y[j, k] = yj
                parts[b, k] += sj * yj
    _sum_blocks(parts, n_cols, sy)


@nb.njit(parallel=True, cache=True)
def rows_direction(a, z, s, y, beta, zz, az):
    """a = s + beta a; z = y + beta z (per column: the new direction and its Z Z^T image); zz = z^T z
    and az = a^T z afterwards, so the next step's p^T (Z^T Z + lam I) p = zz + lam az."""
    n, n_cols = a.shape
    parts, aparts = _block_sums(n, n_cols), _block_sums(n, n_cols)
    for b in nb.prange(parts.shape[0]):
        lo, hi = _block_rows(b, n)
        for j in range(lo, hi):
            for k in range(n_cols):
                aj = s[j, k] + beta[k] * a[j, k]
                zj = y[j, k] + beta[k] * z[j, k]
                a[j, k] = aj
                z[j, k] = zj
                parts[b, k] += zj * zj
                aparts[b, k] += aj * zj
    _sum_blocks(parts, n_cols, zz)
    _sum_blocks(aparts, n_cols, az)


def reference_rows_step(c, s, y, a, z, u, alpha, lam):
    """Plain numpy for `rows_step`: updates in place, returns s^T y."""
    c += alpha * a
    s -= alpha * (z + lam * a)
    y -= alpha * (u + lam * z)
    return np.einsum("ij,ij->j", s, y)


def reference_rows_direction(a, z, s, y, beta):
    """Plain numpy for `rows_direction`: updates in place, returns (z^T z, a^T z)."""
    a *= beta
    a += s
    z *= beta
    z += y
    return np.einsum("ij,ij->j", z, z), np.einsum("ij,ij->j", a, z)
