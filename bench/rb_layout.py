"""Benchmark: RB memory layout ideas on ijcnn1, each against the library's kernel
in the same process.

1. Test-set lookup (predict): the library's grid-major probe (one grid's hash table at a time,
   in cache) against a row-major probe (R tables touched per row).
2. Gather (Z w): the library's kernel, which sums GRID_GROUP grids in a register before
   updating each row, against one grid at a time.
3. One CG step (Z^T Z + lam I) p with its updates: the library's fused scatter and numba
   updates (`ridge_cg`) against gather, scatter and numpy's vector operations.
4. CG mat-vecs: the library's int32 global column ids against uint16 local ids plus a per-grid
   offset (half the bytes per entry), for gather (Z w) and scatter (Z^T v).
5. The CG step's scatter with its update: the library's, which walks as many grids together row by
   row as fit the L2 cache (`scatter_group`), against GRID_GROUP grids; the sums must agree bit for bit.
6. CG's new direction: into a second buffer (the library's `ridge_cg`) against written over P,
   in the full loop, where the gather has just read P from both cores; same bits.

    python -m bench.rb_layout [R ...]      (default R = 256 1093 4375)

Needs the mirror: RBREPRO_MIRROR=../shared/data/libsvm.
"""

from __future__ import annotations

import sys
import time

import numba as nb
import numpy as np
import scipy.sparse as sp

from bench.record import record
from rbrepro.data.load import load_dataset
from rbrepro.features import RandomBinningFeatures
from rbrepro.features import _binning_kernels as bk
from rbrepro.features import _matvec_kernels as mk
from rbrepro.features.random_binning import _grid_batches
from rbrepro.solvers import ridge_cg

ROW_BLOCK = 2048  # the row blocks the library gather used before one block per thread (its docstring)
UNSEEN16 = 0xFFFF


@nb.njit(parallel=True, cache=True)
def lookup_row_major(keys, grid0, table_offsets, table_keys, table_ids, ids):
    """The row-major probe order: each row probes all R grids' tables."""
    n_grids, n = keys.shape
    for i in nb.prange(n):
        for k in range(n_grids):
            r = grid0 + k
            t0 = table_offsets[r]
            mask = table_offsets[r + 1] - t0 - 1
            ids[r, i] = bk.find_column(keys[k, i], t0, mask, table_keys, table_ids)


@nb.njit(parallel=True, cache=True)
def gather_u16(local, offsets, w, out):
    n_grids, n = local.shape
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in nb.prange(n_blocks):
        lo = b * ROW_BLOCK
        hi = min(n, lo + ROW_BLOCK)
        for i in range(lo, hi):
            out[i] = 0.0
        for r in range(n_grids):
            base = offsets[r]
            for i in range(lo, hi):
                c = local[r, i]
                if c != UNSEEN16:
                    out[i] += w[base + c]


@nb.njit(parallel=True, cache=True)
def scatter_u16(local, v, offsets, out):
    n_grids, n = local.shape
    for r in nb.prange(n_grids):
        base = offsets[r]
        for col in range(offsets[r], offsets[r + 1]):
            out[col] = 0.0
        for i in range(n):
            c = local[r, i]
            if c != UNSEEN16:
                out[base + c] += v[i]


@nb.njit(parallel=True, cache=True)
def gather_one_grid(ids, w, out):
    """The gather one grid at a time: out[i] updated once per grid."""
    n_grids, n = ids.shape
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in nb.prange(n_blocks):
        lo = b * ROW_BLOCK
        hi = min(n, lo + ROW_BLOCK)
        for i in range(lo, hi):
            out[i] = 0.0
        for r in range(n_grids):
            for i in range(lo, hi):
                col = ids[r, i]
                if col >= 0:
                    out[i] += w[col]


@nb.njit(parallel=True, cache=True)
def direction_in_place(P, Zk, beta):
    """The direction update written over P: P = Zk + beta P."""
    n, n_cols = P.shape
    for j in nb.prange(n):
        for c in range(n_cols):
            P[j, c] = Zk[j, c] + beta[c] * P[j, c]


