"""Ridge regression on features by conjugate gradients on Z (paper §5.2).

Solves (Z^T Z + lam I) W = Z^T Y for every column of Y at once, applying Z and Z^T
(never forming Z^T Z): each iteration is one gather and one scatter over Z for all
right-hand sides together. Columns stop updating once their relative residual
||r|| / ||Z^T y|| reaches tol; the loop ends when all have, or after maxit iterations.

Where the operator splits a step (solvers.operator: `normal_gather`, `normal_update`), the step length
comes from the gather alone, alpha = r^T M r / (|Z p|^2 + lam |p|^2) (|p|^2 from the direction's own
pass), and the update W += alpha p, r -= alpha A p runs inside the scatter while each group of columns
of Z^T Z p is in cache, so A p is never stored: a step is the gather, the scatter with the update, and
one pass for the new direction p = M r + beta p, and the solve keeps three D x C arrays (W, r, p; one
target keeps a second p, _cg_kernels). Letter's 26 classes at R = 256 took five of 106 MB each.
Plain CG (no preconditioner, from zero, no callback) on an operator with `row_gram` runs in row space
where `rows_pay` (D at least ROWS_MIN_COLUMNS_PER_ROW times N): the same iterates in exact arithmetic,
its vectors N x C instead of D x C (`ridge_cg_rows`). Train s, 50 steps at tol 1e-3, one process, median
of 4 alternating, 2 threads, AMD EPYC Zen 4: letter R = 64 / 256 0.600 / 1.771 -> 0.472 / 1.088, mnist
R = 64 1.388 -> 1.190. One target, ms a step (50 steps less 10, over 40, best of 5, two rounds): ijcnn1
R = 256 / 1024 5.53, 5.39 / 21.7, 21.3 -> 4.60, 4.59 / 19.3, 20.6, cadata R = 256 / 1024 2.24, 2.24 /
9.52, 9.71 -> 1.90, 1.97 / 8.39, 9.33; narrower, it lost: cadata R = 64 (D = 2.3 N) 0.68, 0.65 -> 0.81,
0.82, ijcnn1 R = 64 (D = 2.8 N) 1.02, 1.02 -> 1.05, 1.03. Whole solves of one target, 50 steps, median
of 15 alternating, ms: cadata R = 256 / 1024 121.6 / 533.2 -> 100.5 / 499.0, ijcnn1 R = 256 / 1024 282.7 /
1124.7 -> 241.4 / 1047.8. Rounding then differs from the steps on D:
letter R = 256's test accuracy was the same, mnist R = 64's 95.90 -> 95.94 %.
The authors' defaults are maxit = 50, tol = 1e-3 (docs/design.md §2): with small lam the early
stop is part of the regularization.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbrepro.errors import InvalidParameter
from rbrepro.memory import map_new_pages
from rbrepro.solvers._cg_kernels import direction, step, step_preconditioned
from rbrepro.solvers._row_cg_kernels import rows_direction, rows_step
from rbrepro.solvers.operator import as_operator

MAXIT = 50
TOL = 1e-3
#: pcg's preconditioner is (diag(Z^T Z) + lam)^PRECONDITIONER_POWER: a square root, halfway between
#: plain CG (0) and Jacobi (1). Jacobi fits rare bins first, and its early iterates test worse on the
#: sets that gain from every row (letter, mnist, cod_rna); the square root keeps most of its speed
#: (bench/stopping.py measures the three on every mirror dataset)
PRECONDITIONER_POWER = 0.5
#: plain CG runs in row space (`ridge_cg_rows`) from this many columns a row (D / N)
ROWS_MIN_COLUMNS_PER_ROW = 3


@dataclass
class CGResult:
    coef: np.ndarray          # (D, C)
    iterations: int           # applications of Z^T Z (the same for every column)
    relative_residual: np.ndarray  # (C,) final ||r|| / ||b|| per column
    converged: bool


class CGBuffers:
    """The D x C arrays of a solve, kept for the next solve of the same shape: early stopping's search and
    its final steps (models.feature_ridge) are two solves of one shape, and each fresh array costs its page
    faults again (on a VM whose host takes freed memory back, a slow part of a step; letter's 26 classes at
    R = 256: 106 MB an array). A solve given buffers writes its right-hand side, residual, iterate and
    directions into them, so the coefficients it returns are one of them: a caller copies them out before
    the next solve with the same buffers."""

    def __init__(self):
        self._arrays: dict[str, np.ndarray] = {}

    def take(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """The array kept as `name` where it has this shape (its old values), else a new one (float64, C
        order, its pages mapped by map_new_pages), kept from then on. A new shape (a narrower last block of
        targets) lets go of every kept array first, so that old and new are not held at once."""
        array = self._arrays.get(name)
        if array is None or array.shape != shape:
            if array is not None:
                self._arrays.clear()
            array = self._arrays[name] = map_new_pages(np.empty(shape))
        return array

    def holds(self, array: np.ndarray) -> bool:
        """Whether `array` shares memory with a kept array (the last solve's coef, say)."""
        return any(np.shares_memory(array, kept) for kept in self._arrays.values())


def _take(buffers: CGBuffers | None, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """`buffers.take(name, shape)`, or a new array where the solve keeps no buffers."""
    return map_new_pages(np.empty(shape)) if buffers is None else buffers.take(name, shape)


def gram_diagonal(Z) -> np.ndarray:
    """diag(Z^T Z) of an operator (solvers.operator): for RB, bin counts / R (Z^T Z restricted to
    one grid is exactly this diagonal, so a Jacobi preconditioner is exact on each grid's block);
    for dense Z, the squared column norms."""
    return as_operator(Z).gram_diagonal()


def apply_normal(Z, P: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(Z^T Z + lam I) P and per-column P^T (Z^T Z + lam I) P for P of shape (D, C): the operator's
    whole step where it has one (a distributed reduction), else a matvec and an rmatvec."""
    if hasattr(Z, "gram_apply"):  # the protocol's optional whole step (a distributed reduction)
        return Z.gram_apply(P, lam)
    AP = Z.rmatvec(Z.matvec(P))
    AP += lam * P
    return AP, np.einsum("ij,ij->j", P, AP)


def _preconditioner(Z, lam: float) -> np.ndarray:
    """(diag(Z^T Z) + lam)^-PRECONDITIONER_POWER, the PCG preconditioner (1 where the diagonal is 0); taken
    on the diagonal's levels where the operator has fewer of them than columns (`gram_diagonal_levels`,
    solvers.operator): the same values, each level's power taken once."""
    Z = as_operator(Z)
    if hasattr(Z, "gram_diagonal_levels"):
        levels, index = Z.gram_diagonal_levels()
        if len(levels) < len(index):
            return np.take(_inverse_power(levels, lam), index)
    return _inverse_power(Z.gram_diagonal(), lam)


def _inverse_power(diag: np.ndarray, lam: float) -> np.ndarray:
    """(diag + lam)^-PRECONDITIONER_POWER entry by entry, 1 where diag + lam is not positive."""
    out = map_new_pages(np.empty(len(diag)))
    np.add(diag, lam, out=out)
    out[~(out > 0)] = 1.0
    return np.power(out, -PRECONDITIONER_POWER, out=out)


def ridge_cg(Z, Y: np.ndarray | None, lam: float, maxit: int = MAXIT, tol: float = TOL,
             preconditioned: bool = False, rhs: np.ndarray | None = None, callback=None,
             x0: np.ndarray | None = None, buffers: CGBuffers | None = None) -> CGResult:
    """Solve (Z^T Z + lam I) W = Z^T Y by CG; Z needs matvec, rmatvec and shape.

    preconditioned=True preconditions with (diag(Z^T Z) + lam)^PRECONDITIONER_POWER (PCG); the stopping rule
    stays the true relative residual ||r|| / ||Z^T y||, so iteration counts compare directly.
    rhs: Z^T Y (D x C) where the caller has it already (a distributed fit reduces it where the
    rows are); Y is then not used.
    callback(it, W): called after each iteration with the current iterate; returning True stops
    the loop there (a stopping rule that reads the iterates, solvers.stopping).
    x0: a starting iterate (D x C) instead of zero, e.g. a solve of nearly the same problem (its
    residual costs one more application of Z^T Z); the relative residual stays against ||Z^T y||.
    buffers: `CGBuffers` to take the D x C arrays from and leave them in (the returned coef is one of them);
    the iterates are the same, bit for bit."""
    if lam < 0:
        raise InvalidParameter(f"lam must be >= 0, got {lam}")
    if maxit < 0:
        raise InvalidParameter(f"maxit must be >= 0, got {maxit}")
    Z = as_operator(Z)
    if buffers is not None and x0 is not None and buffers.holds(x0):  # the last solve's coef, say: the
        x0 = np.array(x0)  # buffers are written before x0 is read
    if (rhs is None and x0 is None and callback is None and not preconditioned and hasattr(Z, "row_gram")
            and rows_pay(*Z.shape)):
        return ridge_cg_rows(Z, Y, lam, maxit, tol)
    B = _right_hand_side(Z, Y, rhs, buffers)
    n_cols, C = B.shape
    bnorm = np.sqrt(np.einsum("ij,ij->j", B, B))
    bnorm[bnorm == 0] = 1.0
    # the protocol's optional split step: alpha from |Z p|^2 before Z^T Z p exists, then the update inside
    # the operator's own scatter (solvers.operator); its buffers are kept from step to step
    split = hasattr(Z, "normal_gather") and hasattr(Z, "normal_update")
    Rk = np.ascontiguousarray(B)  # B is not needed again (its norm is bnorm): no copy, one D x C array fewer
    del B
    W, work = _start(Z, Rk, x0, lam, split, buffers)
    inv_diag = _preconditioner(Z, lam) if preconditioned else None
    m = np.empty(0) if inv_diag is None else inv_diag
    P = _take(buffers, "direction", Rk.shape)
    if preconditioned:
        np.multiply(Rk, inv_diag[:, None], out=P)
    else:
        np.copyto(P, Rk)
    # one target's new direction goes to a second buffer, several targets' over P (_cg_kernels)
    P_next = _take(buffers, "next direction", P.shape) if C == 1 else P
    rz = np.einsum("ij,ij->j", Rk, P)
    rr = np.einsum("ij,ij->j", Rk, Rk)
    pp = np.einsum("ij,ij->j", P, P)
    active = np.sqrt(rr) > tol * bnorm
    it = 0
    rr_new, rz_new = np.empty(C), np.empty(C)
    while it < maxit and active.any():
        if split:
            work, zp = Z.normal_gather(P, work)
            pAp = zp + lam * pp
        else:
            AP, pAp = apply_normal(Z, P, lam)
            AP = np.ascontiguousarray(AP)  # the kernels read (D, C) arrays in C order (_cg_kernels)
        alpha = _ratio_where(active & (pAp > 0), rz, pAp)
        if split:  # W += alpha P; Rk -= alpha A P; rr_new = |Rk|^2; rz_new = Rk^T M Rk
            rr_new, rz_new = Z.normal_update(work, P, lam, alpha, W, Rk, inv_diag)
        elif preconditioned:
            step_preconditioned(W, Rk, P, AP, alpha, inv_diag, rr_new, rz_new)
        else:
            step(W, Rk, P, AP, alpha, rr_new)
            rz_new[:] = rr_new
        AP = None  # freed before the next apply allocates its own (memory: at most 6 D x C arrays)
        rr = np.where(active, rr_new, rr)
        beta = _ratio_where(active, rz_new, rz)
        direction(P_next, P, Rk, m, beta, pp)  # P_next = M Rk + beta P, and its |.|^2
        P, P_next = P_next, P
        rz = np.where(active, rz_new, rz)
        it += 1
        active &= np.sqrt(rr) > tol * bnorm
        if callback is not None and callback(it, W):
            break
    if hasattr(Z, "end_solve"):  # an operator that tracked this solve's iterate (solvers.operator)
        Z.end_solve()
    rel = np.sqrt(rr) / bnorm
    return CGResult(coef=W, iterations=it, relative_residual=rel, converged=bool((rel <= tol).all()))


def _right_hand_side(Z, Y: np.ndarray | None, rhs: np.ndarray | None, buffers: CGBuffers | None) -> np.ndarray:
    """Z^T Y (D x C), or the given rhs, in an array of its own: the solve's first residual, updated in place."""
    if rhs is None:
        Y2 = np.asarray(Y, dtype=np.float64).reshape(Z.shape[0], -1)
        shape = (Z.shape[1], Y2.shape[1])
        return Z.rmatvec(Y2) if buffers is None else Z.rmatvec(Y2, out=buffers.take("residual", shape)).reshape(shape)
    if buffers is None:
        return np.array(rhs, dtype=np.float64).reshape(Z.shape[1], -1)
    given = np.asarray(rhs, dtype=np.float64).reshape(Z.shape[1], -1)
    B = buffers.take("residual", given.shape)
    np.copyto(B, given)
    return B


def _ratio_where(mask: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den per column where mask holds (a den that is not positive counts as 1), else 0: a step's
    length alpha and its beta, for the columns still moving."""
    return np.where(mask, num / np.where(den > 0, den, 1.0), 0.0)


def _start(Z, Rk: np.ndarray, x0: np.ndarray | None, lam: float, split: bool,
           buffers: CGBuffers | None = None) -> tuple:
    """(W, the split step's buffers or None): W = 0, or W = x0 with Rk (Z^T y on entry) made x0's residual
    Z^T y - (Z^T Z + lam I) x0 in place: where the operator splits its step, by one split step of length 1
    along x0 from W = 0 (a gather and the fused scatter, no new D x C array), else a matvec and an rmatvec."""
    n_cols, C = Rk.shape
    if buffers is None:
        W = map_new_pages(np.zeros((n_cols, C)))
    else:
        W = buffers.take("iterate", (n_cols, C))
        W.fill(0.0)
    if x0 is None:
        return W, None
    X0 = np.ascontiguousarray(np.asarray(x0, dtype=np.float64).reshape(n_cols, C))
    if not split:
        np.copyto(W, X0)
        Rk -= apply_normal(Z, W, lam)[0]
        return W, None
    work, _ = Z.normal_gather(X0, None)
    Z.normal_update(work, X0, lam, np.ones(C), W, Rk, None)
    return W, work


def rows_pay(n_rows: int, n_columns: int) -> bool:
    """Whether plain CG runs in row space (`ridge_cg_rows`): where Z has several times more columns than
    rows, so that the D x C vectors it spares outweigh its N x C ones."""
    return n_columns >= ROWS_MIN_COLUMNS_PER_ROW * n_rows


def ridge_cg_rows(Z, Y, lam: float, maxit: int, tol: float) -> CGResult:
    """Plain CG on (Z^T Z + lam I) W = Z^T Y, the same iterates in exact arithmetic, with every D-length
    vector kept as Z^T of an N-length one: CG starts at W = 0 from r = Z^T Y, and Z^T Z maps the span of
    Z^T's columns into itself, so W = Z^T c, r = Z^T s and p = Z^T a throughout. With y = Z Z^T s and
    z = Z Z^T a kept beside s and a, a step needs one product u = Z Z^T z (`row_gram`: a scatter and a
    gather, the same loads as a step on D) and then
        p^T A p = |z|^2 + lam a^T z,  alpha = |r|^2 / p^T A p,  c += alpha a,
        s -= alpha (z + lam a),  y -= alpha (u + lam z),  |r|^2 = s^T y,
        beta = |r_new|^2 / |r|^2,  a = s + beta a,  z = y + beta z,
    two passes over (N, C) arrays (_row_cg_kernels) where the step on D makes three over (D, C) ones; W =
    Z^T c is formed once at the end. The stopping rule is the same relative residual |r| / |Z^T y|."""
    N = Z.shape[0]
    S = np.array(np.asarray(Y, dtype=np.float64).reshape(N, -1), order="C")
    C = S.shape[1]
    Ys = map_new_pages(np.empty_like(S))
    work = Z.row_gram(S, Ys)
    rr = np.maximum(np.einsum("ij,ij->j", S, Ys), 0.0)  # |Z^T y|^2, which rounding must not take below 0
    bnorm = np.sqrt(rr)
    bnorm[bnorm == 0] = 1.0
    A, Za = S.copy(), Ys.copy()
    coef = np.zeros_like(S)
    U = np.empty_like(S)
    zz = np.einsum("ij,ij->j", Za, Za)
    az = np.einsum("ij,ij->j", A, Za)
    rr_new, active, it = np.empty(C), np.sqrt(rr) > tol * bnorm, 0
    while it < maxit and active.any():
        work = Z.row_gram(Za, U, work)
        pAp = zz + lam * az
        alpha = _ratio_where(active & (pAp > 0), rr, pAp)
        rows_step(coef, S, Ys, A, Za, U, alpha, float(lam), rr_new)
        np.maximum(rr_new, 0.0, out=rr_new)  # s^T Z Z^T s, which rounding may take below 0 near convergence
        beta = _ratio_where(active, rr_new, rr)
        rr = np.where(active, rr_new, rr)
        rows_direction(A, Za, S, Ys, beta, zz, az)
        it += 1
        active &= np.sqrt(rr) > tol * bnorm
    del work, U, A, Za, Ys
    rel = np.sqrt(rr) / bnorm
    return CGResult(coef=Z.rmatvec(coef), iterations=it, relative_residual=rel, converged=bool((rel <= tol).all()))
