"""numba kernels for the vector updates of a CG step on (D, C) arrays (solvers.cg).

At large R the updates are not small: ijcnn1 at R = 35,000 has D = 60 M coefficients, and
numpy's W += alpha P; R -= alpha AP; R^T R; P = R + beta P make eight passes over D x C
doubles per iteration. These make two, split across threads in row blocks; where the operator
updates W and R inside its own scatter (solvers.cg), only the direction's pass is left here.

One target's new direction is written into a second buffer, not over P: the gather of the step before
read P at random columns from both threads, so both cores hold its cache lines, and writing
them in place first invalidates each line in the other core. Several targets' P (D x C, far larger
than the caches) is overwritten in place: a second one would be another D x C array to fault in. On ijcnn1 (2 threads, R = 256)
the update took 1.18 ms inside CG against 0.24 ms alone; 20 CG iterations run ×1.11 / ×1.12 /
×0.96–1.00 faster at R = 64 / 256 / 1024 (`python -m bench.rb_layout 64 256 1024`), the same
sums, bit for bit.

The residual's norms are summed in a fixed order within fixed blocks of ROW_BLOCK rows, then block
by block, so a run's sums have the same bits on any number of threads. The blocks are small enough
that a small D still splits evenly over the threads: at 16384 rows a block, cadata's D = 37,950 at
R = 64 made three blocks, split 2:1 over two threads. Each block sums into its own row of a table
padded to a cache line, so that two threads' neighbouring blocks never write one line between them.
With one target the running sums are scalars in four lanes, written once at the block's end
(_one_target_block): a sum kept in the table is stored and reloaded on every row, a chain that took
nearly twice the time of the same pass without it (a fused update and direction on ijcnn1's
D = 427,637: 0.95 against 0.51 ms, both compiled alike in one process). Several targets' chains
overlap, and there the table ran 5-20 % faster than sums in a local array. `reference_in_order`
spells the order out in numpy.
PCG's preconditioned residual is never stored: `step_preconditioned` sums its dot with the residual,
and `direction` forms M r on the fly, with the new direction's norm (the next step's |p|^2) in the
same pass.
Every (D, C) array is C-contiguous (solvers.cg makes the operator's output so): one target's
columns are read as 1-d views of it. Each block's rows are views indexed from 0. An index that
numba cannot prove non-negative (j from lo to hi) is wrapped on every access, and the compiler
then neither vectorizes nor overlaps the loop well: the preconditioned direction over blocks indexed
lo..hi took ×1.5-12 as long at D = 5,363 to 1,712,132, and PCG's two passes ×1.5-2.9 (two runs,
one process, every version compiled alike; see docs/performance.md).
Plain-numpy references: `reference_step`, `reference_direction` and, for the order of the sums,
`reference_in_order`.
"""

import numba as nb
import numpy as np

ROW_BLOCK = 4096
assert ROW_BLOCK % 4 == 0  # only a run's last block can end in a part of four rows (_one_target_block)
#: doubles between two blocks' partial sums (one cache line): a block's row of the table shares no
#: line with its neighbour's, which another thread may be writing
LINE_PAD = 8


@nb.njit(inline="always")
def _n_blocks(n: int) -> int:
    """Row blocks of ROW_BLOCK rows (the last one shorter) in n rows."""
    return (n + ROW_BLOCK - 1) // ROW_BLOCK


@nb.njit(inline="always")
def _block_sums(n: int, n_cols: int):
    """A zeroed table of the row blocks' partial sums, one padded row per block of ROW_BLOCK rows."""
    return np.zeros((_n_blocks(n), n_cols + LINE_PAD))


@nb.njit(inline="always")
def _sum_blocks(parts, n_cols, out):
    """out[c] = the row blocks' partial sums of column c, added in block order (the same sum, bit for
    bit, however many threads ran the blocks)."""
    for c in range(n_cols):
        out[c] = 0.0
        for b in range(parts.shape[0]):
            out[c] += parts[b, c]


@nb.njit(inline="always")
def _block_rows(b: int, n: int):
    """Rows lo <= j < hi of row block b of n rows."""
    lo = b * ROW_BLOCK
    return lo, min(n, lo + ROW_BLOCK)


@nb.njit(inline="always")
def _one_target_row(w, rk, p, ap, a, m_block, precond, k):
    """Row k of a block of one target's update: w += a p; rk -= a ap. Returns (r^2, m r^2) of the new
    residual entry r, m = m_block[k] (the preconditioner's diagonal; 1 without one)."""
    w[k] += a * p[k]
    r = rk[k] - a * ap[k]
    rk[k] = r
    m = m_block[k] if precond else 1.0
    return r * r, m * r * r


