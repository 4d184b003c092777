"""numba mat-vec kernels on the compact Random Binning layout.

Z is stored grid-major: ids[r, i] is the column of row i in grid r (or -1 for a test
point whose bin was not seen in training); every stored entry has the same value, so
the kernels work on the 0/1 pattern S and callers scale by 1/sqrt(R).
Plain-numpy references: `reference.dense_features(ids, D) @ W`.
"""

import functools
from pathlib import Path

import numba as nb
import numpy as np

GRID_GROUP = 4
#: the one-target gather's groups of GRID_GROUP grids summed in one pass over the rows (`_gather_vector`)
GATHER_GROUPS_PER_PASS = 2
assert GATHER_GROUPS_PER_PASS == 2  # _gather_vector spells out its two groups
#: the sizes of the grid groups the one-target scatters walk together, row by row (`scatter_group`): more
#: grids a group means more independent read-add-write chains and v read once for more grids, as long
#: as the group's columns stay in the core's L2. A kernel is compiled per size (the `group == ...` dispatchers). Against 4
#: grids, same process, best of 15, 2 threads, AMD EPYC (Zen 1, 512 KB L2): 16 grids ran ijcnn1's CG
#: scatter x2.5-3.4 as fast at R = 64, 256, 1024 and cod_rna_split's x1.7; 32 grids (more id streams
#: than the core's registers and prefetchers keep) ran slower than 8 everywhere
GROUP_SIZES = (4, 8, 16)
#: the group sizes of the several-target scatter (`scatter_update`): also 2, since each row's update there is
#: a whole row of V (C wide) read-added into a scratch row, independent work enough for the core, and one
#: grid's scratch is already C times a target's (letter, 26 classes: about 400 KB a grid at R = 256). Against
#: 4 grids, same process, min of 6, 2 threads, AMD EPYC (Zen 1, 512 KB L2): letter R = 64 / 256 / 1024
#: 13.3 / 52.9 / 216 ms against 13.8 / 58.7 / 253; mnist R = 64 25.5 against 25.4; 1 grid slower than 2
SEVERAL_TARGETS_GROUP_SIZES = (2,) + GROUP_SIZES
#: the share of the L2 cache a group's columns may fill (the rest: the ids and v streaming through)
GROUP_CACHE_SHARE = 0.5
#: the L2 size assumed where the system does not tell it
DEFAULT_L2_BYTES = 512 * 1024
#: the sums the scatter that finishes a CG step returns per grid and target, in this order: r^T r and
#: r^T M r of the new residual, M the preconditioner's diagonal (ones for CG)
N_SUMS = 2


def gather(ids, W, out):
    """out = S W (`_gather`), the rows split in one contiguous block per thread: each thread walks every
    grid group once over its rows. Against blocks of 2,048 rows, measured side by side: ijcnn1 R = 256
    -16 %, cadata R = 256 / 1024 -22 % / -15 %, mnist R = 64 / 256 -19 % / -20 %, letter R = 1024 -15 %,
    ijcnn1 R = 1024 +3 %. The thread count is read here, outside the kernel, so that numba caches it."""
    _gather(ids, W, out, nb.get_num_threads())


def gather_vector(ids, w, offsets, out):
    """`gather` for one right-hand side (w, out 1-D; `_gather_vector`); offsets: the grids' first columns
    (`BinnedMatrix.offsets`), which say where each pass's slice of w lies (two groups of grids). A slice is
    read ahead only where it fits GROUP_CACHE_SHARE of the L2 cache (more would push out the slice before
    it): a pass's slice is two groups', so grids wider than a quarter of that share are not read ahead,
    where a group's alone would have been."""
    touch_limit = int(GROUP_CACHE_SHARE * l2_cache_bytes()) // max(w.itemsize, 1)
    _gather_vector(ids, w, offsets, out, nb.get_num_threads(), touch_limit)


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
        lo, hi = offsets[r0], offsets[r1]
        _scatter_group_at(ids, V, r0, r1, lo, hi - lo, out[lo:hi], GRID_GROUP)


