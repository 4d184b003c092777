"""Sweep configs: YAML validated into typed objects before any work starts.

Every error names the file, the line and the key path at fault and what is allowed,
for example ``configs/fig3.yaml:12: datasets.ijcnn1.R: expected a positive integer
or a list of them, got 'many'``.

Schema (all keys but `name` and `datasets` optional)::

    name: fig3                 # results go to runs/<name>/ unless --out says otherwise
    figure: fig3               # which plot the results are for
    methods: [rb]
    seeds: [0]
    threads: [1]               # numba threads per cell (a list is a grid dimension, Fig. 6); 0 = all cores
    exclusive: false           # true: one cell at a time, so timings are undisturbed (Fig. 3, 5, 6)
    retime: 3                  # exclusive only: a cell timed under load (other processes' load above
                               #   LOAD_FLAG_CORES, rbrepro.sweep.quiet) runs again, up to this many more
                               #   times, and the quietest attempt's row is kept (`retimes` in the row);
                               #   also when a sweep resumes [default: 3 if exclusive, else 0]
    cluster: local:4           # fit and predict each cell across a dask cluster: local:N (started per cell)
                               # or tcp://HOST:PORT; rb, rf and nystrom only [default: none, in the worker]
    protocol: fair             # fair | as-published | custom, recorded in every row (docs/design.md §2a):
                               # fair = the L1 kernel for every method, sigma chosen on validation data;
                               # as-published = the authors' choices, the only protocol that may choose on test
    kernel: l1                 # l1 | euclidean: the baselines' kernel (rf, nystrom, block, exact); rb is L1
    sigma_selection: grid      # grid: every sigma is a cell and a point, nothing is chosen. Or a mapping:
      # on: validation         #   validation | test (test: protocol as-published only)
      # per: R                 #   R: one sigma per (dataset, method, R); dataset: one per (dataset, method)
                               #   (on validation: chosen at select_R; on test: the best mean over R);
                               #   exact: the exact kernel's chosen sigma of the dataset (the authors'
                               #   baselines; a dataset without the exact kernel lists one sigma);
                               #   or per method, e.g. {rb: R, default: dataset} (the authors' choice)
      # run: chosen            #   chosen: only the chosen sigma runs on test; grid: every sigma does and
                               #   the chosen one is marked (Fig. 3; the exact kernel, a line there, runs
                               #   its chosen sigma only). Scalars: validation = {on: validation,
                               #   per: R}, test = {on: test, per: R}
    center: false              # subtract the training mean of y [default: per method, as the authors]
    rng: numpy                 # rb's grids: numpy (from the seed) | authors (their C++ draws replayed;
                               #   as-published only, docs/authors-protocol.md)
    scoring: standard          # standard | authors (a tie is wrong, labels 0 ... C-1: as-published only)
    band: {seeds: [0, 1, 2, 3, 4], at: chosen}   # extra cells (numpy draws) that form each point's
                               #   band over seeds: at the chosen sigma, or at every sigma (at: grid);
                               #   the choice itself is made from `seeds` (and `rng`) alone
    solver: {name: default, maxit: 50, tol: 1.0e-3}   # default | cg | pcg | direct | rcd (+ loss, epochs,
                               #   variant); stopping: auto (the default: validation where the method
                               #   solves by CG, with pcg for a default solver) | residual (tol or maxit,
                               #   the authors'; every published config pins it) | validation (cg/pcg:
                               #   the best iterate on held-out training rows, solvers.stopping)
    defaults: {sigma: [...], R: 16, lam: 0.01, scaling: default}   # per-dataset values override these;
                               # scaling: default (the registry's) | minmax | maxabs | published
    dataset_files: [my-datasets.yaml]   # your own datasets (see rbrepro.data.user), relative to this file
    datasets:
      ijcnn1: {R: 17}          # R and lam default to the registry's per-dataset values; also
                               # exact_sigma (sigma grid of the exact kernel), baseline_sigma (of rf,
                               # nystrom and block), scaling, select_R, targets (Fig. 5),
                               # methods and seeds (subsets for this dataset)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rbrepro.data.registry import REGISTRY
from rbrepro.data.user import load_datasets_file
from rbrepro.figure_registry import figure_names
from rbrepro.models.registry import METHODS, REFERENCE, SUBJECT, method_names, solver_conflict
from rbrepro.solver_registry import solver_names
from rbrepro.solvers.cg import MAXIT, TOL
from rbrepro.sweep.selection import PER_EXACT, Selection, parse_selection
from rbrepro.vocabulary import (
    BAND_AT,
    KERNELS,
    LOSSES,
    PROTOCOLS,
    RNGS,
    SCALINGS,
    SCORINGS,
    STOPPINGS,
    VARIANTS,
    needs_cg,
)
from rbrepro.yamlconf import ConfigError, Node, Reader, compose

__all__ = ["ConfigError", "DatasetGrid", "Selection", "SweepConfig", "load_config", "parse_config"]

MAX_CELLS = 1_000_000


@dataclass(frozen=True)
class DatasetGrid:
    name: str
    sigma: tuple[float, ...]
    R: tuple[int, ...]
    lam: float
    exact_sigma: tuple[float, ...] = ()   # sigma grid of the exact kernel (default: sigma)
    select_R: int = 0                     # R at which sigma is selected (sigma_selection != grid)
    targets: tuple[float, ...] = ()       # Fig. 5: target performances
    methods: tuple[str, ...] = ()         # a subset of the config's methods for this dataset (default: all)
    seeds: tuple[int, ...] = ()           # this dataset's seeds (default: the config's), e.g. fewer where cells are dear
    scaling: str = "default"              # default (the registry's) | minmax | maxabs | published
    baseline_sigma: tuple[float, ...] = ()  # sigma grid of rf, nystrom and block (default: sigma)

    def sigmas_for(self, method: str) -> tuple[float, ...]:
        role = METHODS[method].role
        if role == "reference" and self.exact_sigma:
            return self.exact_sigma
        if role == "baseline" and self.baseline_sigma:
            return self.baseline_sigma
        return self.sigma


@dataclass(frozen=True)
class SweepConfig:
    name: str
    figure: str
    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    threads: tuple[int, ...]
    center: bool | None
    solver: str
    maxit: int
    tol: float
    datasets: tuple[DatasetGrid, ...]
    dataset_files: tuple[str, ...] = ()
    loss: str = "squared_hinge"
    epochs: int = 20
    variants: tuple[str, ...] = ("async",)
    exclusive: bool = False
    retime: int = 0                       # retimes of a cell timed under load (exclusive configs only)
    cluster: str | None = None            # the dask cluster every cell's fit runs on (rbrepro.distributed)
    selection: Selection | None = None    # None: the grid, nothing chosen
    protocol: str = "custom"
    kernel: str = "l1"
    rng: str = "numpy"                    # rb's grid draws in the cells that choose (band cells: numpy)
    scoring: str = "standard"
    stopping: str = "auto"                # CG's stopping rule (vocabulary.STOPPINGS; cells are resolved)
    band_seeds: tuple[int, ...] = ()      # seeds of the band cells (numpy draws)
    band_at: str = "chosen"               # chosen: at the chosen sigma; grid: at every test sigma
    user_datasets: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def sigma_selection(self) -> str:
        """"grid", or the data sigma is chosen on ("validation" / "test")."""
        return "grid" if self.selection is None else self.selection.on

    def to_dict(self) -> dict:
        """The resolved config (every default filled in), as saved beside the results."""
        return {
            "name": self.name, "figure": self.figure, "methods": list(self.methods), "seeds": list(self.seeds),
            "threads": list(self.threads), "center": self.center, "exclusive": self.exclusive,
            "retime": self.retime,
            **({"cluster": self.cluster} if self.cluster else {}),
            "protocol": self.protocol, "kernel": self.kernel, "rng": self.rng, "scoring": self.scoring,
            **({"band": {"seeds": list(self.band_seeds), "at": self.band_at}} if self.band_seeds else {}),
            "sigma_selection": "grid" if self.selection is None else self.selection.to_dict(),
            "solver": {"name": self.solver, "maxit": self.maxit, "tol": self.tol, "loss": self.loss,
                       "epochs": self.epochs, "variant": list(self.variants),
                       **({"stopping": self.stopping} if self.stopping != "residual" else {})},
            "dataset_files": list(self.dataset_files),
            "datasets": {g.name: {"sigma": list(g.sigma), "R": list(g.R), "lam": g.lam,
                                  **({"exact_sigma": list(g.exact_sigma)} if g.exact_sigma else {}),
                                  **({"baseline_sigma": list(g.baseline_sigma)} if g.baseline_sigma else {}),
                                  **({"select_R": g.select_R} if self.selection is not None else {}),
                                  "scaling": g.scaling,
                                  **({"targets": list(g.targets)} if g.targets else {}),
                                  **({"methods": list(g.methods)} if g.methods else {}),
                                  **({"seeds": list(g.seeds)} if g.seeds else {})}
                         for g in self.datasets},
        }


TOP_KEYS = ("name", "figure", "description", "methods", "seeds", "threads", "center", "solver", "defaults",
            "dataset_files", "datasets", "exclusive", "sigma_selection", "protocol", "kernel", "rng", "scoring",
            "band", "cluster", "retime")
GRID_KEYS = ("sigma", "R", "lam", "exact_sigma", "baseline_sigma", "select_R", "targets", "methods", "seeds",
             "scaling")
#: the solver's settings when a config names none (SweepConfig's fields)
SOLVER_DEFAULTS = {"solver": "default", "maxit": MAXIT, "tol": TOL, "loss": "squared_hinge", "epochs": 20,
                   "variants": ("async",), "stopping": "auto"}


def parse_config(text: str, file: str = "<config>") -> SweepConfig:
    """Validate YAML text into a SweepConfig (raises ConfigError naming file:line: key). Keys are
    checked in a fixed order, section by section, so a config with several faults names the same one."""
    rd = Reader(file)
    top = rd.mapping(compose(text, file), "", TOP_KEYS)
    name = _name(rd, top, file)
    figure = rd.choice(top["figure"], "figure", (*figure_names(), "none")) if "figure" in top else "none"
    methods = rd.choice_list(top["methods"], "methods", method_names()) if "methods" in top else (SUBJECT,)
    seeds = rd.number_list(top["seeds"], "seeds", integer=True, allow_zero=True) if "seeds" in top else (0,)
    threads = rd.number_list(top["threads"], "threads", integer=True, allow_zero=True) if "threads" in top else (1,)
    exclusive = rd.boolean(top["exclusive"], "exclusive") if "exclusive" in top else False
    retime = _retime(rd, top, exclusive)
    protocol = rd.choice(top["protocol"], "protocol", PROTOCOLS) if "protocol" in top else "custom"
    kernel = rd.choice(top["kernel"], "kernel", KERNELS) if "kernel" in top else "l1"
    selection = parse_selection(rd, top["sigma_selection"], protocol) if "sigma_selection" in top else None
    rng, scoring = _draws_and_scoring(rd, top, protocol)
    band_seeds, band_at = _band(rd, top["band"], selection) if "band" in top else ((), "chosen")
    if protocol == "fair" and kernel != "l1":
        rd.fail(top["protocol"], "protocol", f"the fair protocol uses the L1 kernel for every method, but kernel is "
                                             f"{kernel!r}; use protocol: custom (or as-published)")
    center = rd.boolean(top["center"], "center") if "center" in top else None
    solver = _solver(rd, top["solver"], methods, kernel, rng, scoring) if "solver" in top else dict(SOLVER_DEFAULTS)
    defaults = rd.mapping(top["defaults"], "defaults", GRID_KEYS) if "defaults" in top else {}
    dataset_files, extra = _dataset_files(rd, top["dataset_files"], file) if "dataset_files" in top else ([], {})
    grids = [_grid(rd, dname, dnode, defaults, extra.get(dname) or REGISTRY[dname], methods, selection)
             for dname, dnode in _datasets(rd, top, file, extra).items()]
    n_cells = sum((len(g.sigma) + len(g.exact_sigma) + len(g.baseline_sigma)) * len(g.R) * len(g.seeds or seeds)
                  * len(methods) * len(threads) * len(solver["variants"]) for g in grids)
    if n_cells > MAX_CELLS:
        raise ConfigError(f"{file}: the grid has {n_cells} cells, more than the {MAX_CELLS} allowed")
    cluster = None
    if "cluster" in top:  # read where the distributed fit's rules live (imported only for such configs)
        from rbrepro.distributed.config import cluster_key

        cluster = cluster_key(rd, top["cluster"], methods + tuple(m for g in grids for m in g.methods))
    return SweepConfig(name=name, figure=figure, methods=methods, seeds=seeds, threads=threads, center=center,
                       datasets=tuple(grids), dataset_files=tuple(dataset_files), user_datasets=extra,
                       exclusive=exclusive, retime=retime, selection=selection, protocol=protocol, kernel=kernel, rng=rng,
                       scoring=scoring, band_seeds=band_seeds, band_at=band_at, cluster=cluster, **solver)


def _name(rd: Reader, top: dict[str, Node], file: str) -> str:
    """The sweep's name: it names a folder under results/, so letters, digits, '-', '_' and '.' only."""
    if "name" not in top:
        raise ConfigError(f"{file}:1: name: missing; give the sweep a name (it names the results folder)")
    name = top["name"].value
    if not isinstance(name, str) or not name or not name[0].isalnum() or len(name) > 100 \
            or not all(c.isalnum() or c in "-_." for c in name):
        rd.fail(top["name"], "name", f"expected a name of letters, digits, '-', '_' or '.' that starts with a "
                                     f"letter or digit (it names a folder under results/), got {name!r}")
    return name


