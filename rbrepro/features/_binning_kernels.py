"""numba kernels for Random Binning (paper Alg. 1).

A point's bin in grid r is the integer vector b_j = floor((x_j - u_rj) * (1/delta_rj)).
The vector is reduced to one 64-bit key, a linear hash with fixed odd per-feature
multipliers a_j (mod 2^64)

    key = sum_j a_j b_j

For a fixed pair of different bin vectors, a random choice of the a_j makes them share a
key with probability about 2^-64 (times 2^v when every difference is divisible by 2^v);
a collision would merge two bins of one grid. Being linear, the key of a sparse row is
the key of the all-zero row plus, for each stored entry, a_j (b_j(x) - b_j(0)), so a CSR
row costs nnz operations instead of d (see `keys_csr`).

Layout for speed: the grid parameters are stored feature-major (d x grids). Dense rows are
keyed a block of rows at a time, grid by grid, vectorized over the block's rows (floor,
float->int64 conversion and 64-bit multiply are vector instructions on AVX-512) and written in
contiguous runs of the grids x rows output; CSR rows entry by entry, vectorized over grids.
Keys are then numbered per grid with an open-addressing hash table of ids that starts
sparse (sized from the grid before, so that most probes end in their home slot) and doubles
when half full.

Plain-numpy references of every kernel live in `reference.py`; tests compare them.
"""

import functools

import numba as nb
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_S32 = np.uint64(32)
_EMPTY = np.int32(-1)
_FIRST_TABLE = 1024  # slots of the first grid's first hash table in assign_columns
_MIN_TABLE = 256  # fewest slots of a later grid's first table (1 KB)
#: slots of assign_columns' table per bin of the grid before (a power of two at least this). Numbering
#: alone, min of 9, one process, 2 threads, AMD EPYC Zen 1, id-only slots at 4 / 8 / 16 / 32 slots a bin
#: against the 16-byte slots (key, stamp and id) at 3 before: ijcnn1 R = 64 4.54 / 4.25 / 4.21 / 4.24 ms
#: against 5.46, R = 256 (a batch of 119 grids) 9.19 / 8.29 / 8.24 / 8.62 against 9.93, cadata R = 256
#: 2.67 / 2.47 / 2.14 / 2.02 against 2.93, letter 3.51 / 3.30 / 2.93 / 2.95 against 3.83, cod_rna_split
#: 1.76 / 1.59 / 1.59 / 1.59 against 1.89, mnist R = 64 8.40 / 8.12 / 8.20 / 8.53 against 9.85
TABLE_SLOTS_PER_BIN = 16


@nb.njit(cache=True, inline="always")
def bin_term(x, u, inv_delta, a):
    """a_j b_j (mod 2^64) for one feature of one grid."""
    return np.uint64(np.int64(np.floor((x - u) * inv_delta))) * a


#: 1.5 * 2^52: an integer-valued double b with |b| < 2^51 added to it is exact, and the sum's bits less
#: MAGIC's are b as an int64 (`_bins_to_terms`): a conversion AVX2 vectorizes, where int64(b) has no
#: vector instruction before AVX-512 and runs one value at a time
MAGIC = 6755399441055744.0
MAGIC_BITS = np.int64(0x4338000000000000)
#: the largest |bin index| the trick is used for (half its exact range: a margin for the rounding of
#: the bound itself); a grid whose bins may reach past it takes bin_term
EXACT_BINS = 2.0 ** 50


@nb.njit(cache=True, inline="always")
def _floor_bins(x, u, inv_delta, out):
    """out[r] = floor((x[r] - u) * inv_delta) + MAGIC, the bin indices biased for `_bins_to_terms`."""
    for r in range(x.shape[0]):
        out[r] = np.floor((x[r] - u) * inv_delta) + MAGIC


@nb.njit(cache=True, inline="always")
def _add_terms(biased_bits, a, keys):
    """keys[r] += a * b_r (mod 2^64), b_r read from the bits of its biased double (`_floor_bins`): the
    same key, bit for bit, as adding bin_term."""
    for r in range(keys.shape[0]):
        keys[r] += np.uint64(biased_bits[r] - MAGIC_BITS) * a


@nb.njit(cache=True, inline="always")
def _add_floored(x, u, inv_delta, a, keys):
    """keys[r] += a * floor((x[r] - u) * inv_delta) (mod 2^64) in one loop, the bin index converted to int64
    directly: the same key, bit for bit, as `_floor_bins` then `_add_terms`, and one pass where the host has
    a vector int64(double) (`vector_int64`)."""
    for r in range(keys.shape[0]):
        keys[r] += np.uint64(np.int64(np.floor((x[r] - u) * inv_delta))) * a