@nb.njit(inline="always")
def _plus_seen(a, w, col):
    """a + w[col], or a where col < 0 (a test row in a bin that training never saw)."""
    return a + w[col] if col >= 0 else a


@nb.njit(inline="always")
def _four_grids(w, ids0, ids1, ids2, ids3, i):
    """((w[ids0[i]] + w[ids1[i]]) + w[ids2[i]]) + w[ids3[i]], the unseen bins left out: one group of
    GRID_GROUP grids' sum for row i, added in the grids' order."""
    return _plus_seen(_plus_seen(_plus_seen(_plus_seen(0.0, w, ids0[i]), w, ids1[i]), w, ids2[i]), w, ids3[i])


@nb.njit(parallel=True, cache=True)
def _gather_vector(ids, w, offsets, out, n_threads, touch_limit):
    """gather for one right-hand side (w, out 1-D). GRID_GROUP grids are summed in a register
    per row before out[i] is updated: ×2.1 at R = 256 and ×1.6 at R = 4375 on ijcnn1 against
    one grid at a time (bench/rb_layout.py). A block's rows are views indexed from 0: indexed
    lo..hi, which numba cannot prove non-negative, every access was wrapped (×1.1-1.4 as long on
    uniform random bins, N = 16,512-47,628, R = 256-1024; the same sums, bit for bit).

    The rows are walked once for every two groups (GATHER_GROUPS_PER_PASS): out[i] = (out[i] + s) + t
    with s and t the two groups' sums, the same adds in the same order as one pass a group, with half
    the loads and stores of out (its block is larger than L1). Min of 15, one process, 2 threads, AMD
    EPYC Zen 1, against a pass a group: cadata R = 64 0.305 -> 0.221 ms, ijcnn1 R = 64 0.576 -> 0.512,
    cod_rna_split R = 64 0.740 -> 0.638, cadata / ijcnn1 R = 256 1.162 / 2.424 -> 1.129 / 2.375; a
    pass for four groups (16 grids: more id streams than the core follows) was slower than two.

    Before each pass, a thread reads the next pass's slice of w a cache line at a time
    (`_touch_lines`, where the slice has at most touch_limit values): a sequential read the core prefetches, where the group's own random loads
    would each wait on a miss for the first row that lands in each line. Min of 30, one process,
    2 threads, AMD EPYC Zen 1, w just rewritten as a CG step's direction rewrites it (a pass a group):
    ijcnn1 R = 64 / 256 / 1024 0.717 / 3.173 / 12.73 -> 0.696 / 3.072 / 11.98 ms, cadata R = 256 1.484 ->
    1.377, cod_rna_split (w in L2 already) 3.054 -> 3.033. Returns the sum of the lines read,
    which no caller needs (it keeps the reads from being compiled away)."""
    n_grids, n = ids.shape
    n_blocks, block = _row_blocks(n, n_threads)
    span = GRID_GROUP * GATHER_GROUPS_PER_PASS
    n_pairs = n_grids - n_grids % span
    n_full = n_grids - n_grids % GRID_GROUP
    touched = 0.0
    for b in nb.prange(n_blocks):
        lo = b * block
        hi = min(n, lo + block)
        o = out[lo:hi]
        rows = hi - lo
        for i in range(rows):
            o[i] = 0.0
        seen = _touch_lines(w, offsets[0], offsets[min(n_grids, span)], touch_limit)
        for r0 in range(0, n_pairs, span):
            seen += _touch_lines(w, offsets[min(n_grids, r0 + span)], offsets[min(n_grids, r0 + 2 * span)], touch_limit)
            a0, a1, a2, a3 = ids[r0, lo:hi], ids[r0 + 1, lo:hi], ids[r0 + 2, lo:hi], ids[r0 + 3, lo:hi]
            b0, b1, b2, b3 = ids[r0 + 4, lo:hi], ids[r0 + 5, lo:hi], ids[r0 + 6, lo:hi], ids[r0 + 7, lo:hi]
            for i in range(rows):
                o[i] = (o[i] + _four_grids(w, a0, a1, a2, a3, i)) + _four_grids(w, b0, b1, b2, b3, i)
        for r0 in range(n_pairs, n_full, GRID_GROUP):  # a last whole group, as above
            a0, a1, a2, a3 = ids[r0, lo:hi], ids[r0 + 1, lo:hi], ids[r0 + 2, lo:hi], ids[r0 + 3, lo:hi]
            for i in range(rows):
                o[i] += _four_grids(w, a0, a1, a2, a3, i)
        for r in range(n_full, n_grids):
            ids_r = ids[r, lo:hi]
            for i in range(rows):
                o[i] = _plus_seen(o[i], w, ids_r[i])
        touched += seen
    return touched


