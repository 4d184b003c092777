"""Models: feature map + solver, as scikit-learn classifiers and regressors.

Every method of the paper comes as a classifier and a regressor with the same parameters;
each can be built with no arguments and passes scikit-learn's `check_estimator`.
"""

from rbrepro.models.feature_ridge import (
    NystromClassifier,
    NystromRegressor,
    RandomBinningClassifier,
    RandomBinningRegressor,
    RandomFourierClassifier,
    RandomFourierRegressor,
)
from rbrepro.models.kernel_ridge import (
    ExactKernelClassifier,
    ExactKernelRegressor,
    IndependentBlockClassifier,
    IndependentBlockRegressor,
)
from rbrepro.models.l1_model import L1FeatureClassifier, L1FeatureRegressor
from rbrepro.models.persist import load_model

__all__ = [
    "RandomBinningClassifier",
    "RandomBinningRegressor",
    "RandomFourierClassifier",
    "RandomFourierRegressor",
    "NystromClassifier",
    "NystromRegressor",
    "IndependentBlockClassifier",
    "IndependentBlockRegressor",
    "ExactKernelClassifier",
    "ExactKernelRegressor",
    "L1FeatureClassifier",
    "L1FeatureRegressor",
    "load",
]


def load(path):
    """The model saved at `path` by `model.save(path)` or `rbrepro train --save-model` (no pickle:
    arrays and a checksummed header; a damaged or crafted file is refused, naming it)."""
    return load_model(path)[0]
