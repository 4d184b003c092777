"""L1-regularized linear models on random features (RB, RF: the methods whose registry entry
lists the rcd solver), trained by parallel RCD (Sec. 4, Alg. 2).

L1FeatureRegressor uses the square loss; L1FeatureClassifier takes +-1 targets (one-vs-all
for more than two classes) and `loss` (squared_hinge, logistic or square).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator

from rbrepro.constraints import check_nonnegative, seed_of
from rbrepro.errors import InvalidParameter
from rbrepro.memory import check_memory
from rbrepro.models._base import _Classifier, _Regressor
from rbrepro.models._docs import SCORE_CHECK, example, see_also
from rbrepro.models.feature_ridge import feature_cost, features_of, fit_features
from rbrepro.models.registry import DEFAULT_L1, METHODS, SUBJECT, rcd_methods
from rbrepro.solvers.rcd import l1_rcd, prepare
from rbrepro.vocabulary import LOSSES, VARIANTS


def _times(Z, coef: np.ndarray) -> np.ndarray:
    """Z W in float64: an operator's own product, or a dense array's."""
    return Z.matvec(coef) if hasattr(Z, "matvec") else np.asarray(Z, dtype=np.float64) @ coef


class _L1FeatureModel(BaseEstimator):
    """min_w l1 ||w||_1 + mean_i L(w^T z_i, y_i) on RB or RF features by RCD."""

    def __init__(self, *, method=SUBJECT, n_components=256, sigma=1.0, l1=DEFAULT_L1, loss="squared_hinge", epochs=20,
                 threads=1, variant="async", random_state=None, memory_limit_gb=None):
        self.method = method
        self.n_components = n_components
        self.sigma = sigma
        self.l1 = l1
        self.loss = loss
        self.epochs = epochs
        self.threads = threads
        self.variant = variant
        self.random_state = random_state
        self.memory_limit_gb = memory_limit_gb

    #: its fitted state, as a saved model holds it (models.persist): arrays, then scalars
    _saved_arrays = ("coef_", "train_scores_")
    _saved_scalars = ("loss_", "objective_", "rcd_epochs_", "variant_", "damping_", "n_columns_", "featurize_s_",
                      "solve_s_", "train_s_", "n_features_in_")

    def _check_params(self):
        if self.method not in rcd_methods():
            raise InvalidParameter(f"RCD runs on {' or '.join(m.upper() for m in rcd_methods())} features; method must "
                                   f"be one of {rcd_methods()}, got {self.method!r}")
        if self.loss not in LOSSES:
            raise InvalidParameter(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if self.variant not in VARIANTS:
            raise InvalidParameter(f"variant must be one of {VARIANTS}, got {self.variant!r}")
        check_nonnegative("l1", self.l1)
        for name in ("epochs", "threads"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < (0 if name == "epochs" else 1):
                raise InvalidParameter(f"{name} must be a {'non-negative' if name == 'epochs' else 'positive'} integer, "
                                 f"got {value!r}")

    def fit(self, X, y):
        """Featurize X, then run RCD on each target column."""
        X, Y = self._validate_fit(X, y)
        self._check_params()
        loss = "square" if self._task == "regression" else self.loss
        self.loss_ = loss
        n = X.shape[0]
        check_memory(f"RCD on {self.method} features of {n} rows at R = {self.n_components}",
                     12.0 * self.n_components * n, self.memory_limit_gb)
        seed = seed_of(self.random_state)
        seed = 0 if seed is None else int(seed)  # RCD's coordinate order is seeded even without a random_state
        t0 = time.perf_counter()
        self.features_ = METHODS[self.method].feature_map(self.n_components, sigma=self.sigma, random_state=seed)
        Z = fit_features(self.features_, X)
        columns = prepare(Z)
        t1 = time.perf_counter()
        coefs, self.trace_, objectives, epochs = [], [], [], []
        for c in range(Y.shape[1]):
            result = l1_rcd(Z, Y[:, c], self.l1, loss, self.epochs, self.threads, self.variant, seed=seed,
                            columns=columns)
            coefs.append(result.coef)
            self.trace_.append(result.trace)
            objectives.append(result.objective)
            epochs.append(result.epochs)
        t2 = time.perf_counter()
        self.coef_ = np.column_stack(coefs)
        self.objective_ = float(np.mean(objectives))
        self.rcd_epochs_ = int(max(epochs))
        self.variant_, self.damping_ = result.variant, result.damping
        self.featurize_s_, self.solve_s_, self.train_s_ = t1 - t0, t2 - t1, t2 - t0
        self.train_scores_ = _times(Z, self.coef_)
        self.n_columns_ = Z.shape[1]
        return self

    def _scores(self, X) -> np.ndarray:
        return _times(features_of(self.features_, X), self.coef_)

    def warm_up(self, X) -> None:
        """Compile every RCD kernel for X's types and the thread counts used (1 and `threads`)."""
        small = X[:8]
        n = small.shape[0]
        params = {**self.get_params(deep=False), "n_components": 2, "epochs": 1, "random_state": 0,
                  "memory_limit_gb": None}
        for threads in sorted({1, self.threads}):
            L1FeatureRegressor(**{**params, "threads": threads}).fit(small, np.arange(n, dtype=float)).predict(small)
            for n_classes in sorted({2, min(3, n)}):  # one target column, then several (other kernels)
                L1FeatureClassifier(**{**params, "threads": threads}).fit(small, np.arange(n) % n_classes) \
                    .predict(small)

    def cost(self) -> dict:
        return feature_cost(self)


