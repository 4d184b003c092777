"""The ridge estimators on random features a user builds: a classifier and a regressor per feature
map of the paper (RandomBinningClassifier / Regressor, RandomFourierClassifier / Regressor,
NystromClassifier / Regressor), their parameters and documentation, and the pair a method
registered from elsewhere gets (`ridge_estimator`). Their fit is models.feature_ridge's."""

from __future__ import annotations

from rbrepro.models._base import _Classifier, _Regressor
from rbrepro.models.feature_ridge import _FeatureRidge
from rbrepro.models.registry import MethodSpec
from rbrepro.solvers.cg import MAXIT, TOL
from rbrepro.solvers.stopping import PATIENCE, VALIDATION_FRACTION

_R_DOC = """
    Parameters
    ----------
    {r_name} : int, default=256
        R, {r_meaning}.
    sigma : float, default=1.0
        Inverse kernel width: k(x, y) = exp(-sigma * distance(x, y)).
{kernel_doc}    lam : float, default=0.01
        Ridge lambda, used as written (not scaled by N).
    solver : {{"cg", "pcg", "direct"}}, default="{solver}"
        CG on Z (at most `maxit` iterations, relative residual `tol`; the paper's solver),
        CG preconditioned by (diag(Z^T Z) + lam)^(1/2) (solvers.cg), or a direct solve of the
        normal equations.
    maxit : int, default=50
        CG iteration cap (the authors' default; early stopping is part of the regularization).
    tol : float, default=1e-3
        CG relative residual at which to stop.
    early_stopping : {{"auto", True, False}}, default="auto"
        Hold out `validation_fraction` of the training rows (chosen by a hash of the seed and the
        row number), run CG on the others scoring every iterate on the held-out rows until
        `n_iter_no_change` iterations bring no better one, then fit every row for the best one's
        number of steps (solvers.stopping). Needs no test data. "auto": wherever the solver is CG
        and the split leaves rows on both sides; False: `maxit` steps (the authors' rule).
    validation_fraction : float, default=0.1
    n_iter_no_change : int, default=8
    center : bool, default={center}
        Subtract the training mean of the targets and add it back at prediction.
    random_state : int, RandomState instance or None, default=None
        Seed of the feature draw.
    memory_limit_gb : float or None, default=None
        Refuse, before allocating, work whose estimate exceeds this many GB (None:
        $RBREPRO_MEMORY_LIMIT_GB or 60 % of RAM).
{draws_doc}
    Attributes
    ----------
    features_ : the fitted feature map.
    coef_ : ndarray of shape (D, C)
        Ridge weights (C = 1 for regression and two classes, else one column per class).
    y_mean_ : ndarray of shape (C,)
    classes_ : ndarray (classifiers only)
    n_features_in_ : int
    n_columns_ : int
        D, the number of feature columns.
    cg_iterations_, cg_residual_ : CG's iterations and worst final relative residual.
    early_stopping_ : bool
        Whether this fit stopped early.
    best_iteration_, search_iterations_, n_validation_, validation_scores_ : with early stopping,
        the step count kept, the steps its search ran, the held-out rows and the score of every
        iterate of the search (-1, 0, 0 and absent without it).
    featurize_s_, solve_s_, train_s_ : wall seconds of the fit's phases.
"""

_DRAWS_DOC = """    draws : {"numpy", "authors"}, default="numpy"
        Grids from numpy's generator seeded by random_state, or the authors' C++ draws replayed
        bit for bit (the same for every seed; to regenerate their published numbers).
"""

_KERNEL_DOC = """    kernel : {"l1", "euclidean"}, default="l1"
        Distance of the Laplacian kernel: ||x - y||_1 (the kernel RB approximates) or
        ||x - y||_2 (what the authors' baselines used; docs/design.md §2a).
"""


def _doc(summary: str, r_name: str, r_meaning: str, solver: str, center: bool, kernel: bool) -> str:
    return summary + "\n" + _R_DOC.format(r_name=r_name, r_meaning=r_meaning, solver=solver, center=center,
                                          kernel_doc=_KERNEL_DOC if kernel else "",
                                          draws_doc="" if kernel else _DRAWS_DOC)


