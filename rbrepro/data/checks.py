"""What parsed rows must satisfy before any model sees them: content no model can use (no feature,
labels whose squares overflow, a width far beyond the rows), and the task the labels imply or the
user says (docs/design.md §3). Leaf helpers of data.load."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from rbrepro.data.registry import DatasetSpec
from rbrepro.errors import InvalidParameter, RbreproError
from rbrepro.vocabulary import TASKS


class ContentError(RbreproError, ValueError):
    """Parsed data that does not match what the registry or the manifest promises."""


#: the largest |label| accepted: squares and sums of squares of labels stay finite in float64
LABEL_LIMIT = 1e100
#: a width this large must be backed by the data (or declared with n_features): see check_parsed
SUSPECT_WIDTH = 1_000_000


def check_parsed(where: str, parsed, declared_width: int) -> None:
    """What the parser accepts line by line but no model can use: no feature at all, labels whose
    squares overflow, or a width (the largest feature index) far beyond what the rows hold."""
    X, y = parsed.X, np.asarray(parsed.y)
    if X.shape[1] == 0 and not declared_width:
        raise ContentError(f"{where}: no line names a feature (a line is `label index:value ...`); every line "
                           f"has a label only")
    if not parsed.classes and len(y):
        bad = np.flatnonzero(~(np.abs(y) <= LABEL_LIMIT))
        if len(bad):
            raise ContentError(f"{where}: row {bad[0] + 1} has label {y[bad[0]]:g}, beyond +-{LABEL_LIMIT:g} (its "
                               f"square would overflow); rescale the labels")
    nnz = X.nnz if sp.issparse(X) else X.size
    if not declared_width and X.shape[1] > SUSPECT_WIDTH and X.shape[1] > 100 * max(nnz, 1):
        row = int(np.searchsorted(X.indptr, np.flatnonzero(X.indices == X.shape[1] - 1)[0], side="right")) \
            if sp.issparse(X) else 0
        raise ContentError(f"{where}: feature index {X.shape[1]} (row {row}) makes the data {X.shape[1]:,} "
                           f"features wide, while its {X.shape[0]} row(s) hold {nnz} value(s); every model keeps "
                           f"arrays per feature (RB: 24 bytes x R each). If the index is right, declare "
                           f"n_features in a datasets file")


def with_task(spec: DatasetSpec, task: str) -> DatasetSpec:
    """The spec with the task the user said; a built-in dataset keeps its own (a different one is refused)."""
    if task == "auto" or task == spec.task:
        return spec
    if task not in TASKS:
        raise InvalidParameter(f"task {task!r} is not one of {', '.join(TASKS)} or auto")
    if spec.source != "user":
        raise InvalidParameter(f"--task {task}: {spec.name} is a built-in {spec.task} dataset; --task is for your "
                               f"own files")
    return replace(spec, task=task)


def task_of(spec: DatasetSpec, y: np.ndarray, class_names: tuple[str, ...]) -> str:
    """The registry's task, else inferred from the labels (class names: classification)."""
    if class_names:
        if spec.task == "regression":
            raise ContentError(f"{spec.name}: its labels are class names ({', '.join(class_names[:3])}, ...), "
                               "but its task is regression")
        return spec.task if spec.task != "auto" else "binary" if len(class_names) == 2 else "multiclass"
    return spec.task if spec.task != "auto" else infer_task(y, spec.name)


#: whole-number labels with at most this many distinct values are classes when no task is said
MAX_GUESSED_CLASSES = 20
#: ... and with more than this many, a quantity (regression); in between, the user must say which
MIN_GUESSED_QUANTITIES = 1000


def looks_like_classes(y: np.ndarray) -> bool:
    """Whole-number labels with few enough distinct values to be classes (MAX_GUESSED_CLASSES)."""
    y = np.asarray(y, dtype=np.float64)
    return bool(np.all(np.isfinite(y)) and np.all(y == np.round(y))) and len(np.unique(y)) <= MAX_GUESSED_CLASSES


def infer_task(y: np.ndarray, name: str = "the data") -> str:
    """binary / multiclass / regression from the labels; whole numbers with more distinct values than
    classes usually have but fewer than a quantity usually has are refused, naming --task."""
    integral = np.all(np.isfinite(y)) and np.all(y == np.round(y))
    n = len(np.unique(y))
    if integral and n == 2:
        return "binary"
    if looks_like_classes(y):
        return "multiclass"
    if integral and n <= MIN_GUESSED_QUANTITIES:
        raise ContentError(f"{name}: its labels are {n} distinct whole numbers ({np.min(y):g} to {np.max(y):g}): "
                           f"classes or a quantity? Say --task regression or --task multiclass (task: in a "
                           f"datasets file)")
    return "regression"
