"""Targets for ridge: real values, +-1 (binary) or one-vs-all +-1 columns (multi-class)."""

from __future__ import annotations

import numpy as np


def encode(y: np.ndarray, task: str):
    """Return (Y as an N x C float matrix, classes or None)."""
    if task == "regression":
        return np.asarray(y, dtype=np.float64).reshape(-1, 1), None
    classes = np.unique(y)
    if len(classes) < 2:
        raise ValueError(f"classification needs at least two classes in y, got 1 class: {classes.tolist()}")
    if len(classes) == 2:
        return np.where(y == classes[1], 1.0, -1.0).reshape(-1, 1), classes
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
