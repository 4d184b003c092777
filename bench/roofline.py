"""Benchmark: each part of RB's CG step and of featurization against the machine's own floor for it.

The floors are measured in the same process, with the same threads, by kernels that do only what a
part must do, on data of the part's own shape:
- indirect loads: stream as many int32 ids as the part reads (N R) and add table[id] from a table that
  fits in L1 (the gather Z p at its best: every load a cache hit, the ids streamed from wherever they live,
  4 or 8 grids' ids together as the gather streams them, the faster);
- read-modify-writes: stream those ids, one value per group of 4 or 8 ids (as the scatter reads v once
  per group of 4 grids, or of 8 where grids are narrow), and do table[id] += value into a per-thread
  L1-sized table (the scatter Z^T v at its best: the faster of the two group sizes);
- memory bandwidth: the faster of a STREAM-like triad and a read-only stream, over arrays as large
  together as the bytes a CG step touches (the distinct vectors, the ids and V), or, where those fill
  more than LLC_SHARE of the last-level cache, over MEMORY_OVER_LLC such caches or more (in the solve
  each pass over the vectors follows a pass over the ids, so a step whose bytes fit in the cache
  streams from it, and one whose bytes do not, from memory), for the bytes the new direction's pass moves
  (the vector updates, preconditioner and dots at their best), plus the fixed cost of each parallel
  kernel it calls (a triad on 1 element);
- key arithmetic: the (row, grid, feature) steps of featurization's key kernels on grids in L1;
- hash lookups: `find_column` on a batch of keys into an L1-sized table where every key sits in its
  home slot (featurization's numbering at its best: every probe a hit on its first slot).
Where one target's step runs on the tuple layout (rbrepro.features.tuples: a tuple id a row and run of k
grids, and U k loads or read-modify-writes over its U tuples), the gather's and scatter's floors count
those streams and operations, not N R, and the row's note says so and gives the layout's build time.
The cores' own rates (indirect loads, read-modify-writes, key steps, hash lookups and a kernel's call)
are the machine's, not a part's: each cell takes the best of its own probe and of CORE_ROUNDS probes
taken before the first cell (`core_rates`), since a VM's neighbours slow a single probe (one run's
probes, one per cell, measured L1 updates from 1.23 to 2.31 G/s).
A part's floor is the longest of its streamed kernel's time, its count at the cores' own rate (ids in
L2, no stream) and its bytes at that bandwidth: a roofline. The note of each gather, scatter and
featurize row also gives the strict ratio, against the cores' own rates alone (one L1 load per probe,
no stream), which no pass that streams its ids from memory can reach.

Per dataset (ijcnn1, cadata, letter, cod_rna_split, mnist) and R (64, 256, 1024), each part of one CG
step (PCG with its preconditioner, the estimators' default solver) is timed as a solve runs it, one
part after the other on the solve's own iterates (`in_sequence`; each part's note also gives it alone,
best of REPEATS with its caches warm, which no solve sees): the gather with |Z p|^2, the scatter with
the step's update and dots (one pass), and the new direction with the preconditioner and its norm; and
the whole step as `ridge_cg` runs it (the time of 50 steps less that of 10, over 40: the solve's setup
apart); "rest" is the whole step less its parts in sequence (Python and the step length's arithmetic: a
part that runs slower after the one before it is counted in that part, not here). Featurization
is timed whole and in its passes, batch by batch as a fit runs them: the keys (paper Alg. 1), their
numbering per grid, and the rest of a fit (the checks, the first write of the ids' new memory, the
grid offsets added to them and the lookup tables of transform: one pass over the N R ids and D
inserts). Each row's value is the part's
time, its baseline the floor's time: the ratio column reads "x the floor" (1 is at the floor). The
floors' ids are uniform at random: a part whose ids have locality (neighbouring rows in the same bins,
so repeated addresses and forwarded stores) can run below x1, and that says the floor is the random
case, not the best case.

    python -m bench.roofline [DATASET ...] [--R 64 256 1024]   (make bench-roofline)

Needs the mirror: RBREPRO_MIRROR=../shared/data/libsvm. A dataset and R whose CG vectors would not fit
in half the machine's memory is skipped with a line saying so.
"""

