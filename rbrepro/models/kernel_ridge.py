"""Kernel ridge with the exact Laplacian kernel, and its independent-block approximation.

Exact (docs/design.md §2): (K + lam I) c = y - y_mean; prediction K(X_0, X) c + y_mean. K is stored
in float32 and factored in float32 (twice as fast as float64), and that factor preconditions
a CG iteration with float64 residuals until the relative residual is at most 1e-10: the
float64 solution at half the cost (`solvers.direct.refined_cholesky_solve`). K and its
factor need 8 N^2 bytes, checked against the memory limit before anything is allocated.

Independent block (the authors' RLCM code): split the training rows recursively at the
median of their projection on a random direction while a node holds at least 2 leaf_size
rows (RLCM's rule: leaves hold leaf_size to 2 leaf_size - 1 rows); K is approximated by the block diagonal of the leaves' kernel matrices; each leaf
solves (K_leaf + lam I) c = y - y_mean directly; a test point is routed down the same
tree and predicted from its leaf. The leaf size plays the role of R.

Both take the kernel's distance, "l1" (docs/design.md §2) or "euclidean" (the authors' baselines,
§2a), and come as a classifier and a regressor: ExactKernelClassifier / Regressor,
IndependentBlockClassifier / Regressor.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from rbrepro.constraints import check_nonnegative, check_sigma, seed_of
from rbrepro.errors import InvalidParameter
from rbrepro.features.laplacian import as_dense, check_kernel, laplacian_kernel
from rbrepro.memory import check_memory
from rbrepro.models._base import _Classifier, _Regressor
from rbrepro.models._docs import example, see_also
from rbrepro.solvers.direct import factor_threads, refined_cholesky_solve

PREDICT_BLOCK = 2048


def _cholesky_solve(K: np.ndarray, lam: float, B: np.ndarray) -> np.ndarray:
    """Solve (K + lam I) c = B in place of K (K symmetric: its transpose is the Fortran-order
    array LAPACK factors without a copy)."""
    K[np.diag_indices_from(K)] += lam
    with factor_threads(K.shape[0]):
        try:
            factor = scipy.linalg.cho_factor(K.T, lower=False, overwrite_a=True, check_finite=False)
            return scipy.linalg.cho_solve(factor, B, check_finite=False)
        except np.linalg.LinAlgError:  # lam = 0 with duplicate rows: fall back to least squares
            return scipy.linalg.lstsq(K, B)[0]


class _KernelRidgeBase(BaseEstimator):
    def _center(self, Y):
        check_nonnegative("lam", self.lam)
        check_sigma(self.sigma)
        check_kernel(self.kernel)
        self.fitted_kernel_ = (float(self.sigma), self.kernel)
        self.center_ = bool(self.center)
        self.y_mean_ = Y.mean(axis=0) if self.center_ else np.zeros(Y.shape[1])
        return Y - self.y_mean_

    def _kernel(self, A, B) -> np.ndarray:
        """K(A, B) with the kernel the model was fitted with: set_params after fit must not change what
        a fitted model predicts (a loaded model has its parameters as saved)."""
        sigma, kernel = getattr(self, "fitted_kernel_", (self.sigma, self.kernel))
        return laplacian_kernel(A, B, sigma, kernel=kernel)

    def warm_up(self, X) -> None:
        small = as_dense(X[:4])
        self._kernel(small, small)
        laplacian_kernel(small, small, 1.0, out=np.empty((len(small), len(small)), np.float32), kernel=self.kernel)


_KERNEL_PARAMS_DOC = """
    sigma : float, default=1.0
        Inverse kernel width: k(x, y) = exp(-sigma * distance(x, y)).
    kernel : {"l1", "euclidean"}, default="l1"
        The distance: ||x - y||_1 (docs/design.md §2) or ||x - y||_2 (the authors' baselines, §2a).
    lam : float, default=0.01
        Ridge lambda, used as written.
    center : bool, default=True
        Subtract the training mean of the targets and add it back at prediction.
"""

class _ExactKernelRidge(_KernelRidgeBase):
    solver_ = "cholesky"
    method = "exact"
    #: its fitted state, as a saved model holds it (models.persist): arrays, then scalars
    _saved_arrays = ("X_fit_", "dual_coef_", "y_mean_", "train_scores_")
    _saved_scalars = ("center_", "featurize_s_", "solve_s_", "train_s_", "n_features_in_")

    def __init__(self, *, sigma=1.0, kernel="l1", lam=0.01, center=True, memory_limit_gb=None):
        self.sigma = sigma
        self.kernel = kernel
        self.lam = lam
        self.center = center
        self.memory_limit_gb = memory_limit_gb

    @staticmethod
    def memory_needed(n: int, d: int) -> float:
        return 8.0 * n * n + 8.0 * n * d

    def fit(self, X, y):
        """Form K on the training rows and solve (K + lam I) c = y - y_mean by Cholesky."""
        X, Y = self._validate_fit(X, y)
        Yc = self._center(Y)
        n, d = X.shape
        check_memory(f"the exact kernel on N = {n} rows", self.memory_needed(n, d), self.memory_limit_gb)
        t0 = time.perf_counter()
        self.X_fit_ = as_dense(X)
        K = laplacian_kernel(self.X_fit_, self.X_fit_, self.sigma, out=np.empty((n, n), np.float32),
                             kernel=self.kernel)
        t1 = time.perf_counter()
        try:
            self.dual_coef_, self.cg_iterations_, self.cg_residual_ = refined_cholesky_solve(K, self.lam, Yc)
        except np.linalg.LinAlgError:  # not positive definite in float32 (lam ~ 0): float64 from scratch
            del K
            K = self._kernel(self.X_fit_, self.X_fit_)
            self.dual_coef_ = _cholesky_solve(K, self.lam, Yc)
            self.cg_iterations_, self.cg_residual_ = 0, float("nan")
        t2 = time.perf_counter()
        del K
        self.featurize_s_, self.solve_s_, self.train_s_ = t1 - t0, t2 - t1, t2 - t0
        self.train_scores_ = self._scores(self.X_fit_)
        return self

    def _scores(self, X) -> np.ndarray:
        out = np.empty((X.shape[0], self.dual_coef_.shape[1]))
        for lo in range(0, X.shape[0], PREDICT_BLOCK):
            out[lo:lo + PREDICT_BLOCK] = self._kernel(X[lo:lo + PREDICT_BLOCK], self.X_fit_) @ self.dual_coef_
        return out + self.y_mean_

    def cost(self) -> dict:
        n = self.X_fit_.shape[0]
        return {"D": n, "nnz": n * n, "kappa": float("nan"), "memory_model_entries": float(n)}


class _IndependentBlockRidge(_KernelRidgeBase):
    solver_ = "cholesky"
    method = "block"
    #: its fitted state, as a saved model holds it (models.persist): arrays, then scalars; the
    #: blocks' rows and weights (one array per leaf) are saved flat (_ragged_state)
    _saved_arrays = ("X_fit_", "directions_", "thresholds_", "children_", "leaf_of_node_", "y_mean_", "train_scores_")
    _saved_scalars = ("center_", "featurize_s_", "solve_s_", "train_s_", "n_features_in_")

    def __init__(self, *, leaf_size=256, sigma=1.0, kernel="l1", lam=0.01, center=True, random_state=None,
                 memory_limit_gb=None):
        self.leaf_size = leaf_size
        self.sigma = sigma
        self.kernel = kernel
        self.lam = lam
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
            if len(rows) < 2 * self.leaf_size:  # RLCM: split while a node holds >= 2r rows
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
        check_is_fitted(self)
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
        """Build the tree, then solve each leaf's (K_leaf + lam I) c = y - y_mean by Cholesky."""
        X, Y = self._validate_fit(X, y)
        if not isinstance(self.leaf_size, numbers.Integral) or isinstance(self.leaf_size, bool) \
                or self.leaf_size < 1:
            raise InvalidParameter(f"leaf_size must be a positive integer, got {self.leaf_size!r}")
        Yc = self._center(Y)
        n, d = X.shape
        r = min(2 * self.leaf_size - 1, n)  # the largest leaf RLCM's rule allows
        check_memory(f"the block approximation with leaves of up to {r} rows", 8.0 * n * d + 8.0 * r * r * 2,
                     self.memory_limit_gb)
        rng = np.random.default_rng(seed_of(self.random_state))
        t0 = time.perf_counter()
        self.X_fit_ = as_dense(X)
        self._build_tree(self.X_fit_, rng)
        kernels = []
        for rows in self.leaf_rows_:
            kernels.append(self._kernel(self.X_fit_[rows], self.X_fit_[rows]))
        t1 = time.perf_counter()
        self.leaf_coef_ = [_cholesky_solve(K, self.lam, Yc[rows]) for K, rows in zip(kernels, self.leaf_rows_)]
        t2 = time.perf_counter()
        self.featurize_s_, self.solve_s_, self.train_s_ = t1 - t0, t2 - t1, t2 - t0
        self.train_scores_ = self._scores(self.X_fit_)
        return self

    def _scores(self, X) -> np.ndarray:
        X = as_dense(X)
        leaves = self.route(X)
        out = np.empty((X.shape[0], self.leaf_coef_[0].shape[1]))
        for leaf in np.unique(leaves):
            idx = np.flatnonzero(leaves == leaf)
            rows = self.leaf_rows_[leaf]
            out[idx] = self._kernel(X[idx], self.X_fit_[rows]) @ self.leaf_coef_[leaf]
        return out + self.y_mean_

    def _ragged_state(self) -> dict:
        """The per-leaf rows and weights as flat arrays (a saved model holds no lists)."""
        return {"leaf_rows_flat": np.concatenate(self.leaf_rows_), "leaf_sizes": np.array([len(r) for r in self.leaf_rows_]),
                "leaf_coef_flat": np.concatenate(self.leaf_coef_)}

    def _restore_ragged(self, arrays: dict) -> None:
        bounds = np.cumsum(arrays["leaf_sizes"])[:-1]
        self.leaf_rows_ = np.split(arrays["leaf_rows_flat"], bounds)
        self.leaf_coef_ = np.split(arrays["leaf_coef_flat"], bounds)

    def _check_saved(self, d: int) -> None:
        """The tree of a loaded model: children after their parent (so routing ends), leaves and rows
        in range (ValueError says what is wrong)."""
        children, leaf_of = np.asarray(self.children_), np.asarray(self.leaf_of_node_)
        n_nodes, n = len(leaf_of), self.X_fit_.shape[0]
        inner = leaf_of < 0
        if children.shape != (n_nodes, 2) or self.directions_.shape[0] != n_nodes or len(self.thresholds_) != n_nodes:
            raise ValueError("its tree arrays do not have one row per node")
        nodes = np.arange(n_nodes)
        if ((children[inner] <= nodes[inner, None]) | (children[inner] >= n_nodes)).any():
            raise ValueError("a node of its tree does not lead to later nodes")
        leaves = leaf_of[~inner]
        if (leaf_of >= len(self.leaf_rows_)).any() or len(np.unique(leaves)) != len(self.leaf_rows_):
            raise ValueError("its tree's leaves do not match its blocks")
        for rows, coef in zip(self.leaf_rows_, self.leaf_coef_):
            if len(rows) != len(coef) or (rows < 0).any() or (rows >= n).any():
                raise ValueError("a block's rows or weights do not match its training rows")

    def cost(self) -> dict:
        sizes = np.array([len(r) for r in self.leaf_rows_])
        return {"D": int(sizes.sum()), "nnz": int((sizes ** 2).sum()), "kappa": float("nan"),
                "memory_model_entries": float(self.leaf_size)}


def _kernel_doc(summary: str, extended: str, extra_params: str, fitted: str, also: str, example: str) -> str:
    return f"""{summary}

{extended}
    Parameters
    ----------{extra_params}{_KERNEL_PARAMS_DOC}    memory_limit_gb : float or None, default=None
        Refuse, before allocating, work whose estimate exceeds this many GB.

    Attributes
    ----------
{fitted}    y_mean_ : ndarray of shape (C,)
        The targets' training mean (zeros when `center` is False).
    classes_ : ndarray of shape (n_classes,)
        The class labels (classifiers only).
    n_features_in_ : int
        Number of features seen during fit.
    featurize_s_, solve_s_, train_s_ : float
        Wall seconds of the fit's phases: the kernel matrices, their solve, and both.
{also}{example}"""


_EXACT_EXTENDED = """    Kernel ridge regression, the model every random feature map here approximates: it solves
    (K + lam I) c = y - y_mean for the N x N kernel matrix K of the training rows (eq. 1 with the
    square loss, by the representer theorem) and predicts K(X_0, X) c + y_mean. K is factored in
    float32 and refined by CG to float64 accuracy; its 8 N^2 bytes are checked against the memory
    limit before anything is allocated.
"""
_BLOCK_EXTENDED = """    The independent-block baseline (the authors' RLCM code): the training rows are split
    recursively at the median of their projection on a random direction while a node holds at
    least 2 leaf_size rows; K is approximated by the block diagonal of the leaves' kernel matrices,
    and each leaf solves (K_leaf + lam I) c = y - y_mean by Cholesky. A new row is routed down the
    same tree and predicted from its leaf's rows alone.
"""
_ONE_VS_ALL = "    Classes are one-vs-all +-1 target columns; the prediction is the argmax.\n"


_EXACT_FITTED = """    X_fit_ : ndarray of shape (N, n_features_in_)
        The training rows.
    dual_coef_ : ndarray of shape (N, C)
        c, one column per target (C = 1 for regression and two classes).
"""
_BLOCK_PARAMS = """
    leaf_size : int, default=256
        r, RLCM's leaf parameter: nodes of at least 2r rows are split, so leaves hold r to
        2r - 1 rows. It plays the role of R.
    random_state : int, RandomState instance or None, default=None
        Seed of the random split directions."""
_BLOCK_FITTED = """    directions_, thresholds_, children_, leaf_of_node_ : ndarray
        The tree: each node's split direction and threshold, its children (-1 at leaves) and its
        leaf's number (-1 at inner nodes).
    leaf_rows_ : list of ndarray
        The training rows of each leaf.
    leaf_coef_ : list of ndarray of shape (leaf rows, C)
        Each leaf's c.
"""


class ExactKernelClassifier(_Classifier, _ExactKernelRidge):
    __doc__ = _kernel_doc("Exact Laplacian kernel ridge classifier (one-vs-all).", _EXACT_EXTENDED + _ONE_VS_ALL, "",
                          _EXACT_FITTED, see_also("ExactKernelRegressor : The same model for real-valued targets.",
                                                  "NystromClassifier, RandomBinningClassifier : Approximations that "
                                                  "scale to large N."),
                          example("ExactKernelClassifier", "classification", "sigma=0.1"))


class ExactKernelRegressor(_Regressor, _ExactKernelRidge):
    __doc__ = _kernel_doc("Exact Laplacian kernel ridge regression.", _EXACT_EXTENDED, "", _EXACT_FITTED,
                          see_also("ExactKernelClassifier : The same model for class labels.",
                                   "NystromRegressor, RandomBinningRegressor : Approximations that scale to large N."),
                          example("ExactKernelRegressor", "regression", "sigma=1.0"))


class IndependentBlockClassifier(_Classifier, _IndependentBlockRidge):
    __doc__ = _kernel_doc("Block-diagonal (independent block) kernel ridge classifier over a random-projection "
                          "tree.", _BLOCK_EXTENDED + _ONE_VS_ALL, _BLOCK_PARAMS, _BLOCK_FITTED,
                          see_also("IndependentBlockRegressor : The same model for real-valued targets.",
                                   "ExactKernelClassifier : The kernel model with every block."),
                          example("IndependentBlockClassifier", "classification",
                                  "leaf_size=64, sigma=0.1, random_state=0"))


class IndependentBlockRegressor(_Regressor, _IndependentBlockRidge):
    __doc__ = _kernel_doc("Block-diagonal (independent block) kernel ridge regression over a random-projection "
                          "tree.", _BLOCK_EXTENDED, _BLOCK_PARAMS, _BLOCK_FITTED,
                          see_also("IndependentBlockClassifier : The same model for class labels.",
                                   "ExactKernelRegressor : The kernel model with every block."),
                          example("IndependentBlockRegressor", "regression", "leaf_size=64, sigma=1.0, random_state=0"))
