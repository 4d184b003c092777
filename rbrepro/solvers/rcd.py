"""L1-regularized randomized coordinate descent on RB or RF features (paper Sec. 4, Alg. 2).

Minimizes F(w) = lam ||w||_1 + (1/N) sum_i L(w^T z_i, y_i) for the square, squared-hinge
(1/2 max(0, 1 - y z)^2, curvature 1) and logistic (curvature 1/4) losses, without
intercept or centering. Each epoch visits every coordinate once in a fresh random order
(seeded). With one thread the steps are sequential (exact Alg. 2); with more, the
variant is "async" (the authors' atomic, undamped updates) or "sync" (eq. 29: rounds of
S = SYNC_COORDS_PER_THREAD * threads coordinates from the same predictions, steps damped
by 1 + (omega - 1)(S - 1)/(D - 1), omega = non-zeros per row). The trace records
(seconds, objective, nnz(w)) after every epoch; objective evaluation is not timed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba
import numpy as np

from rbrepro.errors import InvalidParameter
from rbrepro.solvers import _rcd_kernels as k
from rbrepro.vocabulary import LOSSES, VARIANTS

SYNC_COORDS_PER_THREAD = 64


def loss_values(code: int, yhat: np.ndarray, y: np.ndarray) -> np.ndarray:
    if code == k.SQUARE:
        return 0.5 * (yhat - y) ** 2
    if code == k.SQUARED_HINGE:
        return 0.5 * np.maximum(0.0, 1.0 - y * yhat) ** 2
    return np.logaddexp(0.0, -y * yhat)


def objective(loss: str, lam: float, w: np.ndarray, yhat: np.ndarray, y: np.ndarray) -> float:
    """F(w) = lam ||w||_1 + mean_i L(yhat_i, y_i)."""
    return float(lam * np.abs(w).sum() + loss_values(k.LOSSES[loss], yhat, y).mean())


@dataclass
class RCDResult:
    coef: np.ndarray
    objective: float
    epochs: int
    seconds: float                 # timed epochs only
    variant: str                   # "sequential", "async" or "sync"
    threads: int
    damping: float
    trace: list = field(default_factory=list)  # (seconds, objective, nnz)


class _Columns:
    """Column access for RCD: CSC of the compact RB matrix, or dense Z^T for RF."""

    def __init__(self, Z):
        binned = hasattr(Z, "one_value_columns")  # the operator protocol's optional method (solvers.operator)
        if binned:
            ids, offsets, value = Z.one_value_columns()
            if (ids < 0).any():
                raise InvalidParameter("RCD needs the training Z (no unseen-bin entries)")
            self.binned = True
            self.n_rows, self.n_cols = Z.shape
            self.col_ptr = np.empty(int(offsets[-1]) + 1, np.int64)
            self.col_rows = np.empty(ids.size, np.int32)
            k.binned_to_csc(ids, offsets, self.col_ptr, self.col_rows)
            self.value = float(value)
            self.omega = ids.shape[0]
        else:
            Z = np.asarray(Z)
            self.binned = False
            self.n_rows, self.n_cols = Z.shape
            self.ZT = np.ascontiguousarray(Z.T, dtype=np.float64)
            self.col_sq = np.einsum("ij,ij->i", self.ZT, self.ZT)
            self.omega = self.n_cols
        self.predict = (Z.matvec if binned else (lambda w: self.ZT.T @ w))

    def epoch(self, order, w, yhat, y, lam, curvature, code, variant, threads, batch, deltas):
        if self.binned:
            args = (self.col_ptr, self.col_rows, self.value, w, yhat, y, lam, curvature, code)
            if variant == "sequential":
                k.binned_epoch(order, *args)
            elif variant == "async":
                k.binned_epoch_async(order, threads, *args)
            else:
                k.binned_epoch_sync(order, batch, *args, deltas)
        else:
            args = (self.ZT, self.col_sq, w, yhat, y, lam, curvature, code)
            if variant == "sequential":
                k.dense_epoch(order, *args)
            elif variant == "async":
                k.dense_epoch_async(order, threads, *args)
            else:
                k.dense_epoch_sync(order, batch, *args, deltas)


def prepare(Z) -> _Columns:
    """Column structure of Z (built once; reusable across runs on the same Z)."""
    return _Columns(Z)


def l1_rcd(Z, y: np.ndarray, lam: float, loss: str = "squared_hinge", epochs: int = 20, threads: int = 1,
           variant: str = "async", seed: int = 0, target: float | None = None, w0: np.ndarray | None = None,
           columns: _Columns | None = None) -> RCDResult:
    """Run RCD for `epochs` passes (or until the objective reaches `target`)."""
    if loss not in LOSSES:
        raise InvalidParameter(f"loss must be one of {LOSSES}, got {loss!r}")
    if variant not in VARIANTS:
        raise InvalidParameter(f"variant must be one of {VARIANTS}, got {variant!r}")
    if not lam >= 0 or epochs < 0 or threads < 1:
        raise InvalidParameter(f"need lam >= 0, epochs >= 0, threads >= 1; got {lam}, {epochs}, {threads}")
    cols = columns or prepare(Z)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if y.shape[0] != cols.n_rows:
        raise InvalidParameter(f"y has {y.shape[0]} rows, Z has {cols.n_rows}")
    code = k.LOSSES[loss]
    w = np.zeros(cols.n_cols) if w0 is None else np.array(w0, dtype=np.float64)
    yhat = np.ascontiguousarray(cols.predict(w), dtype=np.float64) if w0 is not None else np.zeros(cols.n_rows)
    threads = min(threads, numba.config.NUMBA_NUM_THREADS)
    run_variant = "sequential" if threads == 1 else variant
    batch = SYNC_COORDS_PER_THREAD * threads
    damping = 1.0
    if run_variant == "sync" and cols.n_cols > 1:
        damping = 1.0 + (cols.omega - 1) * (batch - 1) / (cols.n_cols - 1)
    curvature = k.CURVATURE[code] * damping
    deltas = np.zeros(batch)
    rng = np.random.default_rng(seed)
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    elapsed = 0.0
    trace = [(0.0, objective(loss, lam, w, yhat, y), int(np.count_nonzero(w)))]
    done = 0
    try:
        for _ in range(epochs):
            if target is not None and trace[-1][1] <= target:
                break
            order = rng.permutation(cols.n_cols)
            t0 = time.perf_counter()
            cols.epoch(order, w, yhat, y, lam, curvature, code, run_variant, threads, batch, deltas)
            elapsed += time.perf_counter() - t0
            done += 1
            trace.append((elapsed, objective(loss, lam, w, yhat, y), int(np.count_nonzero(w))))
    finally:
        numba.set_num_threads(previous)
    return RCDResult(coef=w, objective=trace[-1][1], epochs=done, seconds=elapsed, variant=run_variant,
                     threads=threads, damping=damping, trace=trace)