@functools.cache
def vector_int64() -> bool:
    """Whether this host converts doubles to int64 in vector instructions (AVX-512DQ's vcvttpd2qq), so the
    key kernels convert bin indices in their summing loops (`direct`); without it (AVX2) LLVM converts one
    value at a time and the MAGIC trick's two passes win. Key pass of one batch, min of 7, one process,
    2 threads, AMD EPYC Zen 4, direct against MAGIC: ijcnn1 R = 1024 (119 grids, keys_csr) 14.5 against
    17.7 ms; keys_dense (R = 256) cadata 1.21 against 1.57, cod_rna_split 1.29 against 1.82, letter
    1.84 against 3.11. False where numba compiles for a named CPU (NUMBA_CPU_NAME) rather than this host."""
    try:
        import llvmlite.binding as llvm
        from numba.core import config

        if config.CPU_NAME not in (None, "host"):
            return False
        return bool(llvm.get_host_cpu_features().get("avx512dq", False))
    except (ImportError, RuntimeError, AttributeError):
        return False


@nb.njit(parallel=True, cache=True)
def keys_dense(X, uT, invT, mult, block, out, direct=False):
    """Keys of every row of dense X for the grids of uT (d x grids); out: grids x rows. direct: take the
    bin indices to int64 in the summing loop itself (`vector_int64`), else through MAGIC's bits.

    Grid-major per block of `block` rows: the block's values are copied feature-major (d x block)
    once, then for each grid its keys are summed feature by feature in the block's contiguous run of
    out[k], the loop over rows vectorized: the bin indices floored as doubles, then taken to int64
    through MAGIC's bits (`_floor_bins`, `_add_terms`) where the block's range of the feature keeps
    them within EXACT_BINS, else through bin_term (AVX2 has no vector int64(double): that one
    conversion ran the whole key pass at a fraction of the rate on a Zen 1 EPYC). (Summing each row's keys over all grids first, then storing
    them at a stride of a whole row of out, spent most of its time on those scattered stores: 2-5x
    slower on 8-22 features.) Integer sums mod 2^64 do not depend on their order: the keys are exact.
    """
    d, n_grids = uT.shape
    n = X.shape[0]
    n_blocks = (n + block - 1) // block
    for b in nb.prange(n_blocks):
        i0 = b * block
        m = min(block, n - i0)
        xb = np.empty((d, m))
        for r in range(m):
            for j in range(d):
                xb[j, r] = X[i0 + r, j]
        low, high = np.empty(d), np.empty(d)
        for j in range(d):
            low[j], high[j] = _range(xb[j])
        biased = np.empty(m)
        bits = biased.view(np.int64)
        for k in range(n_grids):
            keys = out[k, i0:i0 + m]
            keys[:] = 0
            for j in range(d):
                u, inv_delta, a = uT[j, k], invT[j, k], mult[j]
                xj = xb[j]
                if max(abs(low[j] - u), abs(high[j] - u)) * inv_delta < EXACT_BINS:
                    if direct:
                        _add_floored(xj, u, inv_delta, a, keys)
                    else:
                        _floor_bins(xj, u, inv_delta, biased)
                        _add_terms(bits, a, keys)
                else:  # bins too far out for the exact trick (huge values against a fine grid)
                    for r in range(m):
                        keys[r] += bin_term(xj[r], u, inv_delta, a)


@nb.njit(cache=True, inline="always")
def _range(x):
    """(min, max) of a non-empty 1-d array."""
    low = high = x[0]
    for v in x:
        low = min(low, v)
        high = max(high, v)
    return low, high


@nb.njit(parallel=True, cache=True)
def zero_row_terms(uT, invT, mult, zero_termsT, zero_keys):
    """Per grid: the term of each feature at x_j = 0 (d x grids), and the all-zero row's key."""
    d, n_grids = uT.shape
    for k in nb.prange(n_grids):
        h = np.uint64(0)
        for j in range(d):
            t = bin_term(0.0, uT[j, k], invT[j, k], mult[j])
            zero_termsT[j, k] = t
            h += t
        zero_keys[k] = h