@nb.njit(inline="always")
def _one_target_block(w, rk, p, ap, a, m_block, precond):
    """One block of one target's update (_one_target_row) on its rows' 1-d views, and the block's sums
    of r^2 and m r^2 (`_lane_sums` spells out their order).

    The views are indexed from 0 (module docstring: an index that numba cannot prove non-negative
    costs every access). Each sum runs in four lanes, lane k over the block's rows k, k + 4, ... in
    order (rows after the last whole four, only in a run's last block, go on in lane 0), and the
    block's sum is (lane 0 + lane 1) + (lane 2 + lane 3): four chains of adds that overlap, where one
    running sum waits on each add before the next (with one chain, step_preconditioned took
    ×1.10-1.20 and step ×1.19-1.33 as long at every D from 5,363 to 1,712,132)."""
    s0 = s1 = s2 = s3 = 0.0
    z0 = z1 = z2 = z3 = 0.0
    rows = w.shape[0]
    whole = rows - rows % 4
    for k in range(0, whole, 4):
        q, v = _one_target_row(w, rk, p, ap, a, m_block, precond, k)
        s0 += q
        z0 += v
        q, v = _one_target_row(w, rk, p, ap, a, m_block, precond, k + 1)
        s1 += q
        z1 += v
        q, v = _one_target_row(w, rk, p, ap, a, m_block, precond, k + 2)
        s2 += q
        z2 += v
        q, v = _one_target_row(w, rk, p, ap, a, m_block, precond, k + 3)
        s3 += q
        z3 += v
    for k in range(whole, rows):
        q, v = _one_target_row(w, rk, p, ap, a, m_block, precond, k)
        s0 += q
        z0 += v
    return (s0 + s1) + (s2 + s3), (z0 + z1) + (z2 + z3)


@nb.njit(inline="always")
def _update(W, Rk, P, AP, alpha, inv_diag, precond, rr, rz):
    """W += alpha P; Rk -= alpha AP; rr = Rk^T Rk and rz = Rk^T M Rk afterwards (M = diag(inv_diag)
    where precond, else I), per column, in the fixed order of reference_in_order. One target's arrays
    are read as 1-d views (contiguous, so the compiler may vectorize what has no sum)."""
    n, n_cols = W.shape
    parts, zparts = _block_sums(n, n_cols), _block_sums(n, n_cols)
    if n_cols == 1:
        w, rk, p, ap = W.reshape(n), Rk.reshape(n), P.reshape(n), AP.reshape(n)
        for b in nb.prange(parts.shape[0]):
            lo, hi = _block_rows(b, n)
            parts[b, 0], zparts[b, 0] = _one_target_block(w[lo:hi], rk[lo:hi], p[lo:hi], ap[lo:hi], alpha[0],
                                                          inv_diag[lo:hi], precond)
    else:  # rows indexed lo..hi into the whole arrays: as views from 0, several targets ran 5-30 % slower
        for b in nb.prange(parts.shape[0]):
            lo, hi = _block_rows(b, n)
            for j in range(lo, hi):
                m = inv_diag[j] if precond else 1.0
                for c in range(n_cols):
                    W[j, c] += alpha[c] * P[j, c]
                    r = Rk[j, c] - alpha[c] * AP[j, c]
                    Rk[j, c] = r
                    parts[b, c] += r * r
                    zparts[b, c] += m * r * r
    _sum_blocks(parts, n_cols, rr)
    _sum_blocks(zparts, n_cols, rz)


@nb.njit(parallel=True, cache=True)
def step(W, Rk, P, AP, alpha, rr):
    """W += alpha P; Rk -= alpha AP (per column); rr[c] = Rk[:, c]^T Rk[:, c] afterwards."""
    # no preconditioner: the empty inv_diag is never touched; rz (= rr) is thrown away. Skipping its sum
    # (a branch on the preconditioner in the shared lanes) made step_preconditioned 5-10 % slower, for no
    # clear gain in step.
    _update(W, Rk, P, AP, alpha, W[:0, 0], False, rr, np.empty_like(rr))


@nb.njit(parallel=True, cache=True)
def step_preconditioned(W, Rk, P, AP, alpha, inv_diag, rr, rz):
    """step() and the preconditioned residual's dot in the same pass: rz[c] = Rk[:, c]^T (inv_diag *
    Rk[:, c]) afterwards, without forming inv_diag * Rk (a D x C array PCG allocated every step)."""
    _update(W, Rk, P, AP, alpha, inv_diag, True, rr, rz)


