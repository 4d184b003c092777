"""One experiment cell: fit on a dataset's training split, score train and test, time it.

The returned row carries the parameters, the cost figures of DESIGN §2 (D, kappa, nnz,
CG iterations, featurize/solve/train/predict seconds), both metrics and provenance.
Kernels are warmed up on two rows first, so the times exclude numba compilation.
"""

from __future__ import annotations

import resource
import time
from dataclasses import asdict, dataclass

import numba

from rbrepro import metrics
from rbrepro.data.load import Dataset
from rbrepro.models.rb_ridge import RandomBinningRidge
from rbrepro.provenance import provenance
from rbrepro.solvers.cg import MAXIT, TOL

METHODS = ("rb",)


@dataclass(frozen=True)
class CellParams:
    dataset: str
    method: str = "rb"
    sigma: float = 1.0
    R: int = 256
    lam: float = 0.01
    solver: str = "cg"
    maxit: int = MAXIT
    tol: float = TOL
    center: bool = False
    seed: int = 0
    threads: int = 0   # 0: all cores numba sees

    def validate(self) -> "CellParams":
        if self.method not in METHODS:
            raise ValueError(f"method {self.method!r} is not available; choose from {METHODS}")
        if self.solver != "cg":
            raise ValueError(f"solver {self.solver!r} is not available for {self.method}; choose 'cg'")
        if not (self.sigma > 0):
            raise ValueError(f"sigma must be > 0, got {self.sigma}")
        if self.R < 1:
            raise ValueError(f"R must be >= 1, got {self.R}")
        if self.lam < 0:
            raise ValueError(f"lam must be >= 0, got {self.lam}")
        if self.maxit < 0 or not (self.tol > 0):
            raise ValueError(f"maxit must be >= 0 and tol > 0, got maxit={self.maxit}, tol={self.tol}")
        if self.threads < 0:
            raise ValueError(f"threads must be >= 0, got {self.threads}")
        return self


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_cell(params: CellParams, data: Dataset) -> dict:
    """Train and evaluate one cell; returns its result row (a flat dict)."""
    params.validate()
    threads = params.threads or numba.config.NUMBA_NUM_THREADS
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    model = RandomBinningRidge(n_grids=params.R, sigma=params.sigma, lam=params.lam, task=data.model_task,
                               maxit=params.maxit, tol=params.tol, center=params.center,
                               random_state=params.seed)
    model.warm_up(data.X_train)
    model.fit(data.X_train, data.y_train)
    t0 = time.perf_counter()
    test_pred = model.predict(data.X_test)
    predict_s = time.perf_counter() - t0
    feats = model.features_
    n_train = data.X_train.shape[0]
    row = {
        **asdict(params),
        "threads": numba.get_num_threads(),
        "task": data.task,
        "metric": metrics.metric_name(data.task),
        "train_metric": metrics.score(data.task, data.y_train, model.predict_train()),
        "test_metric": metrics.score(data.task, data.y_test, test_pred),
        "n_train": n_train,
        "n_test": data.X_test.shape[0],
        "D": feats.n_bins_,
        "kappa": feats.kappa_,
        "nnz": feats.nnz_,
        "cg_iterations": model.cg_iterations_,
        "cg_residual": model.cg_residual_,
        "featurize_s": model.featurize_s_,
        "solve_s": model.solve_s_,
        "train_s": model.train_s_,
        "predict_s": predict_s,
        "memory_model_entries": params.R + feats.n_bins_ / n_train,
        "peak_rss_mb": _peak_rss_mb(),
        "scaling": data.scaling,
        "split": data.split,
        "centering": params.center,
        "status": "ok",
        "error": "",
        **provenance(),
    }
    return row
