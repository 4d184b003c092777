"""A saved model applied to new rows: LIBSVM or CSV, with labels or without, predictions and the
decision values behind them, and the metric only where the file's labels allow one.

A LIBSVM line without a label (its first token is an `index:value` pair) is read as unlabeled; so
is a CSV with exactly as many columns as the model has features (one more: the label is in
`label_column`, the first by default). Labels outside the model's classes are predicted like any
other row; the metric is then left out and the reason given.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from rbrepro import metrics
from rbrepro.data.checks import looks_like_classes
from rbrepro.data.files import ParseError, open_text
from rbrepro.data.libsvm import parse_libsvm
from rbrepro.models import targets
from rbrepro.models.persist import ModelFileError, load_model

#: a placeholder label given to unlabeled LIBSVM lines (never scored)
_NO_LABEL = b"0 "


@dataclass
class Predictions:
    """What `apply_model` returns: one prediction per row, the decision values (classifiers: one
    column per class, or one for two classes; regressors: the prediction), and the metric."""
    predicted: np.ndarray
    scores: np.ndarray
    classes: np.ndarray | None
    labelled: bool
    metric: str
    value: float | None        # None: no labels, or labels the model does not know
    why_no_metric: str = ""
    notes: list = None         # one line each: padding, a task the labels do not fit

    def __post_init__(self):
        self.notes = list(self.notes or [])


class _Unlabelled:
    """A LIBSVM stream whose lines lack a label: the placeholder label goes before each line's first
    non-blank byte, also when a block boundary falls inside the line's leading blanks."""

    def __init__(self, fh):
        self._fh = fh
        self._waiting = True  # at a line that has shown no content yet

    def read(self, size: int) -> bytes:
        data = self._fh.read(size)
        if not data:
            return data
        pieces = data.split(b"\n")
        for i, piece in enumerate(pieces):
            waiting = self._waiting if i == 0 else True
            stripped = piece.lstrip()
            if waiting and stripped:
                at = len(piece) - len(stripped)
                pieces[i] = piece[:at] + _NO_LABEL + piece[at:]
                waiting = False
            self._waiting = waiting
        return b"\n".join(pieces)


def _first_token(path: Path) -> bytes:
    with open_text(path) as fh:
        head = fh.read(1 << 16)
    for line in head.splitlines():
        if line.strip() and not line.lstrip().startswith(b"#"):
            return line.split()[0]
    return b""


#: a LIBSVM file narrower than the model whose rows fill at least this share of its own width is a
#: dense file of another width (refused), not a sparse file that omits trailing zero features
DENSE_SHARE = 0.9


def _narrower(path: Path, X, n_features: int, pad: bool) -> str:
    """A LIBSVM file's rows (parsed at the model's width; a wider index is the parser's error, naming
    its line) that name fewer features than the model takes: fine when asked (`pad`) or when the file
    is sparse and plausibly omits trailing zero features (said in the returned note); a dense file
    of another width is refused naming both widths."""
    if sp.issparse(X):
        width, nnz = (int(X.indices.max()) + 1 if X.nnz else 0), X.nnz
    else:
        used = np.flatnonzero(np.any(X != 0, axis=0))
        width, nnz = (int(used[-1]) + 1 if len(used) else 0), int(np.count_nonzero(X))
    if width == n_features:
        return ""
    filled = nnz / max(X.shape[0] * max(width, 1), 1)
    if not pad and filled >= DENSE_SHARE:
        raise ModelFileError(f"{path}: rows of {width} features; the model takes {n_features} (is this the model's "
                             f"data? --pad takes the missing features as zeros)")
    return f"{path}: rows name features up to {width} of the model's {n_features}; the rest are taken as zeros"


