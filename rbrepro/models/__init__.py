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
    """Write a fitted rbrepro estimator, or a fitted scikit-learn Pipeline of scalers (MinMaxScaler,
    MaxAbsScaler, StandardScaler) ending in one, to `path` (.npz, no pickle); `load(path)` reads it
    back as a `SavedModel`."""
    from rbrepro.models.persist import save as save_file

    return save_file(model, path)


def load(path):
    """The model saved at `path` by `model.save(path)` or `rbrepro train --save-model`, whole: a
    `SavedModel` that predicts on raw rows as `rbrepro predict` does (the training rows' scaling,
    classes, task and label column; `.estimator` is the fitted estimator). No pickle: arrays and a
    checksummed header; a damaged or crafted file is refused, naming it."""
    from rbrepro.models.apply import load as load_saved

    return load_saved(path)
