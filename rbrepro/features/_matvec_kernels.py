"""numba mat-vec kernels on the compact Random Binning layout.

Z is stored grid-major: ids[r, i] is the column of row i in grid r (or -1 for a test
point whose bin was not seen in training); every stored entry has the same value, so
the kernels work on the 0/1 pattern S and callers scale by 1/sqrt(R).
Plain-numpy references: `reference.dense_features(ids, D) @ W`.
"""

import numba as nb
import numpy as np

ROW_BLOCK = 2048
GRID_GROUP = 4
#: the dots the scatter of a CG step returns per grid and target, in this order: p^T q, r^T M q and
#: q^T M q, with q = (Z^T Z + lam I) p and M the preconditioner's diagonal (ones for CG)
N_DOTS = 3


@nb.njit(parallel=True, cache=True)
def gather(ids, W, out):
    """out = S W: out[i, :] = sum_r W[ids[r, i], :] (rows split in blocks across threads; the
    grids taken GRID_GROUP at a time, summed in registers before touching out)."""
    n_grids, n = ids.shape
    n_cols = W.shape[1]
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in nb.prange(n_blocks):
        lo = b * ROW_BLOCK
        hi = min(n, lo + ROW_BLOCK)
        acc = np.empty(n_cols)
        for i in range(lo, hi):
            for c in range(n_cols):
                out[i, c] = 0.0
        for r0 in range(0, n_grids, GRID_GROUP):
            for i in range(lo, hi):
                for c in range(n_cols):
                    acc[c] = 0.0
                for k in range(GRID_GROUP):
                    if r0 + k >= n_grids:
                        break
                    col = ids[r0 + k, i]
                    if col >= 0:
                        for c in range(n_cols):
                            acc[c] += W[col, c]
                for c in range(n_cols):
                    out[i, c] += acc[c]


