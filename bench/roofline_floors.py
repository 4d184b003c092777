"""The machine's floors for the roofline benchmark (bench/roofline.py): the cores' own rates of indirect
loads, read-modify-writes, key steps and hash lookups, a parallel kernel's call, the stream bandwidth
over a part's bytes, and the walks of the gather and scatter over ids of a part's own shape, each timed
by a kernel of bench/floor_kernels.py that does only what the part must do (that module's docstring
and bench/roofline.py's say what each floor stands for)."""

from __future__ import annotations

import numba as nb
import numpy as np

from bench.floor_kernels import (
    GATHER_STREAMS,
    LANES,
    SCATTER_LANES,
    gather_walk,
    hash_lookups,
    indirect_loads,
    key_steps,
    read_modify_writes,
    read_stream,
    scatter_walk,
    triad,
)
from bench.timing import fastest
from rbrepro.features import _binning_kernels as bk
from rbrepro.features._matvec_kernels import cache_bytes, l2_cache_bytes
from rbrepro.features.random_binning import KEY_BATCH_BYTES

REPEATS = 7
#: the floors' rates that do not depend on a part's shape (`core_rates`)
CORE_RATES = ("loads_per_s", "rmw_per_s", "key_steps_per_s", "lookups_per_s")
#: probes of the cores' own rates taken before the first cell; each cell's floors use the best of them
#: and of its own
CORE_ROUNDS = 5
L1_DOUBLES = 2048  # 16 KB: inside any core's L1 data cache
IDS_IN_CACHE = 1 << 17  # 512 KB of int32 ids: in L2, so the cores' own rate is not waiting on a stream
KEY_GRIDS = 64  # grids of the key-arithmetic floor: their offsets and widths (1 KB) stay in L1
KEY_VALUES = 1 << 14  # feature values per pass of that floor (128 KB, in L2)
TABLE_SLOTS = 1024  # the hash-lookup floor's table: 8 KB of keys and 4 KB of ids, in L1
TABLE_KEYS = 256  # distinct keys in it, each in its own home slot
#: a step's passes find the vectors in the cache only where all the bytes a step touches fill at most this
#: share of the last-level cache (on a virtual machine, shared with the neighbours' cores)
LLC_SHARE = 0.5
#: else they stream from memory, and so does the floor's stream: arrays of at least this many last-level caches
MEMORY_OVER_LLC = 4


def best(fn, repeats: int = REPEATS) -> float:
    """The fastest of `repeats` timed calls, after one that compiles and faults in (`bench.timing`)."""
    return fastest(fn, repeats)


