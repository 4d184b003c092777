"""numba kernels of L1-regularized randomized coordinate descent (paper Alg. 2, eq. 24-29).

F(w) = lam ||w||_1 + (1/N) sum_i L(w^T z_i, y_i). One coordinate step (docs/design.md §2):
g_j = (1/N) sum_i L'(yhat_i, y_i) z_ij, M_j = beta (1/N) sum_i z_ij^2 (times the eq. 29
damping for synchronous parallel steps), w_j <- S(w_j - g_j / M_j, lam / M_j), then
yhat_i += dw_j z_ij on the rows of column j.

Two column layouts: Random Binning's compact Z as CSC (col_ptr, col_rows; every value
1/sqrt(R)), and a dense Z^T (D x N, each column contiguous) for Random Fourier.
Parallel variants:
- asynchronous (the authors' OpenMP code): threads take disjoint parts of a reshuffled
  coordinate order and update the shared yhat with atomic adds, undamped;
- synchronous (eq. 29): rounds of S coordinates computed from the same yhat, steps
  damped by 1 + (omega - 1)(S - 1)/(D - 1), then applied together.
The plain-numpy reference (`reference.rcd_epoch`) runs the sequential steps in Python.
"""

import numba as nb
import numpy as np
from numba.core import cgutils, types
from numba.extending import intrinsic

SQUARE = 0
SQUARED_HINGE = 1
LOGISTIC = 2
LOSSES = {"square": SQUARE, "squared_hinge": SQUARED_HINGE, "logistic": LOGISTIC}
CURVATURE = {SQUARE: 1.0, SQUARED_HINGE: 1.0, LOGISTIC: 0.25}


@intrinsic
def atomic_add(typingctx, array, index, value):
    """array[index] += value as one atomic read-modify-write (LLVM atomicrmw fadd)."""
    if not (isinstance(array, types.Array) and array.dtype == types.float64):
        return None
    sig = types.void(array, types.intp, types.float64)

    def codegen(context, builder, signature, args):
        arr, idx, val = args
        ary = context.make_array(signature.args[0])(context, builder, arr)
        ptr = cgutils.get_item_pointer(context, builder, signature.args[0], ary, [idx], wraparound=False)
        builder.atomic_rmw("fadd", ptr, val, "monotonic")
        return context.get_dummy_value()

    return sig, codegen


@nb.njit(cache=True, inline="always")
def dloss(code, yhat, y):
    if code == SQUARE:
        return yhat - y
    if code == SQUARED_HINGE:
        m = 1.0 - y * yhat
        return -y * m if m > 0.0 else 0.0
    return -y / (1.0 + np.exp(y * yhat))


@nb.njit(cache=True, inline="always")
def soft_threshold(v, t):
    if v > t:
        return v - t
    if v < -t:
        return v + t
    return 0.0


# --- Random Binning: CSC with one value ------------------------------------------------

@nb.njit(parallel=True, cache=True)
def binned_to_csc(ids, offsets, col_ptr, col_rows):
    """Columns of the compact RB matrix: grid r's columns own col_rows[r N:(r+1) N]."""
    n_grids, n = ids.shape
    for r in nb.prange(n_grids):
        lo, hi = offsets[r], offsets[r + 1]
        counts = np.zeros(hi - lo, np.int64)
        for i in range(n):
            counts[ids[r, i] - lo] += 1
        pos = r * n
        for c in range(hi - lo):
            col_ptr[lo + c] = pos
            pos += counts[c]
            counts[c] = col_ptr[lo + c]
        for i in range(n):
            c = ids[r, i] - lo
            col_rows[counts[c]] = i
            counts[c] += 1
    col_ptr[offsets[n_grids]] = n_grids * n


@nb.njit(cache=True, inline="always")
def _binned_delta(j, col_ptr, col_rows, value, w, yhat, y, lam, curvature, code, inv_n):
    lo, hi = col_ptr[j], col_ptr[j + 1]
    if hi == lo:
        return 0.0
    g = 0.0
    for p in range(lo, hi):
        i = col_rows[p]
        g += dloss(code, yhat[i], y[i])
    g *= value * inv_n
    M = curvature * value * value * (hi - lo) * inv_n
    return soft_threshold(w[j] - g / M, lam / M) - w[j]


@nb.njit(parallel=True, cache=True)
def binned_epoch(order, col_ptr, col_rows, value, w, yhat, y, lam, curvature, code):
    """One pass of sequential coordinate steps in the given order (Alg. 2).

    The loop sits in a one-part prange: numba then compiles it as it compiles the parallel
    kernels' loops (arrays passed without aliasing), and a plain njit loop ran 1.2-1.3x slower per
    epoch than the async kernel on one thread. The 1-thread baseline of every speedup must be the
    fastest sequential code, not a slower one (bench/rcd_kernels.py measures the three)."""
    inv_n = 1.0 / y.shape[0]
    for _ in nb.prange(1):
        for k in range(order.shape[0]):
            j = order[k]
            delta = _binned_delta(j, col_ptr, col_rows, value, w, yhat, y, lam, curvature, code, inv_n)
            if delta != 0.0:
                w[j] += delta
                step = delta * value
                for p in range(col_ptr[j], col_ptr[j + 1]):
                    yhat[col_rows[p]] += step


