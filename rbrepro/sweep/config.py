"""Sweep configs: YAML validated into typed objects before any work starts.

Every error names the file, the line and the key path at fault and what is allowed,
for example ``configs/fig3.yaml:12: datasets.ijcnn1.R: expected a positive integer
or a list of them, got 'many'``.

Schema (all keys but `name` and `datasets` optional)::

    name: fig3                 # results go to results/<name>/ unless --out says otherwise
    figure: fig3               # which plot the results are for
    methods: [rb]
    seeds: [0]
    threads: 0                 # numba threads per cell; 0 = all cores
    center: false              # subtract the training mean of y (authors' RB driver: no)
    solver: {name: cg, maxit: 50, tol: 1.0e-3}
    defaults: {sigma: [...], R: 16, lam: 0.01}   # per-dataset values override these
    datasets:
      ijcnn1: {R: 17}          # R and lam default to the registry's per-dataset values
"""

from __future__ import annotations

import itertools
import numbers
from dataclasses import dataclass
from pathlib import Path

import yaml

from rbrepro.data.registry import REGISTRY
from rbrepro.models.cell import METHODS, CellParams
from rbrepro.solvers.cg import MAXIT, TOL

FIGURES = ("fig3", "fig4", "fig5", "fig6", "none")
SOLVERS = ("cg",)
MAX_CELLS = 1_000_000


class ConfigError(ValueError):
    """An invalid config; the message is one line naming file, line and key path."""


@dataclass(frozen=True)
class DatasetGrid:
    name: str
    sigma: tuple[float, ...]
    R: tuple[int, ...]
    lam: float


@dataclass(frozen=True)
class SweepConfig:
    name: str
    figure: str
    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    threads: int
    center: bool
    solver: str
    maxit: int
    tol: float
    datasets: tuple[DatasetGrid, ...]

    def cells(self) -> list[CellParams]:
        """Every cell of the grid: datasets x methods x sigma x R x seeds, in a stable order."""
        out = []
        for grid in self.datasets:
            for method, sigma, R, seed in itertools.product(self.methods, grid.sigma, grid.R, self.seeds):
                out.append(CellParams(dataset=grid.name, method=method, sigma=sigma, R=R, lam=grid.lam,
                                      solver=self.solver, maxit=self.maxit, tol=self.tol, center=self.center,
                                      seed=seed, threads=self.threads))
        return out

    def to_dict(self) -> dict:
        """The resolved config (every default filled in), as saved beside the results."""
        return {
            "name": self.name, "figure": self.figure, "methods": list(self.methods), "seeds": list(self.seeds),
            "threads": self.threads, "center": self.center,
            "solver": {"name": self.solver, "maxit": self.maxit, "tol": self.tol},
            "datasets": {g.name: {"sigma": list(g.sigma), "R": list(g.R), "lam": g.lam} for g in self.datasets},
        }


class _Node:
    """A YAML value with the line it came from, for error messages."""

    def __init__(self, value, line: int):
        self.value = value
        self.line = line


def _compose(text: str, file: str):
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{file}:{mark.line + 1}" if mark else file
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{where}: not valid YAML: {problem}") from None
    if root is None:
        raise ConfigError(f"{file}: the config is empty")
    return _wrap(root, file, budget=[100_000])


def _wrap(node, file: str, budget: list[int]) -> _Node:
    """Convert a composed YAML node to _Node trees; rejects tags, duplicates and size bombs."""
    budget[0] -= 1
    line = node.start_mark.line + 1
    if budget[0] < 0:
        raise ConfigError(f"{file}:{line}: the config is too large (aliases expanding without bound?)")
    if isinstance(node, yaml.MappingNode):
        out: dict[str, _Node] = {}
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                raise ConfigError(f"{file}:{k.start_mark.line + 1}: mapping keys must be plain names")
            if k.value in out:
                raise ConfigError(f"{file}:{k.start_mark.line + 1}: duplicate key {k.value!r}")
            out[k.value] = _wrap(v, file, budget)
        return _Node(out, line)
    if isinstance(node, yaml.SequenceNode):
        return _Node([_wrap(v, file, budget) for v in node.value], line)
    try:
        value = yaml.constructor.SafeConstructor().construct_object(node)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file}:{line}: {getattr(exc, 'problem', exc)}") from None
    return _Node(value, line)


