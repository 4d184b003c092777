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

from rbrepro import metrics
from rbrepro.data.files import open_text
from rbrepro.data.libsvm import ParseError, parse_libsvm
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


def read_rows(path: str | Path, n_features: int, label_column: int | None = 0) -> tuple[np.ndarray, np.ndarray | None]:
    """(X, labels or None) of a LIBSVM or CSV file (by suffix, under any compression suffix)."""
    path = Path(path)
    suffixes = [s.lower() for s in path.suffixes if s.lower() not in (".bz2", ".xz", ".gz")]
    if suffixes and suffixes[-1] == ".csv":
        from rbrepro.data.delimited import _data_lines, parse_csv

        lines, _ = _data_lines(path)
        width = lines[-1].count(",") + 1 if lines else 0
        unlabelled = width == n_features
        parsed = parse_csv(path, n_features, label_column=None if unlabelled else label_column)
        if unlabelled:
            return parsed.X, None
        return parsed.X, np.asarray(parsed.classes)[parsed.y.astype(np.int64)] if parsed.classes else parsed.y
    if b":" in _first_token(path):  # an index:value pair first: no labels
        from rbrepro.data import libsvm

        with open_text(path) as raw:
            X, y = libsvm._parse_stream(_Unlabelled(raw), n_features, str(path), libsvm.BLOCK_BYTES)
        return X, None
    parsed = parse_libsvm(path, n_features)
    return parsed.X, parsed.y


def apply_model(model_path: str | Path, data_path: str | Path, label_column: int | None = 0) -> Predictions:
    """Predict every row of `data_path` with the model saved at `model_path` (scaled as its training
    data was); score against the file's labels where it has them and they are the model's."""
    fitted, header, scaler = load_model(model_path)
    X, y = read_rows(data_path, header["n_features"], label_column)
    X = scaler.transform(X) if scaler is not None else X
    task = header["task"]
    classes = getattr(fitted, "classes_", None)
    try:
        scores = fitted.decision_function(X) if classes is not None else fitted.predict(X)
        predicted = fitted.predict(X)
    except (TypeError, ValueError, IndexError, KeyError, AttributeError) as exc:
        raise ModelFileError(f"{model_path}: the model cannot be applied to {data_path} "
                             f"({type(exc).__name__}: {exc})") from None
    value, why = None, ""
    if y is None:
        why = "the file has no labels"
    elif classes is not None and len(foreign := np.setdiff1d(np.unique(y), classes)):
        why = (f"labels {foreign[:5].tolist()} are not classes of the model (trained on {header['dataset']}, classes "
               f"{classes[:10].tolist()})")
    else:
        value = metrics.score(task, y, predicted)
    return Predictions(predicted, np.asarray(scores), classes, y is not None, metrics.metric_name(task), value, why)


def prediction_lines(result: Predictions, task: str, with_scores: bool) -> str:
    """One line per row: the prediction, then (with_scores) its decision values, comma-separated."""
    fmt = "{:.10g}" if task == "regression" else "{:g}" if result.predicted.dtype.kind in "biuf" else "{}"
    if not with_scores:
        return "".join(fmt.format(v) + "\n" for v in result.predicted)
    scores = result.scores.reshape(len(result.predicted), -1)
    return "".join(fmt.format(v) + "," + ",".join(f"{s:.6g}" for s in row) + "\n"
                   for v, row in zip(result.predicted, scores))


__all__ = ["ParseError", "Predictions", "apply_model", "prediction_lines", "read_rows"]
