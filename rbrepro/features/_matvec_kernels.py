"""numba mat-vec kernels on the compact Random Binning layout.

Z is stored grid-major: ids[r, i] is the column of row i in grid r (or -1 for a test
point whose bin was not seen in training); every stored entry has the same value, so
the kernels work on the 0/1 pattern S and callers scale by 1/sqrt(R).
Plain-numpy references: `reference.dense_features(ids, D) @ W`.
"""

import numba as nb
import numpy as np

GRID_GROUP = 4
#: grids the one-target scatters (the CG step's, and Z^T v) walk together where grids have few columns: more independent
#: read-add-write chains, and v read once for twice as many grids. Against GRID_GROUP, same process,
#: best of 11, 2 threads: cod_rna_split (83-101 columns a grid) x1.8 at R = 64, 256, 1024; cadata (592-650)
#: x1.3 at R = 64 and 1024, x1.04-1.14 at 256; ijcnn1 (1,538-1,672) x0.92-1.0, so it keeps GRID_GROUP
WIDE_GROUP = 8
#: the mean columns per grid up to which those scatters take WIDE_GROUP grids (8 grids' columns in 64 KB)
WIDE_GROUP_MAX_COLUMNS = 1024
#: the dots the scatter of a CG step returns per grid and target, in this order: p^T q, r^T M q and
#: q^T M q, with q = (Z^T Z + lam I) p and M the preconditioner's diagonal (ones for CG)
N_DOTS = 3


def gather(ids, W, out):
    """out = S W (`_gather`), the rows split in one contiguous block per thread: each thread walks every
    grid group once over its rows. Against blocks of 2,048 rows, measured side by side: ijcnn1 R = 256
    -16 %, cadata R = 256 / 1024 -22 % / -15 %, mnist R = 64 / 256 -19 % / -20 %, letter R = 1024 -15 %,
    ijcnn1 R = 1024 +3 %. The thread count is read here, outside the kernel, so that numba caches it."""
    _gather(ids, W, out, nb.get_num_threads())


def gather_vector(ids, w, out):
    """`gather` for one right-hand side (w, out 1-D; `_gather_vector`)."""
    _gather_vector(ids, w, out, nb.get_num_threads())


@nb.njit(cache=True, inline="always")
def _row_blocks(n, n_threads):
    """One contiguous block of rows per thread (a block count that is not a multiple of the threads
    would leave one idle): (number of blocks, rows per block)."""
    n_blocks = max(1, min(n_threads, n))
    return n_blocks, (n + n_blocks - 1) // n_blocks


@nb.njit(parallel=True, cache=True)
def _gather(ids, W, out, n_threads):
    """out = S W: out[i, :] = sum_r W[ids[r, i], :] (rows split in n_threads blocks across threads; the
    grids taken GRID_GROUP at a time and summed in registers, column by column, before touching out:
    no scratch row between the loads and the add, so the adds over the columns vectorize; ×1.7–2.1
    on letter and mnist against summing into a scratch row; the same sums, bit for bit)."""
    n_grids, n = ids.shape
    n_cols = W.shape[1]
    n_blocks, block = _row_blocks(n, n_threads)
    n_full = n_grids - n_grids % GRID_GROUP
    for b in nb.prange(n_blocks):
        lo = b * block
        hi = min(n, lo + block)
        for i in range(lo, hi):
            for c in range(n_cols):
                out[i, c] = 0.0
        for r0 in range(0, n_full, GRID_GROUP):
            for i in range(lo, hi):
                c0, c1, c2, c3 = ids[r0, i], ids[r0 + 1, i], ids[r0 + 2, i], ids[r0 + 3, i]
                if c0 >= 0 and c1 >= 0 and c2 >= 0 and c3 >= 0:
                    for c in range(n_cols):
                        out[i, c] += ((W[c0, c] + W[c1, c]) + W[c2, c]) + W[c3, c]
                else:  # a test row in a bin training never saw: skip that grid
                    for c in range(n_cols):
                        a = 0.0
                        for k in range(GRID_GROUP):
                            col = ids[r0 + k, i]
                            if col >= 0:
                                a += W[col, c]
                        out[i, c] += a
        for r in range(n_full, n_grids):
            for i in range(lo, hi):
                col = ids[r, i]
                if col >= 0:
                    for c in range(n_cols):
                        out[i, c] += W[col, c]


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
    (zeroed first), the grids walked together row by row (see `scatter`); a full group reads its 4
    columns once and adds each of V[i]'s entries to all 4 (×1.1 on letter against a grid at a time)."""
    n = ids.shape[1]
    n_cols = V.shape[1]
    for col in range(offsets[r0], offsets[r1]):
        for c in range(n_cols):
            out[col, c] = 0.0
    full = r1 - r0 == GRID_GROUP
    for i in range(n):
        if full:
            c0, c1, c2, c3 = ids[r0, i], ids[r0 + 1, i], ids[r0 + 2, i], ids[r0 + 3, i]
            if c0 >= 0 and c1 >= 0 and c2 >= 0 and c3 >= 0:
                for c in range(n_cols):
                    x = V[i, c]
                    out[c0, c] += x
                    out[c1, c] += x
                    out[c2, c] += x
                    out[c3, c] += x
                continue
        for r in range(r0, r1):
            col = ids[r, i]
            if col >= 0:
                for c in range(n_cols):
                    out[col, c] += V[i, c]