def cg_direction_in_place(Z, y, lam, maxit):
    """`ridge_cg`'s loop for one target (no preconditioner, no early stop) with the direction
    written over P."""
    from rbrepro.solvers._cg_kernels import step
    from rbrepro.solvers.cg import apply_normal

    B = Z.rmatvec(y.reshape(-1, 1))
    W, Rk = np.zeros_like(B), B.copy()
    P = Rk.copy()
    rz = np.einsum("ij,ij->j", Rk, Rk)
    rr_new = np.empty(1)
    for _ in range(maxit):
        AP, pAp = apply_normal(Z, P, lam)
        alpha = rz / pAp
        step(W, Rk, P, AP, alpha, rr_new)
        beta = rr_new / rz
        direction_in_place(P, Rk, beta)
        rz = rr_new.copy()
    return W


def cg_numpy(Z, lam, maxit):
    """The unfused CG loop (one target): matvec, rmatvec and numpy's vector updates."""
    B = Z.rmatvec(np.ones(Z.n_rows))
    W, Rk = np.zeros_like(B), B.copy()
    P = Rk.copy()
    rr = Rk @ Rk
    for _ in range(maxit):
        AP = Z.rmatvec(Z.matvec(P))
        AP += lam * P
        alpha = rr / (P @ AP)
        W += alpha * P
        Rk -= alpha * AP
        rr_new = Rk @ Rk
        P *= rr_new / rr
        P += Rk
        rr = rr_new
    return W


def best_of(fn, *args, repeats=5):
    fn(*args)  # compiled or loaded from the cache outside the timing
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best


def lookups(features, X, kernel):
    X = features._check_X(X, reset=False)
    ids = np.empty((int(features.n_grids), X.shape[0]), dtype=np.int32)
    grid_ranges = _grid_batches(int(features.n_grids), X.shape[0], sp.issparse(X))
    batches = [(lo, hi, features._keys(X, lo, hi)) for lo, hi in grid_ranges]

    def run():
        for lo, _, keys in batches:
            kernel(keys, lo, features._table_offsets, features._table_keys, features._table_ids, ids)
    return run, ids


