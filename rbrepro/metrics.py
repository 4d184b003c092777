"""Performance metrics of docs/design.md §2 (relative error for regression, accuracy % for
classification), which way each is better, and the one rule that picks the best sigma.

The statistic over repeated runs (seeds) is the median everywhere a number is read from rows:
sigma selection in a sweep, `--sigma auto`, the report's claims, its tables and the figures.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

#: each metric's name, and whether a higher value is better
HIGHER_IS_BETTER = {"accuracy": True, "rel_error": False}


def relative_error(y_true, y_pred) -> float:
    """The regression metric: ||y - y_hat||_2 / ||y||_2 (lower is better).

    Examples
    --------
    >>> from rbrepro.metrics import relative_error
    >>> relative_error([3.0, 4.0], [3.0, 4.0])
    0.0
    >>> relative_error([3.0, 4.0], [3.0, 3.0])
    0.2
    """
    y_true = np.asarray(y_true, dtype=np.float64)
    norm = np.linalg.norm(y_true)
    if norm == 0 or not np.isfinite(norm):  # targets all 0 (or none): undefined, said as NaN (`stated`)
        return float("nan")
    return float(np.linalg.norm(y_true - np.asarray(y_pred)) / norm)


def stated(metric: str, value: float, unit: str = "") -> str:
    """A metric's value for a person to read; NaN says why (a relative error of targets all 0).

    Examples
    --------
    >>> from rbrepro.metrics import stated
    >>> stated("rel_error", 0.25), stated("rel_error", float("nan"))
    ('0.25', 'NaN (undefined: the targets scored are all 0)')
    """
    return f"{value:.4g}{unit}" if value == value else f"NaN ({undefined_because(metric)})"


def undefined_because(metric: str) -> str:
    """Why a metric's value is NaN, in words (`stated`, and the JSON row's note beside a null)."""
    return "undefined: the targets scored are all 0" if metric == "rel_error" else "undefined: no rows scored"


def accuracy_percent(y_true, y_pred) -> float:
    """The classification metric: the share of labels predicted right, in % (higher is better).

    Examples
    --------
    >>> from rbrepro.metrics import accuracy_percent
    >>> accuracy_percent([1, -1, 1, 1], [1, -1, -1, 1])
    75.0
    """
    return float(100.0 * np.mean(np.asarray(y_true) == np.asarray(y_pred)))


def metric_name(task: str) -> str:
    """The metric of a task: "rel_error" for regression, "accuracy" for binary and multiclass.

    Examples
    --------
    >>> from rbrepro.metrics import metric_name
    >>> metric_name("regression"), metric_name("multiclass")
    ('rel_error', 'accuracy')
    """
    return "rel_error" if task == "regression" else "accuracy"


def score(task: str, y_true, y_pred) -> float:
    """The task's metric (`metric_name`) of predictions `y_pred` against `y_true`.

    Examples
    --------
    >>> from rbrepro.metrics import score
    >>> score("binary", [1, -1], [1, 1]), score("regression", [1.0, 1.0], [1.0, 1.0])
    (50.0, 0.0)
    """
    return relative_error(y_true, y_pred) if task == "regression" else accuracy_percent(y_true, y_pred)


def higher_is_better(metric: str) -> bool:
    """True for accuracy, False for relative error (an unknown metric name is refused).

    Examples
    --------
    >>> from rbrepro.metrics import higher_is_better
    >>> higher_is_better("accuracy"), higher_is_better("rel_error")
    (True, False)
    """
    try:
        return HIGHER_IS_BETTER[metric]
    except KeyError:
        raise ValueError(f"unknown metric {metric!r}; known: {', '.join(HIGHER_IS_BETTER)}") from None


def seed_statistic(values: Iterable[float]) -> float:
    """The statistic of repeated runs (seeds) at one setting: their median (NaN for none).

    Examples
    --------
    >>> from rbrepro.metrics import seed_statistic
    >>> seed_statistic([97.1, 96.5, 97.4])
    97.1
    """
    values = [float(v) for v in values]
    return float(np.median(values)) if values else float("nan")


#: two sigmas within this relative distance (absolute below 1) are the same grid point: a value read back
#: from a CSV, a config or the command line against the grid's own
SAME_SIGMA = 1e-9


def same_sigma(a, b):
    """Whether sigma(s) `a` stand for the grid point `b` (SAME_SIGMA): a bool, or an array of them."""
    return np.abs(np.asarray(a, dtype=float) - b) <= SAME_SIGMA * np.maximum(1.0, np.abs(b))


def best_sigma(scores: Mapping[float, Iterable[float]], metric: str) -> float:
    """sigma -> the metric of each run at it: the sigma with the best median (`seed_statistic`), the
    smaller sigma on a tie; sigmas whose median is not finite are passed over (NaN: none is finite).

    Examples
    --------
    >>> from rbrepro.metrics import best_sigma
    >>> best_sigma({0.1: [91.0, 92.5, 90.0], 0.3: [95.0, 94.0, 96.5], 1.0: [93.0, 97.0, 92.0]}, "accuracy")
    0.3
    >>> best_sigma({0.1: [0.30, 0.32], 1.0: [0.25, 0.24]}, "rel_error")
    1.0
    """
    sign = 1.0 if higher_is_better(metric) else -1.0
    finite = {float(s): seed_statistic(v) for s, v in scores.items()}
    finite = {s: m for s, m in finite.items() if np.isfinite(m)}
    if not finite:
        return float("nan")
    return max(sorted(finite), key=lambda s: (sign * finite[s], -s))