#: retimes of a cell timed under load when an exclusive config names none
RETIME_DEFAULT = 3


def _retime(rd: Reader, top: dict[str, Node], exclusive: bool) -> int:
    """How many more times a cell timed under load runs: a count of 0 or more, exclusive configs
    only (cells that run side by side are always beside another; their timings are not retimed)."""
    if "retime" not in top:
        return RETIME_DEFAULT if exclusive else 0
    retime = rd.number(top["retime"], "retime", integer=True, allow_zero=True)
    if retime and not exclusive:
        rd.fail(top["retime"], "retime", f"got {retime} without `exclusive: true`: retiming cells timed under "
                                         f"load needs one cell at a time (cells side by side are always "
                                         f"disturbed); add exclusive: true or drop retime")
    return retime


def _draws_and_scoring(rd: Reader, top: dict[str, Node], protocol: str) -> tuple[str, str]:
    """rb's draws and the scoring: other than numpy and standard only as published (the authors' code)."""
    rng = rd.choice(top["rng"], "rng", RNGS) if "rng" in top else "numpy"
    scoring = rd.choice(top["scoring"], "scoring", SCORINGS) if "scoring" in top else "standard"
    for key, value, default in (("rng", rng, "numpy"), ("scoring", scoring, "standard")):
        if value != default and protocol != "as-published":
            rd.fail(top[key], key, f"{key}: {value} replays the authors' own code, defects included; it is allowed "
                                   f"only with `protocol: as-published`")
    return rng, scoring