from __future__ import annotations

import argparse
import time

import numba as nb
import numpy as np

from bench.record import record
from bench.roofline_floors import (
    CORE_RATES,
    CORE_ROUNDS,
    REPEATS,
    best,
    best_rates,
    core_rates,
    floors,
    stream_bytes,
    streamed,
)
from bench.stopping import SIGMAS
from rbrepro.data.load import load_dataset
from rbrepro.features import RandomBinningFeatures
from rbrepro.features import _binning_kernels as bk
from rbrepro.features.random_binning import key_rows
from rbrepro.features.tuples import tuple_layout
from rbrepro.memory import available_memory_bytes, map_new_pages, memory_limit_bytes
from rbrepro.report.sections.bench import STEP_IN_ROW_SPACE
from rbrepro.solvers import _cg_kernels as ck
from rbrepro.solvers import ridge_cg
from rbrepro.solvers.cg import PRECONDITIONER_POWER, rows_pay

DATASETS = ("ijcnn1", "cadata", "letter", "cod_rna_split", "mnist")
STEPS = 10
MORE_STEPS = 40  # a step's time is (time of STEPS + MORE_STEPS steps - time of STEPS) / MORE_STEPS


def targets(data) -> np.ndarray:
    """The CG right-hand sides a fit solves: +-1 for two classes, one-vs-all columns for more, the
    values for regression."""
    y = data.y_train
    if data.info["spec"].task == "regression":
        return y.reshape(-1, 1).astype(np.float64)
    classes = np.unique(y)
    if len(classes) == 2:
        return np.where(y == classes[1], 1.0, -1.0).reshape(-1, 1)
    return np.where(y[:, None] == classes[None, :], 1.0, -1.0)


def parts(Z, Y: np.ndarray, lam: float) -> dict:
    """Seconds of each part of one PCG step on Z: the gather with |Z p|^2 (`normal_gather`), the scatter with
    the step's update (`normal_update`) and the new direction with its norm (`direction`), each as the solve
    runs it (`in_sequence`) and alone, best of REPEATS on the same data with its caches warm ("alone");
    and of the whole step inside ridge_cg."""
    D, C = Z.n_columns, Y.shape[1]
    rng = np.random.default_rng(1)
    P, Rk, W = (rng.standard_normal((D, C)) for _ in range(3))
    m = (Z.gram_diagonal() + lam) ** -PRECONDITIONER_POWER
    P_next = np.empty((D, C)) if C == 1 else P  # as ridge_cg: several targets' direction goes over P
    alpha, beta, pp = np.full(C, 1e-3), np.full(C, 0.5), np.empty(C)
    work, _ = Z.normal_gather(P)
    out = {"alone": {"gather": best(lambda: Z.normal_gather(P, work)),
                     "scatter": best(lambda: Z.normal_update(work, P, lam, alpha, W, Rk, m)),
                     "update": best(lambda: ck.direction(P_next, P, Rk, m, beta, pp))},
           "update_calls": 1, "group": work.group,
           "scratch_bytes": work.acc.nbytes + (0 if work.tuples is None else work.tuples.nbytes)}
    out.update(in_sequence(Z, Y, lam))
    out["step"], out["setup"] = step_in_solve(Z, Y, lam, preconditioned=True)
    if rows_pay(Z.n_rows, D):  # plain CG, the authors' rule, runs in row space on this shape
        out["rows_step"], _ = step_in_solve(Z, Y, lam, preconditioned=False)
    return out