def read_rows(path: str | Path, n_features: int, label_column: int | None = 0,
              pad: bool = False) -> tuple[np.ndarray, np.ndarray | None, str]:
    """(X, labels or None, a note on padding or "") of a LIBSVM or CSV file (by suffix, under any
    compression suffix), checked against the model's width `n_features`."""
    path = Path(path)
    suffixes = [s.lower() for s in path.suffixes if s.lower() not in (".bz2", ".xz", ".gz")]
    if suffixes and suffixes[-1] == ".csv":
        from rbrepro.data.delimited import _data_lines, parse_csv

        lines, _ = _data_lines(path)
        width = lines[-1].count(",") + 1 if lines else 0
        unlabelled = width == n_features
        if width not in (n_features, n_features + 1) and not (pad and width < n_features + 1):
            raise ModelFileError(f"{path}: {width} columns; the model takes {n_features} features ({n_features} "
                                 f"columns without a label, {n_features + 1} with one; --pad takes missing "
                                 f"features as zeros)")
        parsed = parse_csv(path, n_features, label_column=None if unlabelled else label_column)
        if unlabelled:
            return parsed.X, None, ""
        labels = np.asarray(parsed.classes)[parsed.y.astype(np.int64)] if parsed.classes else parsed.y
        note = f"{path}: {width - 1} feature columns padded to the model's {n_features}" if width - 1 < n_features else ""
        return parsed.X, labels, note
    from rbrepro.data import libsvm

    if b":" in _first_token(path):  # an index:value pair first: no labels
        with open_text(path) as raw:
            X, y = libsvm._parse_stream(_Unlabelled(raw), n_features, str(path), libsvm.BLOCK_BYTES)
        return X, None, _narrower(path, X, n_features, pad)
    parsed = parse_libsvm(path, n_features)
    return parsed.X, parsed.y, _narrower(path, parsed.X, n_features, pad)


