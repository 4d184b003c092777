"""The cell plan of a sweep config: which cells a parsed SweepConfig (sweep.config) asks for, in a
stable order, each keyed as published rows are (sweep.keys). The config is the parsed YAML; the
cells are computed from it here, so a parameter's way from the config to a row goes one way: config
-> these functions -> the runner's jobs -> rows.

- `selection_cells`: the cells that choose sigma on validation data (first, when the config does);
- `cells_on_test`: the cells evaluated on test data (with a choice pending, the chosen sigmas only);
- `band_cells`: the extra seeds that widen each point into a band.
"""

from __future__ import annotations

import itertools

from rbrepro.models.cell import CellParams
from rbrepro.models.registry import METHODS
from rbrepro.solvers.cg import MAXIT, TOL
from rbrepro.sweep.config import DatasetGrid, SweepConfig
from rbrepro.sweep.selection import PER_EXACT


def cell(config: SweepConfig, grid: DatasetGrid, method: str, sigma: float, R: int, seed: int, threads: int,
     variant: str, evaluate_on: str = "test", rng: str | None = None) -> CellParams:
    """One cell of the config: the grid point's parameters, CG's settings the method's own where it
    solves by Cholesky, the stopping rule settled (CellParams.resolved): the key a published row has."""
    spec = METHODS[method]
    solver = "default" if spec.cholesky else config.solver
    kernel = config.kernel if config.kernel in spec.kernels else spec.kernels[0]  # rb: l1 whatever the config's
    rng = (config.rng if rng is None else rng) if spec.authors_draws else "numpy"
    # the exact kernel and the block approximation solve by Cholesky: CG's settings are not theirs, so a
    # config's tol (Fig. 3's 1e-15) leaves their cells, and keys, as they are (shared with Fig. 5's)
    maxit, tol = (MAXIT, TOL) if spec.cholesky else (config.maxit, config.tol)
    return CellParams(dataset=grid.name, method=method, sigma=sigma, kernel=kernel, R=R, lam=grid.lam,
                      solver=solver, maxit=maxit, tol=tol, center=config.center, seed=seed,
                      threads=threads, loss=config.loss, epochs=config.epochs, variant=variant,
                      evaluate_on=evaluate_on, scaling=grid.scaling, rng=rng, scoring=config.scoring,
                      stopping="residual" if spec.cholesky else config.stopping).resolved()


def chooses_later(config: SweepConfig, method: str) -> bool:
    """Whether this method's test cells wait for a choice (rather than running the grid)."""
    line = not METHODS[method].has_R  # the exact kernel: a line, not a curve
    if config.selection is None or line and config.selection.on == "test":
        return False
    if config.selection.on == "test":
        return config.selection.per_method(method) == PER_EXACT
    return not (config.selection.run == "grid" and not line)


def variants(config: SweepConfig, threads: int) -> tuple[str, ...]:
    """The RCD variants of a cell at `threads`: one thread runs the sequential Alg. 2 whatever the variant."""
    return config.variants if (config.solver == "rcd" and threads > 1) else config.variants[:1]


def cells_on_test(config: SweepConfig, chosen_sigma: dict | None = None) -> list[CellParams]:
    """The cells evaluated on test data, in a stable order. Without selection, choosing on
    test, or with `run: grid` (but for the exact kernel), that is the whole grid. Otherwise
    `chosen_sigma` maps (dataset, method, R) to the chosen sigma, and (dataset, method, R)
    not chosen yet are left out."""
    out = []
    for grid in config.datasets:
        for method in grid.methods or config.methods:
            spec = METHODS[method]
            Rs = grid.R if spec.has_R else (0,)  # the exact kernel has no R
            seeds = grid.seeds or config.seeds
            seeds = seeds if spec.randomized else seeds[:1]  # exact: no randomness
            for R in Rs:
                if not chooses_later(config, method):
                    sigmas = grid.sigmas_for(method)
                elif chosen_sigma and (grid.name, method, R) in chosen_sigma:
                    sigmas = (chosen_sigma[(grid.name, method, R)],)
                else:
                    continue
                for sigma, seed, threads in itertools.product(sigmas, seeds, config.threads):
                    for variant in variants(config, threads):
                        out.append(cell(config, grid, method, sigma, R, seed, threads, variant))
    return out


def band_cells(config: SweepConfig, chosen_sigma: dict | None = None) -> list[CellParams]:
    """The cells that widen each published point into a band over seeds (numpy draws): every
    band seed at the chosen sigma of each (dataset, method, R) (`band_at: chosen`), or at
    every test sigma (`grid`). The exact kernel has no randomness and no band."""
    out = []
    for grid in config.datasets:
        for method in grid.methods or config.methods:
            if not METHODS[method].randomized:
                continue
            for R in grid.R:
                if config.band_at == "grid":
                    sigmas = grid.sigmas_for(method)
                elif chosen_sigma and (grid.name, method, R) in chosen_sigma:
                    sigmas = (chosen_sigma[(grid.name, method, R)],)
                else:
                    continue
                for sigma, seed in itertools.product(sigmas, config.band_seeds):
                    out.append(cell(config, grid, method, sigma, R, seed, config.threads[0], config.variants[0],
                                          rng="numpy"))
    return out


def selection_cells(config: SweepConfig) -> list[CellParams]:
    """Cells that choose sigma on validation data: every sigma at every R (per R) or at
    select_R (per dataset), first seed, trained on the training split minus the validation
    rows. None when choosing on test data: the test grid's own cells are the choice."""
    if config.selection is None or config.selection.on == "test":
        return []
    out = []
    for grid in config.datasets:
        for method in grid.methods or config.methods:
            if not METHODS[method].has_R:
                Rs = (0,)
            elif config.selection.per_method(method) == PER_EXACT:
                continue  # takes the exact kernel's choice
            else:
                Rs = grid.R if config.selection.per_method(method) == "R" else (grid.select_R,)
            for R, sigma in itertools.product(Rs, grid.sigmas_for(method)):
                out.append(cell(config, grid, method, sigma, R, (grid.seeds or config.seeds)[0], config.threads[0],
                                      config.variants[0], evaluate_on="validation"))
    return out