def step_in_solve(Z, Y: np.ndarray, lam: float, preconditioned: bool) -> tuple[float, float]:
    """(seconds of one more step, seconds of the solve's setup) of ridge_cg as it runs: the time of
    STEPS + MORE_STEPS steps less that of STEPS, over MORE_STEPS (best of 3 each), and what STEPS steps
    leave over."""
    short = best(lambda: ridge_cg(Z, Y, lam, maxit=STEPS, tol=1e-300, preconditioned=preconditioned), repeats=3)
    long = best(lambda: ridge_cg(Z, Y, lam, maxit=STEPS + MORE_STEPS, tol=1e-300, preconditioned=preconditioned),
                repeats=3)
    step = (long - short) / MORE_STEPS
    return step, short - STEPS * step


def in_sequence(Z, Y: np.ndarray, lam: float, steps: int = MORE_STEPS, repeats: int = 3) -> dict:
    """Seconds per step of the gather, the scatter with its update and the new direction as a PCG solve
    runs them, one after the other on its own iterates (`ridge_cg`'s split step, every column active):
    each part finds the vectors where the part before left them, which at most shapes is memory, since
    every step streams the ids twice. The mean over `steps` steps, the best of `repeats` solves (the first
    compiles and faults in). The new arrays are written once before the loop (ridge_cg leaves their first
    touch to its first step's kernels), and the operator's step buffers are made by an untimed gather, so
    no part pays a first touch."""
    D, C = Z.n_columns, Y.shape[1]
    m = np.ascontiguousarray((Z.gram_diagonal() + lam) ** -PRECONDITIONER_POWER)
    B = Z.rmatvec(Y.reshape(Z.n_rows, C))
    spent = {"gather": [], "scatter": [], "update": []}
    for _ in range(repeats + 1):
        W, Rk = map_new_pages(np.zeros((D, C))), B.copy()
        P = Rk * m[:, None]
        P_next = map_new_pages(np.empty_like(P)) if C == 1 else P
        W.fill(0.0)  # their first touch, outside the timed steps
        P_next.fill(0.0)
        rz, pp = np.einsum("ij,ij->j", Rk, P), np.einsum("ij,ij->j", P, P)
        work, _ = Z.normal_gather(P)  # the step buffers, made and faulted in outside the timed steps
        took = dict.fromkeys(spent, 0.0)
        for _ in range(steps):
            t0 = time.perf_counter()
            work, zp = Z.normal_gather(P, work)
            t1 = time.perf_counter()
            alpha = rz / np.where(zp + lam * pp > 0, zp + lam * pp, 1.0)
            t2 = time.perf_counter()
            _, rz_new = Z.normal_update(work, P, lam, alpha, W, Rk, m)
            t3 = time.perf_counter()
            beta = rz_new / np.where(rz > 0, rz, 1.0)
            t4 = time.perf_counter()
            ck.direction(P_next, P, Rk, m, beta, pp)
            t5 = time.perf_counter()
            P, P_next, rz = P_next, P, rz_new
            took["gather"] += t1 - t0
            took["scatter"] += t3 - t2
            took["update"] += t5 - t4
        for part, seconds in took.items():
            spent[part].append(seconds / steps)
    return {part: min(times[1:]) for part, times in spent.items()}