@nb.njit(parallel=True, cache=True)
def keys_csr(indptr, indices, data, uT, invT, mult, zero_termsT, zero_keys, block, out, direct=False):
    """Keys of every row of a CSR matrix: the zero row's key plus each entry's change (direct: as in
    `keys_dense`).

    Per block of `block` rows: each entry's terms over all grids (contiguous in uT, vectorized) go into
    a block x grids buffer, which is then written to out grid by grid in contiguous runs.
    """
    d, n_grids = uT.shape
    n = indptr.shape[0] - 1
    n_blocks = (n + block - 1) // block
    # per feature, a bound on |x - u| * inv_delta over its grids: (|x| + max |u|) * max inv_delta
    u_far, inv_most = np.empty(d), np.empty(d)
    for j in range(d):
        u_far[j], inv_most[j] = np.max(np.abs(uT[j])), np.max(invT[j])
    for b in nb.prange(n_blocks):
        i0 = b * block
        m = min(block, n - i0)
        h = np.empty((m, n_grids), np.uint64)
        biased = np.empty(n_grids)
        bits = biased.view(np.int64)
        for r in range(m):
            hr = h[r]
            hr[:] = zero_keys
            for p in range(indptr[i0 + r], indptr[i0 + r + 1]):
                j = indices[p]
                x = np.float64(data[p])
                a = mult[j]
                if (abs(x) + u_far[j]) * inv_most[j] < EXACT_BINS:  # as in keys_dense
                    uj, invj, zj = uT[j], invT[j], zero_termsT[j]
                    if direct:
                        for k in range(n_grids):
                            hr[k] += np.uint64(np.int64(np.floor((x - uj[k]) * invj[k]))) * a - zj[k]
                    else:
                        for k in range(n_grids):
                            biased[k] = np.floor((x - uj[k]) * invj[k]) + MAGIC
                        for k in range(n_grids):
                            hr[k] += np.uint64(bits[k] - MAGIC_BITS) * a - zj[k]
                else:
                    for k in range(n_grids):
                        hr[k] += bin_term(x, uT[j, k], invT[j, k], a) - zero_termsT[j, k]
        for k in range(n_grids):
            for r in range(m):
                out[k, i0 + r] = h[r, k]


@nb.njit(parallel=True, cache=True)
def count_nonzeros(X, indptr):
    """indptr of X's CSR form: row i's non-zeros start at indptr[i] (counted split over rows, then summed);
    indptr[n] is X's count, which decides whether `dense_nonzeros` is worth writing."""
    n, d = X.shape
    indptr[0] = 0
    for i in nb.prange(n):
        c = 0
        for j in range(d):
            if X[i, j] != 0:
                c += 1
        indptr[i + 1] = c
    for i in range(n):
        indptr[i + 1] += indptr[i]


@nb.njit(parallel=True, cache=True)
def dense_nonzeros(X, indptr):
    """X's non-zeros as CSR, (indices, data) at the rows' starts in indptr (`count_nonzeros`), so that
    `keys_csr` keys a dense X with many zeros at one step per non-zero instead of one per feature."""
    n, d = X.shape
    indices = np.empty(indptr[n], np.int32)
    data = np.empty(indptr[n], X.dtype)
    for i in nb.prange(n):
        p = indptr[i]
        for j in range(d):
            if X[i, j] != 0:
                indices[p] = j
                data[p] = X[i, j]
                p += 1
    return indices, data


@nb.njit(cache=True, inline="always")
def _slot(key, mask):
    """Fibonacci hashing: the product's high half depends on every bit of the key."""
    return np.int64(((key * _GOLDEN) >> _S32) & np.uint64(mask))


@nb.njit(parallel=True, cache=True)
def assign_columns(keys, ids, n_bins, n_chunks):
    """Number each grid's distinct keys 0, 1, ... in order of first appearance.

    keys: grids x rows. Writes ids (grids x rows, local column ids) and n_bins[k], and overwrites
    keys[k, :n_bins[k]] with the distinct keys in id order (safe in place: the c-th distinct key is
    first seen at a row >= c). Grids run in parallel in n_chunks contiguous chunks (one per thread);
    each chunk reuses one table buffer. A slot holds only an id (4 bytes, -1 empty): a probe compares
    its key with keys[k, id], the grid's distinct keys so far, which stay in cache. So a table can be
    sparse, TABLE_SLOTS_PER_BIN slots a bin of the grid before, and most probes end in their home slot:
    a probe that goes on is a mispredicted branch, which cost more than the table's cache misses. The
    bins' row counts are not kept here: counted per key, one grid at a time, they took a third of the
    numbering (each row's count waits on the one before in the same bin); a fit counts its bins
    afterwards in the scatter that walks many grids together (`BinnedMatrix.column_counts`).
    """
    n_grids, n = keys.shape
    cap = 1
    while cap < 2 * n:
        cap *= 2
    n_chunks = max(1, min(n_chunks, n_grids))
    size = (n_grids + n_chunks - 1) // n_chunks
    table = np.empty((n_chunks, cap), np.int32)
    for t in nb.prange(n_chunks):
        first = _FIRST_TABLE
        for k in range(t * size, min(n_grids, (t + 1) * size)):
            n_bins[k] = _assign_grid(keys[k], ids[k], table[t], cap, first)
            first = _MIN_TABLE  # grids are i.i.d.: size the next grid's table for about this one's bins
            while first < TABLE_SLOTS_PER_BIN * n_bins[k]:
                first *= 2