@nb.njit(parallel=True, cache=True)
def scatter(ids, V, offsets, out):
    """out = S^T V: out[ids[r, i], :] += V[i, :].

    Grid r owns columns offsets[r]..offsets[r+1]-1, so each thread takes whole groups of
    GRID_GROUP grids and no two threads ever write the same column. Within a group the grids
    are walked together, row by row: their columns are disjoint, so the GRID_GROUP
    read-add-write chains are independent and the core overlaps them, where one grid alone
    stalls on each row that lands in the bin of the row before. Every column still sums its
    rows in increasing order, so the result is the same, bit for bit, as one grid at a time.
    """
    n_grids = ids.shape[0]
    for g in nb.prange((n_grids + GRID_GROUP - 1) // GRID_GROUP):
        r0 = g * GRID_GROUP
        r1 = min(n_grids, r0 + GRID_GROUP)
        _scatter_block_group(ids, V, offsets, r0, r1, out)


@nb.njit(inline="always")
def _scatter_block_group(ids, V, offsets, r0, r1, out):
    """out[col, :] = sum of V[i, :] over the rows i in col's bin, for the columns of grids r0 ... r1-1
    (zeroed first), the grids walked together row by row (see `scatter`)."""
    n = ids.shape[1]
    n_cols = V.shape[1]
    for col in range(offsets[r0], offsets[r1]):
        for c in range(n_cols):
            out[col, c] = 0.0
    for i in range(n):
        for r in range(r0, r1):
            col = ids[r, i]
            if col >= 0:
                for c in range(n_cols):
                    out[col, c] += V[i, c]


@nb.njit(parallel=True, cache=True)
def gather_vector(ids, w, out):
    """gather for one right-hand side (w, out 1-D). GRID_GROUP grids are summed in a register
    per row before out[i] is updated: ×2.1 at R = 256 and ×1.6 at R = 4375 on ijcnn1 against
    one grid at a time (bench/rb_layout.py)."""
    n_grids, n = ids.shape
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in nb.prange(n_blocks):
        lo = b * ROW_BLOCK
        hi = min(n, lo + ROW_BLOCK)
        for i in range(lo, hi):
            out[i] = 0.0
        n_full = n_grids - n_grids % GRID_GROUP
        for r0 in range(0, n_full, GRID_GROUP):
            for i in range(lo, hi):
                a = 0.0
                for k in range(GRID_GROUP):  # a constant trip count: unrolled by the compiler
                    col = ids[r0 + k, i]
                    if col >= 0:
                        a += w[col]
                out[i] += a
        for r in range(n_full, n_grids):
            for i in range(lo, hi):
                col = ids[r, i]
                if col >= 0:
                    out[i] += w[col]


@nb.njit(parallel=True, cache=True)
def scatter_vector(ids, v, offsets, out):
    """scatter for one right-hand side (v, out 1-D); grids in groups as in `scatter`."""
    n_grids, n = ids.shape
    for g in nb.prange((n_grids + GRID_GROUP - 1) // GRID_GROUP):
        r0 = g * GRID_GROUP
        r1 = min(n_grids, r0 + GRID_GROUP)
        for col in range(offsets[r0], offsets[r1]):
            out[col] = 0.0
        _scatter_group(ids, v, r0, r1, out)


@nb.njit(inline="always")
def _scatter_group(ids, v, r0, r1, out):
    """out[ids[r, i]] += v[i] for the grids r0..r1-1 together, row by row (see `scatter`); a full
    group takes a constant trip count, which the compiler unrolls."""
    n = ids.shape[1]
    if r1 - r0 == GRID_GROUP:
        for i in range(n):
            x = v[i]
            for k in range(GRID_GROUP):
                col = ids[r0 + k, i]
                if col >= 0:
                    out[col] += x
    else:
        for i in range(n):
            x = v[i]
            for r in range(r0, r1):
                col = ids[r, i]
                if col >= 0:
                    out[col] += x


@nb.njit(parallel=True, cache=True)
def scatter_gram_vector(ids, v, offsets, p, r, inv_diag, scale2, lam, out, grid_dots):
    """The scatter that finishes a CG step's q = (Z^T Z + lam I) p, fused with its scaling and the dots
    the step needs (one target; `scatter_gram_dots` for several).

    v = S p (a gather); then out = scale2 * S^T v + lam * p, and grid_dots[r, :] = the N_DOTS dots
    (p^T q, r^T M q, q^T M q) on grid r's columns: one pass over each group's columns while they are
    in cache, instead of more passes over D. Grids are scattered GRID_GROUP at a time, as in
    `scatter` (×1.49 / ×1.48 / ×1.78 at R = 64 / 256 / 1024 on ijcnn1, `python -m bench.rb_layout 64 256 1024`; the
    same sums, bit for bit). inv_diag is M's diagonal, or an empty array for plain CG (M = I).
    Reference: `reference_gram_dots`.
    """
    n_grids, n = ids.shape
    precond = inv_diag.shape[0] == out.shape[0]
    for g in nb.prange((n_grids + GRID_GROUP - 1) // GRID_GROUP):
        r0 = g * GRID_GROUP
        r1 = min(n_grids, r0 + GRID_GROUP)
        for col in range(offsets[r0], offsets[r1]):
            out[col] = 0.0
        _scatter_group(ids, v, r0, r1, out)
        for k in range(r0, r1):
            pq = rmq = qmq = 0.0
            for col in range(offsets[k], offsets[k + 1]):
                a = scale2 * out[col] + lam * p[col]
                out[col] = a
                ma = inv_diag[col] * a if precond else a
                pq += p[col] * a
                rmq += r[col] * ma
                qmq += a * ma
            grid_dots[k, 0] = pq
            grid_dots[k, 1] = rmq
            grid_dots[k, 2] = qmq


@nb.njit(inline="always")
def _grid_dots(out, P, Rk, inv_diag, precond, scale2, lam, lo, hi, c, acc):
    """Finish q = scale2 * out + lam * p on columns lo ... hi-1 of target c, and add its dots to acc."""
    pq = rmq = qmq = 0.0
    for col in range(lo, hi):
        a = scale2 * out[col, c] + lam * P[col, c]
        out[col, c] = a
        ma = inv_diag[col] * a if precond else a
        pq += P[col, c] * a
        rmq += Rk[col, c] * ma
        qmq += a * ma
    acc[0] = pq
    acc[1] = rmq
    acc[2] = qmq


@nb.njit(parallel=True, cache=True)
def scatter_gram_dots(ids, V, offsets, P, Rk, inv_diag, scale2, lam, out, grid_dots):
    """`scatter_gram_vector` for several targets: Q = (Z^T Z + lam I) P, fused with every dot the step needs.

    V = S P (a gather, N x C); then out = scale2 * S^T V + lam * P and grid_dots[r, :, c] = the N_DOTS
    dots of target c on grid r's columns (p^T q, r^T M q, q^T M q), read while the
    group's columns are in cache: with them CG knows alpha and the next residual's norms before it
    updates any vector, so the update and the new direction share one pass (solvers._cg_kernels).
    inv_diag is M's diagonal (D,), or an empty array for plain CG (M = I).
    Reference: `reference_gram_dots`.
    """
    n_grids = ids.shape[0]
    n_cols = V.shape[1]
    precond = inv_diag.shape[0] == out.shape[0]
    for g in nb.prange((n_grids + GRID_GROUP - 1) // GRID_GROUP):
        r0 = g * GRID_GROUP
        r1 = min(n_grids, r0 + GRID_GROUP)
        _scatter_block_group(ids, V, offsets, r0, r1, out)
        acc = np.empty(N_DOTS)
        for r in range(r0, r1):
            for c in range(n_cols):
                _grid_dots(out, P, Rk, inv_diag, precond, scale2, lam, offsets[r], offsets[r + 1], c, acc)
                for k in range(N_DOTS):
                    grid_dots[r, k, c] = acc[k]


def reference_gram_dots(dense_S, P, Rk, inv_diag, scale2, lam):
    """Plain numpy: Q = scale2 * S^T S P + lam P and the N_DOTS dots per column (whole vectors)."""
    Q = scale2 * (dense_S.T @ (dense_S @ P)) + lam * P
    m = inv_diag[:, None] if inv_diag.shape[0] == P.shape[0] else np.ones((P.shape[0], 1))
    dots = np.stack([(P * Q).sum(0), (m * Rk * Q).sum(0), (m * Q * Q).sum(0)])
    return Q, dots