def featurize_passes(features: RandomBinningFeatures, X) -> dict:
    """Seconds (best of REPEATS) of featurization's two passes over every grid, batch by batch as
    `number_bins` runs them on the fitted grids (its own batches and key buffer, `_batched_keys`): the
    keys, and their numbering per grid; and, beside the numbering, transform's lookups of the same keys
    in the fit's own tables (`lookup_columns`: each key found in a table of its grid's real bins, nothing
    inserted), timed before the numbering overwrites the keys."""
    Xc = features._check_X(X, reset=False)
    R, n = int(features.n_grids), X.shape[0]
    ids, found = np.empty((R, n), np.int32), np.empty((R, n), np.int32)
    n_bins = np.empty(R, np.int64)
    keys_s, numbering_s, lookups_s = [], [], []
    for _ in range(REPEATS + 1):  # the first compiles and faults in
        t_keys = t_numbering = t_lookups = 0.0
        t0 = time.perf_counter()
        for lo, hi, keys in features._batched_keys(Xc):
            t1 = time.perf_counter()
            bk.lookup_columns(keys, lo, features._table_offsets, features._table_keys, features._table_ids, found)
            t2 = time.perf_counter()
            bk.assign_columns(keys, ids[lo:hi], n_bins[lo:hi], nb.get_num_threads())
            t_keys += t1 - t0
            t_lookups += t2 - t1
            t0 = time.perf_counter()
            t_numbering += t0 - t2
        keys_s.append(t_keys)
        numbering_s.append(t_numbering)
        lookups_s.append(t_lookups)
    return {"keys": min(keys_s[1:]), "numbering": min(numbering_s[1:]), "lookups": min(lookups_s[1:])}


