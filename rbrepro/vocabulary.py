"""rbrepro's named vocabularies, each defined here once: the option values that configs, cell
parameters, estimators and the command line all accept (benchopt-style status-as-names).

A leaf module (it imports only the solver and figure registries, leaves too), so the command line can offer the
choices without loading numba or matplotlib. The methods themselves are described in
`rbrepro.models.registry`, the solvers in `rbrepro.solver_registry`.
"""

from rbrepro.figure_registry import BUILT_IN as _FIGURES
from rbrepro.solver_registry import BUILT_IN as _SOLVERS
from rbrepro.solver_registry import DEFAULT, is_cg

#: a dataset's task (data.registry; a user's file may say it with --task or task:)
TASKS = ("regression", "binary", "multiclass")
#: the Laplacian kernel's distance: l1 (the product kernel RB approximates) or euclidean (the
#: authors' baselines, docs/authors-protocol.md); features.laplacian computes both
KERNELS = ("l1", "euclidean")
#: the built-in solvers that iterate CG (cg, and pcg: CG preconditioned by the square root of Z^T Z's
#: diagonal): the ones with steps to count (cg_iterations) and to stop early (stopping validation,
#: early_stopping). Those registered at run time: solver_registry.cg_solvers()
CG_SOLVERS = tuple(spec.name for spec in _SOLVERS if spec.cg)
#: the preconditioned one: the estimators' own default, and what stopping auto runs for a "default" CG
PRECONDITIONED_CG = next(spec.name for spec in _SOLVERS if spec.preconditioned)
#: the built-in ridge solvers of an explicit feature matrix (models.ridge_classes' docs)
RIDGE_SOLVERS = tuple(spec.name for spec in _SOLVERS if spec.ridge)
#: every built-in solver a cell can name: "default" is the method's own, rcd the parallel L1 solver of §4
SOLVERS = (DEFAULT, *(spec.name for spec in _SOLVERS))
#: when CG stops: auto (the default of every door: validation where the method solves by CG, with
#: pcg for a default solver, else residual), residual (relative residual <= tol or maxit iterations:
#: the authors' rule) or validation (the best iterate on a held-out slice of the training rows, from
#: which CG goes on for a few steps on every row: solvers.stopping, models.feature_ridge.FINAL_STEPS)
STOPPINGS = ("auto", "residual", "validation")
#: rcd's losses (solvers._rcd_kernels holds their numeric codes)
LOSSES = ("square", "squared_hinge", "logistic")
#: rcd with several threads: async (Alg. 2 as the paper runs it) or sync (a barrier per block)
VARIANTS = ("async", "sync")
#: feature scaling of a cell (data.load): default is the dataset registry's own choice
SCALINGS = ("default", "minmax", "maxabs", "maxabs-all", "published")
#: what a user's datasets file may register for its data (the per-file choices of SCALINGS)
FILE_SCALINGS = ("minmax", "maxabs", "published")
#: the built-in figures rbrepro draws (plots): the paper's, and how cost grows (configs/scaling.yaml);
#: declared in rbrepro.figure_registry, whose figure_names() has those registered at run time too
FIGURES = tuple(spec.name for spec in _FIGURES)
#: rb's grid draws: numpy (numpy's generator from the seed) or authors (their C++ draws replayed)
RNGS = ("numpy", "authors")
#: standard (docs/design.md §2 metrics) or authors (their Performance: a tie is wrong, labels 0 ... C-1)
SCORINGS = ("standard", "authors")
#: a sweep's protocol (docs/design.md §2a)
PROTOCOLS = ("fair", "as-published", "custom")
#: where a band of seeds is run: at the chosen sigma, or at every sigma of the grid
BAND_AT = ("chosen", "grid")


def needs_cg(what: str, solver: str, solved_by: str | None = None, instead: str = "") -> str | None:
    """The one refusal of a stopping rule that stops CG's iterations (`what`: "stopping 'validation'",
    "early_stopping") where the solver that runs (`solved_by`, else `solver`) has none; None where it
    has. `instead` ends the advice ("stopping 'residual'")."""
    runs = solved_by or solver
    if is_cg(runs):
        return None
    by = "" if runs == solver else f", solving by {runs},"
    other = f", or {instead}" if instead else ""
    return f"{what} stops CG's iterations; solver {solver!r}{by} has none: choose solver {' or '.join(CG_SOLVERS)}{other}"