class SavedModel:
    """A saved model as `rbrepro predict` applies it: the estimator, the scaling its training rows
    had, and what its header says (task, classes, width, the training file's label column). It
    predicts on raw rows, so Python and the command line give the same numbers.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn.datasets import load_digits
    >>> from rbrepro.models import NystromClassifier, load
    >>> X, y = load_digits(return_X_y=True)
    >>> model = NystromClassifier(n_components=64, sigma=0.1, random_state=0).fit(X / 16, y)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     saved = load(model.save(os.path.join(folder, "digits.npz")))
    >>> saved.task, saved.n_features_in_, len(saved.classes_)
    ('multiclass', 64, 10)
    >>> saved.metric(X / 16, y) > 90  # the paper's metric: accuracy in %
    True
    """

    def __init__(self, estimator, header: dict, scaler=None, path: str | Path | None = None):
        self.estimator = estimator
        self.header = header
        self.scaler = scaler
        self.path = Path(path) if path is not None else None

    @property
    def task(self) -> str:
        """The task, as data say it (vocabulary.TASKS): "regression", "binary" or "multiclass"."""
        task = self.header["task"]
        if task not in ("regression", "binary", "multiclass"):  # written by Python before: "classification"
            task = "binary" if self.classes_ is not None and len(self.classes_) == 2 else "multiclass"
        return task

    @property
    def n_features_in_(self) -> int:
        return int(self.header["n_features"])

    @property
    def classes_(self):
        return getattr(self.estimator, "classes_", None)

    @property
    def _estimator_step(self):
        """The rbrepro estimator (the last step of a saved Pipeline)."""
        return self.estimator.steps[-1][1] if hasattr(self.estimator, "steps") else self.estimator

    @property
    def label_column(self) -> int:
        """The label column of the CSV file it was trained on (0 when it was not a CSV)."""
        return int(self.header.get("label_column") or 0)

    def _rows(self, X):
        """Raw rows as the estimator takes them: any array-like (lists, dense, scipy sparse), two
        dimensions (a single row is refused with how to pass it), the model's width, scaled as the
        training rows were."""
        where = self.path or "the model"
        if not sp.issparse(X):
            X = np.asarray(X, dtype=np.float64) if not isinstance(X, np.ndarray) else X
            if X.ndim == 1:
                raise ModelFileError(f"{where}: a 1-D array of {X.shape[0]} values; rows are 2-D: pass one row as "
                                     f"[row] or X.reshape(1, -1), a column of values as X.reshape(-1, 1)")
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ModelFileError(f"{where}: rows of {X.shape[-1]} features; the model takes {self.n_features_in_}")
        return self.scaler.transform(X) if self.scaler is not None else X

    def predict(self, X):
        """Predictions for raw rows (scaled here as the training rows were)."""
        return self.estimator.predict(self._rows(X))

    def decision_function(self, X):
        """Decision values (classifiers) or predictions (regressors) for raw rows."""
        return self._scored(X)[0]

    def _scored(self, X):
        """(decision values, predictions) of raw rows from one scaling and one featurization:
        a classifier's predictions are decoded from its decision values, as its own predict does."""
        X = self._rows(X)
        if self.classes_ is None:
            predicted = self.estimator.predict(X)
            return predicted, predicted
        scores = np.asarray(self.estimator.decision_function(X))
        return scores, targets.decode(scores.reshape(len(scores), -1), self.classes_)

    def score(self, X, y) -> float:
        """As scikit-learn scores: the mean accuracy (a fraction) for a classifier, R^2 for a regressor,
        on raw rows. `metric(X, y)` gives the paper's metric instead."""
        return float(self.estimator.score(self._rows(X), np.asarray(y)))

    def metric(self, X, y) -> float:
        """The paper's metric (docs/design.md §2): accuracy in %, or the relative error (lower is better)."""
        return metrics.score("regression" if self.classes_ is None else "binary", np.asarray(y), self.predict(X))

    def predict_file(self, data_path: str | Path, label_column: int | None = None, pad: bool = False) -> Predictions:
        """Predict every row of a LIBSVM or CSV file (`label_column`: the training file's by default);
        score against the file's labels where it has them and they are the model's."""
        column = self.label_column if label_column is None else label_column
        X, y, note = read_rows(data_path, self.n_features_in_, column, pad)
        classes = self.classes_
        try:
            scores, predicted = self._scored(X)
        except (TypeError, ValueError, IndexError, KeyError, AttributeError) as exc:
            raise ModelFileError(f"{self.path}: the model cannot be applied to {data_path} "
                                 f"({type(exc).__name__}: {exc})") from None
        notes = [note] if note else []
        value, why = None, ""
        if y is None:
            why = "the file has no labels"
        elif classes is not None and len(foreign := np.setdiff1d(np.unique(y), classes)):
            why = (f"labels {foreign[:5].tolist()} are not classes of the model (trained on {self.header['dataset']}, "
                   f"classes {classes[:10].tolist()})")
        else:
            value = metrics.score(self.task, y, predicted)
            if classes is None and looks_like_classes(y):
                notes.append(f"{data_path}: its labels look like classes ({len(np.unique(y))} distinct whole "
                             f"numbers), but the model is a regression: the relative error treats them as numbers")
        return Predictions(predicted, np.asarray(scores), classes, y is not None, metrics.metric_name(self.task), value,
                           why, notes)


def load(model_path: str | Path) -> SavedModel:
    """The model saved at `model_path`, whole (estimator, scaling, header); a damaged or crafted file
    is refused, naming it."""
    estimator, header, scaler = load_model(model_path)
    return SavedModel(estimator, header, scaler, model_path)


def apply_model(model_path: str | Path, data_path: str | Path, label_column: int | None = None,
                pad: bool = False) -> Predictions:
    """Predict every row of `data_path` with the model saved at `model_path` (scaled as its training
    data was); score against the file's labels where it has them and they are the model's."""
    return load(model_path).predict_file(data_path, label_column, pad)


def prediction_lines(result: Predictions, task: str, with_scores: bool) -> str:
    """One line per row: the prediction, then (with_scores) its decision values, comma-separated."""
    fmt = "{:.10g}" if task == "regression" else "{:g}" if result.predicted.dtype.kind in "biuf" else "{}"
    if not with_scores:
        return "".join(fmt.format(v) + "\n" for v in result.predicted)
    scores = result.scores.reshape(len(result.predicted), -1)
    return "".join(fmt.format(v) + "," + ",".join(f"{s:.6g}" for s in row) + "\n"
                   for v, row in zip(result.predicted, scores))


__all__ = ["ParseError", "Predictions", "SavedModel", "apply_model", "load", "prediction_lines", "read_rows"]