def part_offsets(count: int, lanes: int = LANES) -> np.ndarray:
    """The first slot of the (k mod lanes)-th part of an L1_DOUBLES table, for k = 0 ... count-1: the
    floors' lanes, like the grids of a group, never touch the same slots."""
    return ((np.arange(count) % lanes) * (L1_DOUBLES // lanes)).astype(np.int32)


def home_slot_table(rng) -> tuple[np.ndarray, np.ndarray]:
    """TABLE_KEYS random keys, each in its own home slot of a TABLE_SLOTS table (no probe goes past
    its first slot); empty slots hold id -1, as in `_binning_kernels`."""
    table_keys = np.zeros(TABLE_SLOTS, np.uint64)
    table_ids = np.full(TABLE_SLOTS, -1, np.int32)
    mask = TABLE_SLOTS - 1
    placed = 0
    while placed < TABLE_KEYS:
        key = np.uint64(rng.integers(1, 1 << 63, dtype=np.int64))
        slot = int(bk._slot(key, mask))
        if table_ids[slot] < 0:
            table_keys[slot], table_ids[slot] = key, placed
            placed += 1
    return table_keys, table_ids


def first_touch(n_bytes: int) -> None:
    """New memory of n_bytes, written once: what a fit pays for its output's pages."""
    np.empty(max(1, n_bytes // 4), np.int32).fill(1)


def stream_bytes(step_bytes: int) -> int:
    """The bytes the floor's stream runs over for a step that touches step_bytes: as many where they fit in
    LLC_SHARE of the last-level cache, else enough to stream from memory (MEMORY_OVER_LLC caches or more),
    as the solve's passes over the vectors do, each after a pass over the ids."""
    llc = cache_bytes(3) or l2_cache_bytes()
    return step_bytes if step_bytes <= LLC_SHARE * llc else max(step_bytes, MEMORY_OVER_LLC * llc)


def floors(working_bytes: int, fresh_bytes: int) -> dict:
    """The machine's rates: the cores' own indirect loads and read-modify-writes per second into an
    L1-sized table, on ids that stay in L2 (no stream; the updates in the faster of the scatter's group
    sizes); bytes per second of the faster of a triad and a read-only stream over working_bytes
    (the memory side: a triad also reads in the lines it only writes, and the update's reads outnumber
    its writes) and the fixed cost of one call of a parallel kernel (a triad on 1 element); key
    steps per second on grids in L1; hash lookups per second, the keys streamed in batches the size
    of featurization's; and bytes per second of new memory written once (fresh_bytes of it: the pages
    of a fit's ids, which the system maps and clears on their first write)."""
    rng = np.random.default_rng(0)
    n = max(1 << 16, working_bytes // 24)
    a, b, c = np.zeros(n), rng.random(n), rng.random(n)
    return {**core_floors(),
            "bytes_per_s": max(24.0 * n / best(lambda: triad(a, b, c, 3.0)),
                               16.0 * n / best(lambda: read_stream(b, c))),
            "fresh_bytes_per_s": fresh_bytes / best(lambda: first_touch(fresh_bytes))}


def core_floors() -> dict:
    """`floors`' rates that do not depend on a part's shape: CORE_RATES and a parallel kernel's call."""
    rng = np.random.default_rng(0)
    threads = nb.get_num_threads()
    ids = rng.integers(0, L1_DOUBLES // LANES, IDS_IN_CACHE, dtype=np.int32).astype(np.uint32)  # no wrap check
    table = rng.random(L1_DOUBLES // LANES)
    out = np.empty(threads)
    tables = np.zeros((threads, L1_DOUBLES))
    one = np.zeros(1)
    x, u, inv_delta = rng.random(KEY_VALUES), rng.random(KEY_GRIDS), 1.0 / rng.uniform(0.1, 1.0, KEY_GRIDS)
    mult = rng.integers(1, 1 << 62, 16, dtype=np.uint64) | np.uint64(1)
    checksums = np.empty(threads, np.uint64)
    table_keys, table_ids = home_slot_table(rng)
    n_keys = KEY_BATCH_BYTES // 8  # one batch of the dense key kernels' keys
    keys = table_keys[table_ids >= 0][rng.integers(0, TABLE_KEYS, n_keys)]
    found = np.empty(n_keys, np.int32)
    return {"loads_per_s": IDS_IN_CACHE / best(lambda: indirect_loads(ids, table, out)),
            "rmw_per_s": max(IDS_IN_CACHE / rmw_seconds(rng, tables, lanes) for lanes in SCATTER_LANES),
            "call_s": best(lambda: triad(one, one, one, 3.0)),
            "key_steps_per_s": KEY_VALUES * KEY_GRIDS / min(best(lambda d=d: key_steps(x, u, inv_delta, mult, checksums, d))
                                                            for d in (False, True)),
            "lookups_per_s": n_keys / best(lambda: hash_lookups(keys, table_keys, table_ids, found, threads))}


def core_rates(rounds: int = CORE_ROUNDS) -> dict:
    """The best of `rounds` probes of the rates in CORE_RATES (the highest) and of a kernel's call (the
    shortest), each probe a `core_floors`."""
    best = {"call_s": float("inf")}
    for _ in range(rounds):
        f = core_floors()
        for name in CORE_RATES:
            best[name] = max(best.get(name, 0.0), f[name])
        best["call_s"] = min(best["call_s"], f["call_s"])
    return best


def best_rates(f: dict, machine: dict) -> dict:
    """f with its core rates raised to the machine's best (`core_rates`), its call cost lowered to it."""
    out = dict(f)
    for name in CORE_RATES:
        out[name] = max(f[name], machine[name])
    out["call_s"] = min(f["call_s"], machine["call_s"])
    return out


def rmw_seconds(rng, tables: np.ndarray, lanes: int) -> float:
    """Seconds of IDS_IN_CACHE read-modify-writes (`read_modify_writes`) in `lanes` independent chains."""
    ids = rng.integers(0, L1_DOUBLES // lanes, IDS_IN_CACHE, dtype=np.int32)  # the k-th of every `lanes`
    lane_ids = (ids + part_offsets(IDS_IN_CACHE, lanes)).astype(np.uint32)    # in the table's k-th part
    values = rng.random(IDS_IN_CACHE // lanes)
    return best(lambda: read_modify_writes(lane_ids, values, tables, lanes))


def streamed(N: int, R: int, C: int, f: dict, dtype=np.uint32) -> dict:
    """Seconds of the walks of the gather and the scatter (`gather_walk`, `scatter_walk`) over ids of the
    part's own shape (R x N, streamed from wherever they live, as the part's are), every access an L1 hit;
    for C targets each id's C loads or updates are counted at the cores' own rate, where they, not the
    stream, are the longer. The gather's walk is timed with 4 and 8 grids' ids streamed together
    ("loads": the faster); the scatter's at each of its group sizes ("rmw" maps the group size to its
    seconds). A walk covers its whole groups of grids; its time is scaled to all R. dtype: the ids' (the
    tuple layout's may be 16-bit)."""
    rng = np.random.default_rng(1)
    threads = nb.get_num_threads()
    table, out = rng.random(L1_DOUBLES), np.empty(threads)
    values, tables = rng.random(N), np.zeros((threads, L1_DOUBLES))
    walked = {}
    for lanes in sorted({*GATHER_STREAMS, *SCATTER_LANES}):
        rows = R - R % lanes
        ids = (rng.integers(0, L1_DOUBLES // lanes, (rows, N), dtype=np.int32)
               + part_offsets(rows, lanes)[:, None]).astype(dtype)
        whole = R / max(rows, 1)  # a walk covers the grids of its whole groups: its time scaled to all R
        if lanes in GATHER_STREAMS:  # the faster of the walks (a pass a group, or two groups a pass)
            seconds = max(whole * best(lambda: gather_walk(ids, table, out, lanes)), N * R * C / f["loads_per_s"])
            walked["loads"] = min(walked.get("loads", float("inf")), seconds)
        if lanes in SCATTER_LANES:
            walked.setdefault("rmw", {})[lanes] = max(whole * best(lambda: scatter_walk(ids, values, tables, lanes)),
                                                      N * R * C / f["rmw_per_s"])
    return walked
