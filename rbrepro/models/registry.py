"""The methods, each described once: what R means for it, how it is solved, which kernels and draws
it takes, its feature map and memory model, whether targets are centred, whether it fits across
machines, its kappa for Theorem 1, its figure style (docs/design.md §1-2).

Everything that has to know a method's properties reads them here, when it needs them: the cell
parameters' validation and `make_model`, the sweep config's cell policy, the runner's memory
estimate, sigma selection, the saved-model reader, the distributed fit, the diagnostics, the
figures' styles and the command line's choices and help. Code that names one of the paper's
methods on purpose (RB against its baselines in a claim, the exact kernel's line in a figure)
names it through its role (SUBJECT, REFERENCE, `monte_carlo_baseline`), never by a string.

A method from anywhere is one module plus one `MethodSpec`: inside rbrepro by `register_method`,
from another package by the entry-point group `rbrepro.methods` (an entry naming a MethodSpec, or a
function returning one or several), which the registry loads the first time it is read, in every
process (the command line, sweep workers, dask workers). An explicit feature map (`features`: a class
with `fit`/`transform`, `fit_memory` and `_saved_arrays`/`_saved_scalars`) gets its ridge classifier
and regressor from `models.ridge_classes` unless `estimators` names its own. Every field is keyword
only; the ones a method must state default to UNKNOWN and an entry that leaves one unsaid is refused,
naming it, rather than borrowing another method's.

A leaf: it imports only the error kinds, the vocabularies (rbrepro.vocabulary, solver_registry) and the plug-ins'
isolation (models.plugins); classes named by "module:Class" strings are imported on use.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from rbrepro.dotted import resolve
from rbrepro.errors import InvalidParameter, UnknownName
from rbrepro.models import plugins
from rbrepro.solver_registry import ridge_solvers, solver_names
from rbrepro.vocabulary import KERNELS

ROLES = ("subject", "baseline", "reference")
MEMORY_MODELS = ("features", "kernel", "blocks")
#: a field a method has to state and did not: refused by `register_method`, never read as a default
UNKNOWN = "unknown"
#: the entry-point group a package declares its methods in
ENTRY_POINTS = "rbrepro.methods"
#: the L1 models trained by RCD on a feature method (docs/design.md §4)
RCD_ESTIMATORS = ("rbrepro.models.l1_model:L1FeatureClassifier", "rbrepro.models.l1_model:L1FeatureRegressor")
#: makes the ridge classifier and regressor of a feature method that names no estimators
RIDGE_ON_FEATURES = "rbrepro.models.ridge_classes:ridge_estimator"


@dataclass(frozen=True, kw_only=True)
class MethodSpec:
    """What the rest of rbrepro needs to know about one method.

    Every field is keyword-only; each is explained beside it below. The fields a method must state
    default to UNKNOWN, and `register_method` refuses an entry that leaves one unsaid. A feature
    method (memory="features") names its feature map in `features` and gets its ridge classifier
    and regressor made for it; any other method names its own `estimators`.

    Examples
    --------
    >>> from rbrepro.models.registry import method_spec
    >>> spec = method_spec("rb")
    >>> spec.title, spec.r_parameter, spec.default_solver
    ('Random Binning', 'n_grids', 'cg')
    >>> spec.estimator("classification").__name__
    'RandomBinningClassifier'
    >>> spec.feature_map(16, sigma=0.5)
    RandomBinningFeatures(n_grids=16, sigma=0.5)
    """

    name: str
    title: str = UNKNOWN
    role: str = UNKNOWN                  # "subject" (RB), "baseline" (compared with RB), "reference" (the exact kernel)
    r_meaning: str = UNKNOWN             # what R counts ("" when the method has no R)
    r_parameter: str | None = UNKNOWN    # the estimator's (and feature map's) keyword that takes R (None: no R)
    default_solver: str = UNKNOWN        # what solver "default" means for it
    solvers: tuple[str, ...] = ()        # the solver names a cell may give it ("default" included)
    kernels: tuple[str, ...] = ()        # the kernels it approximates or computes
    memory: str = UNKNOWN                # "features" (its map's fit_memory), "kernel" (N x N), "blocks" (unmodelled)
    estimators: tuple = ("", "")         # its classifier and regressor ("module:Class" or classes); none: ridge's
    features: object = ""                # its feature map ("module:Class" or the class) when memory == "features"
    center: bool | None = None           # targets centred by default (a feature method must say)
    randomized: bool = True              # its result depends on the seed (so it gets seed bands)
    authors_draws: bool = False          # `rng: authors` can replay the authors' C++ draws for it
    distributed: str = ""                # why it cannot fit across machines ("": it can, by rows)
    kappa: float | str | None = None     # Theorem 1's kappa: a number, "features" (the map's kappa_), None: none
    theorem1: bool = False               # Theorem 1's diagnostics (theory/) measure it: an explicit Z, K ~ Z Z^T
    style: tuple[str, str, str] = ("", "", "")  # figure label, colour, marker

    def estimator(self, task: str) -> type:
        """Its classifier ("classification") or regressor ("regression") class, imported on use."""
        target = self.estimators[0 if task == "classification" else 1]
        return resolve(target) if target else resolve(RIDGE_ON_FEATURES)(self, task)

    def feature_class(self) -> type:
        """Its feature map's class (feature methods only)."""
        if not self.features:
            raise InvalidParameter(f"{self.title} has no explicit feature map")
        return resolve(self.features)

    def feature_map(self, R: int, **params):
        """Its feature map drawn with R and those of `params` its class takes (sigma, kernel, ...)."""
        import inspect

        cls = self.feature_class()
        taken = inspect.signature(cls.__init__).parameters
        return cls(**{self.r_parameter: R}, **{k: v for k, v in params.items() if k in taken})

    def fit_memory(self, n: int, d: int, R: int) -> float:
        """Bytes of featurizing n rows of d features at R: its feature map's own model (a plug-in's checked)."""
        value = self.feature_class().fit_memory(n, d, R)
        who = plugin_label(self.name)
        return value if who is None else plugins.check_memory_model(who, value, n, d, R)

    @property
    def has_R(self) -> bool:
        return self.r_parameter is not None

    @property
    def cholesky(self) -> bool:
        """Solved by a Cholesky factorization of kernel blocks: CG's maxit and tol are not its settings."""
        return self.solvers == ("default",)

    @property
    def has_features(self) -> bool:
        """An explicit feature matrix: featurize, RCD, a fit split by rows."""
        return self.memory == "features"


