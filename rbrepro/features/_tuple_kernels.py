"""numba kernels for the tuple layout of a Random Binning matrix (`features.tuples`): Z's 0/1 pattern
S (N x D) factored as S = T B, where T (N x U) picks, for each run of k consecutive grids, the row's
tuple of bins in those grids, and B (U x D) holds each tuple's k bins.

Where rows far outnumber the bins of a grid (cod_rna_split: 47,628 rows, about 100 bins a grid), few
of the bins' combinations occur (about 1,300 a run of three grids), so S p = T (B p) and
S^T v = B^T (T^T v) take one load (or read-add-write) a row per run of k grids, plus k a tuple, instead
of one a row per grid. The product is the same up to the order of its additions.

Plain-numpy reference: `reference_number_tuples` for the numbering; the gather and the fused scatter are
held by the tests to `features.reference.dense_features` and `_matvec_kernels.reference_update`.
"""

import numba as nb
import numpy as np

from rbrepro.features._matvec_kernels import _row_blocks, _update_grids

#: the runs of tuples summed in one pass over the rows (`gather_tuples`), in registers before out[i]
TUPLE_RUNS_PER_PASS = 8
assert TUPLE_RUNS_PER_PASS == 8  # _gather_tuples spells out its eight runs
#: Fibonacci hashing's multiplier, 2^64 / the golden ratio (`_number_run`)
_GOLDEN = np.uint64(11400714819323198485)
#: the first hash table's slots (a power of two); it doubles whenever a quarter full
_FIRST_SLOTS = 1024
_FIRST_BITS = 10
assert 2 ** _FIRST_BITS == _FIRST_SLOTS
#: the rows whose keys are made in one pass before they are looked up (`_number_run`)
KEY_CHUNK = 1024


@nb.njit(cache=True)
def _slot(key, bits):
    return np.int64((np.uint64(key) * _GOLDEN) >> np.uint64(64 - bits))


@nb.njit(cache=True)
def _number_run(ids, offsets, g0, g1, local, first, limit):
    """Number the distinct tuples of bins (ids[g0, i], ..., ids[g1 - 1, i]) of the rows in the order each
    first occurs: local[i] = row i's tuple, first[j] = tuple j's first row. Returns the number of tuples,
    or -1 where a row holds an unseen bin; or, as soon as they pass `limit`, limit + 1 (a count that only
    sizes a run stops there, the rows after it neither numbered nor checked). The keys (`_run_keys`) are made KEY_CHUNK rows at a time in a
    pass the compiler vectorizes, then looked up in an open-addressing hash table, doubled when a quarter
    full."""
    n = ids.shape[1]
    size = _FIRST_SLOTS
    bits = _FIRST_BITS
    keys = np.empty(size, np.int64)
    vals = np.full(size, -1, np.int32)
    chunk = np.empty(KEY_CHUNK, np.int64)
    count = 0
    for lo in range(0, n, KEY_CHUNK):
        hi = min(n, lo + KEY_CHUNK)
        if not _run_keys(ids, offsets, g0, g1, lo, hi, chunk):
            return -1
        for i in range(lo, hi):
            key = chunk[i - lo]
            h = _slot(key, bits)
            while vals[h] >= 0 and keys[h] != key:
                h = (h + 1) & (size - 1)
            if vals[h] >= 0:
                local[i] = vals[h]
                continue
            keys[h] = key
            vals[h] = count
            first[count] = i
            local[i] = count
            count += 1
            if count > limit:
                return count
            if 4 * count > size:  # double the table, every key moved to its new slot
                old_keys, old_vals = keys, vals
                bits += 1
                size *= 2
                keys = np.empty(size, np.int64)
                vals = np.full(size, -1, np.int32)
                for s in range(old_vals.shape[0]):
                    if old_vals[s] >= 0:
                        h2 = _slot(old_keys[s], bits)
                        while vals[h2] >= 0:
                            h2 = (h2 + 1) & (size - 1)
                        keys[h2] = old_keys[s]
                        vals[h2] = old_vals[s]
    return count


@nb.njit(cache=True)
def _run_keys(ids, offsets, g0, g1, lo, hi, out):
    """out[i - lo] = row i's bins in grids g0 ... g1-1 as one integer, mixed radix over the grids' widths
    (the caller checks that their product fits 62 bits: `tuples.fits_key`), for rows lo ... hi-1; False
    where one of them holds an unseen bin (-1)."""
    m = hi - lo
    for i in range(m):
        out[i] = 0
    unseen = 0
    for g in range(g0, g1):
        width = offsets[g + 1] - offsets[g]
        base = offsets[g]
        row = ids[g, lo:hi]
        for i in range(m):
            col = row[i]
            unseen |= col < 0
            out[i] = out[i] * width + (col - base)
    return unseen == 0


