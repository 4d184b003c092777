"""Early stopping across workers: the held-out rows of a distributed fit, and the stopping rule's
score reduced over the partitions (issue 34 with issue 35's early stopping).

Which rows are held out is a pure function of (seed, global row number) (solvers.stopping.held_out),
so each partition splits its own rows, knowing only its first row's number: the union is the
single-machine split. The fit rows build the features and the solve, exactly as the single-machine
fit's rows that are not held out; the held-out rows are featurized on their worker with the fitted
map and stay there. Each iterate W goes to every partition, which returns its held-out rows'
correct decisions (classification) or squared error (regression) and their count; the client adds
them in partition order, so the score is the single-machine one (a count exactly, an error to
rounding) and so is every decision of the rule (solvers.stopping.ValidationStopping).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbrepro.models.feature_ridge import features_of
from rbrepro.solvers.operator import DenseOperator
from rbrepro.solvers.stopping import ValidationStopping, correct_decisions, held_out, squared_error


@dataclass(eq=False)
class SplitPartition:
    """On a worker: a partition's rows and encoded targets cut into fit rows and held-out rows
    (`held`: the mask over the partition's rows, in row order)."""

    held: np.ndarray
    fit: tuple
    fit_targets: np.ndarray
    held_rows: tuple
    held_targets: np.ndarray


def split_partition(part, Y: np.ndarray, fraction: float, seed: int, first_row: int) -> SplitPartition:
    """On a worker: cut the partition holding rows first_row ... first_row + n - 1 as the single-machine
    fit cuts all its rows (new arrays: the partition stays as it was, so a retried task gives the same)."""
    X, y = part
    held = held_out(X.shape[0], fraction, seed, first_row)
    keep = ~held
    return SplitPartition(held, (X[keep], y[keep]), Y[keep], (X[held], y[held]), Y[held])


def fit_rows(split: SplitPartition) -> tuple:
    return split.fit


def fit_targets(split: SplitPartition) -> np.ndarray:
    return split.fit_targets


def held_mask(split: SplitPartition) -> np.ndarray:
    return split.held


def split_counts(split: SplitPartition) -> tuple[int, int]:
    """(fit rows, held-out rows) of the partition."""
    n_held = int(np.count_nonzero(split.held))
    return split.held.shape[0] - n_held, n_held


def held_matrix(split: SplitPartition, features):
    """On a worker: Z of the held-out rows with the fitted map (feature_ridge.features_of, as the
    single-machine fit's `_transform`: RB's bins unseen in the fit rows give no entry), or None for
    a partition that holds none out."""
    X = split.held_rows[0]
    if X.shape[0] == 0:
        return None
    Z = features_of(features, X)
    return Z if hasattr(Z, "matvec") else DenseOperator(Z)


def held_score(Z_held, split: SplitPartition, W: np.ndarray, y_mean: np.ndarray, task: str) -> tuple:
    """On a worker: (correct decisions or squared error, held-out rows) of iterate W on this
    partition's held-out rows, against targets centred by y_mean (the single-machine rule's terms)."""
    if Z_held is None:
        return (0.0 if task == "regression" else 0), 0
    S = Z_held.matvec(W)
    truth = split.held_targets - y_mean
    part = squared_error(S, truth) if task == "regression" else correct_decisions(S, truth)
    return part, truth.shape[0]


def train_scores_part(Z_fit, Z_held, split: SplitPartition, W: np.ndarray) -> np.ndarray:
    """On a worker: Z W for every row of the partition in row order, the held-out rows' from their
    own features (the single-machine fit's train_scores_ before y_mean is added)."""
    out = np.zeros((split.held.shape[0], W.shape[1]))
    if Z_fit.shape[0]:
        out[~split.held] = Z_fit.matvec(W)
    if Z_held is not None:
        out[split.held] = Z_held.matvec(W)
    return out


class DistributedValidation(ValidationStopping):
    """ValidationStopping whose score of an iterate is summed over the partitions' held-out rows:
    accuracy = correct decisions / held-out rows, or minus the squared error."""

    def __init__(self, runner, held_matrices: list, splits: list, y_mean: np.ndarray, task: str, patience: int):
        super().__init__(None, None, patience)
        self.runner = runner
        self.held_matrices = held_matrices
        self.splits = splits
        self.y_mean = y_mean
        self.task = task

    def evaluate(self, W: np.ndarray) -> float:
        futures = [self.runner.submit(held_score, Z, split, W, self.y_mean, self.task)
                   for Z, split in zip(self.held_matrices, self.splits)]
        shares = self.runner.gather(futures, f"scoring iterate {len(self.scores)} on the held-out rows")
        total, rows = shares[0]
        for part, n in shares[1:]:  # in partition order: the same sum on every run
            total += part
            rows += n
        return -float(total) if self.task == "regression" else total / rows