@nb.njit(inline="always")
def _plus_seen(a, w, col):
    """a + w[col], or a where col < 0 (a test row in a bin that training never saw)."""
    return a + w[col] if col >= 0 else a


@nb.njit(parallel=True, cache=True)
def _gather_vector(ids, w, out, n_threads):
    """gather for one right-hand side (w, out 1-D). GRID_GROUP grids are summed in a register
    per row before out[i] is updated: ×2.1 at R = 256 and ×1.6 at R = 4375 on ijcnn1 against
    one grid at a time (bench/rb_layout.py). A block's rows are views indexed from 0: indexed
    lo..hi, which numba cannot prove non-negative, every access was wrapped (×1.1-1.4 as long on
    uniform random bins, N = 16,512-47,628, R = 256-1024; the same sums, bit for bit)."""
    n_grids, n = ids.shape
    n_blocks, block = _row_blocks(n, n_threads)
    n_full = n_grids - n_grids % GRID_GROUP
    for b in nb.prange(n_blocks):
        lo = b * block
        hi = min(n, lo + block)
        o = out[lo:hi]
        rows = hi - lo
        for i in range(rows):
            o[i] = 0.0
        for r0 in range(0, n_full, GRID_GROUP):
            ids0, ids1, ids2, ids3 = ids[r0, lo:hi], ids[r0 + 1, lo:hi], ids[r0 + 2, lo:hi], ids[r0 + 3, lo:hi]
            for i in range(rows):  # the group's grids in order
                o[i] += _plus_seen(_plus_seen(_plus_seen(_plus_seen(0.0, w, ids0[i]), w, ids1[i]), w, ids2[i]),
                                   w, ids3[i])
        for r in range(n_full, n_grids):
            ids_r = ids[r, lo:hi]
            for i in range(rows):
                o[i] = _plus_seen(o[i], w, ids_r[i])


@nb.njit(cache=True)
def scatter_vector(ids, v, offsets, out):
    """scatter for one right-hand side (v, out 1-D); grids in groups as in `scatter_gram_vector`."""
    if _wide_groups(offsets):
        _scatter_vector_groups(ids, v, offsets, out, WIDE_GROUP)
    else:
        _scatter_vector_groups(ids, v, offsets, out, GRID_GROUP)