@nb.njit(inline="always")
def _touch_lines(w, lo, hi, limit):
    """The sum of one value per 64-byte line of w[lo:hi] (a read that brings the slice into cache), or 0
    where the slice has more than `limit` values."""
    total = 0.0
    if hi - lo <= limit:
        for j in range(lo, hi, max(1, 64 // w.itemsize)):
            total += w[j]
    return total


def scatter_vector(ids, v, offsets, out):
    """scatter for one right-hand side (v, out 1-D); grids in groups of `scatter_group` grids."""
    _scatter_vector_at(ids, v, offsets, out, scatter_group(offsets, 1))


@nb.njit(cache=True)
def _scatter_vector_at(ids, v, offsets, out, group):
    if group == 16:
        _scatter_vector_groups(ids, v, offsets, out, 16)
    elif group == 8:
        _scatter_vector_groups(ids, v, offsets, out, 8)
    else:
        _scatter_vector_groups(ids, v, offsets, out, 4)


@nb.njit(parallel=True, cache=True)
def _scatter_vector_groups(ids, v, offsets, out, group):
    nb.literally(group)  # a kernel per group size (`scatter_group`)
    for g in nb.prange((ids.shape[0] + group - 1) // group):
        r0, r1 = _zeroed_group(offsets, g, group, out)
        _scatter_group(ids, v, r0, r1, out, group)


@functools.cache
def cache_bytes(level: int) -> int | None:
    """The data cache at `level` of cpu0 (a core's own, or the one its cores share), in bytes, as Linux
    reports it; None where it does not."""
    try:
        for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
            if (index / "level").read_text().strip() == str(level) and "Instruction" not in (index / "type").read_text():
                text = (index / "size").read_text().strip().upper()
                scale = {"K": 1024, "M": 1024 ** 2}.get(text[-1:], 1)
                return int(text.rstrip("KM")) * scale
    except (OSError, ValueError):
        pass
    return None


def l2_cache_bytes() -> int:
    """The L2 cache of one core, in bytes (`cache_bytes`; DEFAULT_L2_BYTES where the system does not say)."""
    return cache_bytes(2) or DEFAULT_L2_BYTES


def group_sizes(n_cols: int) -> tuple[int, ...]:
    """The group sizes the CG scatter for n_cols targets is compiled for: GROUP_SIZES for one target,
    SEVERAL_TARGETS_GROUP_SIZES for more."""
    return GROUP_SIZES if n_cols == 1 else SEVERAL_TARGETS_GROUP_SIZES


def scatter_group(offsets, n_cols: int) -> int:
    """How many grids the CG scatters walk together: the largest of `group_sizes(n_cols)` whose columns (the
    mean grid's, n_cols doubles each) fill at most GROUP_CACHE_SHARE of the L2 cache, else the smallest. The
    sums are the same, bit for bit, at every size (each column adds its rows in increasing order)."""
    n_grids = len(offsets) - 1
    column_bytes = 8.0 * n_cols * float(offsets[-1]) / max(n_grids, 1)
    budget = GROUP_CACHE_SHARE * l2_cache_bytes()
    sizes = group_sizes(n_cols)
    fitting = [g for g in sizes if g * column_bytes <= budget]
    return max(fitting) if fitting else min(sizes)


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
def scatter_update_vector(ids, v, offsets, p, w, r, inv_diag, scale2, lam, alpha, acc, grid_sums, group):
    """The scatter that finishes a CG step (one target; `scatter_update` for several), fused with the
    step's whole vector update.

    v = S p (a gather), and alpha already known from it (solvers.cg: p^T A p = scale2 |v|^2 + lam |p|^2);
    then, with q = scale2 * S^T v + lam * p, w += alpha p and r -= alpha q on each group of grids'
    columns while its S^T v is in cache, and grid_sums[k, :] = (r'^T r', r'^T M r') of the new residual
    on grid k's columns. q is never stored: acc (D long) holds S^T v, a group at a time. Grids are
    scattered `group` at a time (one of GROUP_SIZES, `scatter_group`), as in `scatter`. inv_diag is M's
    diagonal, or an empty array for plain CG (M = I). Reference: `reference_update`."""
    if group == 16:
        _scatter_update_groups(ids, v, offsets, p, w, r, inv_diag, scale2, lam, alpha, acc, grid_sums, 16)
    elif group == 8:
        _scatter_update_groups(ids, v, offsets, p, w, r, inv_diag, scale2, lam, alpha, acc, grid_sums, 8)
    else:
        _scatter_update_groups(ids, v, offsets, p, w, r, inv_diag, scale2, lam, alpha, acc, grid_sums, 4)


@nb.njit(parallel=True, cache=True)
def _scatter_update_groups(ids, v, offsets, p, w, r, inv_diag, scale2, lam, alpha, acc, grid_sums, group):
    nb.literally(group)  # a kernel per group size (`scatter_group`)
    for g in nb.prange((ids.shape[0] + group - 1) // group):
        r0, r1 = _zeroed_group(offsets, g, group, acc)
        _scatter_group(ids, v, r0, r1, acc, group)
        _update_grids(offsets, r0, r1, p, w, r, inv_diag, scale2, lam, alpha, acc, grid_sums)


@nb.njit(inline="always")
def _update_grids(offsets, r0, r1, p, w, r, inv_diag, scale2, lam, alpha, acc, grid_sums):
    """On grids r0..r1-1's columns: q = scale2 * acc + lam * p; w += alpha p; r -= alpha q; each grid's
    sums of r^2 and m r^2 (the new r) into grid_sums, in column order."""
    precond = inv_diag.shape[0] == acc.shape[0]
    for k in range(r0, r1):
        rr = rz = 0.0
        lo, hi = offsets[k], offsets[k + 1]
        # grid k's columns as views indexed from 0 (see _gather_vector); an empty inv_diag stays empty
        a, pk, wk, rk, mk = acc[lo:hi], p[lo:hi], w[lo:hi], r[lo:hi], inv_diag[lo:hi]
        for col in range(a.shape[0]):
            pc = pk[col]
            wk[col] += alpha * pc
            new = rk[col] - alpha * (scale2 * a[col] + lam * pc)
            rk[col] = new
            sq = new * new
            rr += sq
            rz += mk[col] * sq if precond else sq
        grid_sums[k, 0] = rr
        grid_sums[k, 1] = rz


@nb.njit(cache=True)
def scatter_update(ids, V, offsets, P, W, Rk, inv_diag, scale2, lam, alpha, acc, grid_sums, group):
    """`scatter_update_vector` for several targets: V = S P (N x C, a gather), alpha (C,) known from it;
    then W += alpha P and Rk -= alpha Q with Q = scale2 * S^T V + lam * P, `group` grids at a time,
    and grid_sums[k, :, c] = (r'^T r', r'^T M r') of target c's new residual on grid k; `group` is one of
    SEVERAL_TARGETS_GROUP_SIZES.

    Q never exists as a D x C array: each thread scatters a group's S^T V into its own scratch,
    acc[t] (at least the widest group's columns x C, `update_scratch`), and updates W and Rk from it
    while it is in cache. A CG step then keeps three D x C arrays (W, Rk, P) where a stored Q and a
    second direction took five, each faulted in by the fit (letter's 26 classes at R = 256: 106 MB
    apiece). Threads take contiguous runs of groups (as prange's static schedule would).
    Reference: `reference_update`."""
    if group == 16:
        _scatter_update_blocks(ids, V, offsets, P, W, Rk, inv_diag, scale2, lam, alpha, acc, grid_sums, 16)
    elif group == 8:
        _scatter_update_blocks(ids, V, offsets, P, W, Rk, inv_diag, scale2, lam, alpha, acc, grid_sums, 8)
    elif group == 2:
        _scatter_update_blocks(ids, V, offsets, P, W, Rk, inv_diag, scale2, lam, alpha, acc, grid_sums, 2)
    else:
        _scatter_update_blocks(ids, V, offsets, P, W, Rk, inv_diag, scale2, lam, alpha, acc, grid_sums, 4)


@nb.njit(parallel=True, cache=True)
def _scatter_update_blocks(ids, V, offsets, P, W, Rk, inv_diag, scale2, lam, alpha, acc, grid_sums, group):
    nb.literally(group)  # a kernel per group size (`scatter_group`)
    n_grids = ids.shape[0]
    n_groups = (n_grids + group - 1) // group
    n_threads = min(acc.shape[0], n_groups)
    per = (n_groups + n_threads - 1) // max(n_threads, 1)
    precond = inv_diag.shape[0] == W.shape[0]
    n_cols = V.shape[1]
    for t in nb.prange(n_threads):
        scratch = acc[t]
        for g in range(t * per, min(n_groups, (t + 1) * per)):
            r0 = g * group
            r1 = min(n_grids, r0 + group)
            base = offsets[r0]
            _scatter_group_at(ids, V, r0, r1, base, offsets[r1] - base, scratch, group)
            for k in range(r0, r1):
                for c in range(n_cols):
                    grid_sums[k, 0, c] = 0.0
                    grid_sums[k, 1, c] = 0.0
                for col in range(offsets[k], offsets[k + 1]):
                    m = inv_diag[col] if precond else 1.0
                    s = scratch[col - base]
                    for c in range(n_cols):
                        pc = P[col, c]
                        W[col, c] += alpha[c] * pc
                        new = Rk[col, c] - alpha[c] * (scale2 * s[c] + lam * pc)
                        Rk[col, c] = new
                        sq = new * new
                        grid_sums[k, 0, c] += sq
                        grid_sums[k, 1, c] += m * sq if precond else sq


@nb.njit(inline="always")
def _scatter_group_at(ids, V, r0, r1, base, width, out, group):
    """out[col - base, :] = the sum of V[i, :] over the rows i in col's bin, for the `width` columns of
    grids r0 ... r1-1 (zeroed first), the grids walked together row by row as in `scatter`."""
    n = ids.shape[1]
    n_cols = V.shape[1]
    for col in range(width):
        for c in range(n_cols):
            out[col, c] = 0.0
    full = r1 - r0 == group
    for i in range(n):
        if full:
            seen = True
            for k in range(group):
                seen = seen and ids[r0 + k, i] >= 0
            if seen:
                for k in range(group):
                    o = out[ids[r0 + k, i] - base]
                    for c in range(n_cols):
                        o[c] += V[i, c]
                continue
        for r in range(r0, r1):
            col = ids[r, i]
            if col >= 0:
                o = out[col - base]
                for c in range(n_cols):
                    o[c] += V[i, c]


def update_scratch(offsets, n_threads: int, n_cols: int, group: int) -> np.ndarray:
    """The per-thread scratch `scatter_update` needs: n_threads x (the widest group's columns) x n_cols."""
    widths = offsets[np.minimum(np.arange(group, len(offsets) - 1 + group, group),
                                len(offsets) - 1)] - offsets[:-1:group]
    return np.empty((max(1, n_threads), int(widths.max(initial=0)), n_cols))


def reference_update(dense_S, P, W, Rk, inv_diag, scale2, lam, alpha):
    """Plain numpy for `scatter_update(_vector)`: W += alpha P; Rk -= alpha (scale2 S^T S P + lam P);
    returns the new residual's (r^T r, r^T M r) per column (whole vectors)."""
    Q = scale2 * (dense_S.T @ (dense_S @ P)) + lam * P
    m = inv_diag[:, None] if inv_diag.shape[0] == P.shape[0] else np.ones((P.shape[0], 1))
    W += alpha * P
    Rk -= alpha * Q
    return (Rk * Rk).sum(0), (m * Rk * Rk).sum(0)