_ITERATIVE = ("default", *ridge_solvers())


def _pair(module: str, stem: str) -> tuple[str, str]:
    return (f"rbrepro.models.{module}:{stem}Classifier", f"rbrepro.models.{module}:{stem}Regressor")


#: the paper's methods, in its order
BUILT_IN = (
    MethodSpec(name="rb", title="Random Binning", role="subject", r_meaning="grids", r_parameter="n_grids",
               default_solver="cg", solvers=(*_ITERATIVE, "rcd"), kernels=("l1",), memory="features",
               estimators=_pair("ridge_classes", "RandomBinning"), authors_draws=True, center=False,
               features="rbrepro.features.random_binning:RandomBinningFeatures", kappa="features", theorem1=True,
               style=("RB", "tab:red", "o")),
    MethodSpec(name="rf", title="Random Fourier", role="baseline", r_meaning="features", r_parameter="n_components",
               default_solver="direct", solvers=(*_ITERATIVE, "rcd"), kernels=KERNELS, memory="features",
               estimators=_pair("ridge_classes", "RandomFourier"), center=True,
               features="rbrepro.features.random_fourier:RandomFourierFeatures", kappa=1.0, theorem1=True,
               style=("RF", "tab:blue", "s")),
    MethodSpec(name="nystrom", title="Nyström", role="baseline", r_meaning="landmarks", r_parameter="n_components",
               default_solver="direct", solvers=_ITERATIVE, kernels=KERNELS, memory="features",
               estimators=_pair("ridge_classes", "Nystrom"), center=True,
               features="rbrepro.features.nystrom:NystromFeatures", theorem1=True,
               style=("Nyström", "tab:green", "^")),
    MethodSpec(name="block", title="independent blocks", role="baseline", r_meaning="leaf size",
               r_parameter="leaf_size", default_solver="cholesky", solvers=("default",), kernels=KERNELS,
               memory="blocks", estimators=_pair("kernel_ridge", "IndependentBlock"),
               distributed="independent-block models factor each leaf's kernel matrix by Cholesky, and a leaf's "
                           "rows must all be on one machine",
               style=("block", "tab:purple", "D")),
    MethodSpec(name="exact", title="exact kernel", role="reference", r_meaning="", r_parameter=None,
               default_solver="cholesky", solvers=("default",), kernels=KERNELS, memory="kernel",
               estimators=_pair("kernel_ridge", "ExactKernel"), randomized=False,
               distributed="the exact kernel model factors the N x N kernel matrix by Cholesky, which needs every "
                           "row on one machine",
               style=("exact", "black", "")),
)
#: the paper's subject (RB) and its reference (the exact kernel): figures, claims and diagnostics that
#: single one of them out name it through these (their roles are the paper's own: no plug-in takes them)
SUBJECT = next(spec.name for spec in BUILT_IN if spec.role == "subject")
REFERENCE = next(spec.name for spec in BUILT_IN if spec.role == "reference")


