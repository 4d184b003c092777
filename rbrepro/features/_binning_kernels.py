"""numba kernels for Random Binning (paper Alg. 1).

A point's bin in grid r is the integer vector b_j = floor((x_j - u_rj) * (1/delta_rj)).
The vector is reduced to one 64-bit key, a sum (mod 2^64) of per-feature mixes

    key = sum_j mix(base_j + b_j)

so that a sparse row costs nnz operations instead of d: the key of a row equals the
key of the all-zero row plus, for each stored entry, the change of that feature's
term (see `keys_csr`). Keys are mapped to consecutive column ids per grid with an
open-addressing hash table. Two different bin vectors share a key with probability
about 2^-64 per pair; a collision would merge two bins of one grid.

Plain-numpy references of every kernel live in `reference.py`; tests compare them.
"""

import numba as nb
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_EMPTY = np.int32(-1)


@nb.njit(cache=True, inline="always")
def mix64(z):
    """splitmix64 finalizer: a bijective, well-mixed map of uint64."""
    z = z + _GOLDEN
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@nb.njit(cache=True, inline="always")
def bin_term(x, u, inv_delta, base):
    b = np.int64(np.floor((x - u) * inv_delta))
    return mix64(base + np.uint64(b))


@nb.njit(parallel=True, cache=True)
def keys_dense(X, u, inv_delta, base, out):
    """Keys of every row of dense X for the grids u.shape[0] (out: grids x rows)."""
    n_grids, d = u.shape
    n = X.shape[0]
    for i in nb.prange(n):
        for k in range(n_grids):
            h = np.uint64(0)
            for j in range(d):
                h += bin_term(np.float64(X[i, j]), u[k, j], inv_delta[k, j], base[j])
            out[k, i] = h


@nb.njit(parallel=True, cache=True)
def zero_row_terms(u, inv_delta, base, zero_terms, zero_keys):
    """Per grid: the term of each feature at x_j = 0, and the key of the all-zero row."""
    n_grids, d = u.shape
    for k in nb.prange(n_grids):
        h = np.uint64(0)
        for j in range(d):
            t = bin_term(0.0, u[k, j], inv_delta[k, j], base[j])
            zero_terms[k, j] = t
            h += t
        zero_keys[k] = h


@nb.njit(parallel=True, cache=True)
def keys_csr(indptr, indices, data, u, inv_delta, base, zero_terms, zero_keys, out):
    """Keys of every row of a CSR matrix: the zero row's key plus each entry's change."""
    n_grids = u.shape[0]
    n = indptr.shape[0] - 1
    for i in nb.prange(n):
        lo = indptr[i]
        hi = indptr[i + 1]
        for k in range(n_grids):
            h = zero_keys[k]
            for p in range(lo, hi):
                j = indices[p]
                h += bin_term(np.float64(data[p]), u[k, j], inv_delta[k, j], base[j]) - zero_terms[k, j]
            out[k, i] = h


@nb.njit(cache=True, inline="always")
def _slot(key, mask):
    return np.int64((key ^ (key >> _S32)) & np.uint64(mask))


@nb.njit(parallel=True, cache=True)
def assign_columns(keys, ids, uniq, n_bins, max_count):
    """Number each grid's distinct keys 0, 1, ... in order of first appearance.

    keys: grids x rows. Writes ids (grids x rows, local column ids), uniq[k, :n_bins[k]]
    (the distinct keys in id order), n_bins[k] and max_count[k] (largest bin's count,
    for kappa). Grids are independent, so they run in parallel.
    """
    n_grids, n = keys.shape
    cap = 1
    while cap < 2 * n:
        cap *= 2
    mask = cap - 1
    for k in nb.prange(n_grids):
        table_keys = np.empty(cap, np.uint64)
        table_ids = np.full(cap, _EMPTY, np.int32)
        counts = np.zeros(n, np.int64)
        n_seen = 0
        for i in range(n):
            key = keys[k, i]
            s = _slot(key, mask)
            while True:
                c = table_ids[s]
                if c == _EMPTY:
                    table_ids[s] = n_seen
                    table_keys[s] = key
                    uniq[k, n_seen] = key
                    counts[n_seen] = 1
                    ids[k, i] = n_seen
                    n_seen += 1
                    break
                if table_keys[s] == key:
                    ids[k, i] = c
                    counts[c] += 1
                    break
                s = (s + 1) & mask
        n_bins[k] = n_seen
        best = 0
        for c in range(n_seen):
            if counts[c] > best:
                best = counts[c]
        max_count[k] = best


@nb.njit(parallel=True, cache=True)
def build_lookup(uniq_flat, bin_offsets, table_offsets, table_keys, table_ids):
    """Per-grid hash tables (key -> global column id), packed into flat arrays.

    Grid r's distinct keys are uniq_flat[bin_offsets[r]:bin_offsets[r+1]] and its
    columns are numbered from bin_offsets[r]; its table occupies
    table_keys[table_offsets[r]:table_offsets[r+1]] (a power of two >= 2 D_r).
    """
    n_grids = bin_offsets.shape[0] - 1
    for r in nb.prange(n_grids):
        t0 = table_offsets[r]
        mask = table_offsets[r + 1] - t0 - 1
        for c in range(bin_offsets[r], bin_offsets[r + 1]):
            key = uniq_flat[c]
            s = _slot(key, mask)
            while table_ids[t0 + s] != _EMPTY:
                s = (s + 1) & mask
            table_keys[t0 + s] = key
            table_ids[t0 + s] = c


@nb.njit(parallel=True, cache=True)
def lookup_columns(keys, grid0, table_offsets, table_keys, table_ids, ids):
    """Global column id of each key of grids grid0.. (or -1 for a bin unseen in training)."""
    n_grids, n = keys.shape
    for i in nb.prange(n):
        for k in range(n_grids):
            r = grid0 + k
            t0 = table_offsets[r]
            mask = table_offsets[r + 1] - t0 - 1
            key = keys[k, i]
            s = _slot(key, mask)
            found = _EMPTY
            while True:
                c = table_ids[t0 + s]
                if c == _EMPTY:
                    break
                if table_keys[t0 + s] == key:
                    found = c
                    break
                s = (s + 1) & mask
            ids[r, i] = found


@nb.njit(parallel=True, cache=True)
def add_grid_offsets(ids, grid0, offsets):
    """Turn local ids of grids grid0.. into global column ids, in place."""
    n_grids, n = ids.shape
    for i in nb.prange(n):
        for k in range(n_grids):
            ids[k, i] += offsets[grid0 + k]