def measure(name: str, R: int, data, Y: np.ndarray, machine: dict) -> None:
    X = data.X_train
    N, C = Y.shape
    lam = data.info["spec"].lam
    features = RandomBinningFeatures(n_grids=R, sigma=SIGMAS[name], random_state=0)
    features.warm_up(X)
    t_feat = best(lambda: features.fit_transform_binned(X), repeats=3)
    Z = features.fit_transform_binned(X)
    D = Z.n_columns
    if 10 * 8 * D * C > available_memory_bytes() / 2:
        print(f"{name} R={R}: D = {D} x {C} targets needs {10 * 8 * D * C / 1e9:.1f} GB of CG vectors; skipped")
        return
    t = parts(Z, Y, lam)
    passes = featurize_passes(features, X)
    # the streams of ids a row the step's gather and scatter walk: R grids' ids, or on the tuple layout
    # (features.tuples, one target only) a tuple id a run of grids, plus U k loads (the tuples' sums) and
    # U k read-modify-writes (their sums added into the bins) over the tuples
    layout, streams, id_bytes, table_ops, counted = walked_streams(Z, C)
    # the new direction reads Rk, P and M (D long) and writes P_next (P itself for several targets); the
    # scatter's update reads P, W, Rk and M and writes W and Rk
    vector_bytes = 8 * D * (4 * C + 1)
    # in the solve, every pass over the vectors follows a pass over the ids: the bandwidth of every floor
    # that counts bytes is the stream's over as many bytes as a step touches, the vectors (their distinct
    # arrays), the ids the step walks (the tuple ids where it walks those), V and the scatter's scratch
    step_bytes = (8 * D * ((4 if C == 1 else 3) * C + 1) + id_bytes * N * streams + 8 * N * C
                  + t["scratch_bytes"])
    f = best_rates(floors(stream_bytes(step_bytes), 4 * N * R), machine)
    s = streamed(N, streams, C, f, np.uint16 if id_bytes == 2 else np.uint32)
    bw = f["bytes_per_s"]
    where = f"{name} R={R}"
    shape = f"N = {N}, D = {D}, C = {C}"
    # the tuple layout's gather first sums each tuple's bins (one more parallel call)
    tables = 0.0 if layout is None else table_ops / f["loads_per_s"] + f["call_s"]
    floor_gather = max(s["loads"], (id_bytes * N * streams + 8 * N * C) / bw) + tables
    # the scatter at the faster of its group sizes; its row vector is walked once per group, and its update
    # streams P, W, Rk and M in and W and Rk out
    floor_scatter = (scatter_floor(s, N, streams, C, 8 * D * (5 * C + 1), bw, id_bytes)
                     + table_ops / f["rmw_per_s"])
    strict_gather = (N * streams * C + table_ops) / f["loads_per_s"]
    strict_scatter = (N * streams * C + table_ops) / f["rmw_per_s"]
    rates = (f"cores {f['loads_per_s'] / 1e9:.2f} G loads/s, {f['rmw_per_s'] / 1e9:.2f} G updates/s, "
             f"{f['lookups_per_s'] / 1e9:.2f} G hash lookups/s; memory {bw / 1e9:.1f} GB/s; a parallel kernel's "
             f"call {f['call_s'] * 1e6:.1f} us")
    alone = t["alone"]
    record("roofline", f"{where} gather Z p", t["gather"] * 1e3, floor_gather * 1e3,
           "floor: L1 indirect loads with the ids streamed", unit="ms",
           note=f"{shape}; {counted} loads; in the solve's sequence; alone {alone['gather'] * 1e3:.4g} ms "
                f"(x{alone['gather'] / floor_gather:.2f}); strict (the cores' own rate, no stream): "
                f"x{t['gather'] / strict_gather:.2f}; {rates}")
    record("roofline", f"{where} scatter Z^T v + update", t["scatter"] * 1e3, floor_scatter * 1e3,
           "floor: L1 read-modify-writes with the ids streamed", unit="ms",
           note=f"{shape}; {counted} updates, {t['group']} {'grids' if layout is None else 'runs'} a group; in "
                f"the solve's sequence; alone {alone['scatter'] * 1e3:.4g} ms (x{alone['scatter'] / floor_scatter:.2f}); "
                f"strict (the cores' own rate, no stream): x{t['scatter'] / strict_scatter:.2f}; {rates}")
    floor_update = vector_bytes / bw + t["update_calls"] * f["call_s"]
    record("roofline", f"{where} new direction + preconditioner", t["update"] * 1e3, floor_update * 1e3,
           "floor: stream bandwidth and the kernels' calls", unit="ms",
           note=f"{shape}; {vector_bytes / 1e6:.1f} MB at {bw / 1e9:.1f} GB/s (a stream over the {step_bytes / 1e6:.1f} "
                f"MB a step touches, streamed over {stream_bytes(step_bytes) / 1e6:.1f} MB) and {t['update_calls']} call(s) of {f['call_s'] * 1e6:.1f} us; in the solve's "
                f"sequence; alone {alone['update'] * 1e3:.4g} ms (x{alone['update'] / floor_update:.2f}); strict "
                f"(bandwidth alone): x{t['update'] / (vector_bytes / bw):.2f}")
    floor_step = floor_gather + floor_scatter + floor_update
    rest = t["step"] - t["gather"] - t["scatter"] - t["update"]
    record("roofline", f"{where} whole CG step", t["step"] * 1e3, floor_step * 1e3, "floor: sum of the parts'",
           unit="ms", note=f"{shape}; rest (the step in ridge_cg less its parts in the solve's sequence: Python, "
                           f"the step length) {rest * 1e3:.3f} ms; the parts alone "
                           f"{sum(alone.values()) * 1e3:.3f} ms; the solve's setup "
                           f"(Z^T y, the diagonal, first touch) {t['setup'] * 1e3:.1f} ms once"
                           + ("" if layout is None else ", and the tuple layout's build once a fit (its rows say it)"))
    if "rows_step" in t:  # row space walks every grid's ids (it has no tuple layout): its own floors where
        # the PCG step's walk the tuples
        g = f if layout is None else best_rates(floors(stream_bytes(step_bytes + 4 * N * R - id_bytes * N * streams),
                                                       4 * N * R), machine)
        plain = s if layout is None else streamed(N, R, C, g)
        rows_gather = max(plain["loads"], (4 * N * R + 8 * N * C) / g["bytes_per_s"])
        record_rows_step(where, shape, t["rows_step"], rows_gather, plain, N, R, C, D, g)
    record_featurize(where, shape, X, R, D, t_feat, passes, f, rates)