@nb.njit(inline="always")
def _one_target_direction(out, p, z, m, be, precond):
    """out = m z + be p on one block's 1-d views (m = 1 where not precond), and the block's sum of
    out^2 in the four lanes of `_one_target_block`."""
    s0 = s1 = s2 = s3 = 0.0
    rows = out.shape[0]
    whole = rows - rows % 4
    for k in range(0, whole, 4):
        x0 = (m[k] * z[k] if precond else z[k]) + be * p[k]
        x1 = (m[k + 1] * z[k + 1] if precond else z[k + 1]) + be * p[k + 1]
        x2 = (m[k + 2] * z[k + 2] if precond else z[k + 2]) + be * p[k + 2]
        x3 = (m[k + 3] * z[k + 3] if precond else z[k + 3]) + be * p[k + 3]
        out[k], out[k + 1], out[k + 2], out[k + 3] = x0, x1, x2, x3
        s0 += x0 * x0
        s1 += x1 * x1
        s2 += x2 * x2
        s3 += x3 * x3
    for k in range(whole, rows):
        x = (m[k] * z[k] if precond else z[k]) + be * p[k]
        out[k] = x
        s0 += x * x
    return (s0 + s1) + (s2 + s3)


@nb.njit(parallel=True, cache=True)
def direction(P_next, P, Rk, inv_diag, beta, pp):
    """P_next = M Rk + beta P (per column; M = diag(inv_diag), or I where inv_diag is empty: the
    preconditioned residual is formed on the fly, never stored) and pp = P_next^T P_next per column, in
    the fixed order of reference_in_order: the next step's p^T A p = |Z p|^2 + lam pp then needs no pass
    over D (solvers.cg). P_next may be P itself (several targets: each entry is read before it is
    written); one target writes another buffer (module docstring)."""
    n, n_cols = P.shape
    precond = inv_diag.shape[0] == n
    parts = _block_sums(n, n_cols)
    if n_cols == 1:
        p_next, p, z, be = P_next.reshape(n), P.reshape(n), Rk.reshape(n), beta[0]
        for b in nb.prange(parts.shape[0]):
            lo, hi = _block_rows(b, n)
            parts[b, 0] = _one_target_direction(p_next[lo:hi], p[lo:hi], z[lo:hi], inv_diag[lo:hi], be, precond)
    else:  # as in _update
        for b in nb.prange(parts.shape[0]):
            lo, hi = _block_rows(b, n)
            for j in range(lo, hi):
                m = inv_diag[j] if precond else 1.0
                for c in range(n_cols):
                    x = (m * Rk[j, c] if precond else Rk[j, c]) + beta[c] * P[j, c]
                    P_next[j, c] = x
                    parts[b, c] += x * x
    _sum_blocks(parts, n_cols, pp)


def reference_step(W, Rk, P, AP, alpha):
    W += alpha * P
    Rk -= alpha * AP
    return np.einsum("ij,ij->j", Rk, Rk)


def reference_direction(P, Rk, inv_diag, beta):
    """Plain numpy for `direction`: returns (P_next, pp)."""
    m = inv_diag[:, None] if inv_diag.shape[0] == P.shape[0] else np.ones((P.shape[0], 1))
    P_next = m * Rk + beta * P
    return P_next, np.einsum("ij,ij->j", P_next, P_next)


def reference_in_order(terms: np.ndarray) -> np.ndarray:
    """Plain numpy for the order in which the update kernels sum a (D, C) array of per-row terms
    (r^2 or m r^2): per block of ROW_BLOCK rows, several targets row by row; one target in four lanes
    (lane k over the block's rows k, k + 4, ...; rows past its last whole four go on in lane 0),
    added as (0 + 1) + (2 + 3); then the blocks in order. np.cumsum adds in order (no pairwise
    summation): its last entry is the in-order sum, bit for bit what the kernels return."""
    def in_order(x):
        return np.cumsum(x, axis=0)[-1] if len(x) else np.zeros(x.shape[1:])

    def block_sum(x):
        if x.shape[1] > 1:
            return in_order(x)
        whole = len(x) // 4 * 4
        lanes = [in_order(x[k:whole:4]) for k in range(4)]
        lanes[0] = in_order(np.vstack([lanes[0][None, :], x[whole:]]))
        return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])

    blocks = [block_sum(terms[lo:lo + ROW_BLOCK]) for lo in range(0, len(terms), ROW_BLOCK)]
    return in_order(np.array(blocks).reshape(len(blocks), terms.shape[1]))