class _RandomBinningRidge(_FeatureRidge):
    _method = "rb"
    _r_param = "n_grids"

    def __init__(self, *, n_grids=256, sigma=1.0, lam=0.01, solver="pcg", maxit=MAXIT, tol=TOL, center=False,
                 random_state=None, memory_limit_gb=None, draws="numpy", early_stopping="auto",
                 validation_fraction=VALIDATION_FRACTION, n_iter_no_change=PATIENCE):
        self.n_grids = n_grids
        self.sigma = sigma
        self.lam = lam
        self.solver = solver
        self.maxit = maxit
        self.tol = tol
        self.center = center
        self.random_state = random_state
        self.memory_limit_gb = memory_limit_gb
        self.draws = draws
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change


class _RandomFourierRidge(_FeatureRidge):
    _method = "rf"
    _r_param = "n_components"

    def __init__(self, *, n_components=256, sigma=1.0, kernel="l1", lam=0.01, solver="direct", maxit=MAXIT, tol=TOL,
                 center=True, random_state=None, memory_limit_gb=None, early_stopping="auto",
                 validation_fraction=VALIDATION_FRACTION, n_iter_no_change=PATIENCE):
        self.n_components = n_components
        self.sigma = sigma
        self.kernel = kernel
        self.lam = lam
        self.solver = solver
        self.maxit = maxit
        self.tol = tol
        self.center = center
        self.random_state = random_state
        self.memory_limit_gb = memory_limit_gb
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change


class _NystromRidge(_RandomFourierRidge):
    """The same parameters as RF (R landmarks instead of R frequencies)."""

    _method = "nystrom"


class RandomBinningClassifier(_Classifier, _RandomBinningRidge):
    __doc__ = _doc("Ridge classifier (one-vs-all) on Random Binning features (Alg. 1) of exp(-sigma ||x - y||_1).",
                   "n_grids", "the number of random grids", "pcg", False, False)


class RandomBinningRegressor(_Regressor, _RandomBinningRidge):
    __doc__ = _doc("Ridge regression on Random Binning features (Alg. 1) of exp(-sigma ||x - y||_1).",
                   "n_grids", "the number of random grids", "pcg", False, False)


class RandomFourierClassifier(_Classifier, _RandomFourierRidge):
    __doc__ = _doc("Ridge classifier (one-vs-all) on Random Fourier features of a Laplacian kernel.",
                   "n_components", "the number of random features", "direct", True, True)


class RandomFourierRegressor(_Regressor, _RandomFourierRidge):
    __doc__ = _doc("Ridge regression on Random Fourier features of a Laplacian kernel.",
                   "n_components", "the number of random features", "direct", True, True)


class NystromClassifier(_Classifier, _NystromRidge):
    __doc__ = _doc("Ridge classifier (one-vs-all) on Nystrom features of a Laplacian kernel.",
                   "n_components", "the number of landmarks (at most the number of training rows)", "direct",
                   True, True)


class NystromRegressor(_Regressor, _NystromRidge):
    __doc__ = _doc("Ridge regression on Nystrom features of a Laplacian kernel.",
                   "n_components", "the number of landmarks (at most the number of training rows)", "direct",
                   True, True)


_MADE: dict = {}


def _with_defaults(init, **defaults):
    """A copy of `init` whose keyword defaults are changed (sklearn reads them from the signature)."""
    import types

    made = types.FunctionType(init.__code__, init.__globals__, init.__name__, init.__defaults__, init.__closure__)
    made.__kwdefaults__ = {**init.__kwdefaults__, **defaults}
    made.__doc__ = init.__doc__
    return made


def ridge_estimator(spec: MethodSpec, task: str) -> type:
    """The ridge classifier or regressor on the feature map of a registered method that names no
    estimators of its own: RF's parameters (R as n_components), its default solver, made once."""
    if spec not in _MADE:
        stem = spec.feature_class().__name__.removesuffix("Features") + "Ridge"
        base = type(f"_{stem}", (_RandomFourierRidge,), {
            "_method": spec.name,
            "__init__": _with_defaults(_RandomFourierRidge.__init__, solver=spec.default_solver, center=spec.center,
                                       kernel=spec.kernels[0]),
            "__module__": __name__})
        _MADE[spec] = {t: type(f"{stem}{role.__name__[1:]}", (role, base), {
            "__doc__": f"Ridge {t} on {spec.title} features.", "__module__": __name__})
            for t, role in (("classification", _Classifier), ("regression", _Regressor))}
    return _MADE[spec][task]
