"""Targets for ridge: real values, +-1 (binary) or one-vs-all +-1 columns (multi-class)."""

from __future__ import annotations

import numpy as np

from rbrepro.errors import InvalidParameter

#: How one-vs-all columns map to labels: "sorted" (column k is the k-th distinct label) or
#: "authors" (column k is the label k, k = 0 ... C-1, as the authors' ConvertYtrain assumed; a
#: label outside 0 ... C-1, such as letter's 26, is -1 in every column and is never predicted).
LABEL_LAYOUTS = ("sorted", "authors")


def encode(y: np.ndarray, task: str, layout: str = "sorted", classes=None):
    """Return (Y as an N x C float matrix, classes or None). `classes`: the labels of every row when y
    holds only some of them (a partition of a distributed fit), else np.unique(y)."""
    if task == "regression":
        return np.asarray(y, dtype=np.float64).reshape(-1, 1), None
    classes = np.unique(y) if classes is None else np.asarray(classes)
    if len(classes) < 2:
        raise InvalidParameter(f"classification needs at least two classes in y, got 1 class: {classes.tolist()}")
    if len(classes) == 2:
        return np.where(y == classes[1], 1.0, -1.0).reshape(-1, 1), classes
    if layout == "authors":
        columns = np.arange(len(classes))
        return np.where(np.asarray(y).reshape(-1, 1) == columns, 1.0, -1.0), columns.astype(classes.dtype)
    Y = -np.ones((len(y), len(classes)))
    Y[np.arange(len(y)), np.searchsorted(classes, y)] = 1.0
    return Y, classes


def decode(scores: np.ndarray, classes):
    """Predictions from decision values: as is, sign, or one-vs-all argmax."""
    if classes is None:
        return scores[:, 0]
    if len(classes) == 2:  # a positive decision value means classes[1], as in scikit-learn
        return np.where(scores[:, 0] > 0, classes[1], classes[0])
    return classes[np.argmax(scores, axis=1)]


def authors_accuracy(y_true: np.ndarray, scores: np.ndarray, classes) -> float:
    """Accuracy in % as the authors' `Performance` scored it: binary y * f > 0, so a tie (f = 0)
    is wrong; multi-class the argmax column's label (layout "authors") against the label."""
    scores = np.asarray(scores)
    y_true = np.asarray(y_true)
    if len(classes) == 2:
        sign = np.where(y_true == classes[1], 1.0, -1.0)
        return float(100.0 * np.mean(sign * scores.reshape(-1) > 0))
    return float(100.0 * np.mean(classes[np.argmax(scores, axis=1)] == y_true))
