"""Performance metrics of docs/design.md §2: relative error (regression), accuracy % (classification)."""

import numpy as np


def relative_error(y_true, y_pred) -> float:
    """||y - y_hat||_2 / ||y||_2."""
    y_true = np.asarray(y_true, dtype=np.float64)
    return float(np.linalg.norm(y_true - np.asarray(y_pred)) / np.linalg.norm(y_true))


def accuracy_percent(y_true, y_pred) -> float:
    return float(100.0 * np.mean(np.asarray(y_true) == np.asarray(y_pred)))


def metric_name(task: str) -> str:
    return "rel_error" if task == "regression" else "accuracy"


def score(task: str, y_true, y_pred) -> float:
    return relative_error(y_true, y_pred) if task == "regression" else accuracy_percent(y_true, y_pred)
