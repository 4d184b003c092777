"""Data nothing can be learnt from, refused before any fit with its real cause and its file: no rows
left to train on or to hold out, one class among the training rows (and whether the file itself has
more, the split having taken them), regression targets all equal. Split rules are read from their
homes (data.load's test and validation splits, solvers.stopping's held-out rows), never repeated."""

from __future__ import annotations

import numpy as np

from rbrepro.data.load import Dataset, validation_split
from rbrepro.errors import InvalidParameter


def source(data: Dataset) -> str:
    """The file a dataset's rows come from (a user's own data), else its registered name."""
    spec = data.info.get("spec")
    train = getattr(spec, "train", None)
    if getattr(spec, "source", None) == "user" and getattr(train, "url", None):
        return str(train.url)
    return data.name


def _labels(y) -> str:
    values = np.unique(y)
    return ", ".join(f"{v:g}" if isinstance(v, (float, np.floating)) else str(v) for v in values[:3])


def check_learnable(data: Dataset, rows: str = "training rows") -> None:
    """Refuse training rows (`data.y_train`, called `rows`) a model cannot learn from, naming the file
    and the cause; the test rows too when they are empty."""
    where, y, n = source(data), np.asarray(data.y_train), len(data.y_train)
    total = n + len(data.y_test)
    if n == 0:
        raise InvalidParameter(f"{where}: no {rows} are left of its {total} rows; too few rows to split")
    if len(data.y_test) == 0:
        raise InvalidParameter(f"{where}: its {total} rows leave no test rows to score on ({data.split}); "
                               f"too few rows to hold any out; give more rows, or a test file of their own (--test)")
    if data.task == "regression":
        if np.ptp(y.astype(np.float64)) == 0:
            raise InvalidParameter(f"{where}: the {n} {rows} all have the target {_labels(y)}: constant targets, "
                                   f"nothing to learn (a model would predict that value; the relative error is "
                                   f"undefined where it is 0)")
        return
    if len(np.unique(y)) < 2:
        everywhere = np.concatenate([y, np.asarray(data.y_test)])
        if len(np.unique(everywhere)) < 2:
            raise InvalidParameter(f"{where}: every label is {_labels(y)}: one class, nothing to classify "
                                   f"(for regression targets: --task regression)")
        raise InvalidParameter(f"{where}: its {total} rows hold {len(np.unique(everywhere))} classes, but the "
                               f"{n} {rows} left by the split ({data.split}) hold only {_labels(y)}: too few rows "
                               f"to hold any out; give more rows, or a test file of their own (--test)")


def check_auto_sigma(data: Dataset, held_out_search: bool, seed: int) -> None:
    """Refuse data `--sigma auto` cannot choose on: the rows it holds out for scoring (early stopping's
    held-out rows, else the validation split) must leave learnable rows on each side."""
    if held_out_search:
        from rbrepro.solvers.stopping import VALIDATION_FRACTION, held_out

        n = data.X_train.shape[0]
        held = held_out(n, VALIDATION_FRACTION, seed)
        if held.all() or not held.any():
            raise InvalidParameter(f"{source(data)}: --sigma auto scores each sigma on held-out training rows, and "
                                   f"{n} training rows hold {int(held.sum())} out: too few rows to hold any out; "
                                   f"give more rows or a sigma of your own")
        from dataclasses import replace

        rows = "training rows left after the held-out rows of --sigma auto"
        check_learnable(replace(data, y_train=np.asarray(data.y_train)[~held], y_test=data.y_train[held]), rows)
        return
    split = validation_split(data)
    if split.X_test.shape[0] == 0:
        raise InvalidParameter(f"{source(data)}: --sigma auto scores each sigma on a validation split, and "
                               f"{data.X_train.shape[0]} training rows leave none for it: too few rows to hold any "
                               f"out; give more rows or a sigma of your own")
    check_learnable(split, rows="training rows left after the validation rows of --sigma auto")