class _Registry(Mapping):
    """name -> MethodSpec: the paper's methods, those registered at run time, and (loaded when the
    registry is first read) those the installed packages declare in the ENTRY_POINTS group."""

    def __init__(self, specs):
        self._specs = {spec.name: spec for spec in specs}
        self._loaded = False

    def _load(self) -> dict:
        if not self._loaded:
            self._loaded = True  # first, so a plug-in that reads the registry while loading sees no loop
            for dist, spec in _entry_point_specs():
                try:
                    register_method(spec)
                    ORIGINS[spec.name] = dist
                    plugins.mark_parent_only(spec.name, False)
                except Exception as exc:  # noqa: BLE001 - a broken plug-in is named and left out, never fatal
                    plugins.warn_unusable(dist, str(exc))
        return self._specs

    def __getitem__(self, name: str) -> MethodSpec:
        return self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._load()))

    def __len__(self) -> int:
        return len(self._load())

    def __contains__(self, name) -> bool:
        return name in self._load()


def _entry_point_specs() -> list[tuple[str, MethodSpec]]:
    """(distribution, MethodSpec) of each method the installed packages declare in ENTRY_POINTS (an entry
    may name a spec, or a function returning one or a list of them); one that fails to load is named and
    left out (plugins)."""
    found = []
    for dist, value in plugins.load_entries(ENTRY_POINTS):
        specs = value if isinstance(value, (list, tuple)) else [value]
        found += [(dist, s) for s in specs if isinstance(s, MethodSpec)]
        if not all(isinstance(s, MethodSpec) for s in specs):
            plugins.warn_unusable(dist, f"its entry point gives {type(value).__name__}, not a MethodSpec")
    return found


#: method name -> the distribution that installed it (methods from entry points only)
ORIGINS: dict[str, str] = {}


def plugin_label(name: str) -> str | None:
    """"method NAME of the plug-in package PKG" for an installed or run-time method, None for the paper's own."""
    if name in {spec.name for spec in BUILT_IN}:
        return None
    return f"method {name!r} of the plug-in package {ORIGINS[name]!r}" if name in ORIGINS else f"method {name!r}"


METHODS = _Registry(BUILT_IN)


def method_names() -> tuple[str, ...]:
    """Every method's name, the paper's first, then those registered or installed.

    Examples
    --------
    >>> from rbrepro.models.registry import method_names
    >>> method_names()[:5]
    ('rb', 'rf', 'nystrom', 'block', 'exact')
    """
    return tuple(METHODS)


def feature_methods() -> tuple[str, ...]:
    """The methods with an explicit feature matrix (featurize, RCD, a fit split by rows)."""
    return tuple(name for name, spec in METHODS.items() if spec.has_features)


def rcd_methods() -> tuple[str, ...]:
    """The methods the RCD solver runs on (their feature maps feed it)."""
    return tuple(name for name, spec in METHODS.items() if "rcd" in spec.solvers)


def splittable_methods() -> tuple[str, ...]:
    """The methods whose fit splits by rows across machines: explicit features, and no reason not to."""
    return tuple(name for name, spec in METHODS.items() if spec.has_features and not spec.distributed)


