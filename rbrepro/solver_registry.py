"""The solvers, each declared once: a SolverSpec says its name, what it solves (the ridge of an
explicit feature matrix, which every feature method takes, or not: rcd, which the methods that list
it take), whether it iterates CG (then it has steps to count and may stop on held-out rows), its help
text, and the function that solves.

The command line's --solver, a sweep config's solver name, a cell's parameters and the estimators'
`solver` parameter all read this registry; vocabulary.SOLVERS, RIDGE_SOLVERS and CG_SOLVERS are the
built-in solvers' names, derived from it. A solver is one module with its function and one
`register_solver(SolverSpec(...))`. A leaf module: its functions may be "module:function" strings
(rbrepro.dotted.resolve imports them on use), so the command line lists the solvers without numba.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rbrepro.errors import InvalidParameter


@dataclass(frozen=True, kw_only=True)
class SolverSpec:
    name: str
    help: str                       # what it does, for the command line's help and the docs
    #: solves the ridge of an explicit feature matrix Z: every method with a feature map takes it
    #: (False: only the methods whose registry entry lists it, as rcd)
    ridge: bool = True
    #: iterates CG (solvers.cg): steps to count (cg_iterations), stopping by residual or on held-out rows
    cg: bool = False
    preconditioned: bool = False    # CG preconditioned by the square root of diag(Z^T Z) + lam
    #: a ridge solver that is not CG: (Z, Y, lam) -> W (D x C), Z a dense float array or a sparse
    #: operator with to_csr() (RB's), a callable or its "module:function"
    solve: Callable | str | None = None
    #: (D, C, sparse) -> bytes of its solve, checked before it runs; None: the normal equations'
    memory: Callable | str | None = None


BUILT_IN = (
    SolverSpec(name="cg", help="conjugate gradients on Z", cg=True),
    SolverSpec(name="pcg", help="CG preconditioned by the square root of diag(Z^T Z) + lam", cg=True,
               preconditioned=True),
    SolverSpec(name="direct", help="a direct solve of the normal equations",
               solve="rbrepro.solvers.direct:ridge_direct"),
    SolverSpec(name="rcd", help="L1-regularized coordinate descent", ridge=False),
)
#: name -> SolverSpec: the built-in solvers and those registered
SOLVER_SPECS: dict[str, SolverSpec] = {spec.name: spec for spec in BUILT_IN}
#: what a cell or the command line names for the method's own solver (models.registry's default_solver)
DEFAULT = "default"


def register_solver(spec: SolverSpec) -> SolverSpec:
    """Add a solver (refused where its name is taken, or a ridge solver outside CG has no solve)."""
    if spec.name in SOLVER_SPECS or spec.name == DEFAULT:
        raise InvalidParameter(f"solver {spec.name!r} is registered already")
    if spec.ridge and not spec.cg and spec.solve is None:
        raise InvalidParameter(f"solver {spec.name!r} needs a solve function (Z, Y, lam) -> W")
    SOLVER_SPECS[spec.name] = spec
    return spec


def unregister_solver(name: str) -> None:
    """Remove a registered solver (the built-in ones stay)."""
    if any(spec.name == name for spec in BUILT_IN):
        raise InvalidParameter(f"solver {name!r} is built in")
    SOLVER_SPECS.pop(name, None)


def solver_spec(name) -> SolverSpec:
    """The SolverSpec of `name`, or InvalidParameter naming the solvers there are."""
    if not isinstance(name, str) or name not in SOLVER_SPECS:
        raise InvalidParameter(f"solver must be one of {tuple(SOLVER_SPECS)}, got {name!r}")
    return SOLVER_SPECS[name]


def solver_names() -> tuple[str, ...]:
    """Every solver a cell can name: "default" (the method's own), then the registered ones."""
    return (DEFAULT, *SOLVER_SPECS)


def ridge_solvers() -> tuple[str, ...]:
    """The solvers of the ridge on an explicit feature matrix (the estimators' `solver`)."""
    return tuple(name for name, spec in SOLVER_SPECS.items() if spec.ridge)


def cg_solvers() -> tuple[str, ...]:
    """The solvers that iterate CG."""
    return tuple(name for name, spec in SOLVER_SPECS.items() if spec.cg)


def is_cg(name: str) -> bool:
    """Whether solver `name` iterates CG (False for "default", "cholesky" and names not registered)."""
    spec = SOLVER_SPECS.get(name)
    return bool(spec and spec.cg)


def is_ridge(name: str) -> bool:
    """Whether solver `name` solves the ridge of an explicit feature matrix."""
    spec = SOLVER_SPECS.get(name)
    return bool(spec and spec.ridge)