@nb.njit(cache=True)
def count_run_tuples(ids, offsets, g0, g1, limit):
    """The number of distinct tuples of bins in grids g0 ... g1-1 over the rows, or limit + 1 as soon as
    they pass `limit`, or -1 where a row it reads holds an unseen bin (how `tuples.choose_run` sizes a run
    from its first grids, and stops counting once the run cannot pay)."""
    n = ids.shape[1]
    return _number_run(ids, offsets, g0, g1, np.empty(n, np.uint32), np.empty(n, np.int32), limit)


@nb.njit(parallel=True, cache=True)
def number_tuples(ids, offsets, k, tuple_ids, first, counts):
    """Each run s of k grids (s k ... min(R, s k + k) - 1) numbered apart, in parallel: tuple_ids[s, i] = row
    i's tuple in run s, counted from 0 in the order tuples first occur (unsigned: uint16 where no run can
    hold more than 2^16 tuples); first[s, j] = tuple j's first row; counts[s] = run s's tuples. The numbering
    is sequential within a run, so the same on any thread count."""
    n_grids = ids.shape[0]
    for s in nb.prange(tuple_ids.shape[0]):
        counts[s] = _number_run(ids, offsets, s * k, min(n_grids, s * k + k), tuple_ids[s], first[s], ids.shape[1])


@nb.njit(parallel=True, cache=True)
def tuple_members(ids, k, first, starts, members):
    """Each tuple's bins: members[starts[s] + j, m] = the column of run s's tuple j's first row in grid
    s k + m, or -1 past the last grid (a shorter last run)."""
    n_grids = ids.shape[0]
    for s in nb.prange(starts.shape[0] - 1):
        base = starts[s]
        for j in range(starts[s + 1] - base):
            i = first[s, j]
            for m in range(k):
                g = s * k + m
                members[base + j, m] = ids[g, i] if g < n_grids else -1


@nb.njit(parallel=True, cache=True)
def tuple_sums(w, members, t):
    """t[j] = the sum of w over tuple j's bins, in the grids' order (B w)."""
    k = members.shape[1]
    for j in nb.prange(members.shape[0]):
        a = 0.0
        for m in range(k):
            col = members[j, m]
            if col >= 0:
                a += w[col]
        t[j] = a


def gather_tuples(tuple_ids, starts, t, out):
    """out = T t (`_gather_tuples`): with t = B w (`tuple_sums`), out = S w. starts: each run's first tuple
    (uint64, so that every index the kernels add is unsigned)."""
    _gather_tuples(tuple_ids, starts, t, out, nb.get_num_threads())


@nb.njit(parallel=True, cache=True)
def _gather_tuples(tuple_ids, starts, t, out, n_threads):
    """out[i] = the sum over runs s of t[starts[s] + tuple_ids[s, i]], in the runs' order, TUPLE_RUNS_PER_PASS
    runs summed in registers before out[i] is updated; one contiguous block of rows a thread (as
    `_matvec_kernels._gather_vector`). Every index is unsigned, so its loads need no wrap-around check.
    The tuple ids are the pass's stream, so they are 16-bit where they fit (`tuples.number_runs`) and 8 runs
    share a pass: cod_rna_split R = 256, k = 4, 32-bit ids, one process, min of 21, a gather took 0.41 ms at
    8 runs a pass against 0.47 at 4 and 0.54 at 2."""
    n_runs, n = tuple_ids.shape
    n_blocks, block = _row_blocks(n, n_threads)
    n_full = n_runs - n_runs % TUPLE_RUNS_PER_PASS
    for b in nb.prange(n_blocks):
        lo = b * block
        hi = min(n, lo + block)
        o = out[lo:hi]
        for i in range(hi - lo):
            o[i] = 0.0
        for s0 in range(0, n_full, TUPLE_RUNS_PER_PASS):
            c0, c1 = tuple_ids[s0, lo:hi], tuple_ids[s0 + 1, lo:hi]
            c2, c3 = tuple_ids[s0 + 2, lo:hi], tuple_ids[s0 + 3, lo:hi]
            c4, c5 = tuple_ids[s0 + 4, lo:hi], tuple_ids[s0 + 5, lo:hi]
            c6, c7 = tuple_ids[s0 + 6, lo:hi], tuple_ids[s0 + 7, lo:hi]
            b0, b1, b2, b3 = starts[s0], starts[s0 + 1], starts[s0 + 2], starts[s0 + 3]
            b4, b5, b6, b7 = starts[s0 + 4], starts[s0 + 5], starts[s0 + 6], starts[s0 + 7]
            for i in range(hi - lo):
                o[i] += ((((t[b0 + c0[i]] + t[b1 + c1[i]]) + t[b2 + c2[i]]) + t[b3 + c3[i]])
                         + (((t[b4 + c4[i]] + t[b5 + c5[i]]) + t[b6 + c6[i]]) + t[b7 + c7[i]]))
        for s in range(n_full, n_runs):
            c0 = tuple_ids[s, lo:hi]
            b0 = starts[s]
            for i in range(hi - lo):
                o[i] += t[b0 + c0[i]]


