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
def assign_columns(keys, ids, n_bins, max_count, n_chunks):
    """Number each grid's distinct keys 0, 1, ... in order of first appearance.

    keys: grids x rows. Writes ids (grids x rows, local column ids), n_bins[k], max_count[k]
    (largest bin's count, for kappa), and overwrites keys[k, :n_bins[k]] with the distinct
    keys in id order (safe in place: the c-th distinct key is first seen at a row >= c).
    Grids run in parallel in n_chunks contiguous chunks (one per thread); each chunk reuses
    one hash table, whose slots are marked with the grid that filled them (no clearing
    between grids, no allocation per grid).
    """
    n_grids, n = keys.shape
    cap = 1
    while cap < 2 * n:
        cap *= 2
    mask = cap - 1
    n_chunks = max(1, min(n_chunks, n_grids))
    size = (n_grids + n_chunks - 1) // n_chunks
    table_keys = np.empty((n_chunks, cap), np.uint64)
    table_ids = np.empty((n_chunks, cap), np.int32)
    table_grid = np.full((n_chunks, cap), -1, np.int64)
    counts_all = np.zeros((n_chunks, n), np.int64)
    for t in nb.prange(n_chunks):
        tk = table_keys[t]
        ti = table_ids[t]
        tg = table_grid[t]
        counts = counts_all[t]
        for k in range(t * size, min(n_grids, (t + 1) * size)):
            _assign_grid(keys, ids, n_bins, max_count, k, tk, ti, tg, counts, mask)


@nb.njit(cache=True)
def _assign_grid(keys, ids, n_bins, max_count, k, tk, ti, tg, counts, mask):
    """One grid of assign_columns, in the chunk's reused table."""
    n = keys.shape[1]
    n_seen = 0
    for i in range(n):
        key = keys[k, i]
        s = _slot(key, mask)
        while True:
            if tg[s] != k:
                tg[s] = k
                ti[s] = n_seen
                tk[s] = key
                keys[k, n_seen] = key
                counts[n_seen] = 1
                ids[k, i] = n_seen
                n_seen += 1
                break
            if tk[s] == key:
                c = ti[s]
                ids[k, i] = c
                counts[c] += 1
                break
            s = (s + 1) & mask
    n_bins[k] = n_seen
    best = 0
    for c in range(n_seen):
        if counts[c] > best:
            best = counts[c]
        counts[c] = 0
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
