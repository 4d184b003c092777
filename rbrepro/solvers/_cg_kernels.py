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
PCG's step and direction have their own fused kernels (`step_preconditioned`,
`direction_preconditioned`): the preconditioned residual is never stored. Where the operator returns
the dots that fix the step and the next residual's norm with its product (`gram_apply_dots`),
`step_direction` does the update and the new direction together in one pass (solvers.cg).
Plain-numpy references: `reference_step`, `reference_direction` and `reference_step_direction`.
"""

import numba as nb
import numpy as np

ROW_BLOCK = 16384


@nb.njit(inline="always")
def _sum_blocks(parts, out):
    """out[c] = the row blocks' partial sums of column c, added in block order (the same sum, bit for
    bit, however many threads ran the blocks)."""
    for c in range(parts.shape[1]):
        out[c] = 0.0
        for b in range(parts.shape[0]):
            out[c] += parts[b, c]


@nb.njit(parallel=True, cache=True)
def step(W, Rk, P, AP, alpha, rr):
    """W += alpha P; Rk -= alpha AP (per column); rr[c] = Rk[:, c]^T Rk[:, c] afterwards."""
    n, n_cols = W.shape
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    parts = np.zeros((n_blocks, n_cols))
    for b in nb.prange(n_blocks):
        lo = b * ROW_BLOCK
        hi = min(n, lo + ROW_BLOCK)
        for j in range(lo, hi):
            for c in range(n_cols):
                W[j, c] += alpha[c] * P[j, c]
                r = Rk[j, c] - alpha[c] * AP[j, c]
                Rk[j, c] = r
                parts[b, c] += r * r
    _sum_blocks(parts, rr)


@nb.njit(parallel=True, cache=True)
def direction(P_next, P, Zk, beta):
    """P_next = Zk + beta P (per column); P_next is another buffer than P (module docstring)."""
    n, n_cols = P.shape
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in nb.prange(n_blocks):
        lo = b * ROW_BLOCK
        hi = min(n, lo + ROW_BLOCK)
        for j in range(lo, hi):
            for c in range(n_cols):
                P_next[j, c] = Zk[j, c] + beta[c] * P[j, c]


@nb.njit(parallel=True, cache=True)
def step_preconditioned(W, Rk, P, AP, alpha, inv_diag, rr, rz):
    """step() and the preconditioned residual's dot in the same pass: rz[c] = Rk[:, c]^T (inv_diag *
    Rk[:, c]) afterwards, without forming inv_diag * Rk (a D x C array PCG allocated every step)."""
    n, n_cols = W.shape
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    parts = np.zeros((n_blocks, n_cols))
    zparts = np.zeros((n_blocks, n_cols))
    for b in nb.prange(n_blocks):
        lo = b * ROW_BLOCK
        hi = min(n, lo + ROW_BLOCK)
        for j in range(lo, hi):
            m = inv_diag[j]
            for c in range(n_cols):
                W[j, c] += alpha[c] * P[j, c]
                r = Rk[j, c] - alpha[c] * AP[j, c]
                Rk[j, c] = r
                parts[b, c] += r * r
                zparts[b, c] += r * r * m
    _sum_blocks(parts, rr)
    _sum_blocks(zparts, rz)


@nb.njit(parallel=True, cache=True)
def direction_preconditioned(P_next, P, Rk, inv_diag, beta):
    """P_next = inv_diag * Rk + beta P (per column): direction() with the preconditioned residual
    formed on the fly."""
    n, n_cols = P.shape
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in nb.prange(n_blocks):
        lo = b * ROW_BLOCK
        hi = min(n, lo + ROW_BLOCK)
        for j in range(lo, hi):
            m = inv_diag[j]
            for c in range(n_cols):
                P_next[j, c] = m * Rk[j, c] + beta[c] * P[j, c]


@nb.njit(parallel=True, cache=True)
def step_direction(W, Rk, P, P_next, AP, alpha, beta, inv_diag, rr, rz):
    """A whole CG step's vector work in one pass, where the operator gave the dots that fix alpha and
    beta beforehand (solvers.cg): W += alpha P; Rk -= alpha AP; P_next = M Rk + beta P; and the new
    residual's rr = Rk^T Rk and rz = Rk^T M Rk as computed, for the stopping test and the next step.
    inv_diag is M's diagonal, or an empty array for plain CG (M = I). Five arrays read, three
    written, once: step() and direction() read P and Rk twice and wrote Rk before reading it back."""
    n, n_cols = W.shape
    precond = inv_diag.shape[0] == n
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    parts = np.zeros((n_blocks, n_cols))
    zparts = np.zeros((n_blocks, n_cols))
    for b in nb.prange(n_blocks):
        lo = b * ROW_BLOCK
        hi = min(n, lo + ROW_BLOCK)
        for j in range(lo, hi):
            m = inv_diag[j] if precond else 1.0
            for c in range(n_cols):
                p = P[j, c]
                W[j, c] += alpha[c] * p
                r = Rk[j, c] - alpha[c] * AP[j, c]
                Rk[j, c] = r
                P_next[j, c] = m * r + beta[c] * p
                parts[b, c] += r * r
                zparts[b, c] += m * r * r
    _sum_blocks(parts, rr)
    _sum_blocks(zparts, rz)


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
