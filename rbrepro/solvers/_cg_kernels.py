"""numba kernels for the vector updates of a CG step on (D, C) arrays (solvers.cg).

At large R the updates are not small: ijcnn1 at R = 35,000 has D = 60 M coefficients, and
numpy's W += alpha P; R -= alpha AP; R^T R; P = R + beta P make eight passes over D x C
doubles per iteration. These make two, split across threads in row blocks.

The new direction is written into a second buffer, not over P: the gather of the step before
read P at random columns from both threads, so both cores hold its cache lines, and writing
them in place first invalidates each line in the other core. On ijcnn1 (2 threads, R = 256)
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
nearly twice the time of the same pass without it (step_direction on ijcnn1's D = 427,637: 0.95
against 0.51 ms, both compiled alike in one process). Several targets' chains
overlap, and there the table ran 5-20 % faster than sums in a local array. `reference_in_order`
spells the order out in numpy.
PCG's step and direction have their own fused kernels (`step_preconditioned`,
`direction_preconditioned`): the preconditioned residual is never stored. Where the operator returns
the dots that fix the step and the next residual's norm with its product (`gram_apply_dots`),
`step_direction` does the update and the new direction together in one pass (solvers.cg).
Every (D, C) array is C-contiguous (solvers.cg makes the operator's output so): one target's
columns are read as 1-d views of it. Each block's rows are views indexed from 0. An index that
numba cannot prove non-negative (j from lo to hi) is wrapped on every access, and the compiler
then neither vectorizes nor overlaps the loop well: direction_preconditioned over blocks indexed
lo..hi took ×1.5-12 as long at D = 5,363 to 1,712,132, and PCG's two passes ×1.5-2.9 (two runs,
one process, every version compiled alike; see docs/performance.md).
Plain-numpy references: `reference_step`, `reference_direction`, `reference_step_direction` and,
for the order of the sums, `reference_in_order`.
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
def _one_target_row(w, rk, p, p_next, ap, a, be, m_block, precond, with_direction, k):
    """Row k of a block of one target's update: w += a p; rk -= a ap; p_next = m rk + be p where
    with_direction, m = m_block[k] (the preconditioner's diagonal; 1 without one). Returns (r^2, m r^2)
    of the new residual entry r."""
    pk = p[k]
    w[k] += a * pk
    r = rk[k] - a * ap[k]
    rk[k] = r
    m = m_block[k] if precond else 1.0
    if with_direction:
        p_next[k] = m * r + be * pk
    return r * r, m * r * r


@nb.njit(inline="always")
def _one_target_block(w, rk, p, p_next, ap, a, be, m_block, precond, with_direction):
    """One block of one target's update (_one_target_row) on its rows' 1-d views, and the block's sums
    of r^2 and m r^2.

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
        q, v = _one_target_row(w, rk, p, p_next, ap, a, be, m_block, precond, with_direction, k)
        s0 += q
        z0 += v
        q, v = _one_target_row(w, rk, p, p_next, ap, a, be, m_block, precond, with_direction, k + 1)
        s1 += q
        z1 += v
        q, v = _one_target_row(w, rk, p, p_next, ap, a, be, m_block, precond, with_direction, k + 2)
        s2 += q
        z2 += v
        q, v = _one_target_row(w, rk, p, p_next, ap, a, be, m_block, precond, with_direction, k + 3)
        s3 += q
        z3 += v
    for k in range(whole, rows):
        q, v = _one_target_row(w, rk, p, p_next, ap, a, be, m_block, precond, with_direction, k)
        s0 += q
        z0 += v
    return (s0 + s1) + (s2 + s3), (z0 + z1) + (z2 + z3)


@nb.njit(inline="always")
def _update(W, Rk, P, P_next, AP, alpha, beta, inv_diag, precond, with_direction, rr, rz):
    """W += alpha P; Rk -= alpha AP; P_next = M Rk + beta P where with_direction (M = diag(inv_diag)
    where precond, else I); rr = Rk^T Rk and rz = Rk^T M Rk afterwards, per column, in the fixed
    order of reference_in_order. One target's arrays are read as 1-d views (contiguous, so the
    compiler may vectorize what has no sum)."""
    n, n_cols = W.shape
    parts, zparts = _block_sums(n, n_cols), _block_sums(n, n_cols)
    if n_cols == 1:
        w, rk, p, p_next, ap = W.reshape(n), Rk.reshape(n), P.reshape(n), P_next.reshape(n), AP.reshape(n)
        for b in nb.prange(parts.shape[0]):
            lo, hi = _block_rows(b, n)
            parts[b, 0], zparts[b, 0] = _one_target_block(
                w[lo:hi], rk[lo:hi], p[lo:hi], p_next[lo:hi], ap[lo:hi], alpha[0], beta[0],
                inv_diag[lo:hi], precond, with_direction)
    else:  # rows indexed lo..hi into the whole arrays: as views from 0, several targets ran 5-30 % slower
        for b in nb.prange(parts.shape[0]):
            lo, hi = _block_rows(b, n)
            for j in range(lo, hi):
                m = inv_diag[j] if precond else 1.0
                for c in range(n_cols):
                    p = P[j, c]
                    W[j, c] += alpha[c] * p
                    r = Rk[j, c] - alpha[c] * AP[j, c]
                    Rk[j, c] = r
                    if with_direction:
                        P_next[j, c] = m * r + beta[c] * p
                    parts[b, c] += r * r
                    zparts[b, c] += m * r * r
    _sum_blocks(parts, n_cols, rr)
    _sum_blocks(zparts, n_cols, rz)


@nb.njit(parallel=True, cache=True)
def step(W, Rk, P, AP, alpha, rr):
    """W += alpha P; Rk -= alpha AP (per column); rr[c] = Rk[:, c]^T Rk[:, c] afterwards."""
    # no preconditioner and no direction: the empty inv_diag and P_next = P are never touched; rz
    # (= rr) is thrown away. Skipping its sum (a branch on the preconditioner in the shared lanes)
    # made step_preconditioned and step_direction 5-10 % slower, for no clear gain in step.
    _update(W, Rk, P, P, AP, alpha, alpha, W[:0, 0], False, False, rr, np.empty_like(rr))


@nb.njit(parallel=True, cache=True)
def step_preconditioned(W, Rk, P, AP, alpha, inv_diag, rr, rz):
    """step() and the preconditioned residual's dot in the same pass: rz[c] = Rk[:, c]^T (inv_diag *
    Rk[:, c]) afterwards, without forming inv_diag * Rk (a D x C array PCG allocated every step)."""
    _update(W, Rk, P, P, AP, alpha, alpha, inv_diag, True, False, rr, rz)


@nb.njit(inline="always")
def _direction(P_next, P, Zk, inv_diag, beta, precond):
    """P_next = M Zk + beta P (per column), M = diag(inv_diag) where precond, else I; one target's
    arrays as contiguous 1-d views, every block's rows indexed from 0 (module docstring)."""
    n, n_cols = P.shape
    n_blocks = _n_blocks(n)
    if n_cols == 1:
        p_next, p, z, be = P_next.reshape(n), P.reshape(n), Zk.reshape(n), beta[0]
        for b in nb.prange(n_blocks):
            lo, hi = _block_rows(b, n)
            out, pb, zb, mb = p_next[lo:hi], p[lo:hi], z[lo:hi], inv_diag[lo:hi]
            for k in range(out.shape[0]):
                out[k] = (mb[k] * zb[k] if precond else zb[k]) + be * pb[k]
    else:  # as in _update
        for b in nb.prange(n_blocks):
            lo, hi = _block_rows(b, n)
            for j in range(lo, hi):
                m = inv_diag[j] if precond else 1.0
                for c in range(n_cols):
                    P_next[j, c] = (m * Zk[j, c] if precond else Zk[j, c]) + beta[c] * P[j, c]


@nb.njit(parallel=True, cache=True)
def direction(P_next, P, Zk, beta):
    """P_next = Zk + beta P (per column); P_next is another buffer than P (module docstring)."""
    _direction(P_next, P, Zk, P[:0, 0], beta, False)


@nb.njit(parallel=True, cache=True)
def direction_preconditioned(P_next, P, Rk, inv_diag, beta):
    """P_next = inv_diag * Rk + beta P (per column): direction() with the preconditioned residual
    formed on the fly."""
    _direction(P_next, P, Rk, inv_diag, beta, True)


@nb.njit(parallel=True, cache=True)
def step_direction(W, Rk, P, P_next, AP, alpha, beta, inv_diag, rr, rz):
    """A whole CG step's vector work in one pass, where the operator gave the dots that fix alpha and
    beta beforehand (solvers.cg): W += alpha P; Rk -= alpha AP; P_next = M Rk + beta P; and the new
    residual's rr = Rk^T Rk and rz = Rk^T M Rk as computed, for the stopping test and the next step.
    inv_diag is M's diagonal, or an empty array for plain CG (M = I). Five arrays read, three
    written, once: step() and direction() read P and Rk twice and wrote Rk before reading it back."""
    _update(W, Rk, P, P_next, AP, alpha, beta, inv_diag, inv_diag.shape[0] == W.shape[0], True, rr, rz)


def reference_step(W, Rk, P, AP, alpha):
    W += alpha * P
    Rk -= alpha * AP
    return np.einsum("ij,ij->j", Rk, Rk)


def reference_direction(P, Zk, beta):
    P *= beta
    P += Zk


def reference_step_direction(W, Rk, P, AP, alpha, beta, inv_diag):
    """Plain numpy for step_direction: returns (P_next, rr, rz)."""
    m = inv_diag[:, None] if inv_diag.shape[0] == W.shape[0] else np.ones((W.shape[0], 1))
    W += alpha * P
    Rk -= alpha * AP
    return m * Rk + beta * P, np.einsum("ij,ij->j", Rk, Rk), np.einsum("ij,ij->j", Rk, m * Rk)


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