class _Reader:
    def __init__(self, file: str):
        self.file = file

    def fail(self, node: _Node, path: str, message: str):
        raise ConfigError(f"{self.file}:{node.line}: {path}: {message}")

    def mapping(self, node: _Node, path: str, allowed: tuple[str, ...]) -> dict[str, _Node]:
        if not isinstance(node.value, dict):
            self.fail(node, path or "(top level)", f"expected a mapping, got {type(node.value).__name__}")
        for key, child in node.value.items():
            if key not in allowed:
                self.fail(child, f"{path}.{key}" if path else key,
                          f"unknown key; allowed here: {', '.join(allowed)}")
        return node.value

    def number(self, node: _Node, path: str, positive=True, integer=False, allow_zero=False):
        v = node.value
        kind = "integer" if integer else "number"
        ok = isinstance(v, numbers.Integral) if integer else isinstance(v, numbers.Real)
        if isinstance(v, bool) or not ok or (not integer and not (v == v and abs(v) != float("inf"))):
            self.fail(node, path, f"expected a {'positive ' if positive else ''}{kind}, got {v!r}")
        if positive and (v < 0 or (v == 0 and not allow_zero)):
            self.fail(node, path, f"expected a {'non-negative' if allow_zero else 'positive'} {kind}, got {v!r}")
        return int(v) if integer else float(v)

    def number_list(self, node: _Node, path: str, integer=False, allow_zero=False) -> tuple:
        items = node.value if isinstance(node.value, list) else [node]
        if not items:
            self.fail(node, path, "expected at least one value")
        values = tuple(self.number(n, f"{path}[{i}]", integer=integer, allow_zero=allow_zero) for i, n in enumerate(items))
        if len(set(values)) != len(values):
            self.fail(node, path, f"repeated values in {list(values)}")
        return values

    def choice(self, node: _Node, path: str, allowed: tuple[str, ...]) -> str:
        if node.value not in allowed:
            self.fail(node, path, f"expected one of {', '.join(allowed)}, got {node.value!r}")
        return node.value

    def boolean(self, node: _Node, path: str) -> bool:
        if not isinstance(node.value, bool):
            self.fail(node, path, f"expected true or false, got {node.value!r}")
        return node.value


TOP_KEYS = ("name", "figure", "description", "methods", "seeds", "threads", "center", "solver", "defaults",
            "datasets")
GRID_KEYS = ("sigma", "R", "lam")


def parse_config(text: str, file: str = "<config>") -> SweepConfig:
    """Validate YAML text into a SweepConfig (raises ConfigError naming file:line: key)."""
    rd = _Reader(file)
    top = rd.mapping(_compose(text, file), "", TOP_KEYS)
    if "name" not in top:
        raise ConfigError(f"{file}:1: name: missing; give the sweep a name (it names the results folder)")
    name = top["name"].value
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "-_." for c in name):
        rd.fail(top["name"], "name", f"expected a name of letters, digits, '-', '_' or '.', got {name!r}")
    figure = rd.choice(top["figure"], "figure", FIGURES) if "figure" in top else "none"
    methods = ("rb",)
    if "methods" in top:
        items = top["methods"].value if isinstance(top["methods"].value, list) else [top["methods"]]
        methods = tuple(rd.choice(n, f"methods[{i}]", METHODS) for i, n in enumerate(items))
    seeds = rd.number_list(top["seeds"], "seeds", integer=True, allow_zero=True) if "seeds" in top else (0,)
    threads = rd.number(top["threads"], "threads", integer=True, allow_zero=True) if "threads" in top else 0
    center = rd.boolean(top["center"], "center") if "center" in top else False
    solver, maxit, tol = "cg", MAXIT, TOL
    if "solver" in top:
        s = rd.mapping(top["solver"], "solver", ("name", "maxit", "tol"))
        solver = rd.choice(s["name"], "solver.name", SOLVERS) if "name" in s else solver
        maxit = rd.number(s["maxit"], "solver.maxit", integer=True, allow_zero=True) if "maxit" in s else maxit
        tol = rd.number(s["tol"], "solver.tol") if "tol" in s else tol
    defaults = rd.mapping(top["defaults"], "defaults", GRID_KEYS) if "defaults" in top else {}
    if "datasets" not in top:
        raise ConfigError(f"{file}:1: datasets: missing; list at least one of {', '.join(sorted(REGISTRY))}")
    ds_node = top["datasets"]
    if isinstance(ds_node.value, list):  # a plain list of names: every value from defaults/registry
        ds_node = _Node({n.value if isinstance(n.value, str) else str(n.value): _Node({}, n.line)
                         for n in ds_node.value}, ds_node.line)
    datasets = rd.mapping(ds_node, "datasets", tuple(REGISTRY))
    if not datasets:
        rd.fail(ds_node, "datasets", "expected at least one dataset")

    grids = []
    n_cells = 0
    for dname, dnode in datasets.items():
        path = f"datasets.{dname}"
        own = rd.mapping(dnode, path, GRID_KEYS) if dnode.value is not None else {}
        spec = REGISTRY[dname]

        def pick(key, _own=own, _path=path):
            if key in _own:
                return _own[key], f"{_path}.{key}"
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
        grids.append(DatasetGrid(dname, sigma, R, lam))
        n_cells += len(sigma) * len(R) * len(seeds) * len(methods)
    if n_cells > MAX_CELLS:
        raise ConfigError(f"{file}: the grid has {n_cells} cells, more than the {MAX_CELLS} allowed")
    return SweepConfig(name=name, figure=figure, methods=methods, seeds=seeds, threads=threads, center=center,
                       solver=solver, maxit=maxit, tol=tol, datasets=tuple(grids))


def load_config(path: str | Path) -> SweepConfig:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config: {exc.strerror or exc}") from None
    return parse_config(text, str(path))
