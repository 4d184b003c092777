"""One experiment cell: fit on a dataset's training split, score train and test, time it.

The returned row carries the parameters, the cost figures of docs/design.md §2 (D, kappa, nnz,
CG iterations, featurize/solve/train/predict seconds, the paper's memory model and the
measured peak memory of the fit), both metrics and provenance. Kernels are warmed up on
a few rows first, so the times exclude numba compilation.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, replace

import numba
import numpy as np
from threadpoolctl import threadpool_limits

from rbrepro import metrics
from rbrepro.constraints import (
    COUNT,
    ITERATIONS,
    NONNEGATIVE,
    SIGMA,
    TOLERANCE,
    Interval,
    Options,
    validate_params,
)
from rbrepro.data.load import Dataset, validation_split
from rbrepro.errors import InvalidParameter, UnknownName
from rbrepro.memory import PeakMemory, memory_limit_bytes
from rbrepro.models import targets
from rbrepro.models.degenerate import check_learnable
from rbrepro.models.registry import METHODS, SUBJECT, method_spec, solver_conflict
from rbrepro.provenance import provenance
from rbrepro.solver_registry import is_cg, is_ridge, solver_names
from rbrepro.solvers.cg import MAXIT, TOL
from rbrepro.threads import thread_count
from rbrepro.vocabulary import (
    KERNELS,
    LOSSES,
    PRECONDITIONED_CG,
    RNGS,
    SCALINGS,
    SCORINGS,
    STOPPINGS,
    VARIANTS,
    needs_cg,
)

log = logging.getLogger(__name__)

#: Bumped whenever a change of code changes results, so cached cells of older code are not reused:
#: 3 = RLCM's block leaf rule, Nystrom's direct solve, the kernel choice, the estimator classes;
#: 4 = the exact kernel's float32 factorization refined to float64 residuals.
ALGORITHM_VERSION = 4



#: what the cell's numbers take (rbrepro.constraints, the rules the estimators check at fit)
_NUMBERS = {"sigma": [SIGMA], "R": [COUNT], "lam": [NONNEGATIVE], "maxit": [ITERATIONS], "tol": [TOLERANCE],
            "threads": [Interval(int, 0, None)], "evaluate_on": [Options("test", "validation")]}


@dataclass(frozen=True)
class CellParams:
    dataset: str
    method: str = SUBJECT
    sigma: float = 1.0
    kernel: str = "l1"          # l1 | euclidean (rf, nystrom, block, exact; rb is l1 only)
    R: int = 256                # grids (rb), features (rf), landmarks (nystrom), leaf size (block); unused by exact
    lam: float = 0.01           # ridge lambda (CG / direct / Cholesky) or the L1 weight (rcd)
    solver: str = "default"     # default | cg | pcg | direct | rcd
    maxit: int = MAXIT
    tol: float = TOL
    center: bool | None = None  # None: the method's default (RB no; the others yes)
    seed: int = 0
    threads: int = 0            # 0: all cores numba sees
    loss: str = "squared_hinge"  # rcd only
    epochs: int = 20            # rcd only
    variant: str = "async"      # rcd only: async | sync
    memory_limit_gb: float | None = None
    evaluate_on: str = "test"   # "test", or "validation" (sigma selection: train on the rest of the training split)
    scaling: str = "default"    # default (the registry's) | minmax | maxabs | maxabs-all | published
    rng: str = "numpy"          # rb's grid draw: numpy (from seed) | authors (their C++ draws, docs/authors-protocol.md)
    scoring: str = "standard"   # standard | authors (ties wrong, labels 0..C-1 columns: docs/authors-protocol.md)
    stopping: str = "auto"      # auto | residual (tol or maxit: the authors') | validation (held-out rows): resolved()

    def validate(self) -> "CellParams":
        """Refuse, naming it, a value outside its vocabulary, a combination the method cannot run
        (the registry's rules) or a number out of range."""
        try:
            spec = method_spec(self.method)
        except UnknownName as exc:  # a parameter's value here: the registry's words, as a bad parameter
            raise InvalidParameter(str(exc)) from None
        for name, allowed in (("solver", solver_names()), ("kernel", KERNELS)):
            if getattr(self, name) not in allowed:
                raise InvalidParameter(f"{name} {getattr(self, name)!r} is not available; choose from "
                                       f"{', '.join(allowed)}")
        self._check_combination(spec)
        self._check_numbers(spec)
        for name, allowed in (("scaling", SCALINGS), ("rng", RNGS), ("scoring", SCORINGS), ("stopping", STOPPINGS)):
            if getattr(self, name) not in allowed:
                raise InvalidParameter(f"{name} {getattr(self, name)!r} is not available; choose from "
                                       f"{', '.join(allowed)}")
        if self.rng == "authors" and not spec.authors_draws:
            authors = ", ".join(name for name, other in METHODS.items() if other.authors_draws)
            raise InvalidParameter(f"rng 'authors' replays the authors' Random Binning draws; it needs method {authors}")
        conflict = solver_conflict(self.solver, (self.method,), kernel=self.kernel, rng=self.rng, scoring=self.scoring)
        if conflict:
            raise InvalidParameter(conflict)
        refusal = needs_cg("stopping 'validation'", self.solver, self.solved_by(), "stopping 'residual'") \
            if self.stopping == "validation" else None
        if refusal:
            raise InvalidParameter(f"{self.method}: {refusal}")
        if self.loss not in LOSSES or self.variant not in VARIANTS or self.epochs < 0:
            raise InvalidParameter(f"rcd needs loss in {LOSSES}, variant in {VARIANTS}, epochs >= 0")
        return self

    def resolved(self) -> "CellParams":
        """These parameters with the stopping rule settled, as every door (train, a sweep's cells, the
        estimators' defaults) settles it: "auto" is validation where the method solves by CG (pcg for a
        "default" solver: the estimators' own default), residual where there are no CG steps to stop
        (direct, Cholesky, rcd). Cells are keyed resolved, so "auto" never reaches a key."""
        if self.stopping != "auto" or self.method not in METHODS:
            return self
        if not is_cg(self.solved_by()):
            return replace(self, stopping="residual")
        return replace(self, stopping="validation", solver=PRECONDITIONED_CG if self.solver == "default" else self.solver)

    def solved_by(self) -> str:
        """The solver that runs: `solver`, or the method's own for "default" (Cholesky for the kernel methods)."""
        spec = METHODS[self.method]
        if self.solver != "default":
            return self.solver
        return "cholesky" if spec.cholesky else spec.default_solver

    def _check_combination(self, spec) -> None:
        """The solver and kernel the method takes: those its registry entry lists, and any ridge solver
        registered (solver_registry) where it has a feature map (the rcd solver's own needs are
        registry.solver_conflict's, asked once in `validate`)."""
        if spec.cholesky and self.solver != "default":
            raise InvalidParameter(f"{self.method} solves its kernel systems by Cholesky; --solver must be 'default'")
        if self.solver not in spec.solvers and self.solver != "rcd" and not (spec.has_features and is_ridge(self.solver)):
            raise InvalidParameter(f"{self.method} takes the solvers {', '.join(spec.solvers)}, not {self.solver!r}")
        if self.kernel not in spec.kernels:
            others = ", ".join(name for name, other in METHODS.items() if self.kernel in other.kernels)
            raise InvalidParameter(f"{spec.title} approximates the {' or '.join(spec.kernels)} kernel only; kernel "
                                   f"{self.kernel!r} needs method {others} (and a ridge solver)")

    def _check_numbers(self, spec) -> None:
        """The numbers by the estimators' own constraints (R only where the method has one)."""
        validate_params({name: getattr(self, name) for name in _NUMBERS if name != "R" or spec.has_R}, _NUMBERS)


def make_model(params: CellParams, task: str, threads: int):
    """The estimator a cell's parameters describe: the same classes `rbrepro.models` exports."""
    p = params
    optional = {} if p.center is None else {"center": p.center}
    if p.solver == "rcd":  # the L1 model (and its RCD kernels) load only for a cell that uses it
        from rbrepro.models.l1_model import L1_MODEL

        return L1_MODEL[task](method=p.method, n_components=p.R, sigma=p.sigma, l1=p.lam, loss=p.loss,
                              epochs=p.epochs, threads=threads, variant=p.variant, random_state=p.seed,
                              memory_limit_gb=p.memory_limit_gb)
    spec = METHODS[p.method]  # what the registry says of the method decides every argument
    kwargs = {"sigma": p.sigma, "lam": p.lam, "memory_limit_gb": p.memory_limit_gb, **optional}
    kwargs.update({spec.r_parameter: p.R} if spec.has_R else {})
    kwargs.update({"random_state": p.seed} if spec.randomized else {})
    kwargs.update({"draws": p.rng} if spec.authors_draws else {})
    kwargs.update({"kernel": p.kernel} if len(spec.kernels) > 1 else {})
    if not spec.cholesky:  # an iterative solve: CG's settings, the solver and the stopping rule, all explicit
        p = p.resolved()
        kwargs.update({"maxit": p.maxit, "tol": p.tol, "solver": p.solved_by(),
                       "early_stopping": p.stopping == "validation"})
    return spec.estimator(task)(**kwargs)


def numba_signatures() -> dict[int, tuple[str, int]]:
    """id -> (name, compiled signatures) of every numba kernel in rbrepro's loaded modules."""
    import sys

    from numba.core.registry import CPUDispatcher

    found = {}
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("rbrepro.") or module is None:
            continue
        for attr, obj in list(vars(module).items()):
            if isinstance(obj, CPUDispatcher):
                found[id(obj)] = (f"{obj.py_func.__module__}.{obj.py_func.__name__}", len(obj.signatures))
    return found


def compiled_since(before: dict[int, tuple[str, int]]) -> list[str]:
    """Kernels that gained a compiled signature since `before` (compiled, or loaded from the cache)."""
    return sorted({name for key, (name, n) in numba_signatures().items() if n > before.get(key, ("", 0))[1]})


def _metrics(model, data: Dataset, test_out, authors_scoring: bool) -> dict:
    """Train and test metric: docs/design.md §2's, or the authors' scoring (ties wrong) on decision values."""
    if not authors_scoring:
        return {"train_metric": metrics.score(data.task, data.y_train, model.predict_train()),
                "test_metric": metrics.score(data.task, data.y_test, test_out)}
    train_scores = model.train_scores_
    train_scores = train_scores[:, 0] if train_scores.shape[1] == 1 else train_scores
    return {"train_metric": targets.authors_accuracy(data.y_train, train_scores, model.classes_),
            "test_metric": targets.authors_accuracy(data.y_test, test_out, model.classes_)}


def run_cell(params: CellParams, data: Dataset, model_out: list | None = None, wrap=None) -> dict:
    """Train and evaluate one cell; returns its result row (a flat dict).

    If model_out is a list, the fitted model is appended to it (for saving). `wrap`, if given, takes
    the estimator and returns what is fitted and scored instead (a distributed fit's meta-estimator)."""
    params = params.validate().resolved()
    if params.evaluate_on == "validation":
        data = validation_split(data)
    check_learnable(data, "training rows" if params.evaluate_on != "validation" else "rows of the validation fit")
    threads = thread_count(params.threads)
    numba.set_num_threads(threads)
    model = make_model(params, data.model_task, threads)
    if wrap is not None:
        model = wrap(model)
    authors_scoring = params.scoring == "authors" and data.task != "regression"
    if authors_scoring:
        model._label_layout = "authors"  # their one-vs-all columns: label k in column k (docs/authors-protocol.md)
    with threadpool_limits(limits=threads):  # BLAS (RF, Nystrom, Cholesky) gets the same thread budget
        model.warm_up(data.X_train)
        warm = numba_signatures()
        with PeakMemory() as peak:
            model.fit(data.X_train, data.y_train)
        t0 = time.perf_counter()
        test_out = model.decision_function(data.X_test) if authors_scoring else model.predict(data.X_test)
        predict_s = time.perf_counter() - t0
        compiled = compiled_since(warm)  # must stay empty: timings exclude compilation
    if model_out is not None:
        model_out.append(model)
    cost = model.cost()
    rcd = params.solver == "rcd"
    setting = asdict(params)
    limit_gb = setting.pop("memory_limit_gb")  # a setting of the run: recorded as the limit that applied
    row = {
        **setting,
        "memory_limit_bytes": memory_limit_bytes(limit_gb),
        "solver": "rcd" if rcd else model.solver_,
        "center": None if rcd else model.center_,
        "threads": threads,
        "task": data.task,
        "metric": metrics.metric_name(data.task),
        **_metrics(model, data, test_out, authors_scoring),
        "scoring": "authors" if authors_scoring else "standard",  # what was applied (regression: the standard)
        "n_train": data.X_train.shape[0],
        "n_test": data.X_test.shape[0],
        **cost,
        "cg_iterations": getattr(model, "cg_iterations_", 0) if not rcd else 0,  # CG or PCG
        "cg_residual": getattr(model, "cg_residual_", float("nan")) if not rcd else float("nan"),
        **({"best_iteration": model.best_iteration_, "n_validation": model.n_validation_,
            "search_iterations": model.search_iterations_} if params.stopping == "validation" else {}),
        "rcd_epochs": model.rcd_epochs_ if rcd else 0,
        "rcd_objective": model.objective_ if rcd else float("nan"),
        "rcd_variant": model.variant_ if rcd else "",
        "rcd_damping": model.damping_ if rcd else float("nan"),
        "nnz_w": int(np.count_nonzero(model.coef_)) if rcd else -1,
        "rcd_trace": json.dumps([[round(t, 6), f] for t, f, _ in model.trace_[0]]) if rcd else "",
        "featurize_s": model.featurize_s_,
        "solve_s": model.solve_s_,
        "train_s": model.train_s_,
        "predict_s": predict_s,
        "peak_fit_mb": peak.peak_mb,
        "compiled_in_timed_region": ";".join(compiled),
        "scaling": data.scaling,
        "split": data.split,
        "data_repairs": "; ".join(data.info.get("repairs", ())),  # known source defects repaired (registry)
        "status": "ok",
        "error": "",
        **provenance(),
    }
    log.info("fit %s R=%s sigma=%g on %s: D=%s, train %.3f s, test %s %.4g", params.method, params.R, params.sigma,
             data.name, row.get("D"), row.get("train_s", float("nan")), row.get("metric"), row.get("test_metric"))
    return row
