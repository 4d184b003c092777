"""Theorem 1 measured on data: objective gaps, kernel errors, kappa and D for RB, RF and Nyström.

**The objective.** Eq. 1 with the square loss L(z, y) = (z - y)^2 / 2 (beta = 1, Assumption 1):

    F(f) = (lam / 2) ||f||_H^2 + (1 / 2N) sum_i (f(x_i) - y_i)^2.

Exact kernel: by the representer theorem f = sum_i alpha_i k(x_i, .), so F = (lam/2) alpha^T K alpha
+ (1/2N) ||K alpha - y||^2, stationary at (K + N lam I) alpha = y; substituting, with G = K + N lam I
and K alpha - y = -N lam G^-1 y, the optimum is F*_K = (lam / 2) y^T (K + N lam I)^-1 y.

Features Z (N x D): f(x) = z(x)^T w, whose norm in the RKHS of the approximate kernel Z Z^T is ||w||
(at the optimum w lies in the row space of Z), so F_Z(w) = (lam / 2) ||w||^2 + (1 / 2N) ||Z w - y||^2.
Its normal equations are eq. 8 with lam -> N lam, (Z^T Z + N lam I) w = Z^T y; by the push-through
identity w = Z^T a with (Z Z^T + N lam I) a = y, an N x N system however large D is (solved as the
D x D primal instead when D <= N / 2, which is cheaper), and
F*_Z = (lam / 2) y^T (Z Z^T + N lam I)^-1 y. This is Theorem 1's F-bar(w^(R)): FC-RBCD after R blocks
minimizes eq. 11 over the R drawn grids, each grid's block carrying the Monte Carlo weight 1/R (the
1/sqrt(R) of Alg. 1, as eq. 8 solves it); the reference w* of eq. 13 is the exact optimum f*, with
||w*||^2 = ||f*||_H^2 = alpha^T K alpha. Both are minimized exactly (float64 Cholesky, one step of
iterative refinement): no solver error enters the gap.

The gap is computed without cancellation: with A = Z Z^T + N lam I and B = K + N lam I,
A^-1 - B^-1 = A^-1 (B - A) B^-1, so gap = F*_Z - F*_K = (lam / 2) a^T (K - Z Z^T) alpha.
Its sign: Nyström's Z Z^T <= K (the rest is a Schur complement), so its gap is >= 0. RB and RF are
unbiased, E[Z Z^T] = K, and A -> y^T (A + N lam I)^-1 y is convex, so E[gap] >= 0 (Jensen), but one draw
can have Z Z^T not below K and a negative gap: it is reported as is.

**lam.** lam is eq. 1's; the default RIDGE / N makes N lam = 0.01, the design's lam = 0.01 used
unscaled in (Z^T Z + lam I) w = Z^T y (docs/design.md §2), so the gaps speak of the experiments' regime.

**Targets.** +-1 for binary; multi-class: the FIRST (smallest) label +1 against the rest -1; regression:
the target standardized on the subsample (eq. 1 has no intercept; the scale cancels in rel_gap and slopes).

**kappa.** Definition 1 (eq. 9-10): nu_b is the share of the N points in bin b, nu_delta = max_b nu_b,
kappa_delta = 1 / nu_delta and kappa = E_delta[kappa_delta]. RandomBinningFeatures.kappa_ (mean over the
R grids of N / max_b count_b) is exactly the Monte Carlo estimate of eq. 10 and is reported as kappa.
As the shares of grid r's D_r non-empty bins sum to 1, D_r >= kappa_delta: kappa LOWER-bounds the expected
number of non-empty bins per grid, E[D] / R (§4's kappa-bar := D / R), so D / (kappa R) >= 1, with
equality only when every grid's bins are equally full (the paper's "D ~ kappa R" before eq. 22).

**bound.** Eq. 13's right side, beta ||f*||_H^2 / (kappa R') with beta = 1, R' = R - c and
c = ceil(2 kappa (F(0) - F*_K) / ||f*||_H^2) (NaN while R' <= 0); for RF kappa = 1 ([33]'s O(1/R) of
"other random features"); NaN for Nyström, about which the theorem says nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.linalg import ArpackNoConvergence, eigsh

from rbrepro.errors import InvalidParameter
from rbrepro.features.laplacian import as_dense, laplacian_kernel
from rbrepro.models.registry import METHODS as REGISTRY
from rbrepro.models.registry import SUBJECT, method_spec
from rbrepro.provenance import provenance


def theorem1_methods() -> tuple[str, ...]:
    """The methods Theorem 1 is measured on (registry `theorem1`): each has an explicit Z, K ~ Z Z^T."""
    return tuple(name for name, spec in REGISTRY.items() if spec.theorem1)


def bound_kappa(method: str, kappa: float) -> float:
    """The kappa of eq. 13's bound for `method`: its registry entry's number, the feature map's own kappa
    ("features"), or NaN where the entry gives none (the row's bound is then NaN, and said so)."""
    value = method_spec(method).kappa
    if value == "features":
        return kappa
    return float(value) if value is not None else math.nan
#: N lam of the default lam: the design's unscaled lam = 0.01 (docs/design.md §2)
RIDGE = 0.01
#: relative tolerance of the Lanczos (ARPACK) spectral norms
SPECTRAL_TOL = 1e-8
COLUMNS = ("dataset", "method", "sigma", "R", "seed", "n", "lam", "D", "kappa", "D_over_kappa_R", "gap", "rel_gap",
           "fro_rel", "spec_rel", "max_abs", "F", "F_exact", "bound")


def ridge_targets(y: np.ndarray, task: str) -> np.ndarray:
    """The one target vector of every problem: +-1 (binary), first label vs rest (multi-class), or
    the standardized regression target."""
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if task == "regression":
        centered = y - y.mean()
        scale = centered.std()
        return centered / scale if scale > 0 else centered
    classes = np.unique(y)
    if len(classes) < 2:
        raise InvalidParameter(f"classification needs at least two classes, got {classes.tolist()}")
    positive = classes[1] if len(classes) == 2 else classes[0]
    return np.where(y == positive, 1.0, -1.0)


def subsample(X, y: np.ndarray, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n rows drawn without replacement (seeded; all rows when there are at most n), densified."""
    rows = X.shape[0]
    if n >= rows:
        take = np.arange(rows)
    else:
        take = np.sort(np.random.default_rng(seed).choice(rows, n, replace=False))
    return np.asarray(as_dense(X[take]), dtype=np.float64), np.asarray(y)[take]


def feature_matrix(method: str, X: np.ndarray, sigma: float, R: int, seed: int):
    """(Z, kappa) of one draw of the method's feature map (of the l1 kernel): Z scipy CSR (a sparse
    map: RB) or dense float64; kappa is the map's `kappa_` where it has one (RB), else NaN."""
    if method not in theorem1_methods():
        raise InvalidParameter(f"method must be one of {theorem1_methods()}, got {method!r}")
    fm = REGISTRY[method].feature_map(R, sigma=sigma, kernel="l1", random_state=seed)
    Z = fm.fit_transform(X)
    return (Z if sp.issparse(Z) else np.asarray(Z, dtype=np.float64)), getattr(fm, "kappa_", math.nan)


def gram(Z) -> np.ndarray:
    """Z Z^T, the approximate kernel matrix, as a dense float64 N x N array."""
    G = Z @ Z.T
    return np.asarray(G.toarray() if sp.issparse(G) else G, dtype=np.float64)


def _cholesky_solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A^-1 b for symmetric positive definite A, with one step of iterative refinement."""
    factor = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
    x = scipy.linalg.cho_solve(factor, b, check_finite=False)
    return x + scipy.linalg.cho_solve(factor, b - A @ x, check_finite=False)


def dual_solution(G: np.ndarray, y: np.ndarray, ridge: float, Z=None) -> np.ndarray:
    """a = (G + ridge I)^-1 y for G = Z Z^T (ridge = N lam > 0). With Z of at most N / 2 columns the
    D x D primal (Z^T Z + ridge I) w = Z^T y is cheaper than the N x N system, and a = (y - Z w) / ridge
    (push-through identity)."""
    n = G.shape[0]
    if Z is not None and 2 * Z.shape[1] <= n:
        M = Z.T @ Z
        M = np.asarray(M.toarray() if sp.issparse(M) else M, dtype=np.float64)
        w = _cholesky_solve(M + ridge * np.eye(M.shape[0]), np.asarray(Z.T @ y, dtype=np.float64))
        return (y - Z @ w) / ridge
    return _cholesky_solve(G + ridge * np.eye(n), y)


def optimal_objective(y: np.ndarray, a: np.ndarray, lam: float) -> float:
    """min F = (lam / 2) y^T (G + N lam I)^-1 y, given a = (G + N lam I)^-1 y."""
    return 0.5 * lam * float(y @ a)


def objective_gap(K: np.ndarray, G: np.ndarray, alpha: np.ndarray, a: np.ndarray, lam: float) -> float:
    """F*_Z - F*_K = (lam / 2) a^T (K - G) alpha (A^-1 - B^-1 = A^-1 (B - A) B^-1: no cancellation)."""
    return 0.5 * lam * float(a @ (K @ alpha - G @ alpha))


def spectral_norm(E: np.ndarray) -> float:
    """||E||_2 of a symmetric matrix: its largest |eigenvalue| (Lanczos, fixed start vector)."""
    n = E.shape[0]
    if not np.any(E):  # Z Z^T = K exactly (RB with one bin per point): Lanczos cannot start from E v0 = 0
        return 0.0
    if n <= 64:
        return float(np.max(np.abs(np.linalg.eigvalsh(E))))
    v0 = np.random.default_rng(0).standard_normal(n)
    try:
        vals = eigsh(E, k=1, which="LM", v0=v0, tol=SPECTRAL_TOL, return_eigenvectors=False)
    except ArpackNoConvergence:  # rare (a near tie of +-||E||): the dense spectrum always answers
        vals = np.linalg.eigvalsh(E)
    return float(np.abs(vals).max())


def kernel_errors(K: np.ndarray, G: np.ndarray, K_fro: float, K_spec: float) -> dict:
    """||K - Z Z^T|| relative in Frobenius and spectral norm, and its largest |entry| (K's are <= 1)."""
    E = K - G
    return {"fro_rel": float(np.linalg.norm(E) / K_fro), "spec_rel": spectral_norm(E) / K_spec,
            "max_abs": float(np.abs(E).max())}


def theorem1_bound(f_norm2: float, kappa: float, R: int, F0: float, F_exact: float) -> float:
    """Eq. 13's right side with beta = 1: ||f*||^2 / (kappa (R - c)), c = ceil(2 kappa (F(0) - F*) / ||f*||^2)."""
    if not (math.isfinite(kappa) and f_norm2 > 0):
        return math.nan
    c = math.ceil(2.0 * kappa * (F0 - F_exact) / f_norm2)
    return f_norm2 / (kappa * (R - c)) if R > c else math.nan


def _exact_problem(X: np.ndarray, y: np.ndarray, sigma: float, lam: float) -> dict:
    K = laplacian_kernel(X, X, sigma, kernel="l1")
    alpha = dual_solution(K, y, len(y) * lam)
    return {"K": K, "alpha": alpha, "F_exact": optimal_objective(y, alpha, lam), "f_norm2": float(alpha @ K @ alpha),
            "K_fro": float(np.linalg.norm(K)), "K_spec": spectral_norm(K)}


def _row(X: np.ndarray, y: np.ndarray, method: str, sigma: float, R: int, seed: int, lam: float, exact: dict) -> dict:
    n = len(y)
    Z, kappa = feature_matrix(method, X, sigma, R, seed)
    G, D = gram(Z), Z.shape[1]
    a = dual_solution(G, y, n * lam, Z)
    gap = objective_gap(exact["K"], G, exact["alpha"], a, lam)
    F_exact = exact["F_exact"]
    kappa_of_bound = bound_kappa(method, kappa)
    return {"method": method, "sigma": float(sigma), "R": int(R), "seed": int(seed), "n": n, "lam": lam, "D": int(D),
            "kappa": kappa, "D_over_kappa_R": D / (kappa * R) if method == SUBJECT else math.nan,
            "gap": gap, "rel_gap": gap / abs(F_exact) if F_exact else math.nan,
            **kernel_errors(exact["K"], G, exact["K_fro"], exact["K_spec"]),
            "F": optimal_objective(y, a, lam), "F_exact": F_exact,
            "bound": theorem1_bound(exact["f_norm2"], kappa_of_bound, R, 0.5 * float(y @ y) / n, F_exact)}


def diagnostics(X, y: np.ndarray, *, dataset: str, sigmas: Sequence[float], Rs: Sequence[int],
                seeds: Sequence[int], methods: Sequence[str] | None = None, lam: float | None = None,
                progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """One row per (method, sigma, R, seed) on the rows X (use `subsample` first) with targets y
    (`ridge_targets`). Nyström needs R <= N landmarks: larger R are skipped for it. `methods`: default
    every method the registry measures Theorem 1 on."""
    methods = theorem1_methods() if methods is None else tuple(methods)
    for method in methods:
        if method not in theorem1_methods():
            raise InvalidParameter(f"method must be one of {theorem1_methods()}, got {method!r}")
    X = np.asarray(as_dense(X), dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = len(y)
    lam = RIDGE / n if lam is None else float(lam)
    cells = [(m, s, R, seed) for s in sigmas for m in methods for R in Rs for seed in seeds
             if not (getattr(REGISTRY[m].feature_class(), "R_at_most_rows", False) and R > n)]
    rows, exact = [], {}
    for done, (method, sigma, R, seed) in enumerate(cells):
        if exact.get("sigma") != sigma:
            exact = {**_exact_problem(X, y, sigma, lam), "sigma": sigma}
        rows.append(_row(X, y, method, sigma, R, seed, lam, exact))
        if progress:
            progress(done + 1, len(cells))
    frame = pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "dataset"])
    frame.insert(0, "dataset", dataset)
    for key, value in provenance().items():
        frame[key] = value
    return frame
