"""The tuple layout of a Random Binning matrix: S = T B, for a one-target CG step with fewer loads.

Each run of k consecutive grids is numbered by the tuples of bins its rows fall in (`_tuple_kernels`).
A step's gather S p then reads one tuple sum a row and run (T (B p)), and its scatter S^T v adds each
row once a run (B^T (T^T v)), where the plain layout (`BinnedMatrix.ids`) loads once a row and grid.
That pays where the tuples are few beside the rows: a run's loads a row and grid are 1/k + U/N (U its
tuples, N the rows) against 1. `choose_run` picks k from the first grids; the layout is exact, and the
sums change only in the order of their additions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rbrepro.features import _tuple_kernels as kernels
from rbrepro.features._matvec_kernels import GROUP_SIZES, N_SUMS, scatter_group
from rbrepro.features._rows_kernels import take_rows

#: the run lengths tried (grids a tuple); 2 is not among them, since its share 1/2 + U/N is above LOADS_SHARE
RUN_LENGTHS = (3, 4)
#: a run length is used where its loads a row and grid, 1/k + U/N, are at most this share of the plain
#: layout's. 50 PCG steps, median of 7 alternating in one process, 2 threads, AMD EPYC Zen 4, against the
#: plain layout: cod_rna_split R = 256 (share 0.30 at k = 4) 265.7 -> 111.7 ms, R = 64 61.0 -> 41.7 ms;
#: cadata R = 256 and ijcnn1 R = 256 (0.60 to 0.66 at k = 2 to 4: tuples nearly as many as rows, their
#: sums in L2 where a grid's bins sit in L1) slower at every k, 140.0 -> 165 to 190 and 343.9 -> 390 to 416
LOADS_SHARE = 0.5
#: the layout's memory while it is built (`layout_bytes`) may take at most this share of the memory limit;
#: past it the plain layout serves
MEMORY_SHARE = 0.25
#: `layout_bytes` counts each run's tuples at this many times the first run's (runs are drawn alike)
TUPLES_MARGIN = 2


@dataclass
class TupleLayout:
    """S = T B stored for the kernels: tuple_ids (runs x N, uint16 or uint32), row i's tuple in each run,
    counted from the run's first; members (U x k, int32), each tuple's columns (-1 past the last grid);
    starts (runs + 1, uint64), each run's first tuple; k, the grids a run; group, the runs the scatter walks
    together (`scatter_group`)."""

    tuple_ids: np.ndarray
    members: np.ndarray
    starts: np.ndarray
    k: int
    group: int

    @property
    def n_tuples(self) -> int:
        return int(self.starts[-1])


def fits_key(offsets: np.ndarray, k: int) -> bool:
    """Whether k grids' bins make one 62-bit key (`_tuple_kernels._run_keys`) for every run."""
    widest = int(np.diff(offsets).max(initial=1))
    return k * math.log2(max(widest, 2)) < 62


def choose_run(ids: np.ndarray, offsets: np.ndarray) -> tuple[int, int] | None:
    """(k, the tuples of the first run) for the run length k in RUN_LENGTHS whose loads (1/k + U/N, U counted
    on the first k grids) are the fewest, where they are at most LOADS_SHARE of the plain layout's; else
    None (also where a row holds an unseen bin). A count stops once it passes the most tuples that could
    still pay (ijcnn1, cadata: their tuples are nearly as many as their rows), one past it for rounding."""
    n_grids, n = ids.shape
    best, best_share = None, LOADS_SHARE
    for k in RUN_LENGTHS:
        if k > n_grids or not fits_key(offsets, k) or best_share <= 1.0 / k:
            continue
        count = kernels.count_run_tuples(ids, offsets, 0, k, int((best_share - 1.0 / k) * n) + 1)
        if count < 0:  # an unseen bin (-1): not a training matrix
            return None
        share = 1.0 / k + count / n
        if share <= best_share:
            best, best_share = (k, count), share
    return best


