"""Early stopping on a held-out slice of the training rows: a stopping rule that needs no test data.

With the paper's small lambda, CG's later iterations can fit the training rows harder and test
worse (the authors stop at 50; bench/stopping.py measures where the test metric peaks). The
search keeps the iterate with the best score on rows the solve never sees and ends once
`patience` iterations pass without a better one (scikit-learn's `early_stopping`,
`validation_fraction`, `n_iter_no_change`); the estimators then go on from that iterate on every
row for a few steps (models.feature_ridge.FINAL_STEPS).

Which rows are held out is a pure function of (seed, row number), not of a draw over all rows,
so a fit split over machines holds out the same rows as one on a single machine without sharing
any state (`held_out`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rbrepro.constraints import FRACTION, check
from rbrepro.mixing import splitmix64

#: defaults of the estimators' validation_fraction and n_iter_no_change
VALIDATION_FRACTION = 0.1
PATIENCE = 8



def held_out(n_rows: int, fraction: float, seed: int, first_row: int = 0) -> np.ndarray:
    """Boolean mask of the held-out rows among rows first_row ... first_row + n_rows - 1: row i is
    held out when a hash of (seed, i) falls below `fraction` of its range (about fraction * n rows,
    the same rows whoever asks)."""
    check_fraction(fraction)
    rows = np.arange(first_row, first_row + n_rows, dtype=np.uint64)
    with np.errstate(over="ignore"):
        mixed = splitmix64(rows ^ splitmix64(np.array([seed], dtype=np.uint64))[0])
    return (mixed >> np.uint64(11)).astype(np.float64) * 2.0 ** -53 < fraction


def check_fraction(fraction) -> None:
    check("validation_fraction", fraction, FRACTION)


def correct_decisions(S: np.ndarray, truth: np.ndarray) -> int:
    """Rows whose decision values S (n x C) decode to the class of their one-vs-all +-1 targets:
    argmax for several columns, the sign for one (the estimators' own decoding)."""
    if truth.shape[1] == 1:
        return int(np.count_nonzero((S[:, 0] > 0) == (truth[:, 0] > 0)))
    return int(np.count_nonzero(S.argmax(axis=1) == truth.argmax(axis=1)))


def squared_error(S: np.ndarray, truth: np.ndarray) -> float:
    """The squared error of decision values S against centred targets."""
    return float(np.sum((S - truth) ** 2))


def classification_score(truth: np.ndarray) -> Callable[[np.ndarray], float]:
    """Accuracy of decision values S (n x C) against one-vs-all +-1 targets (correct_decisions / n:
    the very float np.mean gives, so a sum of counts over partitions scores alike)."""
    return lambda S: correct_decisions(S, truth) / truth.shape[0]


def mean_sign_accuracy(truth: np.ndarray) -> Callable[[np.ndarray], float]:
    """Mean over one-vs-all columns of each column's sign accuracy (a CG pass holding some classes)."""
    positive = truth > 0
    return lambda S: float(np.mean((S > 0) == positive))


def regression_score(truth: np.ndarray) -> Callable[[np.ndarray], float]:
    """Minus the squared error of decision values S against centred targets (higher is better)."""
    return lambda S: -squared_error(S, truth)


class ValidationStopping:
    """ridge_cg's callback: scores each iterate on the held-out rows' features `Z_val`, remembers the
    best (the earlier one on a tie) with a copy of it (`best_coef`, D x C, the iterate the final steps
    go on from) and stops after `patience` iterations without a better one."""

    def __init__(self, Z_val, score: Callable[[np.ndarray], float], patience: int = PATIENCE):
        self.Z_val = Z_val
        self.score = score
        self.patience = patience
        self.best_score = -np.inf
        self.best_iteration = 0
        self.best_coef: np.ndarray | None = None
        self.scores: list[float] = []

    def start(self, W0: np.ndarray) -> None:
        """Score the starting point (zero weights: the intercept alone), so a solve that only
        gets worse keeps it."""
        self(0, W0)

    def evaluate(self, W: np.ndarray) -> float:
        """The score of iterate W (higher is better); a distributed fit reduces it over the workers."""
        return self.score(self.Z_val.matvec(W))

    def __call__(self, iteration: int, W: np.ndarray) -> bool:
        value = self.evaluate(W)
        self.scores.append(value)
        if value > self.best_score:
            self.best_score, self.best_iteration = value, iteration
            if self.best_coef is None or self.best_coef.shape != W.shape:
                self.best_coef = W.copy()
            else:
                self.best_coef[...] = W
            return False
        return iteration - self.best_iteration >= self.patience