@nb.njit(parallel=True, cache=True)
def binned_epoch_async(order, n_parts, col_ptr, col_rows, value, w, yhat, y, lam, curvature, code):
    """Threads take disjoint parts of the order; yhat updates are atomic; undamped."""
    inv_n = 1.0 / y.shape[0]
    size = (order.shape[0] + n_parts - 1) // n_parts
    for t in nb.prange(n_parts):
        for k in range(t * size, min(order.shape[0], (t + 1) * size)):
            j = order[k]
            delta = _binned_delta(j, col_ptr, col_rows, value, w, yhat, y, lam, curvature, code, inv_n)
            if delta != 0.0:
                w[j] += delta
                step = delta * value
                for p in range(col_ptr[j], col_ptr[j + 1]):
                    atomic_add(yhat, col_rows[p], step)


@nb.njit(parallel=True, cache=True)
def binned_epoch_sync(order, batch, col_ptr, col_rows, value, w, yhat, y, lam, curvature, code, deltas):
    """Rounds of `batch` coordinates from the same yhat (curvature already damped, eq. 29)."""
    inv_n = 1.0 / y.shape[0]
    n = order.shape[0]
    for start in range(0, n, batch):
        stop = min(n, start + batch)
        for k in nb.prange(start, stop):
            deltas[k - start] = _binned_delta(order[k], col_ptr, col_rows, value, w, yhat, y, lam, curvature,
                                              code, inv_n)
        for k in nb.prange(start, stop):
            delta = deltas[k - start]
            if delta != 0.0:
                j = order[k]
                w[j] += delta
                step = delta * value
                for p in range(col_ptr[j], col_ptr[j + 1]):
                    atomic_add(yhat, col_rows[p], step)


# --- dense columns (Random Fourier) ------------------------------------------------------

@nb.njit(cache=True, inline="always")
def _dense_delta(j, ZT, col_sq, w, yhat, y, lam, curvature, code, inv_n):
    g = 0.0
    col = ZT[j]
    for i in range(col.shape[0]):
        g += dloss(code, yhat[i], y[i]) * col[i]
    g *= inv_n
    M = curvature * col_sq[j] * inv_n
    if M <= 0.0:
        return 0.0
    return soft_threshold(w[j] - g / M, lam / M) - w[j]


@nb.njit(cache=True)
def dense_epoch(order, ZT, col_sq, w, yhat, y, lam, curvature, code):
    inv_n = 1.0 / y.shape[0]
    for j in order:
        delta = _dense_delta(j, ZT, col_sq, w, yhat, y, lam, curvature, code, inv_n)
        if delta != 0.0:
            w[j] += delta
            col = ZT[j]
            for i in range(col.shape[0]):
                yhat[i] += delta * col[i]


@nb.njit(parallel=True, cache=True)
def dense_epoch_async(order, n_parts, ZT, col_sq, w, yhat, y, lam, curvature, code):
    inv_n = 1.0 / y.shape[0]
    size = (order.shape[0] + n_parts - 1) // n_parts
    for t in nb.prange(n_parts):
        for k in range(t * size, min(order.shape[0], (t + 1) * size)):
            j = order[k]
            delta = _dense_delta(j, ZT, col_sq, w, yhat, y, lam, curvature, code, inv_n)
            if delta != 0.0:
                w[j] += delta
                col = ZT[j]
                for i in range(col.shape[0]):
                    atomic_add(yhat, i, delta * col[i])


@nb.njit(parallel=True, cache=True)
def dense_epoch_sync(order, batch, ZT, col_sq, w, yhat, y, lam, curvature, code, deltas):
    inv_n = 1.0 / y.shape[0]
    n = order.shape[0]
    n_rows = y.shape[0]
    for start in range(0, n, batch):
        stop = min(n, start + batch)
        for k in nb.prange(start, stop):
            deltas[k - start] = _dense_delta(order[k], ZT, col_sq, w, yhat, y, lam, curvature, code, inv_n)
        for k in range(start, stop):
            w[order[k]] += deltas[k - start]
        # apply all steps of the round: rows split across threads, no atomics needed
        for i in nb.prange(n_rows):
            acc = 0.0
            for k in range(start, stop):
                acc += deltas[k - start] * ZT[order[k], i]
            yhat[i] += acc
