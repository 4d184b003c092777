"""The ridge estimators on random features a user builds: a classifier and a regressor per feature
map of the paper (RandomBinningClassifier / Regressor, RandomFourierClassifier / Regressor,
NystromClassifier / Regressor), their parameters and documentation, and the pair a method
registered from elsewhere gets (`ridge_estimator`). Their fit is models.feature_ridge's."""

from __future__ import annotations

from rbrepro.models._base import _Classifier, _Regressor
from rbrepro.models._docs import SHAPE_CHECK, example, see_also
from rbrepro.models.feature_ridge import _FeatureRidge
from rbrepro.models.registry import BUILT_IN, MethodSpec
from rbrepro.solvers.cg import MAXIT, TOL
from rbrepro.solvers.stopping import PATIENCE, VALIDATION_FRACTION
from rbrepro.vocabulary import PRECONDITIONED_CG, RIDGE_SOLVERS

#: the built-in methods' registry entries, whose facts (R's keyword, centring, solver, kernel) the classes read
_SPECS = {spec.name: spec for spec in BUILT_IN}

_R_DOC = """
{extended}
    Parameters
    ----------
    {r_name} : int, default=256
        R, {r_meaning}.
    sigma : float or "scale", default="scale"
        Inverse kernel width: k(x, y) = exp(-sigma * distance(x, y)). "scale": 3 / the median L1
        distance between training rows (a seeded sample; models.sigma_search.scale_sigma), kept
        as `sigma_`.
{kernel_doc}    lam : float, default=0.01
        Ridge lambda, used as written (not scaled by N).
    solver : {solver_choices}, default="{solver}"
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
        `n_iter_no_change` iterations bring no better one, then continue CG from the best iterate
        on every row, the held-out ones included, for a fixed few steps (feature_ridge.FINAL_STEPS;
        solvers.stopping). Needs no test data. "auto": wherever the solver is CG
        and the split leaves rows on both sides; False: `maxit` steps (the authors' rule).
    validation_fraction : float, default=0.1
        The share of the training rows early stopping holds out.
    n_iter_no_change : int, default=8
        Iterations without a better held-out score after which early stopping's search ends.
    center : bool, default={center}
        Subtract the training mean of the targets and add it back at prediction.
    random_state : int, RandomState instance or None, default=None
        Seed of the feature draw.
    memory_limit_gb : float or None, default=None
        Refuse, before allocating, work whose estimate exceeds this many GB (None:
        $RBREPRO_MEMORY_LIMIT_GB or 60 % of RAM).
    n_jobs : int or None, default=None
        Threads of the fit's numba kernels and BLAS (-1: every core; None: as they are set), the
        setting `rbrepro train --threads` makes.
{draws_doc}
    Notes
    -----
    X is expected with every column on a comparable scale (as the command line loads data: each
    column to [0, 1] or [-1, 1]); the L1 kernel otherwise sees only the widest columns. A fit warns
    (WidthWarning) where the columns' largest values differ more than 100-fold, and where Random
    Binning's grids leave most rows alone in their bins. For raw data, a Pipeline with
    sklearn.preprocessing.MaxAbsScaler scales sparse input without densifying it (MinMaxScaler
    refuses sparse input).

    Attributes
    ----------
    sigma_ : float
        The width the fit used (sigma, or what "scale" gave).
    features_ : transformer
        The fitted feature map (rbrepro.features).
    coef_ : ndarray of shape (D, C)
        Ridge weights (C = 1 for regression and two classes, else one column per class).
    y_mean_ : ndarray of shape (C,)
        The targets' training mean (zeros when `center` is False).
    classes_ : ndarray of shape (n_classes,)
        The class labels (classifiers only).
    n_features_in_ : int
        Number of features seen during fit.
    n_columns_ : int
        D, the number of feature columns.
    cg_iterations_ : int
        CG's iterations (0 for a direct solve).
    cg_residual_ : float
        CG's worst final relative residual over the targets (NaN for a direct solve).
    early_stopping_ : bool
        Whether this fit stopped early.
    best_iteration_, search_iterations_, n_validation_, validation_scores_ : with early stopping,
        the step count kept, the steps its search ran, the held-out rows and the score of every
        iterate of the search (-1, 0, 0 and absent without it).
    featurize_s_, solve_s_, train_s_ : float
        Wall seconds of the fit's phases: featurizing, solving, and both.
{see_also}{examples}"""

_DRAWS_DOC = """    draws : {"numpy", "authors"}, default="numpy"
        Grids from numpy's generator seeded by random_state, or the authors' C++ draws replayed
        bit for bit (the same for every seed; to regenerate their published numbers).
"""

