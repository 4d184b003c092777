"""`DistributedRidge`: a feature-ridge estimator (RB, RF, Nystrom) fitted and applied on a dask
cluster, in scikit-learn's meta-estimator style: `estimator` is cloned into `estimator_`, which
after `fit` is the same fitted model as `estimator.fit(X, y)` on one machine (weights to rounding)
and can be saved, loaded and used without the cluster."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, column_or_1d

from rbrepro.distributed.cluster import STEP_TIMEOUT_S, Runner
from rbrepro.distributed.fit import check_distributable, fit_across
from rbrepro.distributed.partitions import RowBlock, dask_partitions, split_rows
from rbrepro.models import targets

#: rows a prediction block has at least: fewer rows go to one worker in one block (spreading them saves
#: nothing, and float32 RF features round a row alike only in blocks of alike shape)
PREDICT_MIN_ROWS = 4096


def _scores_block(block: RowBlock, model) -> np.ndarray:
    """On a worker: the decision values (n x C) of a block of rows."""
    if block.n_rows == 0:
        return np.empty((0, model.coef_.shape[1]))
    return model._scores(model._validate_predict(block.X))


def _checked_rows(model, X, y):
    """(X, y) checked here as the estimator's own fit checks them (scikit-learn's errors for empty,
    NaN, complex or wrongly shaped input), y as a 1-d array of labels."""
    X, _ = model._validate_fit(X, y)
    return X, column_or_1d(y, warn=True)


def _is_dask_array(X) -> bool:
    return type(X).__module__.startswith("dask.array")


def _warm_up(model, X) -> None:
    model.warm_up(X)


class DistributedRidge(MetaEstimatorMixin, BaseEstimator):
    """Fit `estimator` across the workers of `client` (a dask.distributed Client).

    Parameters
    ----------
    estimator : an unfitted RandomBinning*, RandomFourier* or Nystrom* estimator.
    client : distributed.Client, or a scheduler address (str)
        Where to fit. An address keeps the estimator clonable and picklable (GridSearchCV, scikit-learn's
        estimator checks); the client of that address is looked up (or opened) at fit and predict.
    n_partitions : int or None
        Row partitions (None: one per worker).
    timeout_s : float
        Seconds one step (featurizing, a CG step, a prediction) may take before the fit stops.
    random_state : int, RandomState instance or None
        If not None, the seed of the feature draw in place of the estimator's own (as
        scikit-learn's meta-estimators take one).

    Attributes
    ----------
    estimator_ : the fitted estimator. Its fitted attributes (coef_, features_, classes_ ...) are
    also read through this object.
    workers_, partitions_, bytes_per_cg_step_ : the cluster used and the bytes moved per CG step.
    bytes_per_stopping_step_ : with early stopping, the bytes moved to score an iterate on the held-out
        rows (W to each partition, two numbers back); 0 without.

    Examples
    --------
    A cluster of two in-process workers, on this machine:

    >>> import logging
    >>> from distributed import Client, LocalCluster
    >>> from sklearn.datasets import load_digits
    >>> from rbrepro.distributed import DistributedRidge
    >>> from rbrepro.models import RandomBinningClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> X = X / 16
    >>> rb = RandomBinningClassifier(n_grids=64, sigma=0.3, random_state=0)
    >>> with LocalCluster(n_workers=2, processes=False, dashboard_address=None,
    ...                   silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
    ...     model = DistributedRidge(rb, client=client).fit(X, y)
    ...     predicted = model.predict(X)
    >>> model.partitions_
    2
    >>> bool((predicted == rb.fit(X, y).predict(X)).all())  # the single-process model's predictions
    True
    """

    def __init__(self, estimator, *, client, n_partitions=None, timeout_s=STEP_TIMEOUT_S, random_state=None):
        self.estimator = estimator
        self.client = client
        self.n_partitions = n_partitions
        self.timeout_s = timeout_s
        self.random_state = random_state

    def __getattr__(self, name):  # the fitted estimator's attributes (coef_, classes_, ...) read through
        inner = self.__dict__.get("estimator_")
        if inner is not None and name.endswith("_") and not name.startswith("__"):
            return getattr(inner, name)
        raise AttributeError(name)

    def __sklearn_tags__(self):
        return self.estimator.__sklearn_tags__()  # a classifier or a regressor, as the estimator is

    def _client(self):
        if isinstance(self.client, str):
            from distributed import get_client

            return get_client(self.client)
        return self.client

    def _runner(self) -> Runner:
        return Runner(self._client(), self.timeout_s)

    def fit(self, X, y):
        """Fit on the workers: X a dask array (one partition per row chunk, computed where dask puts
        it), or rows here, checked as the estimator checks them and split into contiguous partitions."""
        if _is_dask_array(X):
            return self.fit_partitions(dask_partitions(self._client(), X, y))
        X, y = _checked_rows(clone(self.estimator), X, y)
        runner = self._runner()
        n_parts = self.n_partitions or max(1, len(runner.worker_memory()))
        return self.fit_partitions(split_rows(X, y, n_parts))

    def fit_partitions(self, sources: list):
        """Fit on row partitions already cut (RowBlock or any source with load(), n_rows, n_features,
        nbytes()), in row order."""
        model = clone(self.estimator)
        if self.random_state is not None:
            model.set_params(random_state=self.random_state)
        model._label_layout = self.__dict__.get("_label_layout", model._label_layout)
        check_distributable(model)
        stats = fit_across(model, self._runner(), sources)
        self.estimator_ = model
        self.workers_, self.partitions_, self.bytes_per_cg_step_ = (stats["workers"], stats["partitions"],
                                                                    stats["bytes_per_cg_step"])
        self.bytes_per_stopping_step_ = stats["bytes_per_stopping_step"]
        return self

    def _scores(self, X) -> np.ndarray:
        check_is_fitted(self, "estimator_")
        X = self.estimator_._validate_predict(X)  # the estimator's own errors, before any work
        runner = self._runner()
        n_blocks = max(1, min(self.partitions_, X.shape[0] // PREDICT_MIN_ROWS))
        blocks = split_rows(X, np.zeros(X.shape[0]), n_blocks)
        return np.concatenate(runner.gather(runner.map(_scores_block, blocks, self.estimator_), "predicting"))

    @available_if(lambda self: self.estimator._task == "classification")
    def decision_function(self, X) -> np.ndarray:
        """Decision values computed on the workers (classifiers only, as for the estimator)."""
        scores = self._scores(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X) -> np.ndarray:
        """Predictions computed on the workers, each on its block of rows."""
        scores = self._scores(X)
        return targets.decode(scores, getattr(self.estimator_, "classes_", None))

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy (classifier) or R^2 (regressor) of the predictions made on the workers."""
        from sklearn.metrics import accuracy_score, r2_score

        check_is_fitted(self, "estimator_")
        metric = r2_score if self.estimator_._task == "regression" else accuracy_score
        return float(metric(y, self.predict(X), sample_weight=sample_weight))

    def predict_train(self) -> np.ndarray:
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict_train()

    def cost(self) -> dict:
        check_is_fitted(self, "estimator_")
        return self.estimator_.cost()

    def warm_up(self, X) -> None:
        """Compile (or load from numba's cache) the kernels here and on every worker."""
        self.estimator.warm_up(X)
        probe = clone(self.estimator)
        self._client().run(_warm_up, probe, X[:8])
