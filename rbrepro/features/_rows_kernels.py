"""numba kernels for some rows of the compact Random Binning layout (`BinnedMatrix.rows`): their ids, and
their bins' counts.

ids is grid-major (R x N): the rows a held-out split keeps are a column subset of every grid's row
of ids. numpy's `np.take(ids, rows, axis=1)` gathered them at about 2.5 GB/s on one core (ijcnn1,
R = 256, nine tenths of 35,000 rows: 13 ms a split); here each thread takes whole grids, each grid's
row of ids (N int32) read from the cache. Plain-numpy references: `reference_take_rows`,
`reference_count_rows`.
"""

import numba as nb
import numpy as np


@nb.njit(parallel=True, cache=True)
def take_rows(ids, rows, out):
    """out[r, k] = ids[r, rows[k]] for every grid r (rows: increasing row numbers, each in 0 ... N-1)."""
    for r in nb.prange(ids.shape[0]):
        src, dst = ids[r], out[r]
        for k in range(rows.shape[0]):
            dst[k] = src[rows[k]]


def reference_take_rows(ids, rows):
    """Plain numpy for `take_rows`."""
    return np.take(ids, rows, axis=1)


@nb.njit(parallel=True, cache=True)
def count_rows(ids, rows, offsets, out):
    """out[c] = how many of the rows `rows` lie in column c's bin (unseen bins, -1, left out); each thread
    takes whole grids, whose columns (offsets[r] ... offsets[r + 1] - 1) no other grid writes."""
    for r in nb.prange(ids.shape[0]):
        for c in range(offsets[r], offsets[r + 1]):
            out[c] = 0.0
        src = ids[r]
        for k in range(rows.shape[0]):
            col = src[rows[k]]
            if col >= 0:
                out[col] += 1.0


def reference_count_rows(ids, rows, n_columns):
    """Plain numpy for `count_rows`."""
    taken = ids[:, rows]
    return np.bincount(taken[taken >= 0], minlength=n_columns).astype(np.float64)
