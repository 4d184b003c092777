"""What every rbrepro estimator shares: input validation at the boundary and the task roles.

A model is a classifier or a regressor by its class, never by a parameter, so a user cannot
silently regress on class labels. `_Classifier` / `_Regressor` validate X and y with
scikit-learn's own helpers before any numba kernel sees them (object, complex, NaN, empty and
wrongly shaped input get scikit-learn's errors), encode the targets as docs/design.md §2 says
(real values; +-1; one-vs-all +-1 columns) and decode decision values into predictions.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from rbrepro.models import targets

#: what the kernels take: CSR or dense, float64 or float32, C order
_X_KWARGS = dict(accept_sparse="csr", dtype=[np.float64, np.float32], order="C")


class _TaskEstimator:
    """Validation shared by the classifier and regressor roles (mixed in before BaseEstimator)."""

    _task: str
    #: one-vs-all column layout (targets.LABEL_LAYOUTS); "authors" only to replay their scoring
    _label_layout: str = "sorted"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _validate_fit(self, X, y):
        X, y = validate_data(self, X, y, y_numeric=self._task == "regression", **_X_KWARGS)
        if self._task == "classification":
            check_classification_targets(y)
        Y, classes = targets.encode(y, self._task, self._label_layout)
        if classes is not None:
            self.classes_ = classes
        return X, Y

    def _validate_predict(self, X):
        check_is_fitted(self)
        return validate_data(self, X, reset=False, **_X_KWARGS)

    def save(self, path):
        """Write the fitted model to `path` (.npz, no pickle: arrays and a checksummed JSON header);
        `rbrepro.models.load(path)` reads it back, `rbrepro predict` applies it to a file."""
        from rbrepro.models.persist import save

        return save(self, path)

    def predict_train(self) -> np.ndarray:
        """Predictions on the training rows, from the scores kept at fit (no second featurization)."""
        check_is_fitted(self)
        return targets.decode(self.train_scores_, getattr(self, "classes_", None))


class _Classifier(_TaskEstimator, ClassifierMixin):
    """One-vs-all ridge classification: targets +-1, prediction by sign (binary) or argmax."""

    _task = "classification"

    def decision_function(self, X) -> np.ndarray:
        """Decision values: (n,) for two classes (positive means classes_[1]), else (n, n_classes)."""
        scores = self._scores(self._validate_predict(X))
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X) -> np.ndarray:
        return targets.decode(self._scores(self._validate_predict(X)), self.classes_)


class _Regressor(_TaskEstimator, RegressorMixin):
    """Ridge regression on real targets."""

    _task = "regression"

    def predict(self, X) -> np.ndarray:
        return self._scores(self._validate_predict(X))[:, 0]
