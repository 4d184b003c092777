"""One feature-ridge estimator fitted across a dask cluster: the fitted estimator is the one its own
fit on all rows gives (the same D, columns, feature map; weights to rounding), and it predicts on
one machine as any other. Block and exact kernel models are refused: they do not split by rows."""

from __future__ import annotations

import time

import numpy as np

from rbrepro.distributed import binning, dense, holdout
from rbrepro.distributed.cluster import ordered_sum
from rbrepro.distributed.errors import NotDistributable
from rbrepro.distributed.operator import DistributedOperator
from rbrepro.distributed.partitions import column_sums, encode_targets, labels_of, load_partition, partition_sigma
from rbrepro.errors import InvalidParameter
from rbrepro.memory import GB, MemoryLimitError, check_memory
from rbrepro.models import targets
from rbrepro.models.feature_ridge import FINAL_STEPS
from rbrepro.models.registry import SUBJECT, method_spec, splittable_methods
from rbrepro.models.ridge_memory import featurize_memory, solve_memory
from rbrepro.solver_registry import is_cg, solver_spec
from rbrepro.solvers.cg import CGBuffers, ridge_cg
from rbrepro.solvers.direct import solve_gram


def why_not_distributed(method: str) -> str:
    """Why `method` does not fit across machines, in one line ("" where it does): its registry entry's
    reason, or that only the ridge models on explicit features split by rows."""
    spec = method_spec(method)
    if spec.distributed:
        return f"{method} does not fit across machines: {spec.distributed}; use {', '.join(splittable_methods())}"
    if not spec.has_features:
        return f"{method} does not fit across machines: only the ridge models on {', '.join(splittable_methods())} do"
    return ""


def check_distributable(model) -> str:
    """The model's method, or NotDistributable in one line saying why not."""
    method = getattr(model, "_method", None) or getattr(model, "method", None)
    why = why_not_distributed(method) if isinstance(method, str) else ""
    if why:
        raise NotDistributable(why)
    if method is None or not hasattr(model, "_feature_map"):
        raise NotDistributable(f"{type(model).__name__} does not fit across machines: only the ridge models on "
                               f"{', '.join(splittable_methods())} features do")
    model._check_params()
    if model.solver == "direct" and getattr(model.spec.feature_class(), "sparse", False):
        raise NotDistributable(f"{method} with solver direct factors the D x D matrix Z^T Z of its sparse features on "
                               "one machine; use cg or pcg, whose steps are sums over the workers' rows")
    return method


def check_worker_memory(runner, method: str, R: int, sources: list, n_features: int) -> None:
    """Refuse before any work where the memory a task may use on the tightest worker (its limit times
    dask's pause fraction, less what its process holds already: Runner.worker_headroom) is below the
    memory model's estimate for the largest partition (its rows and their features)."""
    headroom = runner.worker_headroom() if hasattr(runner, "worker_headroom") else {
        a: (m, m, 0.0) for a, m in runner.worker_memory().items() if m > 0}
    if not headroom or not sources:
        return
    address, (limit, usable, held) = min(headroom.items(), key=lambda item: item[1][1])
    biggest = max(range(len(sources)), key=lambda i: sources[i].n_rows)
    n = sources[biggest].n_rows
    estimate = featurize_memory(method, n, n_features, R) + sources[biggest].nbytes()
    if method == SUBJECT:  # the local ids stay while their global copy is written
        estimate += 4.0 * n * R
    if estimate > usable:
        raise MemoryLimitError(f"partition {biggest} ({n:,} rows) needs about {estimate / GB:.2f} GB to featurize at "
                               f"R = {R}, more than the {usable / GB:.2f} GB a task may use on dask worker {address} "
                               f"(its {limit / GB:.2f} GB limit at dask's pause fraction, less the {held / GB:.2f} GB "
                               "its process holds); use more partitions or workers with more memory")


