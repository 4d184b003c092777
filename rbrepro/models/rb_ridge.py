"""Ridge regression / one-vs-all classification on Random Binning features."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator

from rbrepro.features.random_binning import RandomBinningFeatures
from rbrepro.models import targets
from rbrepro.solvers.cg import MAXIT, TOL, ridge_cg

TASKS = ("regression", "classification")


class RandomBinningRidge(BaseEstimator):
    """Solve (Z^T Z + lam I) w = Z^T y on RB features by CG on Z, predict Z_0 w (DESIGN §2).

    Parameters
    ----------
    n_grids, sigma, random_state : as in RandomBinningFeatures.
    lam : ridge parameter, used as written (not scaled by N).
    task : "regression" or "classification" (+-1 targets; one-vs-all with argmax for
        more than two classes, all classes solved together).
    maxit, tol : CG iteration cap and relative-residual target (authors: 50, 1e-3).
    center : subtract the training mean of the targets and add it back at prediction
        (the authors' RB driver does not; their other methods do).

    Fitted attributes: features_, coef_ (D x C), classes_, y_mean_, cg_iterations_,
    cg_residual_, featurize_s_, solve_s_, train_s_, train_scores_ (Z w on the training rows).
    """

    def __init__(self, n_grids=256, sigma=1.0, lam=0.01, task="regression",
                 maxit=MAXIT, tol=TOL, center=False, random_state=None):
        self.n_grids = n_grids
        self.sigma = sigma
        self.lam = lam
        self.task = task
        self.maxit = maxit
        self.tol = tol
        self.center = center
        self.random_state = random_state

    def fit(self, X, y):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        Y, self.classes_ = targets.encode(np.asarray(y), self.task)
        self.y_mean_ = Y.mean(axis=0) if self.center else np.zeros(Y.shape[1])
        t0 = time.perf_counter()
        self.features_ = RandomBinningFeatures(self.n_grids, self.sigma, self.random_state)
        Z = self.features_.fit_transform_binned(X)
        t1 = time.perf_counter()
        result = ridge_cg(Z, Y - self.y_mean_, self.lam, self.maxit, self.tol)
        t2 = time.perf_counter()
        self.coef_ = result.coef
        self.cg_iterations_ = result.iterations
        self.cg_residual_ = float(result.relative_residual.max())
        self.featurize_s_ = t1 - t0
        self.solve_s_ = t2 - t1
        self.train_s_ = t2 - t0
        self.train_scores_ = Z.matvec(self.coef_) + self.y_mean_
        return self

    def decision_function(self, X) -> np.ndarray:
        return self.features_.transform_binned(X).matvec(self.coef_) + self.y_mean_

    def predict(self, X) -> np.ndarray:
        return targets.decode(self.decision_function(X), self.classes_)

    def predict_train(self) -> np.ndarray:
        """Predictions on the training rows, from the Z built during fit."""
        return targets.decode(self.train_scores_, self.classes_)

    def warm_up(self, X) -> None:
        """Compile or load every kernel for X's types, so timings exclude compilation."""
        RandomBinningFeatures(2, self.sigma, 0).warm_up(X)
