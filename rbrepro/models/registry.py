"""The methods of the paper, each described once: what R means for it, how it is solved, which
kernels and draws it takes, its feature map and memory model, its figure style, and whether
Theorem 1's diagnostics apply (docs/design.md §1-2).

Everything that has to know a method's properties reads them here: the cell parameters'
validation and `make_model`, the sweep config's cell policy, the runner's memory estimate, the
σ selection, the saved-model reader, the figures' styles and the CLI's choices. Code that names
one method on purpose (RB against its baselines in a claim, the exact kernel's line in a
figure) still names it; code that asks *what kind* of method this is asks the registry.

A new method is one module plus one `register_method(MethodSpec(...))`: an explicit feature map
(`features`: a class with `fit`/`transform`, `fit_memory` and `_saved_arrays`/`_saved_scalars`)
gets its ridge classifier and regressor made by `models.feature_ridge` unless `estimators` names
its own; a kernel-matrix model names its `estimators`. An incomplete entry is refused by name.

A leaf: it imports only the error kinds and the vocabularies (rbrepro.vocabulary); classes named
by "module:Class" strings are imported on use.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbrepro.errors import InvalidParameter, UnknownName
from rbrepro.vocabulary import KERNELS, RIDGE_SOLVERS, SOLVERS

ROLES = ("subject", "baseline", "reference")
MEMORY_MODELS = ("features", "kernel", "blocks")
#: the L1 models trained by RCD on a feature method (docs/design.md §4)
RCD_ESTIMATORS = ("rbrepro.models.l1_model:L1FeatureClassifier", "rbrepro.models.l1_model:L1FeatureRegressor")
#: makes the ridge classifier and regressor of a feature method that names no estimators
RIDGE_ON_FEATURES = "rbrepro.models.feature_ridge:ridge_estimator"


def resolve(target):
    """A class (or function) itself, or the one a "module:Name" string names (imported on use)."""
    if not isinstance(target, str):
        return target
    import importlib

    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class MethodSpec:
    """What the rest of rbrepro needs to know about one method."""

    name: str
    title: str
    role: str                   # "subject" (RB), "baseline" (compared with RB), "reference" (the exact kernel)
    r_meaning: str              # what R counts ("" when the method has no R)
    r_parameter: str | None     # the estimator's (and feature map's) keyword that takes R (None: no R)
    default_solver: str         # what solver "default" means for it
    solvers: tuple[str, ...]    # the solver names a cell may give it ("default" included)
    kernels: tuple[str, ...]    # the kernels it approximates or computes
    memory: str                 # "features" (its feature map's fit_memory), "kernel" (N x N), "blocks" (unmodelled)
    estimators: tuple = ("", "")  # its classifier and regressor ("module:Class" or classes); none: feature ridge's
    randomized: bool = True     # its result depends on the seed (so it gets seed bands)
    authors_draws: bool = False  # `rng: authors` can replay the authors' C++ draws for it
    features: object = ""       # its feature map ("module:Class" or the class) when memory == "features"
    style: tuple[str, str, str] = ("", "", "")  # figure label, colour, marker
    theorem1: bool = False      # Theorem 1's diagnostics (theory/) measure it: an explicit Z with K ~ Z Z^T

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
        """Bytes of featurizing n rows of d features at R: its feature map's own model."""
        return self.feature_class().fit_memory(n, d, R)

    @property
    def has_R(self) -> bool:
        return self.r_parameter is not None

    @property
    def cholesky(self) -> bool:
        """Solved by a Cholesky factorization of kernel blocks: CG's maxit and tol are not its settings."""
        return self.solvers == ("default",)


_ITERATIVE = ("default", *RIDGE_SOLVERS)


def _pair(module: str, stem: str) -> tuple[str, str]:
    return (f"rbrepro.models.{module}:{stem}Classifier", f"rbrepro.models.{module}:{stem}Regressor")


METHODS: dict[str, MethodSpec] = {spec.name: spec for spec in (
    MethodSpec("rb", "Random Binning", "subject", "grids", "n_grids", "cg", _ITERATIVE + ("rcd",), ("l1",),
               "features", _pair("feature_ridge", "RandomBinning"), authors_draws=True,
               features="rbrepro.features.random_binning:RandomBinningFeatures", style=("RB", "tab:red", "o"),
               theorem1=True),
    MethodSpec("rf", "Random Fourier", "baseline", "features", "n_components", "direct", _ITERATIVE + ("rcd",), KERNELS,
               "features", _pair("feature_ridge", "RandomFourier"),
               features="rbrepro.features.random_fourier:RandomFourierFeatures", style=("RF", "tab:blue", "s"),
               theorem1=True),
    MethodSpec("nystrom", "Nyström", "baseline", "landmarks", "n_components", "direct", _ITERATIVE, KERNELS,
               "features", _pair("feature_ridge", "Nystrom"), features="rbrepro.features.nystrom:NystromFeatures",
               style=("Nyström", "tab:green", "^"), theorem1=True),
    MethodSpec("block", "independent blocks", "baseline", "leaf size", "leaf_size", "cholesky", ("default",),
               KERNELS, "blocks", _pair("kernel_ridge", "IndependentBlock"), style=("block", "tab:purple", "D")),
    MethodSpec("exact", "exact kernel", "reference", "", None, "cholesky", ("default",), KERNELS, "kernel",
               _pair("kernel_ridge", "ExactKernel"), randomized=False, style=("exact", "black", "")),
)}
_BUILT_IN = tuple(METHODS)

