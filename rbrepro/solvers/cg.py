"""Ridge regression on features by conjugate gradients on Z (paper §5.2).

Solves (Z^T Z + lam I) W = Z^T Y for every column of Y at once, applying Z and Z^T
(never forming Z^T Z): each iteration is one gather and one scatter over Z for all
right-hand sides together. Columns stop updating once their relative residual
||r|| / ||Z^T y|| reaches tol; the loop ends when all have, or after maxit iterations.
The authors' defaults are maxit = 50, tol = 1e-3 (docs/design.md §2): with small lam the early
stop is part of the regularization.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbrepro.errors import InvalidParameter
from rbrepro.memory import fault_in
from rbrepro.solvers._cg_kernels import (
    direction,
    direction_preconditioned,
    step,
    step_direction,
    step_preconditioned,
)
from rbrepro.solvers.operator import as_operator

MAXIT = 50
TOL = 1e-3
#: pcg's preconditioner is (diag(Z^T Z) + lam)^PRECONDITIONER_POWER: a square root, halfway between
#: plain CG (0) and Jacobi (1). Jacobi fits rare bins first, and its early iterates test worse on the
#: sets that gain from every row (letter, mnist, cod_rna); the square root keeps most of its speed
#: (bench/stopping.py measures the three on every mirror dataset)
PRECONDITIONER_POWER = 0.5
#: A one-pass step predicts the new residual's M-norm from the operator's dots before it updates,
#: rz' = rz - 2 alpha r^T M q + alpha^2 q^T M q; where those terms cancel to below this fraction of
#: their size, too few digits are left for beta and the step takes its two passes instead
CANCELLATION = 1e-6
#: The one-pass step pays where several targets share its passes: letter's 26 classes at R = 256 take
#: 96-102 ms a step against 134-138 ms in two passes; for one target the scatter's two more streams
#: (r and M) cost more than the pass they save (ijcnn1, R = 1024: 29.7-30.2 against 27.5-27.6 ms),
#: so one target keeps the two-pass step (`python -m bench.roofline` times each part)
ONE_PASS_TARGETS = 2


@dataclass
class CGResult:
    coef: np.ndarray          # (D, C)
    iterations: int           # applications of Z^T Z (the same for every column)
    relative_residual: np.ndarray  # (C,) final ||r|| / ||b|| per column
    converged: bool


def gram_diagonal(Z) -> np.ndarray:
    """diag(Z^T Z) of an operator (solvers.operator): for RB, bin counts / R (Z^T Z restricted to
    one grid is exactly this diagonal, so a Jacobi preconditioner is exact on each grid's block);
    for dense Z, the squared column norms."""
    return as_operator(Z).gram_diagonal()


def apply_normal(Z, P: np.ndarray, lam: float, out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(Z^T Z + lam I) P and per-column P^T (Z^T Z + lam I) P for P of shape (D, C): Z's fused
    `gram_apply_dots` where it has one (Random Binning), else a matvec and an rmatvec. out: a (D, C)
    buffer the fused step writes into (a CG loop's own, reused every step)."""
    if hasattr(Z, "gram_apply"):  # the protocol's optional whole step (a distributed reduction)
        return Z.gram_apply(P, lam)
    if hasattr(Z, "gram_apply_dots"):  # the protocol's optional fused step
        out, dots = Z.gram_apply_dots(P, lam, P, None, out=out)
        return out, dots[0]
    AP = Z.rmatvec(Z.matvec(P))
    AP += lam * P
    return AP, np.einsum("ij,ij->j", P, AP)


def _predicted_beta(dots: np.ndarray, alpha: np.ndarray, rz: np.ndarray, active: np.ndarray) -> np.ndarray | None:
    """beta = rz' / rz with rz' = (r - alpha q)^T M (r - alpha q) expanded in the operator's dots
    (p^T q, r^T M q, q^T M q), so that the step's update and its new direction share one pass; None
    where the expansion cancels (CANCELLATION) and the step must compute rz' before its direction."""
    _, rmq, qmq = dots
    predicted = rz - 2.0 * alpha * rmq + alpha * alpha * qmq
    size = rz + 2.0 * alpha * np.abs(rmq) + alpha * alpha * qmq
    if np.any(active & (predicted <= CANCELLATION * size)):
        return None
    return np.where(active, predicted / np.where(rz > 0, rz, 1.0), 0.0)


def _preconditioner(Z, lam: float) -> np.ndarray:
    """(diag(Z^T Z) + lam)^-PRECONDITIONER_POWER, the PCG preconditioner (1 where the diagonal is 0)."""
    diag = gram_diagonal(Z) + lam
    return np.ascontiguousarray(np.where(diag > 0, diag, 1.0) ** -PRECONDITIONER_POWER, dtype=np.float64)


def ridge_cg(Z, Y: np.ndarray | None, lam: float, maxit: int = MAXIT, tol: float = TOL,
             preconditioned: bool = False, rhs: np.ndarray | None = None, callback=None,
             x0: np.ndarray | None = None) -> CGResult:
    """Solve (Z^T Z + lam I) W = Z^T Y by CG; Z needs matvec, rmatvec and shape.

    preconditioned=True preconditions with (diag(Z^T Z) + lam)^PRECONDITIONER_POWER (PCG); the stopping rule
    stays the true relative residual ||r|| / ||Z^T y||, so iteration counts compare directly.
    rhs: Z^T Y (D x C) where the caller has it already (a distributed fit reduces it where the
    rows are); Y is then not used.
    callback(it, W): called after each iteration with the current iterate; returning True stops
    the loop there (a stopping rule that reads the iterates, solvers.stopping).
    x0: a starting iterate (D x C) instead of zero, e.g. a solve of nearly the same problem (its
    residual costs one more application of Z^T Z); the relative residual stays against ||Z^T y||."""
    if lam < 0:
        raise InvalidParameter(f"lam must be >= 0, got {lam}")
    if maxit < 0:
        raise InvalidParameter(f"maxit must be >= 0, got {maxit}")
    Z = as_operator(Z)
    if rhs is None:
        B = Z.rmatvec(np.asarray(Y, dtype=np.float64).reshape(Z.shape[0], -1))
    else:
        B = np.array(rhs, dtype=np.float64).reshape(Z.shape[1], -1)
    n_cols, C = B.shape
    bnorm = np.sqrt(np.einsum("ij,ij->j", B, B))
    bnorm[bnorm == 0] = 1.0
    if x0 is None:
        W = fault_in(np.zeros((n_cols, C)))
        Rk = np.ascontiguousarray(B)  # B is not needed again (its norm is bnorm): no copy, one D x C array fewer
    else:
        W = np.array(np.asarray(x0, dtype=np.float64).reshape(n_cols, C))
        Rk = np.ascontiguousarray(B - apply_normal(Z, W, lam)[0])
        del B
    inv_diag = _preconditioner(Z, lam) if preconditioned else None
    P = Rk * inv_diag[:, None] if preconditioned else Rk.copy()
    P_next = fault_in(np.empty_like(P))  # the direction kernels write here, then the two swap (_cg_kernels)
    rz = np.einsum("ij,ij->j", Rk, P)
    rr = np.einsum("ij,ij->j", Rk, Rk)
    active = np.sqrt(rr) > tol * bnorm
    it = 0
    rr_new, rz_new = np.empty(C), np.empty(C)
    # the protocol's optional fused step writes Q into our buffer, reused every step (a fresh one would fault
    # its pages in again); with its dots, several targets share the update's pass (ONE_PASS_TARGETS)
    fused = hasattr(Z, "gram_apply_dots")
    one_pass = C >= ONE_PASS_TARGETS and fused
    m = np.empty(0) if inv_diag is None else inv_diag
    AP = fault_in(np.empty_like(P)) if fused else None
    while it < maxit and active.any():
        if one_pass:
            AP, dots = Z.gram_apply_dots(P, lam, Rk, inv_diag, out=AP)
            pAp = dots[0]
        else:
            AP, pAp = apply_normal(Z, P, lam, out=AP if fused else None)
            AP = np.ascontiguousarray(AP)  # the kernels read (D, C) arrays in C order (_cg_kernels)
        alpha = np.where(active & (pAp > 0), rz / np.where(pAp > 0, pAp, 1.0), 0.0)
        beta = _predicted_beta(dots, alpha, rz, active) if one_pass else None
        if beta is not None:  # W += alpha P; Rk -= alpha AP; P_next = M Rk + beta P; exact rr, rz
            step_direction(W, Rk, P, P_next, AP, alpha, beta, m, rr_new, rz_new)
        elif preconditioned:  # W += alpha P; Rk -= alpha AP; rr_new = |Rk|^2; rz_new = Rk^T M^-1 Rk
            step_preconditioned(W, Rk, P, AP, alpha, inv_diag, rr_new, rz_new)
        else:
            step(W, Rk, P, AP, alpha, rr_new)
            rz_new[:] = rr_new
        if not fused:
            AP = None  # freed before the next apply allocates its own (memory: at most 7 D x C arrays)
        rr = np.where(active, rr_new, rr)
        if beta is None:
            beta = np.where(active, rz_new / np.where(rz > 0, rz, 1.0), 0.0)
            if preconditioned:  # P_next = M^-1 Rk + beta P
                direction_preconditioned(P_next, P, Rk, inv_diag, beta)
            else:
                direction(P_next, P, Rk, beta)
        P, P_next = P_next, P
        rz = np.where(active, rz_new, rz)
        it += 1
        active &= np.sqrt(rr) > tol * bnorm
        if callback is not None and callback(it, W):
            break
    rel = np.sqrt(rr) / bnorm
    return CGResult(coef=W, iterations=it, relative_residual=rel, converged=bool((rel <= tol).all()))