_KERNEL_DOC = """    kernel : {{"l1", "euclidean"}}, default="{kernel}"
        Distance of the Laplacian kernel: ||x - y||_1 (the kernel RB approximates) or
        ||x - y||_2 (what the authors' baselines used; docs/design.md §2a).
"""


def _solver_choices(default: str) -> str:
    """The solver parameter's choices as the API pages show them: its default first."""
    return "{" + ", ".join(f'"{s}"' for s in (default, *(s for s in RIDGE_SOLVERS if s != default))) + "}"


def _doc(summary: str, extended: str, base: type, r_meaning: str, see_also: str, examples: str,
         spec: MethodSpec | None = None) -> str:
    """A ridge class's docstring: R's keyword from its method's registry entry (`spec`, else the built-in
    entry of `base`'s method), the defaults (solver, center, kernel: none, and it takes `draws` instead)
    from `base`'s own signature."""
    defaults = base.__init__.__kwdefaults__
    kernel = defaults.get("kernel", "")
    r_name = (spec or _SPECS[base._method]).r_parameter
    return summary + "\n" + _R_DOC.format(r_name=r_name, r_meaning=r_meaning,
                                          solver=defaults["solver"], center=defaults["center"],
                                          solver_choices=_solver_choices(defaults["solver"]),
                                          kernel_doc=_KERNEL_DOC.format(kernel=kernel) if kernel else "",
                                          draws_doc="" if kernel else _DRAWS_DOC, extended=extended,
                                          see_also=see_also, examples=examples)


_RB_EXTENDED = """    Each of R random grids (Alg. 1) has bin widths delta_j ~ Gamma(2, 1/sigma) and offsets
    u_j ~ U[0, delta_j); a row's features are the indicators of its bin in every grid, scaled by
    1/sqrt(R), so that E[z(x)^T z(y)] = exp(-sigma ||x - y||_1) (eq. 7; sigma is an inverse width,
    where eq. 5 writes 1/sigma). The ridge weights solve (Z^T Z + lam I) W = Z^T Y (eq. 8) by
    conjugate gradients on the sparse Z, never forming Z^T Z.{task_note}
"""
_RF_EXTENDED = """    z(x) = sqrt(2/R) cos(omega^T x + b) with omega drawn from the kernel's Fourier transform (a
    Cauchy distribution) and b ~ U[0, 2 pi) (Rahimi & Recht 2007), so E[z(x)^T z(y)] = k(x, y). The
    ridge weights solve the R x R normal equations (Z^T Z + lam I) W = Z^T Y (eq. 8), directly by
    default.{task_note}
"""
_NYSTROM_EXTENDED = """    Z = K(X, L) K(L, L)^(-1/2) for R landmarks L drawn uniformly from the training rows, so that
    Z Z^T = K_nL K_LL^+ K_Ln approximates the kernel matrix. The ridge weights solve
    (Z^T Z + lam I) W = Z^T Y (eq. 8), directly by default.{task_note}
"""
_ONE_VS_ALL = """
    Classes are one-vs-all +-1 target columns, solved together; the prediction is the argmax."""
_GRIDS = "the number of random grids"
_LANDMARKS = "the number of landmarks (at most the number of training rows)"


class _RandomBinningRidge(_FeatureRidge):
    _method = "rb"

    def __init__(self, *, n_grids=256, sigma="scale", lam=0.01, solver=PRECONDITIONED_CG, maxit=MAXIT, tol=TOL,
                 center=_SPECS[_method].center, random_state=None, memory_limit_gb=None, draws="numpy",
                 early_stopping="auto", validation_fraction=VALIDATION_FRACTION, n_iter_no_change=PATIENCE,
                 n_jobs=None):
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
        self.n_jobs = n_jobs


class _RandomFourierRidge(_FeatureRidge):
    _method = "rf"

    def __init__(self, *, n_components=256, sigma="scale", kernel=_SPECS[_method].kernels[0], lam=0.01,
                 solver=_SPECS[_method].default_solver, maxit=MAXIT, tol=TOL, center=_SPECS[_method].center,
                 random_state=None, memory_limit_gb=None, early_stopping="auto",
                 validation_fraction=VALIDATION_FRACTION, n_iter_no_change=PATIENCE, n_jobs=None):
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
        self.n_jobs = n_jobs


class _NystromRidge(_RandomFourierRidge):
    """The same parameters as RF (R landmarks instead of R frequencies)."""

    _method = "nystrom"


