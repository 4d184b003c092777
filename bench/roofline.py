"""Benchmark: each part of RB's CG step and of featurization against the machine's own floor for it.

The floors are measured in the same process, with the same threads, by kernels that do only what a
part of the step must do, on data of the step's own shape:
- indirect loads: stream int32 ids and add table[id] from a table that fits in L1 (the gather Z p
  at its best, every load a cache hit);
- read-modify-writes: stream ids and values and do table[id] += value into a per-thread L1-sized
  table (the scatter Z^T v at its best);
- memory bandwidth: a STREAM-like triad over arrays as large together as the step's vectors (the
  vector updates, preconditioner and dots at their best).
Per dataset (ijcnn1, cadata, letter, cod_rna_split, mnist) and R (64, 256, 1024), each part of one CG
step (PCG with its preconditioner, the estimators' default solver) is timed alone, best of REPEATS:
the gather, the scatter with its scaling, lam term and dots (one pass), the vector update with the
preconditioner and the new direction (one pass for several targets, two for one: solvers.cg), and the whole step as `ridge_cg` runs it (the time of
50 steps less that of 10, over 40: the solve's setup apart); "rest" is the whole step less its parts
(Python, allocation, thread start-up). Each row's value is the part's
time, its baseline the floor's time for the same count of loads, updates or bytes: the ratio column
reads "x the floor" (1 is at the floor). The floors' ids are uniform at random: a part whose ids
have locality (neighbouring rows in the same bins, so repeated addresses and forwarded stores) can run
below x1, and that says the floor is the random case, not the best case. Featurization is timed beside
it against its own floor, the sum of its two passes at their best: the key arithmetic, one (row, grid,
feature) step per stored entry of X and grid (floor((x - u) / delta), times a multiplier, added to the
key: paper Alg. 1), at the rate of the same steps on L1-resident grids (`key_steps`); then one hash probe
per (row, grid) at the indirect-load rate, or its streamed bytes (X read once; each (row, grid)'s 8-byte
key written and read back and its 4-byte id written) at triad bandwidth, whichever is longer. The
probes' floor alone, which leaves the arithmetic out, is printed beside it in the note.

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
from bench.stopping import SIGMAS
from rbrepro.data.load import load_dataset
from rbrepro.features import RandomBinningFeatures
from rbrepro.features import _matvec_kernels as mk
from rbrepro.features._binning_kernels import bin_term
from rbrepro.memory import available_memory_bytes
from rbrepro.solvers import _cg_kernels as ck
from rbrepro.solvers import ridge_cg
from rbrepro.solvers.cg import PRECONDITIONER_POWER

DATASETS = ("ijcnn1", "cadata", "letter", "cod_rna_split", "mnist")
REPEATS = 7
STEPS = 10
MORE_STEPS = 40  # a step's time is (time of STEPS + MORE_STEPS steps - time of STEPS) / MORE_STEPS
L1_DOUBLES = 2048  # 16 KB: inside any core's L1 data cache
IDS_IN_CACHE = 1 << 17  # 512 KB of int32 ids: in L2, so the floor's loads are not waiting on a stream
LANES = 4  # independent accumulators or tables, as the gather and scatter group 4 grids
KEY_GRIDS = 64  # grids of the key-arithmetic floor: their offsets and widths (1 KB) stay in L1
KEY_VALUES = 1 << 14  # feature values per pass of that floor (128 KB, in L2)


@nb.njit(parallel=True, cache=True)
def indirect_loads(ids, table, out):
    """out[t] = sum of table[ids[i]] over thread t's share of ids: one indirect load per id, summed
    into LANES (4) independent accumulators so that the adds never wait on each other (the loads'
    own rate, not an add's latency)."""
    n_threads = out.shape[0]
    quads = ids.shape[0] // LANES
    for t in nb.prange(n_threads):
        a0 = a1 = a2 = a3 = 0.0
        for q in range(t * quads // n_threads, (t + 1) * quads // n_threads):
            i = q * LANES
            a0 += table[ids[i]]
            a1 += table[ids[i + 1]]
            a2 += table[ids[i + 2]]
            a3 += table[ids[i + 3]]
        out[t] = a0 + a1 + a2 + a3


@nb.njit(parallel=True, cache=True)
def read_modify_writes(ids, values, tables):
    """tables[t, ids[i]] += values[i] over thread t's share, 4 ids at a time: ids[i + k] lies in the
    table's k-th quarter (as the scatter walks 4 grids, whose columns are disjoint, together), so the
    4 read-modify-write chains are independent and the core can overlap them."""
    n_threads = tables.shape[0]
    quads = ids.shape[0] // LANES
    for t in nb.prange(n_threads):
        for q in range(t * quads // n_threads, (t + 1) * quads // n_threads):
            i = q * LANES
            for k in range(LANES):
                tables[t, ids[i + k]] += values[i + k]


@nb.njit(parallel=True, cache=True)
def key_steps(x, u, inv_delta, mult, out):
    """The key arithmetic of featurization at its best: for every value of thread t's share of x and
    every grid k, keys[k] += bin_term(x, u[k], inv_delta[k], a), the step of `_binning_kernels`'
    key kernels on grids whose offsets and widths sit in L1, vectorized over a contiguous run as
    theirs are (grids here and in keys_csr, a block's rows in keys_dense); out[t] = a checksum, so
    that nothing is optimized away."""
    n_threads, n_grids, n = out.shape[0], u.shape[0], x.shape[0]
    for t in nb.prange(n_threads):
        keys = np.zeros(n_grids, np.uint64)
        for i in range(t * n // n_threads, (t + 1) * n // n_threads):
            value, a = x[i], mult[i & 15]
            for k in range(n_grids):
                keys[k] += bin_term(value, u[k], inv_delta[k], a)
        total = np.uint64(0)
        for k in range(n_grids):
            total += keys[k]
        out[t] = total


@nb.njit(parallel=True, cache=True)
def triad(a, b, c, s):
    for i in nb.prange(a.shape[0]):
        a[i] = b[i] + s * c[i]


def best(fn, repeats: int = REPEATS) -> float:
    fn()  # compile and fault in
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def floors(vector_bytes: int) -> dict:
    """The machine's rates: indirect loads and read-modify-writes per second into an L1-sized table,
    on ids that stay in L2 (REPEATS passes over IDS_IN_CACHE ids: the cores' own rate, no stream), and
    bytes per second of a triad over vector_bytes (the memory side)."""
    rng = np.random.default_rng(0)
    threads = nb.get_num_threads()
    ids = rng.integers(0, L1_DOUBLES // LANES, IDS_IN_CACHE, dtype=np.int32)
    lanes = (ids + (np.arange(IDS_IN_CACHE) % LANES) * (L1_DOUBLES // LANES)).astype(np.int32)  # k-th quarter
    values = rng.random(IDS_IN_CACHE)
    table = rng.random(L1_DOUBLES // LANES)
    out = np.empty(threads)
    tables = np.zeros((threads, L1_DOUBLES))
    n = max(1 << 16, vector_bytes // 24)
    a, b, c = np.zeros(n), rng.random(n), rng.random(n)
    x, u, inv_delta = rng.random(KEY_VALUES), rng.random(KEY_GRIDS), 1.0 / rng.uniform(0.1, 1.0, KEY_GRIDS)
    mult = rng.integers(1, 1 << 62, 16, dtype=np.uint64) | np.uint64(1)
    checksums = np.empty(threads, np.uint64)
    return {"loads_per_s": IDS_IN_CACHE / best(lambda: indirect_loads(ids, table, out)),
            "rmw_per_s": IDS_IN_CACHE / best(lambda: read_modify_writes(lanes, values, tables)),
            "bytes_per_s": 24.0 * n / best(lambda: triad(a, b, c, 3.0)),
            "key_steps_per_s": KEY_VALUES * KEY_GRIDS / best(lambda: key_steps(x, u, inv_delta, mult, checksums))}


def floor_seconds(count: int, stream_bytes: int, rate: float, f: dict) -> float:
    """A part's floor: its indirect operations at the core's rate, or its streamed bytes (ids, the
    row vectors) at the memory's, whichever takes longer (a roofline)."""
    return max(count / rate, stream_bytes / f["bytes_per_s"])


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
    """Seconds of each part of one PCG step on Z, alone, and of the whole step inside ridge_cg."""
    D, C, N = Z.n_columns, Y.shape[1], Z.n_rows
    rng = np.random.default_rng(1)
    P, Rk, W = (rng.standard_normal((D, C)) for _ in range(3))
    m = (Z.gram_diagonal() + lam) ** -PRECONDITIONER_POWER
    V, AP, P_next = np.empty((N, C)), np.empty((D, C)), np.empty((D, C))
    alpha, beta, rr, rz = np.full(C, 1e-3), np.full(C, 0.5), np.empty(C), np.empty(C)
    if C == 1:
        # one target: the scatter's dots are p^T q alone (r = p, no M), the update two passes (solvers.cg)
        p, v, dots = P.reshape(-1), V.reshape(-1), np.empty((Z.n_grids, mk.N_DOTS))
        out = {"gather": best(lambda: mk.gather_vector(Z.ids, p, v)),
               "scatter": best(lambda: mk.scatter_gram_vector(Z.ids, v, Z.offsets, p, p, np.empty(0),
                                                               1.0 / Z.n_grids, lam, AP.reshape(-1), dots)),
               "update": best(lambda: (ck.step_preconditioned(W, Rk, P, AP, alpha, m, rr, rz),
                                       ck.direction_preconditioned(P_next, P, Rk, m, beta)))}
    else:
        dots = np.empty((Z.n_grids, mk.N_DOTS, C))
        out = {"gather": best(lambda: mk.gather(Z.ids, P, V)),
               "scatter": best(lambda: mk.scatter_gram_dots(Z.ids, V, Z.offsets, P, Rk, m, 1.0 / Z.n_grids, lam,
                                                            AP, dots)),
               "update": best(lambda: ck.step_direction(W, Rk, P, P_next, AP, alpha, beta, m, rr, rz))}
    short = best(lambda: ridge_cg(Z, Y, lam, maxit=STEPS, tol=1e-300, preconditioned=True), repeats=3)
    long = best(lambda: ridge_cg(Z, Y, lam, maxit=STEPS + MORE_STEPS, tol=1e-300, preconditioned=True), repeats=3)
    out["step"] = (long - short) / MORE_STEPS  # one more step's cost, the solve's setup taken out
    out["setup"] = short - STEPS * out["step"]
    return out


def measure(name: str, R: int, data, Y: np.ndarray) -> None:
    X, d = data.X_train, data.X_train.shape[1]
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
    # the update reads W, Rk, P, AP and M and writes W, Rk and P_next: in one pass for several targets; one
    # target's two passes read Rk, P and M again
    vector_bytes = 8 * (8 if C > 1 else 11) * D * C
    f = floors(vector_bytes)
    where = f"{name} R={R}"
    shape = f"N = {N}, D = {D}, C = {C}"
    ids_bytes, rows_bytes = 4 * N * R, 8 * N * C * (R // 4 + 1)  # the row vector is walked once per 4 grids
    floor_gather = floor_seconds(N * R * C, ids_bytes + 8 * N * C, f["loads_per_s"], f)
    floor_scatter = floor_seconds(N * R * C, ids_bytes + rows_bytes + 3 * 8 * D * C, f["rmw_per_s"], f)
    rates = (f"cores {f['loads_per_s'] / 1e9:.2f} G loads/s, {f['rmw_per_s'] / 1e9:.2f} G updates/s; memory "
             f"{f['bytes_per_s'] / 1e9:.1f} GB/s")
    record("roofline", f"{where} gather Z p", t["gather"] * 1e3, floor_gather * 1e3,
           "floor: L1 indirect loads or the ids' stream", unit="ms", note=f"{shape}; {N * R * C:.3g} loads; {rates}")
    record("roofline", f"{where} scatter Z^T v + dots", t["scatter"] * 1e3, floor_scatter * 1e3,
           "floor: L1 read-modify-writes or the ids' stream", unit="ms",
           note=f"{shape}; {N * R * C:.3g} updates; {rates}")
    record("roofline", f"{where} vector update + preconditioner", t["update"] * 1e3,
           vector_bytes / f["bytes_per_s"] * 1e3, "floor: triad bandwidth", unit="ms",
           note=f"{shape}; {vector_bytes / 1e6:.1f} MB at {f['bytes_per_s'] / 1e9:.1f} GB/s")
    floor_step = floor_gather + floor_scatter + vector_bytes / f["bytes_per_s"]
    rest = t["step"] - t["gather"] - t["scatter"] - t["update"]
    record("roofline", f"{where} whole CG step", t["step"] * 1e3, floor_step * 1e3, "floor: sum of the parts'",
           unit="ms", note=f"{shape}; rest (outside the kernels) {rest * 1e3:.3f} ms; the solve's setup "
                           f"(Z^T y, the diagonal, first touch) {t['setup'] * 1e3:.1f} ms once")
    # featurize: the key arithmetic (one step per stored entry of X and grid), then one hash probe per (row,
    # grid), with the keys written then read back (8 B each way), the ids written (4 B) and X read once
    sparse = hasattr(X, "indptr")
    x_bytes = sum(a.nbytes for a in (X.data, X.indices, X.indptr)) if sparse else X.nbytes
    entries = X.nnz if sparse else N * d
    floor_keys = entries * R / f["key_steps_per_s"]
    floor_probes = floor_seconds(N * R, x_bytes + 20 * N * R, f["loads_per_s"], f)
    floor_feat = floor_keys + floor_probes
    record("roofline", f"{where} featurize", t_feat, floor_feat,
           "floor: key arithmetic at its L1 rate, then L1 hash probes or the keys' stream", unit="s",
           note=f"{shape}; {entries * R:.3g} key steps ({'stored entries' if sparse else 'N x d'} x R) at "
                f"{f['key_steps_per_s'] / 1e9:.3g} G/s = {floor_keys:.4g} s, {entries * R / t_feat / 1e9:.3g} G/s "
                f"here; {N * R:.3g} probes = {floor_probes:.4g} s (the probes' floor alone: "
                f"x{t_feat / floor_probes:.1f}); {rates}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.roofline", description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="*", default=list(DATASETS))
    parser.add_argument("--R", type=int, nargs="+", default=[64, 256, 1024])
    args = parser.parse_args(argv)
    print(f"threads = {nb.get_num_threads()}")
    for name in args.datasets:
        data = load_dataset(name, progress=False)
        Y = targets(data)
        for R in args.R:
            measure(name, R, data, Y)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
