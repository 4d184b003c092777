"""The floor kernels of `bench.roofline` (probed in `bench.roofline_floors`): each does only what a part of RB's CG step or featurization
must do, on data in L1, so that its rate is the machine's own (tests/test_bench_roofline.py checks each
against plain numpy)."""

from __future__ import annotations

import numba as nb
import numpy as np

from rbrepro.features._binning_kernels import MAGIC, MAGIC_BITS, find_column
from rbrepro.features._matvec_kernels import GROUP_SIZES

LANES = 4  # independent accumulators of the load floors, as the gather sums a group of 4 grids
#: the scatter's group sizes: its floors take the faster (the scatters walk as many grids as fit the L2)
SCATTER_LANES = GROUP_SIZES


@nb.njit
def _at_lanes(kernel, ids, values, tables, lanes):
    """kernel(ids, values, tables, lanes) with `lanes` (one of SCATTER_LANES) as the compile-time
    constant the kernel needs, one compiled kernel per value: a call from Python with a plain int
    would pay numba's literal dispatch on every call."""
    if lanes == 16:
        kernel(ids, values, tables, 16)
    elif lanes == 8:
        kernel(ids, values, tables, 8)
    elif lanes == 4:
        kernel(ids, values, tables, 4)
    else:
        raise ValueError("lanes must be one of SCATTER_LANES")


@nb.njit(inline="always")
def _thread_share(t: int, count: int, n_threads: int):
    """Items lo <= i < hi of count that thread t of n_threads takes: contiguous, sizes within one."""
    return t * count // n_threads, (t + 1) * count // n_threads


@nb.njit(parallel=True, cache=True)
def indirect_loads(ids, table, out):
    """out[t] = sum of table[ids[i]] over thread t's share of ids: one indirect load per id, summed
    into LANES (4) independent accumulators so that the adds never wait on each other (the loads'
    own rate, not an add's latency)."""
    n_threads = out.shape[0]
    quads = ids.shape[0] // LANES
    for t in nb.prange(n_threads):
        a0 = a1 = a2 = a3 = 0.0
        lo, hi = _thread_share(t, quads, n_threads)
        share = ids[lo * LANES:hi * LANES]  # indexed from 0
        for i in range(0, share.shape[0], LANES):
            a0 += table[share[i]]
            a1 += table[share[i + 1]]
            a2 += table[share[i + 2]]
            a3 += table[share[i + 3]]
        out[t] = a0 + a1 + a2 + a3


def read_modify_writes(ids, values, tables, lanes: int) -> None:
    """`_read_modify_writes` at `lanes` (one of SCATTER_LANES) independent chains."""
    _at_lanes(_read_modify_writes, ids, values, tables, lanes)


@nb.njit(parallel=True, cache=True)
def _read_modify_writes(ids, values, tables, lanes):
    """tables[t, ids[lanes q + k]] += values[q] over thread t's share, `lanes` ids at a time: one value
    per `lanes` ids (as the scatter reads v[i] once for a group of grids), and ids[lanes q + k] lies in
    the table's k-th part (as a group's grids' columns are disjoint), so the `lanes` read-modify-write
    chains are independent and the core can overlap them. `lanes` is a compile-time constant (a kernel
    per value, as the scatter's group sizes are)."""
    nb.literally(lanes)
    n_threads = tables.shape[0]
    groups = ids.shape[0] // lanes
    for t in nb.prange(n_threads):
        lo, hi = _thread_share(t, groups, n_threads)
        share, xs, table = ids[lo * lanes:hi * lanes], values[lo:hi], tables[t]  # indexed from 0
        for q in range(hi - lo):
            x = xs[q]
            for k in range(lanes):
                table[share[q * lanes + k]] += x


#: the grids' ids the gather's walks stream together: one group of 4 a pass (several targets) or two
#: (one target, `_matvec_kernels.GATHER_GROUPS_PER_PASS`); the floor takes the faster
GATHER_STREAMS = (LANES, 2 * LANES)


def gather_walk(ids, table, out, streams: int = LANES) -> None:
    """`_gather_walk` (4 streams) or `_gather_walk_two_groups` (8), one of GATHER_STREAMS."""
    if streams == 2 * LANES:
        _gather_walk_two_groups(ids, table, out)
    elif streams == LANES:
        _gather_walk(ids, table, out)
    else:
        raise ValueError("streams must be one of GATHER_STREAMS")


@nb.njit(parallel=True, cache=True)
def _gather_walk(ids, table, out):
    """out[t] = sum of table[ids[r, i]] over every grid r and thread t's block of rows: the walk of the
    gather (grid-major ids, 4 grids' rows streamed together, one contiguous block of rows per thread)
    with every load an L1 hit, in 4 independent accumulators."""
    n_grids, n = ids.shape
    n_threads = out.shape[0]
    for t in nb.prange(n_threads):
        a0 = a1 = a2 = a3 = 0.0
        lo, hi = _thread_share(t, n, n_threads)
        for r0 in range(0, n_grids - n_grids % LANES, LANES):
            ids0, ids1, ids2, ids3 = ids[r0, lo:hi], ids[r0 + 1, lo:hi], ids[r0 + 2, lo:hi], ids[r0 + 3, lo:hi]
            for i in range(hi - lo):
                a0 += table[ids0[i]]
                a1 += table[ids1[i]]
                a2 += table[ids2[i]]
                a3 += table[ids3[i]]
        out[t] = a0 + a1 + a2 + a3