class RandomBinningClassifier(_Classifier, _RandomBinningRidge):
    __doc__ = _doc("Ridge classifier (one-vs-all) on Random Binning features of exp(-sigma ||x - y||_1).",
                   _RB_EXTENDED.format(task_note=_ONE_VS_ALL), _RandomBinningRidge, _GRIDS,
                   see_also("RandomBinningRegressor : The same model for real-valued targets.",
                             "rbrepro.features.RandomBinningFeatures : The feature map alone, as a transformer.",
                             "RandomFourierClassifier, NystromClassifier : The paper's baselines at equal R."),
                   example("RandomBinningClassifier", "classification", "n_grids=64, sigma=0.3, random_state=0"))


class RandomBinningRegressor(_Regressor, _RandomBinningRidge):
    __doc__ = _doc("Ridge regression on Random Binning features of exp(-sigma ||x - y||_1).",
                   _RB_EXTENDED.format(task_note=""), _RandomBinningRidge, _GRIDS,
                   see_also("RandomBinningClassifier : The same model for class labels.",
                             "rbrepro.features.RandomBinningFeatures : The feature map alone, as a transformer."),
                   example("RandomBinningRegressor", "regression", "n_grids=64, sigma=2.0, random_state=0"))


class RandomFourierClassifier(_Classifier, _RandomFourierRidge):
    __doc__ = _doc("Ridge classifier (one-vs-all) on Random Fourier features of a Laplacian kernel.",
                   _RF_EXTENDED.format(task_note=_ONE_VS_ALL), _RandomFourierRidge, "the number of random features",
                   see_also("RandomFourierRegressor : The same model for real-valued targets.",
                             "rbrepro.features.RandomFourierFeatures : The feature map alone, as a transformer.",
                             "RandomBinningClassifier : Random Binning features of the L1 kernel."),
                   example("RandomFourierClassifier", "classification", "n_components=256, sigma=0.1, random_state=0"))


class RandomFourierRegressor(_Regressor, _RandomFourierRidge):
    __doc__ = _doc("Ridge regression on Random Fourier features of a Laplacian kernel.",
                   _RF_EXTENDED.format(task_note=""), _RandomFourierRidge, "the number of random features",
                   see_also("RandomFourierClassifier : The same model for class labels.",
                             "rbrepro.features.RandomFourierFeatures : The feature map alone, as a transformer."),
                   example("RandomFourierRegressor", "regression", "n_components=128, sigma=1.0, random_state=0"))


class NystromClassifier(_Classifier, _NystromRidge):
    __doc__ = _doc("Ridge classifier (one-vs-all) on Nystrom features of a Laplacian kernel.",
                   _NYSTROM_EXTENDED.format(task_note=_ONE_VS_ALL), _NystromRidge, _LANDMARKS,
                   see_also("NystromRegressor : The same model for real-valued targets.",
                             "rbrepro.features.NystromFeatures : The feature map alone, as a transformer.",
                             "ExactKernelClassifier : The kernel this model approximates, exactly."),
                   example("NystromClassifier", "classification", "n_components=128, sigma=0.1, random_state=0"))


class NystromRegressor(_Regressor, _NystromRidge):
    __doc__ = _doc("Ridge regression on Nystrom features of a Laplacian kernel.",
                   _NYSTROM_EXTENDED.format(task_note=""), _NystromRidge, _LANDMARKS,
                   see_also("NystromClassifier : The same model for class labels.",
                             "rbrepro.features.NystromFeatures : The feature map alone, as a transformer.",
                             "ExactKernelRegressor : The kernel this model approximates, exactly."),
                   example("NystromRegressor", "regression", "n_components=64, sigma=1.0, random_state=0"))


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
            "__doc__": _plugin_doc(spec, base, f"{stem}{role.__name__[1:]}", t), "__module__": __name__})
            for t, role in (("classification", _Classifier), ("regression", _Regressor))}
    return _MADE[spec][task]


def _plugin_doc(spec: MethodSpec, base: type, name: str, task: str) -> str:
    """The docstring of a registered method's ridge class: its parameters, and an example that builds
    the class through the registry."""
    import_ = (f"    >>> from rbrepro.models.registry import method_spec\n"
               f"    >>> {name} = method_spec({spec.name!r}).estimator({task!r})\n")
    extended = (f"    The ridge weights on the {spec.title} feature map ({spec.feature_class().__name__}) solve\n"
                f"    (Z^T Z + lam I) W = Z^T Y (eq. 8).{_ONE_VS_ALL if task == 'classification' else ''}\n")
    return _doc(f"Ridge {task} on {spec.title} features (a method registered at run time).", extended,
                base, f"the number of {spec.r_meaning}",
                see_also("rbrepro.models.registry.register_method : How a method is added."),
                example(name, task, "n_components=64, sigma=1.0, random_state=0", SHAPE_CHECK, import_), spec)
