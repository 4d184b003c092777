"""Models: feature map + solver, as scikit-learn classifiers and regressors.

Every method of the paper comes as a classifier and a regressor with the same parameters;
each can be built with no arguments and passes scikit-learn's `check_estimator`. The methods'
properties are in `rbrepro.models.registry`.

The classes load on first use (PEP 562), so reading the registry, as the command line does to
offer its choices, does not load numba and scikit-learn.
"""

from __future__ import annotations

import importlib

#: public name -> the module that defines it
_HOMES = {
    "RandomBinningClassifier": "ridge_classes",
    "RandomBinningRegressor": "ridge_classes",
    "RandomFourierClassifier": "ridge_classes",
    "RandomFourierRegressor": "ridge_classes",
    "NystromClassifier": "ridge_classes",
    "NystromRegressor": "ridge_classes",
    "IndependentBlockClassifier": "kernel_ridge",
    "IndependentBlockRegressor": "kernel_ridge",
    "ExactKernelClassifier": "kernel_ridge",
    "ExactKernelRegressor": "kernel_ridge",
    "L1FeatureClassifier": "l1_model",
    "L1FeatureRegressor": "l1_model",
}

__all__ = [*_HOMES, "load", "save"]


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(importlib.import_module(f"rbrepro.models.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'rbrepro.models' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_HOMES])


def save(model, path):
    """Write a fitted model to a file, without pickle.

    The file (.npz) holds the model's arrays and a checksummed JSON header, so loading it runs no
    code from the file. `load(path)` reads it back as a `SavedModel`.

    Parameters
    ----------
    model : estimator or Pipeline
        A fitted rbrepro estimator, or a fitted scikit-learn Pipeline of scalers (MinMaxScaler,
        MaxAbsScaler, StandardScaler) ending in one.
    path : str or Path
        Where to write it.

    Returns
    -------
    Path
        The file written.

    See Also
    --------
    load : Read the file back.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import MinMaxScaler
    >>> from rbrepro.models import RandomBinningClassifier, load, save
    >>> X, y = load_digits(return_X_y=True)
    >>> model = make_pipeline(MinMaxScaler(), RandomBinningClassifier(n_grids=16, sigma=0.3, random_state=0))
    >>> model = model.fit(X, y)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     saved = load(save(model, os.path.join(folder, "digits.npz")))
    >>> bool((saved.predict(X) == model.predict(X)).all())
    True
    """
    from rbrepro.models.persist import save as save_file

    return save_file(model, path)


def load(path):
    """Read a model saved by `save(model, path)`, `model.save(path)` or `rbrepro train --save-model`.

    The model comes back whole, as a `SavedModel` that predicts on raw rows as `rbrepro predict`
    does: the training rows' scaling, the classes, the task and the label column are applied for
    you. No pickle: arrays and a checksummed header; a damaged or crafted file is refused, naming it.

    Parameters
    ----------
    path : str or Path
        The .npz file.

    Returns
    -------
    SavedModel
        With `predict`, `decision_function`, `score` (scikit-learn's), `metric` (the paper's:
        accuracy in % or relative error), `predict_file`, and `.estimator`, the fitted estimator.

    See Also
    --------
    save : Write a fitted model.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from rbrepro.models import RandomFourierRegressor, load
    >>> X = np.random.default_rng(0).uniform(size=(100, 2))
    >>> y = X.sum(axis=1)
    >>> model = RandomFourierRegressor(n_components=32, random_state=0).fit(X, y)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     saved = load(model.save(os.path.join(folder, "sums.npz")))
    >>> saved.task
    'regression'
    >>> np.allclose(saved.predict(X), model.predict(X))
    True
    """
    from rbrepro.models.apply import load as load_saved

    return load_saved(path)