@nb.njit(cache=True, inline="always")
def _free_slot(key, mask, table):
    """The first empty slot of `key`'s probe sequence in an open-addressing table of ids (_EMPTY: free)."""
    s = _slot(key, mask)
    while table[s] != _EMPTY:
        s = (s + 1) & mask
    return s


@nb.njit(cache=True)
def _assign_grid(grid_keys, grid_ids, table, max_cap, first_cap):
    """One grid of assign_columns; returns its bins. The table starts at first_cap slots and doubles
    (cleared, the distinct keys so far re-inserted) when half full."""
    n = grid_keys.shape[0]
    cap = min(max_cap, first_cap)
    mask = cap - 1
    table[:cap] = _EMPTY
    n_seen = 0
    grow_at = cap // 2
    for i in range(n):
        if n_seen >= grow_at and cap < max_cap:
            cap *= 2
            mask = cap - 1
            grow_at = cap // 2
            table[:cap] = _EMPTY
            for c in range(n_seen):
                table[_free_slot(grid_keys[c], mask, table)] = c
        key = grid_keys[i]
        s = _slot(key, mask)
        while True:
            c = table[s]
            if c == _EMPTY:
                table[s] = n_seen
                grid_keys[n_seen] = key
                grid_ids[i] = n_seen
                n_seen += 1
                break
            if grid_keys[c] == key:
                grid_ids[i] = c
                break
            s = (s + 1) & mask
    return n_seen


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
        grid_keys, grid_ids = table_keys[t0:t0 + mask + 1], table_ids[t0:t0 + mask + 1]
        for c in range(bin_offsets[r], bin_offsets[r + 1]):
            key = uniq_flat[c]
            s = _free_slot(key, mask, grid_ids)
            grid_keys[s] = key
            grid_ids[s] = c


@nb.njit(cache=True, inline="always")
def find_column(key, t0, mask, table_keys, table_ids):
    """The column of `key` in the open-addressing table at table_keys[t0:t0+mask+1], or -1."""
    s = _slot(key, mask)
    while True:
        c = table_ids[t0 + s]
        if c == _EMPTY or table_keys[t0 + s] == key:
            return c
        s = (s + 1) & mask


@nb.njit(parallel=True, cache=True)
def lookup_columns(keys, grid0, table_offsets, table_keys, table_ids, ids):
    """Global column id of each key of grids grid0.. (or -1 for a bin unseen in training).

    Grid-major: each thread takes whole grids and probes one grid's table for every row, so
    the table (about 2 D_r slots) stays in cache and keys/ids stream in order. (Row-major
    probing touches R different tables per row and misses cache on nearly every probe: it
    made predicting ijcnn1's test set at R = 4375 2-3x slower than binning it.) A grid's table,
    keys and ids are views indexed from 0: indexed from the table's offset, numba wrapped every
    probe (×1.3-1.45 as long on the test rows of ijcnn1 R = 64 / 1024, cadata and letter R = 256).
    """
    n_grids, n = keys.shape
    for k in nb.prange(n_grids):
        r = grid0 + k
        t0, t1 = table_offsets[r], table_offsets[r + 1]
        grid_keys, grid_ids, row_keys, row_ids = table_keys[t0:t1], table_ids[t0:t1], keys[k], ids[r]
        mask = t1 - t0 - 1
        for i in range(n):
            row_ids[i] = find_column(row_keys[i], 0, mask, grid_keys, grid_ids)


@nb.njit(parallel=True, cache=True)
def add_grid_offsets(ids, grid0, offsets):
    """Turn local ids of grids grid0.. into global column ids, in place (grid by grid: each thread
    walks whole contiguous rows of ids)."""
    n_grids, n = ids.shape
    for k in nb.prange(n_grids):
        offset = np.int32(offsets[grid0 + k])  # D fits int32 (checked before numbering)
        for i in range(n):
            ids[k, i] += offset