def baselines() -> tuple[str, ...]:
    """The methods compared with RB."""
    return tuple(name for name, spec in METHODS.items() if spec.role == "baseline")


def rcd_baseline() -> str:
    """The baseline RB's parallel RCD is compared with (Fig. 6, claim 7): the paper's other RCD method."""
    return next(spec.name for spec in BUILT_IN if "rcd" in spec.solvers and spec.name != SUBJECT)


def monte_carlo_baseline() -> str:
    """The random features whose objective gap falls as 1/R ([33]; kappa 1): Theorem 1's comparison."""
    return next(spec.name for spec in BUILT_IN if spec.kappa == 1.0)


def method_spec(name: str) -> MethodSpec:
    """The registry's entry for the method `name`.

    Parameters
    ----------
    name : str
        One of the paper's methods ("rb", "rf", "nystrom", "block", "exact") or one registered by
        `register_method` or an installed plug-in.

    Returns
    -------
    MethodSpec

    Raises
    ------
    UnknownName
        For a name not registered; the message lists the known ones.

    Examples
    --------
    >>> from rbrepro.models.registry import method_spec
    >>> method_spec("nystrom").estimator("regression").__name__
    'NystromRegressor'
    >>> method_spec("svm")
    Traceback (most recent call last):
    ...
    rbrepro.errors.UnknownName: method 'svm' is not available; choose from rb, rf, nystrom, block, exact...
    """
    try:
        return METHODS[name]
    except KeyError:
        if plugins.parent_only(name):
            raise UnknownName(f"method {name!r} was registered by register_method in the parent process only, "
                              f"and this process (a worker) cannot see it; declare it in the entry-point group "
                              f"{ENTRY_POINTS!r} of an installed package, or run the cells in the registering "
                              f"process") from None
        raise UnknownName(f"method {name!r} is not available; choose from {', '.join(METHODS)}") from None


_RCD_DRAWS = ("rng and scoring 'authors' replay the authors' ridge drivers; rcd cells use numpy draws and the "
              "standard scoring")
#: rcd's L1 weight when none is given (the L1 models' default; the ridge lambda is the dataset's)
DEFAULT_L1 = 1e-4
#: what the rcd solver needs of a cell beyond a method that lists it: (setting, the value it needs, why)
RCD_NEEDS = (("kernel", "l1", "rcd runs on the L1 kernel only, not {value!r}"),
             ("rng", "numpy", _RCD_DRAWS), ("scoring", "standard", _RCD_DRAWS))


def solver_conflict(solver: str, methods, **setting) -> str | None:
    """Why `solver` cannot run cells of `methods` with this kernel, rng and scoring (None: it can):
    the one rule that both a cell's validation and a sweep config's parser apply."""
    if solver != "rcd":
        return None
    off = [m for m in methods if m not in rcd_methods()]
    if off:
        return f"the rcd solver runs on {' or '.join(rcd_methods())} features, not {', '.join(off)}"
    for name, needed, why in RCD_NEEDS:
        if setting.get(name, needed) != needed:
            return why.format(value=setting[name])
    return None


def _said(spec: MethodSpec) -> list[str]:
    """The fields an entry left UNKNOWN (or empty) that every method must state."""
    gaps = [] if spec.name.isidentifier() else [f"a name of letters, digits and '_' (got {spec.name!r})"]
    for field_name in ("title", "role", "r_meaning", "r_parameter", "default_solver", "memory"):
        if getattr(spec, field_name) == UNKNOWN:
            gaps.append(field_name)
    gaps += [] if spec.role in ROLES or spec.role == UNKNOWN else [f"role in {ROLES}"]
    gaps += [] if spec.memory in MEMORY_MODELS or spec.memory == UNKNOWN else [f"memory in {MEMORY_MODELS}"]
    return gaps


