"""The methods of the paper, each described once: what R means for it, how it is solved, which
kernels and draws it takes, and how its memory is modelled (docs/design.md §1-2).

Everything that has to know a method's properties reads them here: the cell parameters'
validation and `make_model`, the sweep config's cell policy, the runner's memory estimate, the
σ selection and the CLI's choices. Code that names one method on purpose (RB against its
baselines in a claim, the exact kernel's line in a figure) still names it; code that asks *what
kind* of method this is asks the registry. A new method is one entry here plus its estimator
classes (`models.feature_ridge` for an explicit feature map, `models.kernel_ridge` for a
kernel-matrix model).

A leaf: it imports only the error kinds and the vocabularies (rbrepro.vocabulary).
"""

from __future__ import annotations

from dataclasses import dataclass

from rbrepro.errors import UnknownName
from rbrepro.vocabulary import KERNELS, RIDGE_SOLVERS


@dataclass(frozen=True)
class MethodSpec:
    """What the rest of rbrepro needs to know about one method."""

    name: str
    title: str
    role: str                   # "subject" (RB), "baseline" (compared with RB), "reference" (the exact kernel)
    r_meaning: str              # what R counts ("" when the method has no R)
    r_parameter: str | None     # the estimator's keyword that takes R (None: no R)
    default_solver: str         # what solver "default" means for it
    solvers: tuple[str, ...]    # the solver names a cell may give it ("default" included)
    kernels: tuple[str, ...]    # the kernels it approximates or computes
    memory: str                 # "features" (features.featurize_memory), "kernel" (N x N), "blocks" (unmodelled)
    estimators: tuple[str, str] = ("", "")  # "module:Class" of its classifier and its regressor
    randomized: bool = True     # its result depends on the seed (so it gets seed bands)
    authors_draws: bool = False  # `rng: authors` can replay the authors' C++ draws for it

    def estimator(self, task: str) -> type:
        """Its classifier ("classification") or regressor ("regression") class, imported on use."""
        import importlib

        module, _, name = self.estimators[0 if task == "classification" else 1].partition(":")
        return getattr(importlib.import_module(module), name)

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
               "features", _pair("feature_ridge", "RandomBinning"), authors_draws=True),
    MethodSpec("rf", "Random Fourier", "baseline", "features", "n_components", "direct", _ITERATIVE + ("rcd",), KERNELS,
               "features", _pair("feature_ridge", "RandomFourier")),
    MethodSpec("nystrom", "Nyström", "baseline", "landmarks", "n_components", "direct", _ITERATIVE, KERNELS,
               "features", _pair("feature_ridge", "Nystrom")),
    MethodSpec("block", "independent blocks", "baseline", "leaf size", "leaf_size", "cholesky", ("default",),
               KERNELS, "blocks", _pair("kernel_ridge", "IndependentBlock")),
    MethodSpec("exact", "exact kernel", "reference", "", None, "cholesky", ("default",), KERNELS, "kernel",
               _pair("kernel_ridge", "ExactKernel"), randomized=False),
)}

#: the method names, in the paper's order
METHOD_NAMES = tuple(METHODS)
#: methods with an explicit feature matrix (featurize, RCD)
FEATURE_METHODS = tuple(name for name, spec in METHODS.items() if spec.memory == "features")
#: methods the parallel RCD solver (§4) runs on
RCD_METHODS = tuple(name for name, spec in METHODS.items() if "rcd" in spec.solvers)
#: the methods compared with RB (rf, nystrom, block)
BASELINES = tuple(name for name, spec in METHODS.items() if spec.role == "baseline")


def method_spec(name: str) -> MethodSpec:
    """The registry's entry for `name`; an unknown name is an error that lists the known ones."""
    try:
        return METHODS[name]
    except KeyError:
        raise UnknownName(f"method {name!r} is not available; choose from {', '.join(METHOD_NAMES)}") from None