def _band(rd: Reader, node: Node, selection: Selection | None) -> tuple[tuple[int, ...], str]:
    """The band's seeds and where its cells run (at the chosen sigma needs a choice)."""
    b = rd.mapping(node, "band", ("seeds", "at"))
    if "seeds" not in b:
        rd.fail(node, "band", "give the band's seeds, e.g. {seeds: [0, 1, 2, 3, 4], at: chosen}")
    band_seeds = rd.number_list(b["seeds"], "band.seeds", integer=True, allow_zero=True)
    band_at = rd.choice(b["at"], "band.at", BAND_AT) if "at" in b else "chosen"
    if band_at == "chosen" and selection is None:
        rd.fail(node, "band.at", "a band at the chosen sigma needs sigma_selection; use at: grid")
    return band_seeds, band_at


def _solver(rd: Reader, node: Node, methods: tuple[str, ...], kernel: str, rng: str, scoring: str) -> dict:
    """The solver section as SweepConfig's fields; rcd only where it can run (its methods, L1, numpy draws)."""
    s = rd.mapping(node, "solver", ("name", "maxit", "tol", "loss", "epochs", "variant", "stopping"))
    out = dict(SOLVER_DEFAULTS)
    out["solver"] = solver = rd.choice(s["name"], "solver.name", solver_names()) if "name" in s else out["solver"]
    if "maxit" in s:
        out["maxit"] = rd.number(s["maxit"], "solver.maxit", integer=True, allow_zero=True)
    if "tol" in s:
        out["tol"] = rd.number(s["tol"], "solver.tol")
    if "loss" in s:
        out["loss"] = rd.choice(s["loss"], "solver.loss", LOSSES)
    if "epochs" in s:
        out["epochs"] = rd.number(s["epochs"], "solver.epochs", integer=True)
    if "variant" in s:
        out["variants"] = rd.choice_list(s["variant"], "solver.variant", VARIANTS)
    if "stopping" in s:
        out["stopping"] = rd.choice(s["stopping"], "solver.stopping", STOPPINGS)
        refusal = needs_cg("stopping 'validation'", solver) if out["stopping"] == "validation" else None
        if refusal:
            rd.fail(s["stopping"], "solver.stopping", refusal)
    conflict = solver_conflict(solver, methods, kernel=kernel, rng=rng, scoring=scoring)  # the cells' own rule
    if conflict:
        rd.fail(s["name"], "solver.name", conflict)
    return out


