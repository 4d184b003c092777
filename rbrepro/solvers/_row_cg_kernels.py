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


@nb.njit(inline="always")
def _step_row(c, s, y, a, z, u, al, lam, k):
    """Row k of one target's `rows_step`; returns the new s y."""
    c[k] += al * a[k]
    sk = s[k] - al * (z[k] + lam * a[k])
    yk = y[k] - al * (u[k] + lam * z[k])
    s[k] = sk
    y[k] = yk
    return sk * yk


@nb.njit(inline="always")
def _direction_row(a, z, s, y, be, k):
    """Row k of one target's `rows_direction`; returns the new (z z, a z)."""
    ak = s[k] + be * a[k]
    zk = y[k] + be * z[k]
    a[k] = ak
    z[k] = zk
    return zk * zk, ak * zk


@nb.njit(inline="always")
def _one_target_step(c, s, y, a, z, u, al, lam):
    """rows_step on one block's 1-d views of one target, and the block's sum of s y in four lanes (lane k
    over rows k, k + 4, ...; a last part of four in lane 0; added (0 + 1) + (2 + 3)), as `_cg_kernels`'
    one-target blocks sum: four chains of adds that overlap."""
    t = [0.0, 0.0, 0.0, 0.0]
    rows = s.shape[0]
    whole = rows - rows % 4
    for k0 in range(0, whole, 4):
        for lane in range(4):
            t[lane] += _step_row(c, s, y, a, z, u, al, lam, k0 + lane)
    for k in range(whole, rows):
        t[0] += _step_row(c, s, y, a, z, u, al, lam, k)
    return (t[0] + t[1]) + (t[2] + t[3])


@nb.njit(inline="always")
def _one_target_direction(a, z, s, y, be):
    """rows_direction on one block's 1-d views of one target: (z^T z, a^T z) of the block, each in the four
    lanes of `_one_target_step`."""
    q = [0.0, 0.0, 0.0, 0.0]
    w = [0.0, 0.0, 0.0, 0.0]
    rows = a.shape[0]
    whole = rows - rows % 4
    for k0 in range(0, whole, 4):
        for lane in range(4):
            dq, dw = _direction_row(a, z, s, y, be, k0 + lane)
            q[lane] += dq
            w[lane] += dw
    for k in range(whole, rows):
        dq, dw = _direction_row(a, z, s, y, be, k)
        q[0] += dq
        w[0] += dw
    return (q[0] + q[1]) + (q[2] + q[3]), (w[0] + w[1]) + (w[2] + w[3])


@nb.njit(parallel=True, cache=True)
def rows_step(c, s, y, a, z, u, alpha, lam, sy):
    """c += alpha a; s -= alpha (z + lam a); y -= alpha (u + lam z) (per column; y = Z Z^T s is kept
    alongside s, u = Z Z^T z); sy = s^T y afterwards, the new residual's |r|^2."""
    n, n_cols = s.shape
    parts = _block_sums(n, n_cols)
    if n_cols == 1:  # 1-d views indexed from 0, sums in four lanes (`_one_target_step`)
        c1, s1, y1, a1, z1, u1 = c.reshape(n), s.reshape(n), y.reshape(n), a.reshape(n), z.reshape(n), u.reshape(n)
        for b in nb.prange(parts.shape[0]):
            lo, hi = _block_rows(b, n)
            parts[b, 0] = _one_target_step(c1[lo:hi], s1[lo:hi], y1[lo:hi], a1[lo:hi], z1[lo:hi], u1[lo:hi],
                                           alpha[0], lam)
        _sum_blocks(parts, 1, sy)
        return
    for b in nb.prange(parts.shape[0]):
        lo, hi = _block_rows(b, n)
        for j in range(lo, hi):  # row j's targets, each a row of `_step_row` on row j's views
            cj, sj, yj, aj, zj, uj = c[j], s[j], y[j], a[j], z[j], u[j]
            for k in range(n_cols):
                parts[b, k] += _step_row(cj, sj, yj, aj, zj, uj, alpha[k], lam, k)
    _sum_blocks(parts, n_cols, sy)


@nb.njit(parallel=True, cache=True)
def rows_direction(a, z, s, y, beta, zz, az):
    """a = s + beta a; z = y + beta z (per column: the new direction and its Z Z^T image); zz = z^T z
    and az = a^T z afterwards, so the next step's p^T (Z^T Z + lam I) p = zz + lam az."""
    n, n_cols = a.shape
    parts, aparts = _block_sums(n, n_cols), _block_sums(n, n_cols)
    if n_cols == 1:
        a1, z1, s1, y1 = a.reshape(n), z.reshape(n), s.reshape(n), y.reshape(n)
        for b in nb.prange(parts.shape[0]):
            lo, hi = _block_rows(b, n)
            parts[b, 0], aparts[b, 0] = _one_target_direction(a1[lo:hi], z1[lo:hi], s1[lo:hi], y1[lo:hi], beta[0])
        _sum_blocks(parts, 1, zz)
        _sum_blocks(aparts, 1, az)
        return
    for b in nb.prange(parts.shape[0]):
        lo, hi = _block_rows(b, n)
        for j in range(lo, hi):
            aj, zj, sj, yj = a[j], z[j], s[j], y[j]
            for k in range(n_cols):
                dq, dw = _direction_row(aj, zj, sj, yj, beta[k], k)
                parts[b, k] += dq
                aparts[b, k] += dw
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