def main(argv):
    Rs = [int(a) for a in argv] or [256, 1093, 4375]
    data = load_dataset("ijcnn1", progress=False)
    print(f"ijcnn1: {data.X_train.shape[0]} train / {data.X_test.shape[0]} test rows, {nb.get_num_threads()} threads")
    for R in Rs:
        features = RandomBinningFeatures(n_grids=R, sigma=1.58, random_state=0)
        Z = features.fit_transform_binned(data.X_train)
        grid_major, ids_new = lookups(features, data.X_test, bk.lookup_columns)
        row_major, ids_old = lookups(features, data.X_test, lookup_row_major)
        t_new, t_old = best_of(grid_major, repeats=3), best_of(row_major, repeats=3)
        assert np.array_equal(ids_new, ids_old)
        record("rb_layout", f"R={R} test lookup, grid-major", t_new, t_old, "row-major",
               note=f"{data.X_test.shape[0]} rows, D={Z.n_columns}")
        w = np.random.default_rng(0).random(Z.n_columns)
        g_new, g_old = np.empty(Z.n_rows), np.empty(Z.n_rows)
        t_new = best_of(mk.gather_vector, Z.ids, w, Z.offsets, g_new)
        t_old = best_of(gather_one_grid, Z.ids, w, g_old)
        assert np.allclose(g_new, g_old)
        record("rb_layout", f"R={R} gather, grids in groups of {mk.GRID_GROUP}", t_new, t_old,
               "one grid at a time")
        # before the numpy CG below, whose allocations leave the heap in a state that slows
        # the grouped scatter (10.5 against 6.2 ms at R = 1024, one grid at a time unchanged)
        v, p = np.random.default_rng(1).random(Z.n_rows), np.random.default_rng(2).random(Z.n_columns)
        group = mk.scatter_group(Z.offsets, 1)
        w_new, w_old, r_new, r_old = np.zeros(Z.n_columns), np.zeros(Z.n_columns), p.copy(), p.copy()
        d_new, d_old, acc = np.empty((R, mk.N_SUMS)), np.empty((R, mk.N_SUMS)), np.empty(Z.n_columns)
        t_new = best_of(mk.scatter_update_vector, Z.ids, v, Z.offsets, p, w_new, r_new, np.empty(0), 1.0 / R, 0.01,
                        1e-3, acc, d_new, group)
        t_old = best_of(mk.scatter_update_vector, Z.ids, v, Z.offsets, p, w_old, r_old, np.empty(0), 1.0 / R, 0.01,
                        1e-3, acc, d_old, mk.GRID_GROUP)
        assert np.array_equal(r_new, r_old) and np.array_equal(d_new, d_old)
        record("rb_layout", f"R={R} CG step's scatter and update, grids in groups of {group}", t_new, t_old,
               f"groups of {mk.GRID_GROUP}", note="the same sums, bit for bit")
        y = np.where(data.y_train > 0, 1.0, -1.0)
        t_new = best_of(lambda: ridge_cg(Z, y, 0.01, maxit=20, tol=1e-300), repeats=3)
        t_old = best_of(lambda: cg_direction_in_place(Z, y, 0.01, 20), repeats=3)
        # the same iterates to rounding, checked over few steps: CG's rounding differences grow about a
        # thousandfold every five steps (ijcnn1 R = 64: 6e-12 after 5, 3e-8 after 10, 2e-3 after 20)
        assert np.allclose(ridge_cg(Z, y, 0.01, maxit=8, tol=1e-300).coef, cg_direction_in_place(Z, y, 0.01, 8),
                           rtol=1e-6, atol=1e-9)
        record("rb_layout", f"R={R} 20 CG iterations, one-pass update into a second buffer", t_new, t_old,
               "two passes, direction written over P", note="the same coefficients to rounding over 8 steps")
        maxit = 10
        t_new = best_of(lambda: ridge_cg(Z, np.ones(Z.n_rows), 0.01, maxit=maxit, tol=1e-30), repeats=3)
        t_old = best_of(lambda: cg_numpy(Z, 0.01, maxit), repeats=3)
        assert np.allclose(ridge_cg(Z, np.ones(Z.n_rows), 0.01, maxit=maxit, tol=1e-30).coef[:, 0],
                           cg_numpy(Z, 0.01, maxit), rtol=1e-6, atol=1e-9)
        record("rb_layout", f"R={R} {maxit} CG iterations, fused scatter + numba updates", t_new, t_old,
               "matvec, rmatvec and numpy updates")
        if np.max(np.diff(Z.offsets)) >= UNSEEN16:
            print(f"R={R}: a grid has >= 65535 bins; uint16 local ids do not apply")
            continue
        local = (Z.ids - Z.offsets[:-1, None]).astype(np.uint16)
        w, v = np.random.default_rng(0).random(Z.n_columns), np.random.default_rng(1).random(Z.n_rows)
        g32, g16 = np.empty(Z.n_rows), np.empty(Z.n_rows)
        s32, s16 = np.empty(Z.n_columns), np.empty(Z.n_columns)
        t32 = best_of(mk.gather_vector, Z.ids, w, Z.offsets, g32)
        t16 = best_of(gather_u16, local, Z.offsets, w, g16)
        assert np.allclose(g32, g16)
        record("rb_layout", f"R={R} gather, uint16 local ids", t16, t32, "int32 global ids (library)")
        t32 = best_of(mk.scatter_vector, Z.ids, v, Z.offsets, s32)
        t16 = best_of(scatter_u16, local, v, Z.offsets, s16)
        assert np.allclose(s32, s16)
        record("rb_layout", f"R={R} scatter, uint16 local ids", t16, t32, "int32 global ids (library)")


if __name__ == "__main__":
    main(sys.argv[1:])
