"""L1-regularized linear models on RB or RF features, trained by parallel RCD (Sec. 4)."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator

from rbrepro.features.random_binning import RandomBinningFeatures
from rbrepro.features.random_fourier import RandomFourierFeatures
from rbrepro.memory import check_memory
from rbrepro.models import targets
from rbrepro.models.feature_ridge import feature_cost
from rbrepro.solvers.rcd import LOSSES, VARIANTS, l1_rcd, prepare

METHODS = ("rb", "rf")


class L1FeatureModel(BaseEstimator):
    """min_w l1 ||w||_1 + mean_i L(w^T z_i, y_i) on RB or RF features by RCD.

    Regression uses the square loss; classification +-1 targets (one-vs-all for more
    than two classes) and `loss` (squared_hinge or logistic; square also allowed).
    Fitted: features_, coef_ (D x C), classes_, objective_, rcd_epochs_, variant_,
    damping_, trace_ (per class: (seconds, objective, nnz)), featurize_s_, solve_s_, train_s_.
    """

    def __init__(self, method="rb", n_components=256, sigma=1.0, l1=1e-4, task="classification",
                 loss="squared_hinge", epochs=20, threads=1, variant="async", random_state=None,
                 memory_limit_gb=None):
        self.method = method
        self.n_components = n_components
        self.sigma = sigma
        self.l1 = l1
        self.task = task
        self.loss = loss
        self.epochs = epochs
        self.threads = threads
        self.variant = variant
        self.random_state = random_state
        self.memory_limit_gb = memory_limit_gb

    def fit(self, X, y):
        if self.method not in METHODS:
            raise ValueError(f"RCD runs on RB or RF features; method must be one of {METHODS}, got {self.method!r}")
        if self.loss not in LOSSES or self.variant not in VARIANTS:
            raise ValueError(f"loss must be one of {LOSSES} and variant one of {VARIANTS}")
        loss = "square" if self.task == "regression" else self.loss
        self.loss_ = loss
        Y, self.classes_ = targets.encode(np.asarray(y), self.task)
        n = X.shape[0]
        per_row = 12.0 * self.n_components if self.method == "rb" else 12.0 * self.n_components
        check_memory(f"RCD on {self.method} features of {n} rows at R = {self.n_components}", per_row * n,
                     self.memory_limit_gb)
        t0 = time.perf_counter()
        if self.method == "rb":
            self.features_ = RandomBinningFeatures(self.n_components, self.sigma, self.random_state)
            Z = self.features_.fit_transform_binned(X)
        else:
            self.features_ = RandomFourierFeatures(self.n_components, self.sigma, self.random_state)
            Z = self.features_.fit(X).transform(X)
        columns = prepare(Z)
        t1 = time.perf_counter()
        coefs, self.trace_, objectives, epochs = [], [], [], []
        for c in range(Y.shape[1]):
            result = l1_rcd(Z, Y[:, c], self.l1, loss, self.epochs, self.threads, self.variant,
                            seed=0 if self.random_state is None else int(self.random_state), columns=columns)
            coefs.append(result.coef)
            self.trace_.append(result.trace)
            objectives.append(result.objective)
            epochs.append(result.epochs)
        t2 = time.perf_counter()
        self.coef_ = np.column_stack(coefs)
        self.objective_ = float(np.mean(objectives))
        self.rcd_epochs_ = int(max(epochs))
        self.variant_, self.damping_ = result.variant, result.damping
        self.featurize_s_, self.solve_s_, self.train_s_ = t1 - t0, t2 - t1, t2 - t0
        self.train_scores_ = (Z.matvec(self.coef_) if self.method == "rb" else Z @ self.coef_)
        self.n_columns_ = Z.shape[1]
        return self

    def decision_function(self, X) -> np.ndarray:
        if self.method == "rb":
            return self.features_.transform_binned(X).matvec(self.coef_)
        return self.features_.transform(X).astype(np.float64) @ self.coef_

    def predict(self, X) -> np.ndarray:
        return targets.decode(self.decision_function(X), self.classes_)

    def predict_train(self) -> np.ndarray:
        return targets.decode(self.train_scores_, self.classes_)

    def warm_up(self, X) -> None:
        small = X[:8]
        for threads in sorted({1, self.threads}):
            L1FeatureModel(self.method, 2, self.sigma, self.l1, "regression", "square", 1, threads, self.variant,
                           0).fit(small, np.arange(small.shape[0], dtype=float))
            L1FeatureModel(self.method, 2, self.sigma, self.l1, "classification", self.loss, 1, threads,
                           self.variant, 0).fit(small, np.arange(small.shape[0]) % 2)

    def cost(self) -> dict:
        return feature_cost(self)