@nb.njit(parallel=True, cache=True)
def _scatter_vector_groups(ids, v, offsets, out, group):
    nb.literally(group)  # a kernel per group size (`_wide_groups`)
    for g in nb.prange((ids.shape[0] + group - 1) // group):
        r0, r1 = _zeroed_group(offsets, g, group, out)
        _scatter_group(ids, v, r0, r1, out, group)


@nb.njit(cache=True, inline="always")
def _wide_groups(offsets):
    """True where the grids hold at most WIDE_GROUP_MAX_COLUMNS columns each on average: the one-target
    scatters then walk WIDE_GROUP grids together. Each group size is compiled as a kernel of its own
    (`numba.literally`): one kernel taking the size at run time ran ijcnn1's GRID_GROUP scatter
    x0.83-0.86 as fast."""
    n_grids = offsets.shape[0] - 1
    return offsets[n_grids] <= WIDE_GROUP_MAX_COLUMNS * n_grids


@nb.njit(inline="always")
def _zeroed_group(offsets, g, group, out):
    """(first grid, one past the last) of the g-th group of `group` grids, its columns of out zeroed."""
    r0 = g * group
    r1 = min(offsets.shape[0] - 1, r0 + group)
    for col in range(offsets[r0], offsets[r1]):
        out[col] = 0.0
    return r0, r1


@nb.njit(inline="always")
def _scatter_group(ids, v, r0, r1, out, group):
    """out[ids[r, i]] += v[i] for the grids r0..r1-1 together, row by row (see `scatter`); a full
    group takes a constant trip count (`group`, a compile-time constant), which the compiler unrolls."""
    n = ids.shape[1]
    if r1 - r0 == group:
        for i in range(n):
            x = v[i]
            for k in range(group):
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


@nb.njit(cache=True)
def scatter_gram_vector(ids, v, offsets, p, r, inv_diag, scale2, lam, out, grid_dots):
    """The scatter that finishes a CG step's q = (Z^T Z + lam I) p, fused with its scaling and the dots
    the step needs (one target; `scatter_gram_dots` for several).

    v = S p (a gather); then out = scale2 * S^T v + lam * p, and grid_dots[r, :] = the N_DOTS dots
    (p^T q, r^T M q, q^T M q) on grid r's columns: one pass over each group's columns while they are
    in cache, instead of more passes over D. Grids are scattered GRID_GROUP at a time, as in
    `scatter` (×1.49 / ×1.48 / ×1.78 at R = 64 / 256 / 1024 on ijcnn1, `python -m bench.rb_layout 64 256 1024`;
    the same sums, bit for bit), or WIDE_GROUP at a time where grids have few columns (`_wide_groups`).
    inv_diag is M's diagonal, or an empty array for plain CG (M = I). Reference: `reference_gram_dots`.
    """
    if _wide_groups(offsets):
        _scatter_gram_groups(ids, v, offsets, p, r, inv_diag, scale2, lam, out, grid_dots, WIDE_GROUP)
    else:
        _scatter_gram_groups(ids, v, offsets, p, r, inv_diag, scale2, lam, out, grid_dots, GRID_GROUP)


@nb.njit(parallel=True, cache=True)
def _scatter_gram_groups(ids, v, offsets, p, r, inv_diag, scale2, lam, out, grid_dots, group):
    nb.literally(group)  # a kernel per group size (`_wide_groups`)
    for g in nb.prange((ids.shape[0] + group - 1) // group):
        r0, r1 = _zeroed_group(offsets, g, group, out)
        _scatter_group(ids, v, r0, r1, out, group)
        _finish_grids(offsets, r0, r1, p, r, inv_diag, scale2, lam, out, grid_dots)


@nb.njit(inline="always")
def _finish_grids(offsets, r0, r1, p, r, inv_diag, scale2, lam, out, grid_dots):
    """q = scale2 * out + lam * p on grids r0..r1-1's columns, and each grid's N_DOTS dots into grid_dots."""
    precond = inv_diag.shape[0] == out.shape[0]
    for k in range(r0, r1):
        pq = rmq = qmq = 0.0
        lo, hi = offsets[k], offsets[k + 1]
        # grid k's columns as views indexed from 0 (see _gather_vector)
        q, pk, rk, mk = out[lo:hi], p[lo:hi], r[lo:hi], inv_diag[lo:hi]  # (an empty inv_diag stays empty)
        for col in range(q.shape[0]):
            a = scale2 * q[col] + lam * pk[col]
            q[col] = a
            ma = mk[col] * a if precond else a
            pq += pk[col] * a
            rmq += rk[col] * ma
            qmq += a * ma
        grid_dots[k, 0] = pq
        grid_dots[k, 1] = rmq
        grid_dots[k, 2] = qmq


@nb.njit(inline="always")
def _grid_dots(out, P, Rk, inv_diag, precond, scale2, lam, lo, hi, acc):
    """Finish Q = scale2 * out + lam * P on columns lo ... hi-1, and put each target's dots in acc
    (N_DOTS x C): column by column, every target of a column in one go (its C entries are contiguous),
    each target's sums still in column order."""
    n_cols = out.shape[1]
    for k in range(N_DOTS):
        for c in range(n_cols):
            acc[k, c] = 0.0
    for col in range(lo, hi):
        m = inv_diag[col] if precond else 1.0
        for c in range(n_cols):
            a = scale2 * out[col, c] + lam * P[col, c]
            out[col, c] = a
            ma = m * a if precond else a
            acc[0, c] += P[col, c] * a
            acc[1, c] += Rk[col, c] * ma
            acc[2, c] += a * ma


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
        acc = np.empty((N_DOTS, n_cols))
        for r in range(r0, r1):
            _grid_dots(out, P, Rk, inv_diag, precond, scale2, lam, offsets[r], offsets[r + 1], acc)
            for k in range(N_DOTS):
                for c in range(n_cols):
                    grid_dots[r, k, c] = acc[k, c]


def reference_gram_dots(dense_S, P, Rk, inv_diag, scale2, lam):
    """Plain numpy: Q = scale2 * S^T S P + lam P and the N_DOTS dots per column (whole vectors)."""
    Q = scale2 * (dense_S.T @ (dense_S @ P)) + lam * P
    m = inv_diag[:, None] if inv_diag.shape[0] == P.shape[0] else np.ones((P.shape[0], 1))
    dots = np.stack([(P * Q).sum(0), (m * Rk * Q).sum(0), (m * Q * Q).sum(0)])
    return Q, dots
