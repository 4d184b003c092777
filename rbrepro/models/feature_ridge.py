"""Ridge regression / one-vs-all classification on random features (RB, RF, Nystrom).

Solve (Z^T Z + lam I) W = Z^T Y and predict Z_0 W (docs/design.md §2). Default solvers follow
the authors: CG on Z for RB and Nystrom (at most maxit iterations, relative residual
tol), a direct solve of the R x R normal equations for RF; either can be chosen.
Targets are centred by default for RF and Nystrom (the authors' library), not for RB
(their RB driver). Nystrom's default solve is direct, as the authors' (docs/design.md §2a).

Six estimators, a classifier and a regressor per feature map, share one fit:
RandomBinningClassifier / Regressor, RandomFourierClassifier / Regressor,
NystromClassifier / Regressor. A method registered at run time with a feature map of its own
gets its pair from `ridge_estimator` (models.registry).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator

from rbrepro.errors import InvalidParameter
from rbrepro.features.params import check_nonnegative, seed_of
from rbrepro.memory import check_memory, memory_limit_bytes
from rbrepro.models._base import _Classifier, _Regressor
from rbrepro.models.registry import RIDGE_SOLVERS, MethodSpec, method_spec
from rbrepro.solvers.cg import MAXIT, TOL, ridge_cg
from rbrepro.solvers.direct import ridge_direct
from rbrepro.solvers.operator import DenseOperator, as_operator
from rbrepro.solvers.stopping import (
    PATIENCE,
    VALIDATION_FRACTION,
    ValidationStopping,
    check_fraction,
    check_patience,
    classification_score,
    held_out,
    mean_sign_accuracy,
    regression_score,
)

SOLVERS = RIDGE_SOLVERS


PREDICT_BLOCK_ENTRIES = 1 << 26  # feature entries per prediction block: 256 MB of int32 ids or float32 values


def _feature_spec(method: str) -> MethodSpec:
    spec = method_spec(method)
    if spec.memory != "features":
        raise InvalidParameter(f"no feature map named {method!r}; {spec.title} has none")
    return spec


def featurize_memory(method: str, n: int, d: int, R: int) -> float:
    """Bytes of the big arrays of featurizing n rows (checked before allocating): each feature
    map's own `fit_memory`; an unknown method is refused, never modelled as another."""
    return _feature_spec(method).fit_memory(n, d, R)


def _cg_memory(D: int, C: int) -> float:
    """CG's D x C arrays: 7 (early stopping's search keeps no copy of an iterate: only its step count)."""
    return 8.0 * D * C * 7


def solve_memory(method: str, solver: str, D: int, C: int) -> float:
    """Bytes of the ridge solve for D columns and C targets: CG's vectors, or the normal equations
    (dense; a sparse feature map's LU fill-in is not predictable, so bounded as dense)."""
    if solver in ("cg", "pcg"):
        return _cg_memory(D, C)
    if getattr(_feature_spec(method).feature_class(), "sparse", False):
        return 8.0 * D * D
    return 8.0 * D * D * 2 + 8.0 * D * C