@nb.njit(parallel=True, cache=True)
def _gather_walk_two_groups(ids, table, out):
    """`_gather_walk` with 8 grids' rows streamed together (the one-target gather's pass), into 4
    independent accumulators; grids past the last whole 8 are left out."""
    n_grids, n = ids.shape
    n_threads = out.shape[0]
    for t in nb.prange(n_threads):
        a0 = a1 = a2 = a3 = 0.0
        lo, hi = _thread_share(t, n, n_threads)
        for r0 in range(0, n_grids - n_grids % (2 * LANES), 2 * LANES):
            ids0, ids1, ids2, ids3 = ids[r0, lo:hi], ids[r0 + 1, lo:hi], ids[r0 + 2, lo:hi], ids[r0 + 3, lo:hi]
            ids4, ids5, ids6, ids7 = ids[r0 + 4, lo:hi], ids[r0 + 5, lo:hi], ids[r0 + 6, lo:hi], ids[r0 + 7, lo:hi]
            for i in range(hi - lo):
                a0 += table[ids0[i]] + table[ids4[i]]
                a1 += table[ids1[i]] + table[ids5[i]]
                a2 += table[ids2[i]] + table[ids6[i]]
                a3 += table[ids3[i]] + table[ids7[i]]
        out[t] = a0 + a1 + a2 + a3


def scatter_walk(ids, values, tables, lanes: int) -> None:
    """`_scatter_walk` in groups of `lanes` (one of SCATTER_LANES) grids."""
    _at_lanes(_scatter_walk, ids, values, tables, lanes)


@nb.njit(parallel=True, cache=True)
def _scatter_walk(ids, values, tables, lanes):
    """tables[t, ids[r, i]] += values[i] for the grids of thread t's share of the groups of `lanes`
    grids: the walk of the scatter (each thread whole groups, a group's grids streamed together row by
    row, values[i] read once for the group; ids[r] in the table's (r mod lanes)-th part, so the chains
    are independent) with every update an L1 hit. `lanes` is a compile-time constant."""
    nb.literally(lanes)
    n_grids, n = ids.shape
    n_threads = tables.shape[0]
    n_groups = n_grids // lanes
    for t in nb.prange(n_threads):
        table = tables[t]
        first, last = _thread_share(t, n_groups, n_threads)
        for g in range(first, last):
            r0 = g * lanes
            for i in range(n):
                x = values[i]
                for k in range(lanes):
                    table[ids[r0 + k, i]] += x


@nb.njit(parallel=True, cache=True)
def key_steps(x, u, inv_delta, mult, out, direct=False):
    """The key arithmetic of featurization at its best: for every value of thread t's share of x and
    every grid k, keys[k] += a * floor((x - u[k]) * inv_delta[k]), the bin index taken to int64 as
    `_binning_kernels`' key kernels take it (direct: in the summing loop; else through MAGIC's bits), on
    grids whose offsets and widths sit in L1, vectorized over a contiguous run as theirs are (grids here
    and in keys_csr, a block's rows in keys_dense); out[t] = a checksum, so that nothing is optimized
    away."""
    n_threads, n_grids, n = out.shape[0], u.shape[0], x.shape[0]
    for t in nb.prange(n_threads):
        keys = np.zeros(n_grids, np.uint64)
        biased = np.empty(n_grids)
        bits = biased.view(np.int64)
        lo, hi = _thread_share(t, n, n_threads)
        share = x[lo:hi]  # indexed from 0
        for i in range(share.shape[0]):
            value, a = share[i], mult[(lo + i) & 15]
            if direct:
                for k in range(n_grids):
                    keys[k] += np.uint64(np.int64(np.floor((value - u[k]) * inv_delta[k]))) * a
            else:
                for k in range(n_grids):
                    biased[k] = np.floor((value - u[k]) * inv_delta[k]) + MAGIC
                for k in range(n_grids):
                    keys[k] += np.uint64(bits[k] - MAGIC_BITS) * a
        total = np.uint64(0)
        for k in range(n_grids):
            total += keys[k]
        out[t] = total


@nb.njit(parallel=True, cache=True)
def hash_lookups(keys, table_keys, table_ids, ids, n_threads):
    """ids[i] = the id of keys[i] in one open-addressing table (`find_column`, the probe of
    `_binning_kernels`), keys split across threads: the numbering of featurization at its best, each
    key found in its home slot of an L1-sized table."""
    mask = table_keys.shape[0] - 1
    n = keys.shape[0]
    for t in nb.prange(n_threads):
        lo, hi = _thread_share(t, n, n_threads)
        share, out = keys[lo:hi], ids[lo:hi]  # indexed from 0
        for i in range(hi - lo):
            out[i] = find_column(share[i], 0, mask, table_keys, table_ids)


@nb.njit(parallel=True, cache=True)
def triad(a, b, c, s):
    """a = b + s c: STREAM's triad (two reads and a write per element)."""
    for i in nb.prange(a.shape[0]):
        a[i] = b[i] + s * c[i]


@nb.njit(parallel=True, cache=True, fastmath=True)
def read_stream(b, c):
    """The sum of b + c: two reads per element and no write, so no line is fetched only to be
    overwritten (a triad's written array is read in first); returned, so the loads are not dropped.
    fastmath lets the sum split into vector lanes: one chain of adds would bound the loads instead."""
    total = 0.0
    for i in nb.prange(b.shape[0]):
        total += b[i] + c[i]
    return total


@nb.njit(parallel=True, cache=True)
def touch_pages(buffer, page):
    """Write a zero byte at every `page`-th byte of buffer (uint8), the pages split between the threads:
    how both threads fault in an array's new small pages (bench.page_faults)."""
    for i in nb.prange(buffer.shape[0] // page):
        buffer[i * page] = 0