def _dataset_files(rd: Reader, node: Node, file: str) -> tuple[list[str], dict]:
    """The user's dataset files (relative to the config) and the datasets they register."""
    dataset_files, extra = [], {}
    base = Path(file).parent
    for i, item in enumerate(rd.items(node)):
        path = (base / rd.string(item, f"dataset_files[{i}]")).resolve()
        if not path.is_file():
            rd.fail(item, f"dataset_files[{i}]", f"no such file: {path}")
        dataset_files.append(str(path))
        extra.update(load_datasets_file(path))
    return dataset_files, extra


def _datasets(rd: Reader, top: dict[str, Node], file: str, extra: dict) -> dict[str, Node]:
    """The datasets section, a mapping of name to its own grid keys (a plain list of names: none)."""
    if "datasets" not in top:
        raise ConfigError(f"{file}:1: datasets: missing; list at least one of {', '.join(sorted(REGISTRY))}")
    ds_node = top["datasets"]
    if isinstance(ds_node.value, list):  # a plain list of names: every value from defaults/registry
        ds_node = Node({n.value if isinstance(n.value, str) else str(n.value): Node({}, n.line)
                         for n in ds_node.value}, ds_node.line)
    for name, node in ds_node.value.items() if isinstance(ds_node.value, dict) else ():
        if name not in REGISTRY and name not in extra and ("/" in str(name) or "." in str(name)):
            rd.fail(node, f"datasets.{name}", "a file path is not a dataset name here: register the file by name "
                                              "in a datasets YAML file and list that file under dataset_files "
                                              "(see docs/own-data.md)")
    datasets = rd.mapping(ds_node, "datasets", (*REGISTRY, *extra))
    if not datasets:
        rd.fail(ds_node, "datasets", "expected at least one dataset")
    return datasets


