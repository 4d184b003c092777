"""The parts the estimators' docstrings share: the Examples section's doctest (the same data for
every class of a task, so the examples read alike) and the See Also section."""

from __future__ import annotations

#: the example's data and fit, by task
_FIT = {"classification": """\
    >>> from sklearn.datasets import load_digits
{import_}    >>> X, y = load_digits(return_X_y=True)
    >>> X = X / 16  # pixel values to [0, 1]
    >>> model = {name}({params}).fit(X, y)
""", "regression": """\
    >>> import numpy as np
{import_}    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(size=(300, 3))
    >>> y = np.sin(4 * X[:, 0]) + X[:, 1] ** 2
    >>> model = {name}({params}).fit(X, y)
"""}
#: what an example checks: the training score, the first digits' classes, or the predictions' shape
SCORE_CHECK = "    >>> model.score(X, y) > 0.9\n    True\n"
CLASS_CHECK = SCORE_CHECK + "    >>> model.predict(X[:3])\n    array([0, 1, 2])\n"
SHAPE_CHECK = "    >>> model.predict(X[:3]).shape\n    (3,)\n"


def example(name: str, task: str, params: str, check: str | None = None, import_: str = "") -> str:
    """An Examples section: the class `name` built with `params` and fitted on scikit-learn's digits
    (classification) or on a smooth function of three uniform features (regression), then `check`
    (by default the training score, and for a classifier the first three digits' classes)."""
    import_ = import_ or f"    >>> from rbrepro.models import {name}\n"
    check = check if check is not None else CLASS_CHECK if task == "classification" else SCORE_CHECK
    return ("\n    Examples\n    --------\n" + _FIT[task].format(import_=import_, name=name, params=params)
            + check)


def see_also(*entries: str) -> str:
    """A See Also section, one "name : what it is" entry a line."""
    return "\n    See Also\n    --------\n" + "".join(f"    {e}\n" for e in entries)