def cg_columns_per_pass(D: int, C: int, limit_bytes: float) -> int:
    """Targets one CG pass can take: all C when their vectors fit `limit_bytes`, else as many as
    fit beside the full D x C coefficient matrix (0: not even one)."""
    if _cg_memory(D, C) <= limit_bytes:
        return C
    return max(0, min(C, int((limit_bytes - 8.0 * D * C) // _cg_memory(D, 1))))


def fit_features(features, X):
    """Z of the training rows: a feature map's compact operator where it has one (RB's
    BinnedMatrix), else its dense transform."""
    compact = getattr(features, "fit_transform_binned", None)
    return compact(X) if compact else features.fit(X).transform(X)


def features_of(features, X):
    """Z of new rows, as `fit_features` gives it."""
    compact = getattr(features, "transform_binned", None)
    return compact(X) if compact else features.transform(X)


def feature_cost(model) -> dict:
    """D, nnz, kappa and the paper's memory model (stored entries per training point) of a
    fitted model on random features (needs features_, n_columns_, train_scores_): the feature
    map's own `cost(n)` where it has one, else a dense matrix's."""
    n = model.train_scores_.shape[0]
    own = getattr(model.features_, "cost", None)
    if own is not None:
        return own(n)
    return {"D": model.n_columns_, "nnz": n * model.n_columns_, "kappa": float("nan"),
            "memory_model_entries": float(model.n_columns_)}


class _FeatureRidge(BaseEstimator):
    """Ridge on an explicit random feature map; subclasses fix the map and the task.

    Fitted: features_, coef_ (D x C), y_mean_, solver_, cg_iterations_, cg_residual_,
    featurize_s_, solve_s_, train_s_, train_scores_, n_columns_, n_features_in_ (and
    classes_ for classifiers).
    """

    _method: str  # the registry's name of its feature method, fixed by the class
    _r_param: str  # the keyword that takes R
    #: its fitted state, as a saved model holds it (models.persist): arrays, then scalars
    _saved_arrays = ("coef_", "y_mean_", "train_scores_")
    _saved_scalars = ("solver_", "center_", "n_columns_", "cg_iterations_", "cg_residual_", "featurize_s_",
                      "solve_s_", "train_s_", "n_features_in_", "best_iteration_", "n_validation_",
                      "search_iterations_", "early_stopping_")
    #: saved scalars that model files written before them lack, with the value they then mean
    _scalar_defaults = {"best_iteration_": -1, "n_validation_": 0, "search_iterations_": 0, "early_stopping_": False}

    def _n_requested(self) -> int:
        return getattr(self, self._r_param)

    def _feature_map(self):
        """Its method's feature map, drawn with R and the parameters of this estimator the map takes."""
        params = {k: v for k, v in self.get_params(deep=False).items() if k != self._r_param}
        return method_spec(self._method).feature_map(self._n_requested(), **params)

    @property
    def method(self) -> str:
        """The feature method's name ('rb', 'rf', 'nystrom', ...; fixed by the class)."""
        return self._method

    def _check_params(self):
        if self.solver not in SOLVERS:
            raise InvalidParameter(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        check_nonnegative("lam", self.lam)
        if not (isinstance(self.maxit, (int, np.integer)) and self.maxit >= 0):
            raise InvalidParameter(f"maxit must be an integer >= 0, got {self.maxit!r}")
        if not (isinstance(self.tol, (int, float, np.number)) and self.tol > 0):
            raise InvalidParameter(f"tol must be a number > 0, got {self.tol!r}")
        if not (isinstance(self.early_stopping, (bool, np.bool_)) or self.early_stopping == "auto"):
            raise InvalidParameter(f"early_stopping must be 'auto', True or False, got {self.early_stopping!r}")
        check_fraction(self.validation_fraction)
        check_patience(self.n_iter_no_change)
        if self.early_stopping is True and self.solver not in ("cg", "pcg"):
            raise InvalidParameter(f"early_stopping stops CG's iterations; solver {self.solver!r} has none "
                                   f"(use solver='cg' or 'pcg')")

    def _split_seed(self) -> int:
        """The held-out rows' seed: random_state's integer, else one drawn fresh (as None means)."""
        seed = seed_of(self.random_state)
        if isinstance(seed, (int, np.integer)):
            return int(seed)
        return int(np.random.SeedSequence().entropy % 2**63)

    def fit(self, X, y):
        """Featurize X, then solve (Z^T Z + lam I) W = Z^T (Y - y_mean) with the chosen solver. With
        early stopping, CG first runs on the rows not held out, its iterates scored on the held-out
        rows, and the final model is CG on every row for the number of steps the best one took
        (`_solve_cg`): the held-out rows pick the stop, then they are trained on too."""
        X, Y = self._validate_fit(X, y)
        self._check_params()
        self.solver_ = self.solver
        self.center_ = bool(self.center)
        self.y_mean_ = Y.mean(axis=0) if self.center_ else np.zeros(Y.shape[1])
        n, d = X.shape
        R = self._n_requested()
        spec = method_spec(self._method)
        capped = min(R, n) if getattr(spec.feature_class(), "R_at_most_rows", False) else R
        check_memory(f"{self._method} features of {n} rows at R = {R}", spec.fit_memory(n, d, capped),
                     self.memory_limit_gb)
        t0 = time.perf_counter()
        held = self._held_out_rows(n)
        self.n_validation_ = int(held.sum()) if held is not None else 0
        self.features_ = self._feature_map()
        operator = as_operator(fit_features(self.features_, X))  # RB's BinnedMatrix is one already
        split = None if held is None else self._split(operator, Y - self.y_mean_, held)
        t1 = time.perf_counter()
        self.n_columns_ = operator.shape[1]
        self.best_iteration_, self.search_iterations_ = -1, 0
        if self.solver_ in ("cg", "pcg"):
            self._solve_cg(operator, Y - self.y_mean_, split)
        else:
            check_memory(f"the {self.solver_} solve for D = {self.n_columns_}",
                         solve_memory(self._method, self.solver_, self.n_columns_, Y.shape[1]), self.memory_limit_gb)
            self.coef_ = ridge_direct(operator.Z if isinstance(operator, DenseOperator) else operator,
                                      Y - self.y_mean_, self.lam)
            self.cg_iterations_, self.cg_residual_ = 0, float("nan")
        t2 = time.perf_counter()
        self.featurize_s_, self.solve_s_, self.train_s_ = t1 - t0, t2 - t1, t2 - t0
        self.train_scores_ = operator.matvec(self.coef_) + self.y_mean_
        return self

    def held_out_search(self, X, y) -> float:
        """Early stopping's search alone, the score `--sigma auto` ranks widths by: the feature map on
        every row of X, CG on the rows not held out, each iterate scored on the held-out rows; returns
        the best iterate's held-out metric in the units of `metrics.score` over 100 for accuracy (a
        fraction), or the relative error for regression. No final fit: the estimator stays unfitted."""
        if self.early_stopping is False or self.solver not in ("cg", "pcg"):
            raise InvalidParameter("held_out_search is early stopping's search: it needs early_stopping 'auto' or "
                                   "True and solver 'cg' or 'pcg'")
        X, Y = self._validate_fit(X, y)
        self._check_params()
        self.solver_ = self.solver
        y_mean = Y.mean(axis=0) if self.center else np.zeros(Y.shape[1])
        held = self._held_out_rows(X.shape[0])
        if held is None:
            raise InvalidParameter(f"held_out_search: {X.shape[0]} rows hold none out at validation_fraction="
                                   f"{self.validation_fraction}")
        self.n_validation_ = int(held.sum())
        operator = as_operator(fit_features(self._feature_map(), X))
        self.n_columns_ = operator.shape[1]
        self.best_iteration_, self.search_iterations_ = -1, 0
        split = self._split(operator, Y - y_mean, held)
        stopper = self._search(split, 0, Y.shape[1], Y.shape[1])
        if self._task != "regression":
            return float(stopper.best_score)
        truth = Y[held]
        return float(np.sqrt(-stopper.best_score) / max(np.linalg.norm(truth), 1e-300))

    def _stops_early(self, n: int) -> bool:
        """Whether a fit on n rows stops early (`_held_out_rows`'s rule, for a fit split over machines)."""
        if self.early_stopping is True:
            return True
        if self.early_stopping is False or self.solver not in ("cg", "pcg"):
            return False
        held = held_out(n, self.validation_fraction, self._split_seed())
        return bool(held.any() and not held.all())

    def _held_out_rows(self, n: int) -> np.ndarray | None:
        """Early stopping's held-out rows (solvers.stopping.held_out), or None without it: with
        early_stopping="auto", wherever the solver is CG and both sides of the split have rows (a few
        rows hold none out: then the fit runs maxit steps). With early_stopping=True, a split with an
        empty side is refused. `early_stopping_` says which it was."""
        self.early_stopping_ = False
        if self.early_stopping is False or (self.early_stopping == "auto" and self.solver not in ("cg", "pcg")):
            return None
        held = held_out(n, self.validation_fraction, self._split_seed())
        if self.early_stopping == "auto" and (held.all() or not held.any()):
            return None
        self.early_stopping_ = True
        if held.all() or not held.any():
            raise InvalidParameter(f"early_stopping holds out {int(held.sum())} of {n} training rows "
                                   f"(validation_fraction={self.validation_fraction}); it needs some rows on each "
                                   f"side: more rows, another fraction, or early_stopping=False")
        return held

    def _split(self, operator, Y: np.ndarray, held: np.ndarray) -> tuple:
        """(Z of the rows not held out, their targets, Z of the held-out rows, theirs): copies of Z's
        rows, checked against the memory limit beside Z first."""
        size = getattr(operator, "nbytes", 0)
        check_memory(f"the held-out split of Z ({self.n_validation_} of {held.shape[0]} rows)", 2.0 * size,
                     self.memory_limit_gb)
        return operator.rows(~held), Y[~held], operator.rows(held), Y[held]

    def _stopping(self, Z_val, truth: np.ndarray, lo: int, hi: int, C: int) -> ValidationStopping:
        """The callback scoring targets lo ... hi-1 on the held-out rows: accuracy (all classes'
        argmax when one pass holds every column, else each column's sign) or squared error."""
        part = truth[:, lo:hi]
        if self._task == "regression":
            score = regression_score(part)
        elif hi - lo == C:
            score = classification_score(part)
        else:
            score = mean_sign_accuracy(part)
        return ValidationStopping(Z_val, score, self.n_iter_no_change, keep_coef=False)

    def _search(self, split: tuple, lo: int, hi: int, C: int) -> ValidationStopping:
        """Early stopping's first pass for targets lo ... hi-1: CG on the rows not held out, each iterate
        scored on the held-out rows; returns the rule, whose best_iteration is the best one's step
        count (0: the zero weights)."""
        Z_fit, Y_fit, Z_val, Y_val = split
        stopper = self._stopping(Z_val, Y_val, lo, hi, C)
        stopper.start(np.zeros((self.n_columns_, hi - lo)))
        result = ridge_cg(Z_fit, Y_fit[:, lo:hi], self.lam, self.maxit, self.tol, jacobi=self.solver_ == "pcg",
                          callback=stopper)
        self.best_iteration_ = max(self.best_iteration_, stopper.best_iteration)
        self.search_iterations_ = max(self.search_iterations_, result.iterations)
        self.validation_scores_ = np.asarray(stopper.scores)
        return stopper

    def _solve_cg(self, operator, Y: np.ndarray, split: tuple | None = None) -> None:
        """CG on all targets at once when its vectors fit the memory limit, else on blocks of
        targets in turn (each column's CG is independent, so the result is the same): mnist
        at R = 937 has D = 56 M, and 10 classes at once would need 31 GB. With a held-out split,
        each block's step count is the best on the held-out rows (`_search`)."""
        D, C = self.n_columns_, Y.shape[1]
        per_pass = cg_columns_per_pass(D, C, memory_limit_bytes(self.memory_limit_gb))
        if per_pass < 1:  # not even one target fits beside the coefficients: refused in one line
            check_memory(f"the {self.solver_} solve for D = {D}",
                         solve_memory(self._method, self.solver_, D, 1) + 8.0 * D * C,
                         self.memory_limit_gb)
            per_pass = 1
        coef = np.empty((D, C)) if per_pass < C else None
        self.cg_iterations_, self.cg_residual_, self.cg_passes_ = 0, 0.0, 0
        for lo in range(0, C, per_pass):
            hi = min(C, lo + per_pass)
            steps = self.maxit if split is None else self._search(split, lo, hi, C).best_iteration
            result = ridge_cg(operator, Y[:, lo:hi], self.lam, steps, self.tol, jacobi=self.solver_ == "pcg")
            if coef is None:
                coef = result.coef
            else:
                coef[:, lo:hi] = result.coef
            self.cg_iterations_ = max(self.cg_iterations_, result.iterations)
            self.cg_residual_ = max(self.cg_residual_, float(result.relative_residual.max()))
            self.cg_passes_ += 1
        self.coef_ = coef

    def _transform(self, X):
        Z = features_of(self.features_, X)
        return Z if hasattr(Z, "matvec") else DenseOperator(Z)

    def _scores(self, X) -> np.ndarray:
        """Decision values (n x C) of validated rows, featurized in row blocks of about
        PREDICT_BLOCK_ENTRIES feature entries each, so predicting a large test set never holds
        its whole Z (ijcnn1's 91,701 test rows at R = 35,000 would be 12.8 GB of column ids)."""
        n = X.shape[0]
        step = max(1, PREDICT_BLOCK_ENTRIES // max(int(self._n_requested()), 1))
        coef = self.coef_.reshape(self.coef_.shape[0], -1)
        if n <= step:
            return self._transform(X).matvec(coef) + self.y_mean_
        out = np.empty((n, coef.shape[1]), dtype=np.float64)
        for lo in range(0, n, step):
            out[lo:lo + step] = self._transform(X[lo:lo + step]).matvec(coef)
        return out + self.y_mean_

    def warm_up(self, X) -> None:
        """Compile or load every numba kernel this estimator's fit and predict use for X's types,
        with one target column and with several (they are different kernels), so that timings
        exclude compilation."""
        small = X[:8]
        n = small.shape[0]
        # several targets need a classifier: the registry's twin of a regressor
        classifier = type(self) if isinstance(self, _Classifier) else method_spec(self._method).estimator("classification")
        # without early stopping: 8 rows may hold none out, and its search runs the same kernels
        probe = classifier(**{**self.get_params(deep=False), self._r_param: min(2, n), "maxit": 2,
                              "memory_limit_gb": None, "early_stopping": False})
        for n_classes in sorted({2, min(3, n)}):  # one right-hand side, then several
            # unbalanced labels (0, 1, 2, 2, ...): with balanced ones, rows that share every bin (a tiny
            # sigma) give Z^T y = 0, CG stops before its first step and that step's kernels stay uncompiled
            probe.fit(small, np.minimum(np.arange(n), n_classes - 1)).predict(small)

    def cost(self) -> dict:
        return feature_cost(self)


_R_DOC = """
    Parameters
    ----------
    {r_name} : int, default=256
        R, {r_meaning}.
    sigma : float, default=1.0
        Inverse kernel width: k(x, y) = exp(-sigma * distance(x, y)).
{kernel_doc}    lam : float, default=0.01
        Ridge lambda, used as written (not scaled by N).
    solver : {{"cg", "pcg", "direct"}}, default="{solver}"
        CG on Z (at most `maxit` iterations, relative residual `tol`; the paper's solver),
        CG preconditioned by (diag(Z^T Z) + lam)^(1/2) (solvers.cg), or a direct solve of the
        normal equations.
    maxit : int, default=50
        CG iteration cap (the authors' default; early stopping is part of the regularization).
    tol : float, default=1e-3
        CG relative residual at which to stop.
    early_stopping : {{"auto", True, False}}, default="auto"
        Hold out `validation_fraction` of the training rows (chosen by a hash of the seed and the
        row number), run CG on the others scoring every iterate on the held-out rows until
        `n_iter_no_change` iterations bring no better one, then fit every row for the best one's
        number of steps (solvers.stopping). Needs no test data. "auto": wherever the solver is CG
        and the split leaves rows on both sides; False: `maxit` steps (the authors' rule).
    validation_fraction : float, default=0.1
    n_iter_no_change : int, default=8
    center : bool, default={center}
        Subtract the training mean of the targets and add it back at prediction.
    random_state : int, RandomState instance or None, default=None
        Seed of the feature draw.
    memory_limit_gb : float or None, default=None
        Refuse, before allocating, work whose estimate exceeds this many GB (None:
        $RBREPRO_MEMORY_LIMIT_GB or 60 % of RAM).
{draws_doc}
    Attributes
    ----------
    features_ : the fitted feature map.
    coef_ : ndarray of shape (D, C)
        Ridge weights (C = 1 for regression and two classes, else one column per class).
    y_mean_ : ndarray of shape (C,)
    classes_ : ndarray (classifiers only)
    n_features_in_ : int
    n_columns_ : int
        D, the number of feature columns.
    cg_iterations_, cg_residual_ : CG's iterations and worst final relative residual.
    early_stopping_ : bool
        Whether this fit stopped early.
    best_iteration_, search_iterations_, n_validation_, validation_scores_ : with early stopping,
        the step count kept, the steps its search ran, the held-out rows and the score of every
        iterate of the search (-1, 0, 0 and absent without it).
    featurize_s_, solve_s_, train_s_ : wall seconds of the fit's phases.
"""

_DRAWS_DOC = """    draws : {"numpy", "authors"}, default="numpy"
        Grids from numpy's generator seeded by random_state, or the authors' C++ draws replayed
        bit for bit (the same for every seed; to regenerate their published numbers).
"""

_KERNEL_DOC = """    kernel : {"l1", "euclidean"}, default="l1"
        Distance of the Laplacian kernel: ||x - y||_1 (the kernel RB approximates) or
        ||x - y||_2 (what the authors' baselines used; docs/design.md §2a).
"""


def _doc(summary: str, r_name: str, r_meaning: str, solver: str, center: bool, kernel: bool) -> str:
    return summary + "\n" + _R_DOC.format(r_name=r_name, r_meaning=r_meaning, solver=solver, center=center,
                                          kernel_doc=_KERNEL_DOC if kernel else "",
                                          draws_doc="" if kernel else _DRAWS_DOC)


class _RandomBinningRidge(_FeatureRidge):
    _method = "rb"
    _r_param = "n_grids"

    def __init__(self, *, n_grids=256, sigma=1.0, lam=0.01, solver="pcg", maxit=MAXIT, tol=TOL, center=False,
                 random_state=None, memory_limit_gb=None, draws="numpy", early_stopping="auto",
                 validation_fraction=VALIDATION_FRACTION, n_iter_no_change=PATIENCE):
        self.n_grids = n_grids
        self.sigma = sigma
        self.lam = lam
        self.solver = solver
        self.maxit = maxit
        self.tol = tol
        self.center = center
        self.random_state = random_state
        self.memory_limit_gb = memory_limit_gb
        self.draws = draws
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change


class _RandomFourierRidge(_FeatureRidge):
    _method = "rf"
    _r_param = "n_components"

    def __init__(self, *, n_components=256, sigma=1.0, kernel="l1", lam=0.01, solver="direct", maxit=MAXIT, tol=TOL,
                 center=True, random_state=None, memory_limit_gb=None, early_stopping="auto",
                 validation_fraction=VALIDATION_FRACTION, n_iter_no_change=PATIENCE):
        self.n_components = n_components
        self.sigma = sigma
        self.kernel = kernel
        self.lam = lam
        self.solver = solver
        self.maxit = maxit
        self.tol = tol
        self.center = center
        self.random_state = random_state
        self.memory_limit_gb = memory_limit_gb
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change


class _NystromRidge(_RandomFourierRidge):
    """The same parameters as RF (R landmarks instead of R frequencies)."""

    _method = "nystrom"


class RandomBinningClassifier(_Classifier, _RandomBinningRidge):
    __doc__ = _doc("Ridge classifier (one-vs-all) on Random Binning features (Alg. 1) of exp(-sigma ||x - y||_1).",
                   "n_grids", "the number of random grids", "pcg", False, False)


class RandomBinningRegressor(_Regressor, _RandomBinningRidge):
    __doc__ = _doc("Ridge regression on Random Binning features (Alg. 1) of exp(-sigma ||x - y||_1).",
                   "n_grids", "the number of random grids", "pcg", False, False)


class RandomFourierClassifier(_Classifier, _RandomFourierRidge):
    __doc__ = _doc("Ridge classifier (one-vs-all) on Random Fourier features of a Laplacian kernel.",
                   "n_components", "the number of random features", "direct", True, True)


class RandomFourierRegressor(_Regressor, _RandomFourierRidge):
    __doc__ = _doc("Ridge regression on Random Fourier features of a Laplacian kernel.",
                   "n_components", "the number of random features", "direct", True, True)


class NystromClassifier(_Classifier, _NystromRidge):
    __doc__ = _doc("Ridge classifier (one-vs-all) on Nystrom features of a Laplacian kernel.",
                   "n_components", "the number of landmarks (at most the number of training rows)", "direct",
                   True, True)


class NystromRegressor(_Regressor, _NystromRidge):
    __doc__ = _doc("Ridge regression on Nystrom features of a Laplacian kernel.",
                   "n_components", "the number of landmarks (at most the number of training rows)", "direct",
                   True, True)


#: (method, task) -> estimator class, of the paper's feature methods
FEATURE_RIDGE = {
    ("rb", "classification"): RandomBinningClassifier, ("rb", "regression"): RandomBinningRegressor,
    ("rf", "classification"): RandomFourierClassifier, ("rf", "regression"): RandomFourierRegressor,
    ("nystrom", "classification"): NystromClassifier, ("nystrom", "regression"): NystromRegressor,
}
_MADE: dict = {}


def _with_defaults(init, **defaults):
    """A copy of `init` whose keyword defaults are changed (sklearn reads them from the signature)."""
    import types

    made = types.FunctionType(init.__code__, init.__globals__, init.__name__, init.__defaults__, init.__closure__)
    made.__kwdefaults__ = {**init.__kwdefaults__, **defaults}
    made.__doc__ = init.__doc__
    return made


def ridge_estimator(spec: MethodSpec, task: str) -> type:
    """The ridge classifier or regressor on the feature map of a registered method that names no
    estimators of its own: RF's parameters (R as n_components), its default solver, made once."""
    if spec not in _MADE:
        stem = spec.feature_class().__name__.removesuffix("Features") + "Ridge"
        base = type(f"_{stem}", (_RandomFourierRidge,), {
            "_method": spec.name, "__init__": _with_defaults(_RandomFourierRidge.__init__, solver=spec.default_solver),
            "__module__": __name__})
        _MADE[spec] = {t: type(f"{stem}{role.__name__[1:]}", (role, base), {
            "__doc__": f"Ridge {t} on {spec.title} features.", "__module__": __name__})
            for t, role in (("classification", _Classifier), ("regression", _Regressor))}
    return _MADE[spec][task]