def layout_bytes(n_grids: int, n: int, k: int, first_count: int) -> float:
    """The layout's bytes while it is built: its tuple ids (16 bits where n <= 2^16; else 32, and 16 more
    where they are narrowed), each tuple's first row (32 bits a run and row), and its members (k int32 a
    tuple, each run counted at TUPLES_MARGIN times the first run's tuples)."""
    n_runs = -(-n_grids // k)
    id_bytes = 2 if n <= 2 ** 16 else 6
    return n_runs * n * (id_bytes + 4.0) + n_runs * TUPLES_MARGIN * first_count * k * 4.0


def tuple_layout(ids: np.ndarray, offsets: np.ndarray, limit_bytes: float) -> TupleLayout | None:
    """The tuple layout of the matrix with these ids (R x N) and grid offsets, or None where it does not
    pay (`choose_run`), where it would take more than MEMORY_SHARE of `limit_bytes` (`layout_bytes`), or
    where a row holds an unseen bin. Tuples are numbered in the order they first occur, each run on its own,
    so the layout is the same on any number of threads."""
    n_grids, n = ids.shape
    if n == 0 or n_grids == 0:
        return None
    chosen = choose_run(ids, offsets)
    if chosen is None or layout_bytes(n_grids, n, *chosen) > MEMORY_SHARE * limit_bytes:
        return None
    return number_runs(ids, offsets, chosen[0])


def number_runs(ids: np.ndarray, offsets: np.ndarray, k: int) -> TupleLayout | None:
    """The tuple layout with runs of k grids (`_tuple_kernels.number_tuples`), or None where a row holds an
    unseen bin. Tuple ids are uint16 where no run holds more than 2^16 tuples (no run holds more tuples than
    rows), else uint32: the gather's and scatter's stream of ids."""
    n_grids, n = ids.shape
    n_runs = -(-n_grids // k)
    tuple_ids = np.empty((n_runs, n), dtype=np.uint16 if n <= 2 ** 16 else np.uint32)
    first = np.empty((n_runs, n), dtype=np.int32)
    counts = np.empty(n_runs, dtype=np.int64)
    kernels.number_tuples(ids, offsets, k, tuple_ids, first, counts)
    if (counts < 0).any():
        return None
    if tuple_ids.dtype != np.uint16 and counts.max() <= 2 ** 16:
        tuple_ids = tuple_ids.astype(np.uint16)
    starts = np.zeros(n_runs + 1, dtype=np.uint64)
    np.cumsum(counts, out=starts[1:])
    members = np.empty((int(starts[-1]), k), dtype=np.int32)
    kernels.tuple_members(ids, k, first, starts, members)
    return TupleLayout(tuple_ids, members, starts, k, scatter_group(starts, 1))


def compile_kernels() -> None:
    """Compile (or load from numba's cache) every kernel of the tuple layout, the scatter at each of its
    group sizes, on 4 rows: a fit's warm-up, so that timings exclude compilation."""
    ids = np.array([[0, 1, 0, 1], [2, 2, 3, 3]], dtype=np.int32)
    offsets = np.array([0, 2, 4], dtype=np.int64)
    kernels.count_run_tuples(ids, offsets, 0, 2, 4)
    layout = number_runs(ids, offsets, 2)
    p, w, r, acc, v = np.zeros(4), np.zeros(4), np.zeros(4), np.empty(4), np.zeros(4)
    t = np.empty(layout.n_tuples)
    kernels.tuple_sums(p, layout.members, t)
    sums = np.empty((2, N_SUMS))
    for dtype in (np.uint16, np.uint32):  # more than 2^16 rows number into uint32 first
        tuple_ids = np.zeros((1, 4), dtype=dtype)
        kernels.number_tuples(ids, offsets, 2, tuple_ids, np.empty((1, 4), dtype=np.int32), np.empty(1, np.int64))
        kernels.gather_tuples(tuple_ids, layout.starts, t, v)
        for group in GROUP_SIZES:
            kernels.scatter_update_tuples(tuple_ids, v, layout.starts, layout.members, layout.k, offsets, p, w,
                                          r, np.empty(0), 1.0, 1.0, 0.0, t, acc, sums, group)
        take_rows(tuple_ids, np.arange(2), np.empty((1, 2), dtype=dtype))