def _gaps(spec: MethodSpec) -> list[str]:
    """What an entry lacks or gets wrong (empty: complete)."""
    gaps = _said(spec)
    gaps += [] if spec.solvers and set(spec.solvers) <= set(solver_names()) and "default" in spec.solvers else \
        [f"solvers from {solver_names()}, 'default' among them"]
    gaps += [] if spec.kernels and set(spec.kernels) <= set(KERNELS) else [f"kernels from {KERNELS}"]
    defaults = ("cholesky",) if spec.cholesky else tuple(s for s in spec.solvers if s in ridge_solvers())
    gaps += [] if spec.default_solver in defaults else [f"a default_solver in {defaults} (got {spec.default_solver!r})"]
    gaps += [] if len(spec.style) == 3 and spec.style[0] and spec.style[1] else ["style (label, colour, marker)"]
    if spec.memory == "features":
        gaps += [] if spec.features and spec.has_R else ["features (its feature map) and r_parameter"]
        gaps += [] if spec.center is not None else ["center (whether its targets are centred by default)"]
        cls = resolve(spec.features) if spec.features else None
        needs = ("fit", "transform", "fit_memory", "get_params", "_saved_arrays", "_saved_scalars")
        gaps += [f"a feature map with {', '.join(needs)}"] if cls and not all(hasattr(cls, a) for a in needs) else []
    elif not all(spec.estimators):
        gaps += ["estimators (classifier, regressor) for a method without a feature map"]
    gaps += ["feature-map methods only for 'rcd' and theorem1"] if spec.memory != "features" and (
        "rcd" in spec.solvers or spec.theorem1) else []
    gaps += [] if spec.kappa is None or spec.kappa == "features" or isinstance(spec.kappa, (int, float)) else \
        ["kappa a number, 'features' or None"]
    return gaps


def register_method(spec: MethodSpec) -> MethodSpec:
    """Add a method at run time, for this process.

    From then on the method is everywhere a built-in one is: cells and sweep configs take its
    name, `rbrepro.models.cell` fits it, models of it are saved and loaded, figures draw it. A
    feature method without `estimators` gets a ridge classifier and regressor on its feature map
    (R is their `n_components`). Another package declares its methods in the entry-point group
    "rbrepro.methods" instead, and every process loads them.

    Parameters
    ----------
    spec : MethodSpec
        The entry. A taken name, the paper's own roles (subject, reference) or an incomplete entry
        is refused with InvalidParameter, naming what is missing.

    Returns
    -------
    MethodSpec
        `spec`, registered.

    See Also
    --------
    unregister_method : Remove it again.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from rbrepro.features import RandomFourierFeatures
    >>> from rbrepro.models.registry import MethodSpec, register_method, unregister_method
    >>> spec = register_method(MethodSpec(
    ...     name="rf_euclidean", title="Random Fourier (Euclidean)", role="baseline", r_meaning="features",
    ...     r_parameter="n_components", default_solver="direct", solvers=("default", "cg", "direct"),
    ...     kernels=("euclidean",), memory="features", features=RandomFourierFeatures, center=True,
    ...     style=("RF (L2)", "tab:cyan", "v")))
    >>> Model = spec.estimator("classification")
    >>> Model.__name__
    'RandomFourierRidgeClassifier'
    >>> X, y = load_digits(return_X_y=True)
    >>> model = Model(n_components=256, sigma=0.3, random_state=0).fit(X / 16, y)
    >>> model.kernel, model.score(X / 16, y) > 0.9
    ('euclidean', True)
    >>> unregister_method("rf_euclidean")
    """
    specs = METHODS._specs
    if spec.name in specs:
        raise InvalidParameter(f"method {spec.name!r} is registered already")
    gaps = _gaps(spec)
    if spec.role in ("subject", "reference"):
        gaps.append("role 'baseline': the subject and the reference are the paper's own (rb, exact)")
    if gaps:
        raise InvalidParameter(f"method {spec.name!r} cannot be registered: it needs {'; '.join(gaps)}")
    specs[spec.name] = spec
    plugins.mark_parent_only(spec.name, True)
    return spec


def unregister_method(name: str) -> None:
    """Remove a method added by `register_method` or a plug-in (the paper's own stay).

    Examples
    --------
    >>> from rbrepro.models.registry import unregister_method
    >>> unregister_method("rb")
    Traceback (most recent call last):
    ...
    rbrepro.errors.InvalidParameter: method 'rb' is one of the paper's and stays registered
    """
    if name in {spec.name for spec in BUILT_IN}:
        raise InvalidParameter(f"method {name!r} is one of the paper's and stays registered")
    method_spec(name)
    del METHODS._specs[name]
    ORIGINS.pop(name, None)
    plugins.mark_parent_only(name, False)