def _targets(model, runner, parts: list, task: str, n_rows: int):
    """(futures of the partitions' encoded targets, classes or None, y_mean) with classes from all
    partitions (a class absent from some is still a column of every one)."""
    classes = None
    if task == "classification":
        labels = runner.gather(runner.map(labels_of, parts, task), "reading the labels")
        layout = getattr(model, "_label_layout", "sorted")
        everything = np.unique(np.concatenate(labels))
        classes = targets.encode(everything, task, layout)[1]  # refuses one class, as a single fit does
        encoded = runner.map(encode_targets, parts, task, layout, everything)
    else:
        encoded = runner.map(encode_targets, parts, task, "sorted", None)
    sums = ordered_sum(runner.gather(runner.map(column_sums, encoded), "summing the targets"))
    y_mean = sums / n_rows if model.center else np.zeros_like(sums)
    return encoded, classes, y_mean


def _split(model, runner, matrices: list, encoded: list, sizes: list[int], seed: int) -> tuple[list, int]:
    """Each partition's Z and targets cut into the search's rows and the held-out rows by
    held_out(n, fraction, seed, first_row), first_row its offset among all rows and seed the
    single-machine fit's (drawn once per fit where random_state is None): (splits, held-out rows).
    Refused as the single-machine fit refuses a split with an empty side."""
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    splits = [runner.submit(holdout.split_matrix, Z, Y, model.validation_fraction, seed, int(first))
              for Z, Y, first in zip(matrices, encoded, starts[:-1])]
    counts = runner.gather(runner.map(holdout.split_counts, splits), "holding out rows")
    n_held, n = sum(h for _, h in counts), int(starts[-1])
    if n_held in (0, n):
        raise InvalidParameter(f"early_stopping holds out {n_held} of {n} training rows "
                               f"(validation_fraction={model.validation_fraction}); it needs some rows on each "
                               f"side: more rows, another fraction, or early_stopping=False")
    return splits, n_held


def _search(model, runner, splits: list, n_fit: int, D: int, y_mean: np.ndarray, buffers: CGBuffers):
    """Early stopping's first pass: CG on the rows not held out, each step and each iterate's score
    reduced from the workers; returns the rule, with the best iterate (the single-machine `_search`), and
    leaves its arrays in `buffers` for the final steps."""
    operator = DistributedOperator(runner, runner.map(holdout.fit_matrix, splits), n_fit, D)
    stopper = holdout.DistributedValidation(runner, splits, y_mean, model._task, model.n_iter_no_change)
    stopper.start(np.zeros((D, y_mean.shape[0])))
    result = ridge_cg(operator, None, model.lam, model.maxit, model.tol, preconditioned=solver_spec(model.solver_).preconditioned,
                      rhs=operator.rhs(runner.map(holdout.fit_targets, splits), y_mean), callback=stopper,
                      buffers=buffers)
    model.best_iteration_ = stopper.best_iteration
    model.search_iterations_ = result.iterations
    model.validation_scores_ = np.asarray(stopper.scores)
    return stopper


def _solve(model, operator: DistributedOperator, encoded: list, y_mean: np.ndarray, runner,
           splits: list | None = None, n_held: int = 0) -> None:
    """CG with each step reduced from the workers (with early stopping, from the best iterate of the
    search on the rows not held out, `_search`, for the final steps), or (RF, Nystrom) the Gram matrix
    reduced once. All targets in one CG (a single-machine fit splits them into passes only where
    memory is short)."""
    D, C = operator.shape[1], y_mean.shape[0]
    check_memory(f"the {model.solver_} solve for D = {D}",
                 solve_memory(model._method, model.solver_, D, C, early_stopping=splits is not None),
                 model.memory_limit_gb)
    model.best_iteration_, model.search_iterations_ = -1, 0
    if is_cg(model.solver_):
        buffers = CGBuffers()  # the search's arrays serve its final steps, of the same shape
        searched = None if splits is None else _search(model, runner, splits, operator.shape[0] - n_held, D, y_mean,
                                                       buffers)
        result = ridge_cg(operator, None, model.lam, model.maxit if searched is None else FINAL_STEPS, model.tol,
                          preconditioned=solver_spec(model.solver_).preconditioned, rhs=operator.rhs(encoded, y_mean),
                          x0=None if searched is None else searched.best_coef, buffers=buffers)
        model.coef_ = result.coef
        model.cg_iterations_ = result.iterations + (0 if searched is None else searched.best_iteration)
        model.cg_residual_ = float(result.relative_residual.max())
        model.cg_passes_ = 1
        return
    futures = [runner.submit(dense.gram_rhs, Z, Y, y_mean) for Z, Y in zip(operator.matrices, encoded)]
    shares = runner.gather(futures, "Z^T Z and Z^T y")
    G = ordered_sum([g for g, _ in shares])
    B = ordered_sum([b for _, b in shares])
    model.coef_ = solve_gram(G, B, model.lam)
    model.cg_iterations_, model.cg_residual_ = 0, float("nan")