def walked_streams(Z, C: int) -> tuple:
    """What a step's gather and scatter walk: (the tuple layout or None, streams of ids a row, bytes an id,
    operations over the tuples, the count as the notes say it). R grids' int32 ids, or on the tuple layout
    (features.tuples, one target only) a tuple id a run of grids, plus U k loads (the tuples' sums) and U k
    read-modify-writes (their sums added into the bins) over the tuples; its build is timed here."""
    N, R = Z.n_rows, Z.n_grids
    layout = Z.tuple_layout() if C == 1 else None
    if layout is None:
        return None, R, 4, 0, f"{N * R * C:.3g}"
    streams, id_bytes, table_ops = layout.tuple_ids.shape[0], layout.tuple_ids.itemsize, layout.n_tuples * layout.k
    built = best(lambda: tuple_layout(Z.ids, Z.offsets, memory_limit_bytes()), repeats=3)
    counted = (f"on the tuple layout ({layout.k} grids a run, U = {layout.n_tuples} tuples, {8 * id_bytes}-bit ids, "
               f"built once a fit in {built * 1e3:.3g} ms): {N * streams:.3g} + {table_ops:.3g}")
    return layout, streams, id_bytes, table_ops, counted


def scatter_floor(s: dict, N: int, R: int, C: int, column_bytes: float, bw: float, id_bytes: int = 4) -> float:
    """A scatter's floor at the faster of its group sizes: its read-modify-writes streamed (`streamed`), or
    its bytes at bandwidth: the R streams of ids (id_bytes each), V read once a group and `column_bytes` of
    D-long arrays it moves."""
    return min(max(seconds, (id_bytes * N * R + 8 * N * C * (R // lanes + 1) + column_bytes) / bw)
               for lanes, seconds in s["rmw"].items())


def record_rows_step(where: str, shape: str, seconds: float, floor_gather: float, s: dict, N: int, R: int, C: int,
                     D: int, f: dict) -> None:
    """The row: plain CG's step in row space (solvers.cg.ridge_cg_rows, the authors' rule on this shape)
    against its floor: the scatter Z^T z into a D x C buffer at the faster of its group sizes (no update: it
    writes that buffer), the gather back at the PCG gather's floor, and two passes over N x C arrays (the
    first reads six and writes three, the second reads four and writes two) at stream bandwidth, two calls."""
    bw = f["bytes_per_s"]
    floor_scatter = scatter_floor(s, N, R, C, 8 * D * C, bw)
    rows_bytes = 15 * 8 * N * C
    floor = floor_gather + floor_scatter + rows_bytes / bw + 2 * f["call_s"]
    record("roofline", f"{where} {STEP_IN_ROW_SPACE}", seconds * 1e3, floor * 1e3,
           "floor: a scatter and a gather at theirs, two passes over N x C", unit="ms",
           note=f"{shape}; plain CG (the authors' rule) in row space, 50 steps less 10 over 40; floors: scatter "
                f"{floor_scatter * 1e3:.4g} ms, gather {floor_gather * 1e3:.4g} ms, {rows_bytes / 1e6:.1f} MB at "
                f"{bw / 1e9:.1f} GB/s")


def record_featurize(where: str, shape: str, X, R: int, D: int, t_feat: float, passes: dict, f: dict,
                     rates: str) -> None:
    """The rows of featurization: its keys, numbering and rest, and the whole, each against its floor."""
    N, d = X.shape
    bw = f["bytes_per_s"]
    # featurize: the key arithmetic (one step per stored entry of X and grid), each key written once (8 B);
    # one hash lookup per (row, grid); the rest of a fit: the grid offsets added to the N R ids (read and
    # written, 8 B each), the bins' counts (one read-modify-write per id, at the cores' own rate) and the
    # lookup tables of transform (D inserts into tables of 2 D slots or more, 12 B each)
    rows = key_rows(X)  # as the key kernels read X: a dense X with many zeros as CSR
    sparse = hasattr(rows, "indptr")
    entries = rows.nnz if sparse else N * d
    counted = "N x d" if not sparse else "stored entries" if hasattr(X, "indptr") else "non-zeros, keyed as CSR"
    floor_keys = max(entries * R / f["key_steps_per_s"], 8 * N * R / bw)
    floor_numbering = N * R / f["lookups_per_s"]
    floor_rest = ((8 * N * R + 24 * D) / bw + D / f["lookups_per_s"] + 4 * N * R / f["fresh_bytes_per_s"]
                  + N * R / f["rmw_per_s"])
    t_rest = t_feat - passes["keys"] - passes["numbering"]
    record("roofline", f"{where} featurize: keys", passes["keys"] * 1e3, floor_keys * 1e3,
           "floor: key arithmetic at its L1 rate, or the keys' stores", unit="ms",
           note=f"{shape}; {entries * R:.3g} key steps ({counted} x R) at "
                f"{f['key_steps_per_s'] / 1e9:.3g} G/s, {entries * R / passes['keys'] / 1e9:.3g} G/s here")
    record("roofline", f"{where} featurize: numbering", passes["numbering"] * 1e3, floor_numbering * 1e3,
           "floor: hash lookups, each a hit in its home slot of an L1 table", unit="ms",
           note=f"{shape}; {N * R:.3g} keys at {f['lookups_per_s'] / 1e9:.3g} G lookups/s, "
                f"{N * R / passes['numbering'] / 1e9:.3g} G/s here; strict (one L1 load per key): "
                f"x{passes['numbering'] / (N * R / f['loads_per_s']):.1f}; transform's lookups of the same keys in "
                f"the fit's own tables (its grids' real bins, nothing inserted) {passes['lookups'] * 1e3:.4g} ms, "
                f"{N * R / passes['lookups'] / 1e9:.3g} G/s: numbering x{passes['numbering'] / passes['lookups']:.2f} "
                f"of them")
    if t_rest > 0:
        record("roofline", f"{where} featurize: the rest", t_rest * 1e3, floor_rest * 1e3,
               "floor: the ids' new pages, their offsets pass, their bins' counts and D lookup-table inserts",
               unit="ms",
               note=f"{shape}; a whole fit less its keys and numbering: the checks, allocation, the first write "
                    f"of the ids' {4 * N * R / 1e6:.1f} MB ({f['fresh_bytes_per_s'] / 1e9:.2g} GB/s into new "
                    f"memory here), the grid offsets, the bins' counts (a scatter) and the lookup tables of transform")
    else:  # a difference of two timings, each a best of a few: no ratio for what noise left below 0
        print(f"{where} featurize: the rest not measured: the passes timed apart took "
              f"{(passes['keys'] + passes['numbering']) * 1e3:.4g} ms, the whole fit {t_feat * 1e3:.4g} ms")
    floor_feat = floor_keys + floor_numbering + floor_rest
    strict_feat = entries * R / f["key_steps_per_s"] + N * R / f["loads_per_s"]
    record("roofline", f"{where} featurize", t_feat, floor_feat, "floor: sum of its passes'", unit="s",
           note=f"{shape}; keys {passes['keys'] * 1e3:.4g} ms, numbering {passes['numbering'] * 1e3:.4g} ms, the "
                f"rest {f'{t_rest * 1e3:.4g} ms' if t_rest > 0 else 'not measured (below 0: noise)'}; strict (key arithmetic, then one L1 load per key): "
                f"x{t_feat / strict_feat:.2f}; {rates}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.roofline", description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="*", default=list(DATASETS))
    parser.add_argument("--R", type=int, nargs="+", default=[64, 256, 1024])
    args = parser.parse_args(argv)
    print(f"threads = {nb.get_num_threads()}")
    machine = core_rates()
    print("the cores' best rates of " + str(CORE_ROUNDS) + " probes: "
          + ", ".join(f"{name} {machine[name] / 1e9:.3g} G" for name in CORE_RATES)
          + f", a kernel's call {machine['call_s'] * 1e6:.2g} us")
    for name in args.datasets:
        data = load_dataset(name, progress=False)
        Y = targets(data)
        for R in args.R:
            measure(name, R, data, Y, machine)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