def _grid(rd: Reader, dname: str, dnode: Node, defaults: dict[str, Node], spec, methods: tuple[str, ...],
          selection: Selection | None) -> DatasetGrid:
    """One dataset's grid: its own keys, else the config's defaults, else the registry's values."""
    path = f"datasets.{dname}"
    own = rd.mapping(dnode, path, GRID_KEYS) if dnode.value is not None else {}

    def pick(key):
        if key in own:
            return own[key], f"{path}.{key}"
        if key in defaults:
            return defaults[key], f"defaults.{key}"
        return None, None

    node, where = pick("sigma")
    if node is None:
        rd.fail(dnode, path, "no sigma grid: give sigma here or under defaults")
    sigma = rd.number_list(node, where)
    node, where = pick("R")
    if node is None:
        if spec.default_R is None:
            rd.fail(dnode, path, f"no R: the registry has no default R for {dname}; give R here")
        R = (spec.default_R,)
    else:
        R = rd.number_list(node, where, integer=True)
    node, where = pick("lam")
    lam = spec.lam if node is None else rd.number(node, where, allow_zero=True)
    node, where = pick("exact_sigma")
    exact_sigma = rd.number_list(node, where) if node is not None else ()
    node, where = pick("baseline_sigma")
    baseline_sigma = rd.number_list(node, where) if node is not None else ()
    node, where = pick("select_R")
    select_R = rd.number(node, where, integer=True) if node is not None else sorted(R)[len(R) // 2]
    node, where = pick("targets")
    targets = rd.number_list(node, where) if node is not None else ()
    own_methods = rd.choice_list(own["methods"], f"{path}.methods", methods) if "methods" in own else ()
    node, where = pick("seeds")
    own_seeds = rd.number_list(node, where, integer=True, allow_zero=True) if node is not None else ()
    node, where = pick("scaling")
    scaling = rd.choice(node, where, SCALINGS) if node is not None else "default"
    grid = DatasetGrid(dname, sigma, R, lam, exact_sigma, select_R, targets, own_methods, own_seeds, scaling,
                       baseline_sigma)
    if selection is not None and REFERENCE not in (own_methods or methods):
        for m in own_methods or methods:
            if METHODS[m].has_R and selection.per_method(m) == PER_EXACT and len(grid.sigmas_for(m)) != 1:
                rd.fail(dnode, path, f"{m} takes the exact kernel's sigma (sigma_selection.per), but {dname} "
                                     f"runs no exact kernel: list the one sigma {m} should take "
                                     f"({'baseline_sigma' if METHODS[m].role == 'baseline' else 'sigma'}: [value])")
    return grid


def load_config(path: str | Path) -> SweepConfig:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a YAML text file (byte {exc.start} is not UTF-8)") from None
    return parse_config(text, str(path))


def load_resolved_config(path: str | Path) -> SweepConfig:
    """The config a run was made with, from its config.resolved.yaml: provenance left out, the
    per-method centring default (written as null) left to the parser, and a solver section without
    `stopping` read as the authors' rule, the default when such files were written."""
    import yaml

    path = Path(path)
    try:
        resolved = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot read the resolved config: {exc}") from None
    resolved.pop("provenance", None)
    if resolved.get("center", False) is None:
        resolved.pop("center")
    if isinstance(resolved.get("solver"), dict):
        resolved["solver"].setdefault("stopping", "residual")
    return parse_config(yaml.safe_dump(resolved), str(path))
