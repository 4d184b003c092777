"""Early stopping across workers: the held-out rows of a distributed fit, and the stopping rule's
score reduced over the partitions.

Which rows are held out is a pure function of (seed, global row number) (solvers.stopping.held_out),
so each partition splits its own rows, knowing only its first row's number: the union is the
single-machine split. As on one machine, the feature map is fitted on every row; each partition then
cuts its Z and targets into the rows the search trains on and the held-out rows, which stay on their
worker. Each iterate W of the search goes to every partition, which returns its held-out rows'
correct decisions (classification) or squared error (regression) and their count; the client adds
them in partition order, so the score is the single-machine one (a count exactly, an error to
rounding) and so is every decision of the rule (solvers.stopping.ValidationStopping). From the
search's best iterate, CG goes on over every row for the single-machine fit's final steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbrepro.solvers.stopping import ValidationStopping, correct_decisions, held_out, squared_error


@dataclass(eq=False)
class SplitPartition:
    """On a worker: a partition's Z and encoded targets cut into the rows the search trains on and the
    held-out rows (`held`: the mask over the partition's rows, in row order)."""

    held: np.ndarray
    fit: object
    fit_targets: np.ndarray
    held_matrix: object
    held_targets: np.ndarray


def split_matrix(Z, Y: np.ndarray, fraction: float, seed: int, first_row: int) -> SplitPartition:
    """On a worker: cut the partition holding rows first_row ... first_row + n - 1 as the single-machine
    fit cuts all its rows (copies: the partition's Z stays as it was, so a retried task gives the same)."""
    held = held_out(Z.shape[0], fraction, seed, first_row)
    return SplitPartition(held, Z.rows(~held), Y[~held], Z.rows(held), Y[held])


def fit_matrix(split: SplitPartition):
    return split.fit


def fit_targets(split: SplitPartition) -> np.ndarray:
    return split.fit_targets


def split_counts(split: SplitPartition) -> tuple[int, int]:
    """(rows the search trains on, held-out rows) of the partition."""
    n_held = int(np.count_nonzero(split.held))
    return split.held.shape[0] - n_held, n_held


def held_score(split: SplitPartition, W: np.ndarray, y_mean: np.ndarray, task: str) -> tuple:
    """On a worker: (correct decisions or squared error, held-out rows) of iterate W on this
    partition's held-out rows, against targets centred by y_mean (the single-machine rule's terms)."""
    truth = split.held_targets - y_mean
    if truth.shape[0] == 0:
        return (0.0 if task == "regression" else 0), 0
    S = split.held_matrix.matvec(W)
    part = squared_error(S, truth) if task == "regression" else correct_decisions(S, truth)
    return part, truth.shape[0]


class DistributedValidation(ValidationStopping):
    """ValidationStopping whose score of an iterate is summed over the partitions' held-out rows:
    accuracy = correct decisions / held-out rows, or minus the squared error."""

    def __init__(self, runner, splits: list, y_mean: np.ndarray, task: str, patience: int):
        super().__init__(None, None, patience)
        self.runner = runner
        self.splits = splits
        self.y_mean = y_mean
        self.task = task

    def evaluate(self, W: np.ndarray) -> float:
        futures = [self.runner.submit(held_score, split, W, self.y_mean, self.task) for split in self.splits]
        shares = self.runner.gather(futures, f"scoring iterate {len(self.scores)} on the held-out rows")
        total, rows = shares[0]
        for part, n in shares[1:]:  # in partition order: the same sum on every run
            total += part
            rows += n
        return -float(total) if self.task == "regression" else total / rows
