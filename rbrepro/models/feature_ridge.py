"""Ridge regression / one-vs-all classification on random features (RB, RF, Nystrom).

Solve (Z^T Z + lam I) W = Z^T Y and predict Z_0 W (DESIGN §2). Default solvers follow
the authors: CG on Z for RB and Nystrom (at most maxit iterations, relative residual
tol), a direct solve of the R x R normal equations for RF; either can be chosen.
Targets are centred by default for RF and Nystrom (the authors' library), not for RB
(their RB driver).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from rbrepro.features.nystrom import NystromFeatures
from rbrepro.features.random_binning import RandomBinningFeatures
from rbrepro.features.random_fourier import RandomFourierFeatures
from rbrepro.memory import check_memory, memory_limit_bytes
from rbrepro.models import targets
from rbrepro.solvers.cg import MAXIT, TOL, ridge_cg
from rbrepro.solvers.direct import DenseOperator, ridge_direct

FEATURES = {"rb": RandomBinningFeatures, "rf": RandomFourierFeatures, "nystrom": NystromFeatures}
DEFAULT_SOLVER = {"rb": "cg", "rf": "direct", "nystrom": "cg"}
DEFAULT_CENTER = {"rb": False, "rf": True, "nystrom": True}
SOLVERS = ("cg", "pcg", "direct")
TASKS = ("regression", "classification")


PREDICT_BLOCK_ENTRIES = 1 << 26  # feature entries per prediction block: 256 MB of int32 ids or float32 values


def _feature_map(method: str, R: int, sigma: float, seed):
    if method == "rb":
        return RandomBinningFeatures(n_grids=R, sigma=sigma, random_state=seed)
    return FEATURES[method](n_components=R, sigma=sigma, random_state=seed)


def featurize_memory(method: str, n: int, d: int, R: int) -> float:
    """Bytes of the big arrays of featurizing n rows (checked before allocating)."""
    if method == "rb":
        return 4.0 * n * R + min(8.0 * n * R, 256 * 2**20) * 3 + 24.0 * 2 * n
    if method == "rf":
        return 4.0 * n * R * 2 + 4.0 * d * R
    return 8.0 * n * R * 2 + 8.0 * R * R * 3 + 8.0 * R * d


def solve_memory(method: str, solver: str, D: int, C: int) -> float:
    if solver in ("cg", "pcg"):
        return 8.0 * D * C * 7
    if method == "rb":
        return 8.0 * D * D  # a dense-equivalent bound: sparse LU fill-in is not predictable
    return 8.0 * D * D * 2 + 8.0 * D * C


def cg_columns_per_pass(D: int, C: int, limit_bytes: float) -> int:
    """Targets one CG pass can take: all C when their vectors fit `limit_bytes`, else as many as
    fit beside the full D x C coefficient matrix (0: not even one)."""
    if solve_memory("rb", "cg", D, C) <= limit_bytes:
        return C
    return max(0, min(C, int((limit_bytes - 8.0 * D * C) // solve_memory("rb", "cg", D, 1))))


def feature_cost(model) -> dict:
    """D, nnz, kappa and the paper's memory model (stored entries per training point) of a
    fitted model on random features (needs method, n_components, features_, n_columns_,
    train_scores_)."""
    n = model.train_scores_.shape[0]
    if model.method == "rb":
        f = model.features_
        return {"D": f.n_bins_, "nnz": f.nnz_, "kappa": f.kappa_,
                "memory_model_entries": model.n_components + f.n_bins_ / n}
    return {"D": model.n_columns_, "nnz": n * model.n_columns_, "kappa": float("nan"),
            "memory_model_entries": float(model.n_components)}


class RandomFeatureRidge(BaseEstimator):
    """Kernel ridge approximated on random features of the Laplacian kernel.

    Parameters: method ("rb", "rf", "nystrom"), n_components (R), sigma, lam, task
    ("regression" or "classification"), solver ("cg", "direct" or None for the method's
    default; "pcg" is CG with the Jacobi preconditioner diag(Z^T Z) + lam), maxit, tol (CG), center (None: the method's default), random_state,
    memory_limit_gb (None: $RBREPRO_MEMORY_LIMIT_GB or 60 % of RAM).

    Fitted: features_, coef_ (D x C), classes_, y_mean_, solver_, center_, cg_iterations_,
    cg_residual_, featurize_s_, solve_s_, train_s_, train_scores_, n_columns_.
    """

    def __init__(self, method="rb", n_components=256, sigma=1.0, lam=0.01, task="regression", solver=None,
                 maxit=MAXIT, tol=TOL, center=None, random_state=None, memory_limit_gb=None):
        self.method = method
        self.n_components = n_components
        self.sigma = sigma
        self.lam = lam
        self.task = task
        self.solver = solver
        self.maxit = maxit
        self.tol = tol
        self.center = center
        self.random_state = random_state
        self.memory_limit_gb = memory_limit_gb

    def _check_params(self):
        if self.method not in FEATURES:
            raise ValueError(f"method must be one of {tuple(FEATURES)}, got {self.method!r}")
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        if self.solver not in (None, *SOLVERS):
            raise ValueError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        if not self.lam >= 0:
            raise ValueError(f"lam must be >= 0, got {self.lam}")

    def fit(self, X, y):
        self._check_params()
        self.solver_ = self.solver or DEFAULT_SOLVER[self.method]
        self.center_ = DEFAULT_CENTER[self.method] if self.center is None else bool(self.center)
        Y, self.classes_ = targets.encode(np.asarray(y), self.task)
        self.y_mean_ = Y.mean(axis=0) if self.center_ else np.zeros(Y.shape[1])
        n, d = X.shape
        check_memory(f"{self.method} features of {n} rows at R = {self.n_components}",
                     featurize_memory(self.method, n, d, self.n_components), self.memory_limit_gb)
        t0 = time.perf_counter()
        self.features_ = _feature_map(self.method, self.n_components, self.sigma, self.random_state)
        if self.method == "rb":
            Z = self.features_.fit_transform_binned(X)
        else:
            Z = self.features_.fit(X).transform(X)
        t1 = time.perf_counter()
        self.n_columns_ = Z.shape[1]
        operator = Z if self.method == "rb" else DenseOperator(Z)
        if self.solver_ in ("cg", "pcg"):
            self._solve_cg(operator, Y - self.y_mean_)
        else:
            check_memory(f"the {self.solver_} solve for D = {self.n_columns_}",
                         solve_memory(self.method, self.solver_, self.n_columns_, Y.shape[1]), self.memory_limit_gb)
            self.coef_ = ridge_direct(Z, Y - self.y_mean_, self.lam)
            self.cg_iterations_, self.cg_residual_ = 0, float("nan")
        t2 = time.perf_counter()
        self.featurize_s_, self.solve_s_, self.train_s_ = t1 - t0, t2 - t1, t2 - t0
        self.train_scores_ = operator.matvec(self.coef_) + self.y_mean_
        return self

    def _solve_cg(self, operator, Y: np.ndarray) -> None:
        """CG on all targets at once when its vectors fit the memory limit, else on blocks of
        targets in turn (each column's CG is independent, so the result is the same): mnist
        at R = 937 has D = 56 M, and 10 classes at once would need 31 GB."""
        D, C = self.n_columns_, Y.shape[1]
        per_pass = cg_columns_per_pass(D, C, memory_limit_bytes(self.memory_limit_gb))
        if per_pass < 1:  # not even one target fits beside the coefficients: refused in one line
            check_memory(f"the {self.solver_} solve for D = {D}", solve_memory(self.method, self.solver_, D, 1)
                         + 8.0 * D * C, self.memory_limit_gb)
            per_pass = 1
        self.coef_ = np.empty((D, C)) if per_pass < C else None
        self.cg_iterations_, self.cg_residual_, self.cg_passes_ = 0, 0.0, 0
        for lo in range(0, C, per_pass):
            result = ridge_cg(operator, Y[:, lo:lo + per_pass], self.lam, self.maxit, self.tol,
                              jacobi=self.solver_ == "pcg")
            if self.coef_ is None:
                self.coef_ = result.coef
            else:
                self.coef_[:, lo:lo + per_pass] = result.coef
            self.cg_iterations_ = max(self.cg_iterations_, result.iterations)
            self.cg_residual_ = max(self.cg_residual_, float(result.relative_residual.max()))
            self.cg_passes_ += 1

    def _transform(self, X):
        if self.method == "rb":
            return self.features_.transform_binned(X)
        return DenseOperator(self.features_.transform(X))

    def decision_function(self, X) -> np.ndarray:
        """Scores of new rows, featurized in row blocks of about PREDICT_BLOCK_ENTRIES feature
        entries each, so predicting a large test set never holds its whole Z (ijcnn1's 91,701
        test rows at R = 35,000 would be 12.8 GB of column ids at once)."""
        n = X.shape[0]
        step = max(1, PREDICT_BLOCK_ENTRIES // max(int(self.n_components), 1))
        if n <= step:
            return self._transform(X).matvec(self.coef_) + self.y_mean_
        out = np.empty((n,) + self.coef_.shape[1:], dtype=np.float64)
        for lo in range(0, n, step):
            out[lo:lo + step] = self._transform(X[lo:lo + step]).matvec(self.coef_)
        return out + self.y_mean_

    def predict(self, X) -> np.ndarray:
        return targets.decode(self.decision_function(X), self.classes_)

    def predict_train(self) -> np.ndarray:
        """Predictions on the training rows, from the Z built during fit."""
        return targets.decode(self.train_scores_, self.classes_)

    def warm_up(self, X) -> None:
        """Compile or load every numba kernel for X's types, so timings exclude compilation."""
        small = X[:8] if not sp.issparse(X) else X[:8]
        RandomFeatureRidge(self.method, min(2, small.shape[0]), self.sigma, self.lam, self.task, self.solver,
                           2, self.tol, self.center, 0).fit(small, np.arange(small.shape[0]) % 2)

    def cost(self) -> dict:
        return feature_cost(self)


class RandomBinningRidge(RandomFeatureRidge):
    """RandomFeatureRidge with method="rb" (kept for its shorter signature)."""

    def __init__(self, n_grids=256, sigma=1.0, lam=0.01, task="regression", maxit=MAXIT, tol=TOL, center=False,
                 random_state=None, solver=None, memory_limit_gb=None):
        super().__init__("rb", n_grids, sigma, lam, task, solver, maxit, tol, center, random_state, memory_limit_gb)
        self.n_grids = n_grids

    def fit(self, X, y):
        self.n_components = self.n_grids
        return super().fit(X, y)
