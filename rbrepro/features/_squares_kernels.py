"""numba kernel of |Z p|^2, the sum of squares of a CG step's gather (solvers.cg: the step length
alpha = r^T M r / (|Z p|^2 + lam |p|^2)), in an order fixed by the shape, with its plain-numpy
reference `reference_column_squares`."""

import numba as nb
import numpy as np

#: rows per block of `column_squares`, whose block sums are added in block order
SQUARES_BLOCK = 4096
#: the lanes `column_squares` sums one column's block in (a power of two: the lanes are added pairwise)
SQUARES_LANES = 8


@nb.njit(parallel=True, cache=True)
def column_squares(V, out):
    """out[c] = sum_i V[i, c]^2, in an order fixed by V's shape alone (blocks of SQUARES_BLOCK rows, then
    the blocks in order): the same bits on any number of threads (`reference_column_squares`). One
    column sums each block in SQUARES_LANES lanes (row i into lane i mod SQUARES_LANES from the block's
    start, the lanes added pairwise, then the rows past the last full lane row in order): one add chain
    per block left the core waiting on each add's latency, a fifth of an ijcnn1 CG step's time at
    R = 64 outside the operator. Several columns sum each block row by row (V's rows are contiguous)."""
    n, n_cols = V.shape
    n_blocks = (n + SQUARES_BLOCK - 1) // SQUARES_BLOCK
    parts = np.zeros((n_blocks, n_cols + 8))  # a cache line between two blocks' sums
    for b in nb.prange(n_blocks):
        lo, hi = b * SQUARES_BLOCK, min(n, (b + 1) * SQUARES_BLOCK)
        if n_cols == 1:
            parts[b, 0] = _lane_squares(V[lo:hi, 0])
        else:
            for i in range(lo, hi):
                for c in range(n_cols):
                    parts[b, c] += V[i, c] * V[i, c]
    for c in range(n_cols):
        out[c] = 0.0
        for b in range(n_blocks):
            out[c] += parts[b, c]


@nb.njit(inline="always")
def _lane_squares(x):
    """sum x^2 in SQUARES_LANES independent lanes (see `column_squares`)."""
    lanes = np.zeros(SQUARES_LANES)
    n_full = x.shape[0] - x.shape[0] % SQUARES_LANES
    for i in range(0, n_full, SQUARES_LANES):
        for k in range(SQUARES_LANES):
            lanes[k] += x[i + k] * x[i + k]
    width = SQUARES_LANES
    while width > 1:  # pairwise: ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) for 8
        width //= 2
        for k in range(width):
            lanes[k] = lanes[2 * k] + lanes[2 * k + 1]
    total = lanes[0]
    for i in range(n_full, x.shape[0]):
        total += x[i] * x[i]
    return total


def reference_column_squares(V):
    """Plain numpy for `column_squares`, in its order: per block, one column's lanes (or several
    columns' rows in order), then the blocks in order."""
    n, n_cols = V.shape
    out = np.zeros(n_cols)
    for lo in range(0, n, SQUARES_BLOCK):
        block = V[lo:lo + SQUARES_BLOCK] ** 2
        if n_cols == 1:
            n_full = len(block) - len(block) % SQUARES_LANES
            lanes = np.zeros(SQUARES_LANES)
            for i in range(0, n_full, SQUARES_LANES):
                lanes += block[i:i + SQUARES_LANES, 0]
            while len(lanes) > 1:  # pairwise, neighbours first
                lanes = lanes[0::2] + lanes[1::2]
            part = lanes[0]
            for i in range(n_full, len(block)):
                part += block[i, 0]
            out[0] += part
        else:
            out += np.cumsum(block, axis=0)[-1]
    return out