@nb.njit(cache=True)
def scatter_update_tuples(tuple_ids, v, starts, members, k, offsets, p, w, r, inv_diag, scale2, lam, alpha,
                          acc_tuples, acc, grid_sums, group):
    """`_matvec_kernels.scatter_update_vector` on the tuple layout: acc = S^T v as B^T (T^T v), a group of
    `group` runs at a time, then the step's update of w and r on those runs' grids' columns, while their
    sums are in cache (`_update_grids`). acc_tuples (one value a tuple) holds T^T v. Each column adds its
    tuples' sums in the tuples' order, each tuple its rows in increasing order: the same bits on any number
    of threads. `group` is one of `_matvec_kernels.GROUP_SIZES`. Reference: `reference_update` there."""
    if group == 16:
        _scatter_update_runs(tuple_ids, v, starts, members, k, offsets, p, w, r, inv_diag, scale2, lam, alpha,
                             acc_tuples, acc, grid_sums, 16)
    elif group == 8:
        _scatter_update_runs(tuple_ids, v, starts, members, k, offsets, p, w, r, inv_diag, scale2, lam, alpha,
                             acc_tuples, acc, grid_sums, 8)
    else:
        _scatter_update_runs(tuple_ids, v, starts, members, k, offsets, p, w, r, inv_diag, scale2, lam, alpha,
                             acc_tuples, acc, grid_sums, 4)


@nb.njit(parallel=True, cache=True)
def _scatter_update_runs(tuple_ids, v, starts, members, k, offsets, p, w, r, inv_diag, scale2, lam, alpha,
                         acc_tuples, acc, grid_sums, group):
    nb.literally(group)  # a kernel per group size
    n_runs, n = tuple_ids.shape
    n_grids = offsets.shape[0] - 1
    for g in nb.prange((n_runs + group - 1) // group):
        s0 = g * group
        s1 = min(n_runs, s0 + group)
        for j in range(starts[s0], starts[s1]):
            acc_tuples[j] = 0.0
        if s1 - s0 == group:  # a constant trip count, unrolled: `group` independent read-add-write chains
            for i in range(n):
                x = v[i]
                for m in range(group):
                    acc_tuples[starts[s0 + m] + tuple_ids[s0 + m, i]] += x
        else:
            for i in range(n):
                x = v[i]
                for s in range(s0, s1):
                    acc_tuples[starts[s] + tuple_ids[s, i]] += x
        g0 = s0 * k
        g1 = min(n_grids, s1 * k)
        for col in range(offsets[g0], offsets[g1]):
            acc[col] = 0.0
        for j in range(starts[s0], starts[s1]):
            x = acc_tuples[j]
            for m in range(k):
                col = members[j, m]
                if col >= 0:
                    acc[col] += x
        _update_grids(offsets, g0, g1, p, w, r, inv_diag, scale2, lam, alpha, acc, grid_sums)


def reference_number_tuples(ids, offsets, k):
    """Plain numpy for `number_tuples` + `tuple_members`: (tuple_ids (runs x N), members (U x k), starts)."""
    n_grids, n = ids.shape
    n_runs = -(-n_grids // k)
    tuple_ids = np.empty((n_runs, n), dtype=np.int64)
    members, starts = [], [0]
    for s in range(n_runs):
        block = ids[s * k:min(n_grids, s * k + k)]
        _, first, inverse = np.unique(block.T, axis=0, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # numbered in the order each tuple first occurs
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        tuple_ids[s] = rank[inverse.reshape(-1)]
        found = np.full((len(order), k), -1, dtype=np.int64)
        found[:, :block.shape[0]] = block[:, first[order]].T
        members.append(found)
        starts.append(starts[-1] + len(order))
    return tuple_ids, np.concatenate(members), np.array(starts)
