"""Ridge regression / one-vs-all classification on random features (RB, RF, Nystrom).

Solve (Z^T Z + lam I) W = Z^T Y and predict Z_0 W (docs/design.md §2). The registry names each
method's solver (`default_solver`: CG on Z for RB, a direct solve of the R x R normal equations for
RF and Nystrom, as the authors', docs/design.md §2a); with `stopping: auto` RB's CG is
preconditioned and stopped on held-out training rows, which is the RB estimators' own default
(solver="pcg", early_stopping="auto"). Any solver can be chosen.
Targets are centred by default for RF and Nystrom (the authors' library), not for RB
(their RB driver).

Six estimators, a classifier and a regressor per feature map, share one fit:
RandomBinningClassifier / Regressor, RandomFourierClassifier / Regressor,
NystromClassifier / Regressor. A method registered at run time with a feature map of its own
gets its pair from `ridge_estimator` (models.registry).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator

from rbrepro.constraints import (
    COUNT,
    FRACTION,
    ITERATIONS,
    NONNEGATIVE,
    SIGMA,
    TOLERANCE,
    Interval,
    Options,
    seed_of,
    validate_params,
)
from rbrepro.dotted import resolve
from rbrepro.errors import InvalidParameter
from rbrepro.memory import check_memory, memory_limit_bytes
from rbrepro.models import width_checks
from rbrepro.models._base import _Classifier
from rbrepro.models.plugins import check_output
from rbrepro.models.registry import SUBJECT, MethodSpec, method_spec
from rbrepro.models.ridge_memory import cg_columns_per_pass, solve_memory
from rbrepro.models.sigma_search import resolve_sigma
from rbrepro.solver_registry import is_cg, ridge_solvers, solver_spec
from rbrepro.solvers.cg import CGBuffers, ridge_cg, ridge_cg_rows
from rbrepro.solvers.operator import DenseOperator, as_operator
from rbrepro.solvers.stopping import (
    PATIENCE,
    ValidationStopping,
    classification_score,
    held_out,
    mean_sign_accuracy,
    regression_score,
)
from rbrepro.threads import thread_budget
from rbrepro.vocabulary import CG_SOLVERS, KERNELS, RNGS, needs_cg

PREDICT_BLOCK_ENTRIES = 1 << 26  # feature entries per prediction block: 256 MB of int32 ids or float32 values
#: early stopping's last steps: CG from the search's best iterate on every row, the held-out rows added,
#: for as many steps as the search looked past its best (PATIENCE). Chosen on validation splits of the
#: mirror's training rows (4, 8, 16, 32 steps scored; 8 best or within the seeds' spread on each set), and
#: cheaper than fitting every row anew for the chosen step count (bench/stopping.py measures the default)
FINAL_STEPS = PATIENCE


def _plugin_of(features) -> str | None:
    """The plug-in and method whose feature map `features` is (None: one of the paper's)."""
    from rbrepro.dotted import resolve
    from rbrepro.models.registry import METHODS, plugin_label

    for name, spec in METHODS.items():
        label = plugin_label(name)
        if label and spec.features and resolve(spec.features) is type(features):
            return label
    return None


def _checked(features, Z, n_rows: int, stage: str):
    """Z as given, once a plug-in's map gave a 2-D float matrix of n_rows finite rows (models.plugins)."""
    if hasattr(Z, "matvec"):  # a compact operator of the paper's own (RB's BinnedMatrix)
        return Z
    who = _plugin_of(features)
    return Z if who is None else check_output(who, Z, n_rows, stage)


def fit_features(features, X):
    """Z of the training rows: a feature map's compact operator where it has one (RB's
    BinnedMatrix), else its dense transform (a plug-in's checked at the boundary)."""
    compact = getattr(features, "fit_transform_binned", None)
    return compact(X) if compact else _checked(features, features.fit(X).transform(X), X.shape[0], "transform")


def features_of(features, X):
    """Z of new rows, as `fit_features` gives it."""
    compact = getattr(features, "transform_binned", None)
    return compact(X) if compact else _checked(features, features.transform(X), X.shape[0], "transform")


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

    _method: str  # the registry's name of its feature method, fixed by the class (`spec` is its entry)
    #: what each parameter takes (constraints.validate_params, at fit): R's keyword and the solvers
    #: registered (solver_registry.ridge_solvers) are added by `_check_params`
    _parameter_constraints = {
        "sigma": [SIGMA, Options("scale")],
        "kernel": [Options(*KERNELS)],
        "lam": [NONNEGATIVE],
        "maxit": [ITERATIONS],
        "tol": [TOLERANCE],
        "center": ["boolean"],
        "random_state": ["random_state"],
        "memory_limit_gb": [None, Interval(float, 0, None, closed="neither")],
        "draws": [Options(*RNGS)],
        "early_stopping": [Options("auto", True, False)],
        "validation_fraction": [FRACTION],
        "n_iter_no_change": [COUNT],
        "n_jobs": [None, Options(-1), COUNT],
    }
    #: its fitted state, as a saved model holds it (models.persist): arrays, then scalars
    _saved_arrays = ("coef_", "y_mean_", "train_scores_")
    _saved_scalars = ("solver_", "center_", "n_columns_", "cg_iterations_", "cg_residual_", "featurize_s_",
                      "solve_s_", "train_s_", "n_features_in_", "best_iteration_", "n_validation_",
                      "search_iterations_", "early_stopping_", "sigma_")
    #: saved scalars that model files written before them lack, with the value they then mean
    _scalar_defaults = {"best_iteration_": -1, "n_validation_": 0, "search_iterations_": 0, "early_stopping_": False,
                        "sigma_": None}

    @property
    def _r_param(self) -> str:
        """The keyword that takes R: its method's registry entry says."""
        return self.spec.r_parameter

    def _n_requested(self) -> int:
        return getattr(self, self._r_param)

    @property
    def spec(self) -> MethodSpec:
        """Its method's registry entry."""
        return method_spec(self._method)

    def _feature_map(self):
        """Its method's feature map, drawn with R and the parameters of this estimator the map takes."""
        params = {k: v for k, v in self.get_params(deep=False).items() if k not in (self._r_param, "n_jobs")}
        params["sigma"] = getattr(self, "sigma_", None) or params["sigma"]
        return self.spec.feature_map(self._n_requested(), **params)

    def _resolve_sigma(self, X) -> None:
        """sigma_: the width the fit uses (sigma="scale": models.sigma_search.scale_sigma of X), and a
        WidthWarning where the columns are on widely different scales."""
        self.sigma_ = resolve_sigma(self.sigma, X)
        width_checks.warn(width_checks.spread_message(X))

    @property
    def method(self) -> str:
        """The feature method's name (fixed by the class; `spec` is its registry entry)."""
        return self._method

    def _check_params(self):
        """Every parameter against `_parameter_constraints` (R's keyword an integer >= 1), then the one
        rule between two of them."""
        validate_params(self.get_params(deep=False),
                        {**self._parameter_constraints, self._r_param: [COUNT], "solver": [Options(*ridge_solvers())]})
        refusal = needs_cg("early_stopping", self.solver) if self.early_stopping is True else None
        if refusal:
            raise InvalidParameter(refusal)

    def _split_seed(self) -> int:
        """The held-out rows' seed: random_state's integer, else one drawn fresh (as None means)."""
        seed = seed_of(self.random_state)
        if isinstance(seed, (int, np.integer)):
            return int(seed)
        return int(np.random.SeedSequence().entropy % 2**63)

    def fit(self, X, y):
        """Featurize X, then solve (Z^T Z + lam I) W = Z^T (Y - y_mean) with the chosen solver. With
        early stopping, CG first runs on the rows not held out, its iterates scored on the held-out
        rows, and from the best one CG goes on for FINAL_STEPS steps on every row (`_solve_cg`): the
        held-out rows pick the stop, then they are trained on too. Runs on `n_jobs` threads (numba
        and BLAS, as --threads sets them)."""
        with thread_budget(self.n_jobs):
            return self._fit(X, y)

    def _fit(self, X, y):
        X, Y = self._validate_fit(X, y)
        self._check_params()
        self._resolve_sigma(X)
        self.solver_ = self.solver
        self.center_ = bool(self.center)
        self.y_mean_ = Y.mean(axis=0) if self.center_ else np.zeros(Y.shape[1])
        n, d = X.shape
        R = self._n_requested()
        spec = self.spec
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
        if self._method == SUBJECT:
            width_checks.warn(width_checks.too_fine_message(self.n_columns_, R, n, self.sigma_))
        self.best_iteration_, self.search_iterations_ = -1, 0
        if is_cg(self.solver_):
            self._solve_cg(operator, Y - self.y_mean_, split)
        else:  # the solver's own function (solver_registry), after its memory is checked
            check_memory(f"the {self.solver_} solve for D = {self.n_columns_}",
                         solve_memory(self.spec, self.solver_, self.n_columns_, Y.shape[1]), self.memory_limit_gb)
            solve = resolve(solver_spec(self.solver_).solve)
            self.coef_ = solve(operator.Z if isinstance(operator, DenseOperator) else operator, Y - self.y_mean_, self.lam)
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
        if self.early_stopping is False or not is_cg(self.solver):
            raise InvalidParameter(f"held_out_search is early stopping's search: it needs early_stopping 'auto' or "
                                   f"True and solver {' or '.join(CG_SOLVERS)}")
        X, Y = self._validate_fit(X, y)
        self._check_params()
        self.sigma_ = resolve_sigma(self.sigma, X)
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

    def _stops_early(self, n: int, seed: int) -> bool:
        """Whether a fit on n rows whose held-out rows come from `seed` stops early (`_held_out_rows`'s
        rule, for a fit split over machines, which draws the seed once for this and the split)."""
        return self.early_stopping is True or self._held_out_rows(n, seed) is not None  # True: _split refuses an empty side

    def _held_out_rows(self, n: int, seed: int | None = None) -> np.ndarray | None:
        """Early stopping's held-out rows (solvers.stopping.held_out, from `seed`, else one drawn by
        `_split_seed`), or None without it: with early_stopping="auto", wherever the solver is CG and
        both sides of the split have rows (a few rows hold none out: then the fit runs maxit steps).
        With early_stopping=True, a split with an empty side is refused. `early_stopping_` says which
        it was."""
        self.early_stopping_ = False
        if self.early_stopping is False or (self.early_stopping == "auto" and not is_cg(self.solver)):
            return None
        held = held_out(n, self.validation_fraction, self._split_seed() if seed is None else seed)
        if self.early_stopping == "auto" and (held.all() or not held.any()):
            return None
        self.early_stopping_ = True
        if held.all() or not held.any():
            raise InvalidParameter(f"early_stopping holds out {int(held.sum())} of {n} training rows "
                                   f"(validation_fraction={self.validation_fraction}); it needs some rows on each "
                                   f"side: more rows, another fraction, or early_stopping=False")
        return held

    def _split(self, operator, Y: np.ndarray, held: np.ndarray) -> tuple:
        """(operator of the rows not held out, their targets, operator of the held-out rows, theirs): without
        a copy of Z's rows where the operator offers it (`kept_rows`: RB, whose steps on the kept rows also
        score the held-out ones), else copies, checked against the memory limit beside Z first."""
        if hasattr(operator, "kept_rows"):
            kept = operator.kept_rows(held)
            return kept, Y[~held], kept.held_out, Y[held]
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
        return ValidationStopping(Z_val, score, self.n_iter_no_change)

    def _search(self, split: tuple, lo: int, hi: int, C: int, buffers: CGBuffers | None = None) -> ValidationStopping:
        """Early stopping's first pass for targets lo ... hi-1: CG on the rows not held out, each iterate
        scored on the held-out rows; returns the rule, whose best_iteration is the best one's step
        count (0: the zero weights). buffers: the solve's arrays, left for the final steps (`CGBuffers`)."""
        Z_fit, Y_fit, Z_val, Y_val = split
        stopper = self._stopping(Z_val, Y_val, lo, hi, C)
        stopper.start(np.zeros((self.n_columns_, hi - lo)))
        result = ridge_cg(Z_fit, Y_fit[:, lo:hi], self.lam, self.maxit, self.tol, preconditioned=solver_spec(self.solver_).preconditioned,
                          callback=stopper, buffers=buffers)
        self.best_iteration_ = max(self.best_iteration_, stopper.best_iteration)
        self.search_iterations_ = max(self.search_iterations_, result.iterations)
        self.validation_scores_ = np.asarray(stopper.scores)
        return stopper

    def _solve_cg(self, operator, Y: np.ndarray, split: tuple | None = None) -> None:
        """CG on all targets at once when its vectors fit the memory limit, else on blocks of
        targets in turn (each column's CG is independent, so the result is the same): mnist
        at R = 937 has D = 56 M, and 10 classes at once would need 31 GB. With a held-out split,
        each block's search (`_search`) keeps its best iterate, and CG goes on from there on every
        row, the held-out rows added, for FINAL_STEPS steps."""
        D, C = self.n_columns_, Y.shape[1]
        stops_early = split is not None
        per_pass = cg_columns_per_pass(D, C, memory_limit_bytes(self.memory_limit_gb), stops_early)
        if per_pass < 1:  # not even one target fits beside the coefficients: refused in one line
            check_memory(f"the {self.solver_} solve for D = {D}",
                         solve_memory(self.spec, self.solver_, D, 1, stops_early) + 8.0 * D * C,
                         self.memory_limit_gb)
            per_pass = 1
        coef = np.empty((D, C)) if per_pass < C else None
        self.cg_iterations_, self.cg_residual_, self.cg_passes_ = 0, 0.0, 0
        buffers = CGBuffers()  # the search's arrays serve its final steps, of the same shape
        for lo in range(0, C, per_pass):
            hi = min(C, lo + per_pass)
            searched = None if split is None else self._search(split, lo, hi, C, buffers)
            result = ridge_cg(operator, Y[:, lo:hi], self.lam, self.maxit if searched is None else FINAL_STEPS,
                              self.tol, preconditioned=solver_spec(self.solver_).preconditioned,
                              x0=None if searched is None else searched.best_coef, buffers=buffers)
            if coef is None:
                coef = result.coef
            else:
                coef[:, lo:hi] = result.coef
            steps = result.iterations + (0 if searched is None else searched.best_iteration)
            self.cg_iterations_ = max(self.cg_iterations_, steps)
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
        classifier = type(self) if isinstance(self, _Classifier) else self.spec.estimator("classification")
        # without early stopping: 8 rows may hold none out, and its search runs the same kernels
        probe = classifier(**{**self.get_params(deep=False), self._r_param: min(2, n), "maxit": 2,
                              "memory_limit_gb": None, "early_stopping": False})
        with warnings.catch_warnings():  # 8 rows at R = 2 say nothing about the width of the real fit
            warnings.simplefilter("ignore", width_checks.WidthWarning)
            for n_classes in sorted({2, min(3, n)}):  # one right-hand side, then several
                # unbalanced labels (0, 1, 2, 2, ...): with balanced ones, rows that share every bin (a tiny
                # sigma) give Z^T y = 0, CG stops before its first step and that step's kernels stay uncompiled
                probe.fit(small, np.minimum(np.arange(n), n_classes - 1)).predict(small)
        # early stopping's held-out split counts the held-out rows' bins (`kept_rows`) and a distributed worker's
        # copies its rows: their own kernels, which the probe above, without early stopping, does not run
        Z = probe._transform(small)
        if hasattr(Z, "rows"):
            Z.gram_diagonal()
            Z.rows(np.ones(n, dtype=bool))
        if hasattr(Z, "row_gram"):  # plain CG in row space (a wide Z), whose kernels 8 rows may never pick
            ridge_cg_rows(Z, np.ones((n, 2)), 1.0, 1, 0.0)
        if hasattr(Z, "compile_tuple_kernels"):  # a one-target step on many rows and few bins (features.tuples)
            Z.compile_tuple_kernels()

    def cost(self) -> dict:
        return feature_cost(self)