def fit_across(model, runner, sources: list) -> dict:
    """Fit `model` (an unfitted feature-ridge estimator) in place on the rows of `sources` (partitions
    in row order) with `runner`'s cluster; returns workers, partitions and bytes moved per CG step
    (and per scoring of an iterate, with early stopping).

    With early_stopping, the feature map is fitted on every row, as the single-machine fit's is; each
    partition holds out its share of the rows that fit holds out (holdout), the search on the rest picks
    its best iterate, and from there CG runs on every row; y_mean is of all rows."""
    method = check_distributable(model)
    widths = {s.n_features for s in sources}
    if len(widths) != 1:
        raise InvalidParameter(f"the partitions have different numbers of features: {sorted(widths)}")
    d = widths.pop()
    sizes = [s.n_rows for s in sources]
    n = int(sum(sizes))
    if n == 0:
        raise InvalidParameter("the partitions hold no rows: a fit needs at least one")
    R = int(model._n_requested())
    check_worker_memory(runner, method, R, sources, d)
    model.solver_, model.center_ = model.solver, bool(model.center)
    t0 = time.perf_counter()
    parts = [runner.submit(load_partition, s, d, *getattr(s, "inputs", ())) for s in sources]
    encoded, classes, model.y_mean_ = _targets(model, runner, parts, model._task, n)
    model.sigma_ = runner.gather([runner.submit(partition_sigma, parts[0], model.sigma)], "measuring the rows' "
                                 "distances")[0]
    model.features_ = model._feature_map()
    if method == SUBJECT:
        matrices, diagonal = binning.fit_binned(model.features_, runner, parts, d, n)
        D = model.features_.n_bins_
    else:
        dense.fit_map(model.features_, runner, parts, sizes, d)
        matrices = runner.map(dense.dense_matrix, parts, model.features_)
        diagonal, D = None, model.features_._n_features_out
    seed = model._split_seed()  # once: whether to stop early and the split must see the same rows
    splits, n_held = ((None, 0) if not model._stops_early(n, seed)
                      else _split(model, runner, matrices, encoded, sizes, seed))
    model.n_validation_, model.early_stopping_ = n_held, splits is not None
    t1 = time.perf_counter()
    model.n_columns_, model.n_features_in_ = int(D), d
    if classes is not None:
        model.classes_ = classes
    operator = DistributedOperator(runner, matrices, n, D, diagonal)
    _solve(model, operator, encoded, model.y_mean_, runner, splits, n_held)
    t2 = time.perf_counter()
    model.featurize_s_, model.solve_s_, model.train_s_ = t1 - t0, t2 - t1, t2 - t0
    model.train_scores_ = operator.matvec(model.coef_) + model.y_mean_
    C = model.coef_.shape[1]
    cg = is_cg(model.solver_)
    return {"workers": len(runner.worker_memory()), "partitions": len(sources),
            "bytes_per_cg_step": 2 * 8 * D * C * len(sources) if cg else 0,
            # W to each partition, (score, rows) back
            "bytes_per_stopping_step": (8 * D * C + 16) * len(sources) if splits is not None else 0}