_L1_DOC = """{summary}

    Minimizes l1 ||w||_1 + (1/N) sum_i L(w^T z_i, y_i) (eq. 23) over the weights of Random Binning or
    Random Fourier features z_i by randomized coordinate descent (Alg. 2): each step minimizes a
    quadratic bound of the loss along one coordinate and soft-thresholds it (eq. 24-26). With
    `threads` > 1 the coordinates are updated in parallel: "async" is the authors' undamped variant,
    "sync" the damped one whose speedup eq. 29 guarantees. RB's sparse features parallelize well.{task_note}

    Parameters
    ----------
    method : {{"rb", "rf"}}, default="rb"
        Random Binning or Random Fourier features (of exp(-sigma ||x - y||_1)).
    n_components : int, default=256
        R, grids (RB) or features (RF).
    sigma : float, default=1.0
        Inverse kernel width.
    l1 : float, default=1e-4
        The L1 weight lambda.
    loss : {{"squared_hinge", "logistic", "square"}}, default="squared_hinge"
        {loss_doc}
    epochs : int, default=20
        Passes over the coordinates.
    threads : int, default=1
        Threads updating coordinates concurrently.
    variant : {{"async", "sync"}}, default="async"
        The parallel updates: undamped and asynchronous, or damped and synchronous (eq. 29).
    random_state : int, RandomState instance or None, default=None
        Seed of the feature draw and the coordinate order.
    memory_limit_gb : float or None, default=None
        Refuse, before allocating, work whose estimate exceeds this many GB.

    Attributes
    ----------
    features_ : transformer
        The fitted feature map.
    coef_ : ndarray of shape (D, C)
        The sparse weights, one column per target (C = 1 for regression and two classes).
    objective_ : float
        The final objective (eq. 23), averaged over the targets.
    rcd_epochs_ : int
        Epochs run.
    variant_, damping_ : str, float
        The parallel variant used and its step damping (1: none).
    trace_ : list
        Per target, (seconds, objective, nnz(w)) after every epoch.
    featurize_s_, solve_s_, train_s_ : float
        Wall seconds of the fit's phases: featurizing, RCD, and both.
    n_features_in_ : int
        Number of features seen during fit.
    classes_ : ndarray of shape (n_classes,)
        The class labels (classifiers only).
{also}{example}"""


#: the lasso's example also shows its sparsity
_L1_CHECK = SCORE_CHECK + ("    >>> zeros = float((model.coef_ == 0).mean())  # the share of weights exactly zero\n"
                             "    >>> zeros > 0.5\n    True\n")


class L1FeatureClassifier(_Classifier, _L1FeatureModel):
    __doc__ = _L1_DOC.format(
        summary="L1-regularized linear classifier on random features, trained by parallel RCD.",
        task_note="\n    Classes are one-vs-all +-1 target columns; the prediction is the argmax.",
        loss_doc="The classification loss.",
        also=see_also("L1FeatureRegressor : The lasso on the same features.",
                      "RandomBinningClassifier : Ridge (L2) on Random Binning features."),
        example=example("L1FeatureClassifier", "classification", "n_components=64, sigma=0.3, random_state=0"))


class L1FeatureRegressor(_Regressor, _L1FeatureModel):
    __doc__ = _L1_DOC.format(
        summary="L1-regularized linear regression (lasso) on random features, by parallel RCD.", task_note="",
        loss_doc="Ignored: regression uses the square loss.",
        also=see_also("L1FeatureClassifier : The same solver for class labels.",
                      "RandomBinningRegressor : Ridge (L2) on Random Binning features."),
        example=example("L1FeatureRegressor", "regression", "n_components=64, sigma=2.0, random_state=0",
                        _L1_CHECK))


L1_MODEL = {"classification": L1FeatureClassifier, "regression": L1FeatureRegressor}
