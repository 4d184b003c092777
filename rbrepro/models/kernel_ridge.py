"""Kernel ridge with the exact Laplacian kernel, and its independent-block approximation.

Exact (DESIGN §2): (K + lam I) c = y - y_mean by Cholesky; prediction K(X_0, X) c + y_mean.
K needs 8 N^2 bytes, so the estimate is checked against the memory limit before anything
is allocated.

Independent block (the authors' RLCM code): split the training rows recursively at the
median of their projection on a random direction until a leaf holds at most `leaf_size`
rows; K is approximated by the block diagonal of the leaves' kernel matrices; each leaf
solves (K_leaf + lam I) c = y - y_mean directly; a test point is routed down the same
tree and predicted from its leaf. The leaf size plays the role of R.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator

from rbrepro.features.laplacian import as_dense, laplacian_kernel
from rbrepro.memory import check_memory
from rbrepro.models import targets

TASKS = ("regression", "classification")
PREDICT_BLOCK = 2048


def _cholesky_solve(K: np.ndarray, lam: float, B: np.ndarray) -> np.ndarray:
    """Solve (K + lam I) c = B in place of K (K symmetric: its transpose is the Fortran-order
    array LAPACK factors without a copy)."""
    K[np.diag_indices_from(K)] += lam
    try:
        factor = scipy.linalg.cho_factor(K.T, lower=False, overwrite_a=True, check_finite=False)
        return scipy.linalg.cho_solve(factor, B, check_finite=False)
    except np.linalg.LinAlgError:  # lam = 0 with duplicate rows: fall back to least squares
        return scipy.linalg.lstsq(K, B)[0]


class _KernelRidgeBase(BaseEstimator):
    def _targets(self, y):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        if not self.lam >= 0 or not self.sigma > 0:
            raise ValueError(f"need sigma > 0 and lam >= 0, got sigma={self.sigma}, lam={self.lam}")
        Y, self.classes_ = targets.encode(np.asarray(y), self.task)
        self.center_ = True if self.center is None else bool(self.center)
        self.y_mean_ = Y.mean(axis=0) if self.center_ else np.zeros(Y.shape[1])
        return Y - self.y_mean_

    def predict(self, X) -> np.ndarray:
        return targets.decode(self.decision_function(X), self.classes_)

    def predict_train(self) -> np.ndarray:
        return targets.decode(self.train_scores_, self.classes_)

    def warm_up(self, X) -> None:
        small = as_dense(X[:4])
        laplacian_kernel(small, small, 1.0)


class ExactKernelRidge(_KernelRidgeBase):
    """Exact Laplacian kernel ridge. Fitted: X_fit_, dual_coef_ (N x C), y_mean_, classes_,
    featurize_s_ (kernel matrix), solve_s_ (Cholesky), train_s_, train_scores_."""

    solver_ = "cholesky"

    def __init__(self, sigma=1.0, lam=0.01, task="regression", center=None, memory_limit_gb=None):
        self.sigma = sigma
        self.lam = lam
        self.task = task
        self.center = center
        self.memory_limit_gb = memory_limit_gb

    @staticmethod
    def memory_needed(n: int, d: int) -> float:
        return 8.0 * n * n + 8.0 * n * d

    def fit(self, X, y):
        Yc = self._targets(y)
        n, d = X.shape
        check_memory(f"the exact kernel on N = {n} rows", self.memory_needed(n, d), self.memory_limit_gb)
        t0 = time.perf_counter()
        self.X_fit_ = as_dense(X)
        K = laplacian_kernel(self.X_fit_, self.X_fit_, self.sigma)
        t1 = time.perf_counter()
        self.dual_coef_ = _cholesky_solve(K, self.lam, Yc)
        t2 = time.perf_counter()
        del K
        self.featurize_s_, self.solve_s_, self.train_s_ = t1 - t0, t2 - t1, t2 - t0
        self.train_scores_ = self.decision_function(self.X_fit_)
        return self

    def decision_function(self, X) -> np.ndarray:
        out = np.empty((X.shape[0], self.dual_coef_.shape[1]))
        for lo in range(0, X.shape[0], PREDICT_BLOCK):
            out[lo:lo + PREDICT_BLOCK] = laplacian_kernel(X[lo:lo + PREDICT_BLOCK], self.X_fit_, self.sigma) \
                @ self.dual_coef_
        return out + self.y_mean_

    def cost(self) -> dict:
        n = self.X_fit_.shape[0]
        return {"D": n, "nnz": n * n, "kappa": float("nan"), "memory_model_entries": float(n)}


class IndependentBlockRidge(_KernelRidgeBase):
    """Block-diagonal kernel ridge over a random-projection tree (leaves of <= leaf_size rows).

    Fitted: directions_ (internal nodes x d), thresholds_, children_ (node -> left, right;
    -1 for leaves), leaf_of_node_, leaf_rows_ (list of row-index arrays), leaf_coef_,
    y_mean_, featurize_s_ (tree + leaf kernels), solve_s_ (leaf Cholesky), train_s_.
    """

    solver_ = "cholesky"

    def __init__(self, leaf_size=256, sigma=1.0, lam=0.01, task="regression", center=None, random_state=None,
                 memory_limit_gb=None):
        self.leaf_size = leaf_size
        self.sigma = sigma
        self.lam = lam
        self.task = task
        self.center = center
        self.random_state = random_state
        self.memory_limit_gb = memory_limit_gb

    def _build_tree(self, X: np.ndarray, rng) -> None:
        directions, thresholds, children, leaf_of_node, leaves = [], [], [], [], []
        stack = [(np.arange(X.shape[0]), 0)]
        n_nodes = 1
        while stack:
            rows, node = stack.pop()
            while len(directions) <= node:
                directions.append(None)
                thresholds.append(0.0)
                children.append((-1, -1))
                leaf_of_node.append(-1)
            if len(rows) <= self.leaf_size:
                leaf_of_node[node] = len(leaves)
                leaves.append(rows)
                continue
            v = rng.standard_normal(X.shape[1])
            v /= np.linalg.norm(v)
            proj = X[rows] @ v
            ranked = np.argsort(proj, kind="stable")
            half = len(rows) // 2
            threshold = 0.5 * (proj[ranked[half - 1]] + proj[ranked[half]])
            left, right = n_nodes, n_nodes + 1
            n_nodes += 2
            directions[node], thresholds[node], children[node] = v, threshold, (left, right)
            stack.append((rows[ranked[half:]], right))
            stack.append((rows[ranked[:half]], left))
        d = X.shape[1]
        self.directions_ = np.array([v if v is not None else np.zeros(d) for v in directions])
        self.thresholds_ = np.array(thresholds)
        self.children_ = np.array(children, dtype=np.int64)
        self.leaf_of_node_ = np.array(leaf_of_node, dtype=np.int64)
        self.leaf_rows_ = leaves

    def route(self, X) -> np.ndarray:
        """The leaf of each row of X (a test point follows the training splits)."""
        X = as_dense(X)
        node = np.zeros(X.shape[0], dtype=np.int64)
        active = self.leaf_of_node_[node] < 0
        while active.any():
            idx = np.flatnonzero(active)
            nd = node[idx]
            proj = np.einsum("ij,ij->i", X[idx], self.directions_[nd])
            go_right = proj > self.thresholds_[nd]
            node[idx] = np.where(go_right, self.children_[nd, 1], self.children_[nd, 0])
            active = self.leaf_of_node_[node] < 0
        return self.leaf_of_node_[node]

    def fit(self, X, y):
        if not isinstance(self.leaf_size, (int, np.integer)) or self.leaf_size < 1:
            raise ValueError(f"leaf_size must be a positive integer, got {self.leaf_size!r}")
        Yc = self._targets(y)
        n, d = X.shape
        r = min(self.leaf_size, n)
        check_memory(f"the block approximation with leaves of {r} rows", 8.0 * n * d + 8.0 * r * r * 2,
                     self.memory_limit_gb)
        rng = np.random.default_rng(self.random_state)
        t0 = time.perf_counter()
        self.X_fit_ = as_dense(X)
        self._build_tree(self.X_fit_, rng)
        kernels = []
        for rows in self.leaf_rows_:
            kernels.append(laplacian_kernel(self.X_fit_[rows], self.X_fit_[rows], self.sigma))
        t1 = time.perf_counter()
        self.leaf_coef_ = [_cholesky_solve(K, self.lam, Yc[rows]) for K, rows in zip(kernels, self.leaf_rows_)]
        t2 = time.perf_counter()
        self.featurize_s_, self.solve_s_, self.train_s_ = t1 - t0, t2 - t1, t2 - t0
        self.train_scores_ = self.decision_function(self.X_fit_)
        return self

    def decision_function(self, X) -> np.ndarray:
        leaves = self.route(X)
        out = np.empty((X.shape[0], self.leaf_coef_[0].shape[1]))
        for leaf in np.unique(leaves):
            idx = np.flatnonzero(leaves == leaf)
            rows = self.leaf_rows_[leaf]
            out[idx] = laplacian_kernel(X[idx], self.X_fit_[rows], self.sigma) @ self.leaf_coef_[leaf]
        return out + self.y_mean_

    def cost(self) -> dict:
        sizes = np.array([len(r) for r in self.leaf_rows_])
        return {"D": int(sizes.sum()), "nnz": int((sizes ** 2).sum()), "kappa": float("nan"),
                "memory_model_entries": float(self.leaf_size)}