#: the paper's method names, in its order (`method_names()` adds registered ones)
METHOD_NAMES = _BUILT_IN
#: methods with an explicit feature matrix (featurize, RCD)
FEATURE_METHODS = tuple(name for name, spec in METHODS.items() if spec.memory == "features")
#: methods the parallel RCD solver (§4) runs on
RCD_METHODS = tuple(name for name, spec in METHODS.items() if "rcd" in spec.solvers)
#: the methods compared with RB (rf, nystrom, block)
BASELINES = tuple(name for name, spec in METHODS.items() if spec.role == "baseline")
#: the paper's subject (RB) and its reference (the exact kernel), by role: figures, claims and
#: diagnostics that single one of them out name it through these, never by a string of their own
SUBJECT = next(name for name, spec in METHODS.items() if spec.role == "subject")
REFERENCE = next(name for name, spec in METHODS.items() if spec.role == "reference")
#: the baseline RB's parallel RCD is compared with (Fig. 6, claim 7): the other RCD method
RCD_BASELINE = next(name for name in RCD_METHODS if name != SUBJECT)


def method_names() -> tuple[str, ...]:
    """Every method's name, the paper's first, then those registered at run time."""
    return tuple(METHODS)


def rcd_methods() -> tuple[str, ...]:
    """The methods the RCD solver runs on (their feature maps feed it)."""
    return tuple(name for name, spec in METHODS.items() if "rcd" in spec.solvers)


def method_spec(name: str) -> MethodSpec:
    """The registry's entry for `name`; an unknown name is an error that lists the known ones."""
    try:
        return METHODS[name]
    except KeyError:
        raise UnknownName(f"method {name!r} is not available; choose from {', '.join(METHODS)}") from None


_RCD_DRAWS = ("rng and scoring 'authors' replay the authors' ridge drivers; rcd cells use numpy draws and the "
              "standard scoring")
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


def _gaps(spec: MethodSpec) -> list[str]:
    """What an entry lacks or gets wrong (empty: complete)."""
    gaps = [] if spec.name.isidentifier() else [f"a name of letters, digits and '_' (got {spec.name!r})"]
    gaps += [] if spec.role in ROLES else [f"role in {ROLES}"]
    gaps += [] if spec.memory in MEMORY_MODELS else [f"memory in {MEMORY_MODELS}"]
    gaps += [] if spec.solvers and set(spec.solvers) <= set(SOLVERS) and "default" in spec.solvers else \
        [f"solvers from {SOLVERS}, 'default' among them"]
    gaps += [] if spec.kernels and set(spec.kernels) <= set(KERNELS) else [f"kernels from {KERNELS}"]
    defaults = ("cholesky",) if spec.cholesky else tuple(s for s in spec.solvers if s in RIDGE_SOLVERS)
    gaps += [] if spec.default_solver in defaults else [f"a default_solver in {defaults} (got {spec.default_solver!r})"]
    gaps += [] if len(spec.style) == 3 and spec.style[0] and spec.style[1] else ["style (label, colour, marker)"]
    if spec.memory == "features":
        gaps += [] if spec.features and spec.has_R else ["features (its feature map) and r_parameter"]
        cls = resolve(spec.features) if spec.features else None
        needs = ("fit", "transform", "fit_memory", "_saved_arrays", "_saved_scalars")
        gaps += [f"a feature map with {', '.join(needs)}"] if cls and not all(hasattr(cls, a) for a in needs) else []
    elif not all(spec.estimators):
        gaps += ["estimators (classifier, regressor) for a method without a feature map"]
    gaps += ["feature-map methods only for 'rcd' and theorem1"] if spec.memory != "features" and (
        "rcd" in spec.solvers or spec.theorem1) else []
    return gaps


def register_method(spec: MethodSpec) -> MethodSpec:
    """Add a method at run time; a taken name or an incomplete entry is refused, naming what is missing."""
    if spec.name in METHODS:
        raise InvalidParameter(f"method {spec.name!r} is registered already")
    gaps = _gaps(spec)
    if gaps:
        raise InvalidParameter(f"method {spec.name!r} cannot be registered: it needs {'; '.join(gaps)}")
    METHODS[spec.name] = spec
    return spec


def unregister_method(name: str) -> None:
    """Remove a method added by `register_method` (the paper's own stay)."""
    if name in _BUILT_IN:
        raise InvalidParameter(f"method {name!r} is one of the paper's and stays registered")
    method_spec(name)
    del METHODS[name]
