"""The package's layering, checked by an AST walk over every module: imports go one way (a module
imports only its own layer or lower ones), there is no import cycle (not even through imports
inside functions), and the solvers see operators,
never the feature maps (solvers/ imports nothing from features/). Analysis stands apart from
drawing: the report and the theory read rbrepro.analysis, never plots/, and the report is
computed without matplotlib."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rbrepro"

#: lowest first; a module may import its own layer and the layers below
LAYERS = [
    {"rbrepro", "rbrepro.errors", "rbrepro.settings", "rbrepro.memory", "rbrepro.provenance", "rbrepro.yamlconf", "rbrepro.metrics"},
    {"rbrepro.data"},
    {"rbrepro.features", "rbrepro.solvers"},
    {"rbrepro.models"},
    {"rbrepro.sweep", "rbrepro.published", "rbrepro.distributed"},
    {"rbrepro.analysis", "rbrepro.drawing"},
    {"rbrepro.plots", "rbrepro.theory"},
    {"rbrepro.report"},
    {"rbrepro.cli", "rbrepro.__main__"},
]


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    base = PACKAGE.parent / name.replace(".", "/")
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def import_graph(top_level_only: bool = False) -> dict[str, set[str]]:
    """module -> the rbrepro modules it imports (a name imported from a package resolves to the
    submodule it names where there is one, so a package's re-exports are not edges to itself).
    top_level_only: only the imports run when the module is imported (not those inside functions,
    which run later and are how a module reaches a sibling that imports it)."""
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        deps = set()
        tree = ast.parse(path.read_text())
        for node in (tree.body if top_level_only else ast.walk(tree)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rbrepro"):
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    deps.add(sub if _is_module(sub) else node.module)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.startswith("rbrepro"))
        graph[_module(path)] = deps - {_module(path)}
    return graph


def _layer(module: str) -> int:
    for i, layer in enumerate(LAYERS):
        for top in sorted(layer, key=len, reverse=True):
            if module == top or (top != "rbrepro" and module.startswith(top + ".")):
                return i
    return 0


def test_imports_go_one_way_down_the_layers():
    upward = [(m, d) for m, deps in import_graph().items() for d in deps if _layer(d) > _layer(m)]
    assert upward == [], f"modules importing from a higher layer: {upward}"


def test_the_solvers_never_import_the_feature_maps_nor_the_reverse():
    graph = import_graph()
    crossing = [(m, d) for m, deps in graph.items() for d in deps
                if (m.startswith("rbrepro.solvers") and d.startswith("rbrepro.features"))
                or (m.startswith("rbrepro.features") and d.startswith("rbrepro.solvers"))]
    assert crossing == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    cycles = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, stack + [dep])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return cycles


def test_there_is_no_import_cycle():
    cycles = _cycles(import_graph(top_level_only=True))
    assert cycles == [], f"import cycles: {cycles}"


def test_there_is_no_import_cycle_even_through_imports_inside_functions():
    """No circle closed by a lazy import either (models/_base -> persist -> the estimators -> _base
    was one): persist reads each class's own saved state and finds classes through the registry."""
    cycles = _cycles(import_graph())
    assert cycles == [], f"import cycles through function-level imports: {cycles}"


def test_the_report_and_the_theory_import_nothing_from_the_figures():
    graph = import_graph()
    reaching = [(m, d) for m, deps in graph.items() for d in deps
                if m.startswith(("rbrepro.report", "rbrepro.theory")) and d.startswith("rbrepro.plots")]
    assert reaching == []


def test_the_analysis_and_the_report_never_import_matplotlib_nor_the_drawing():
    graph = import_graph()
    drawing = [(m, d) for m, deps in graph.items() for d in deps
               if m.startswith(("rbrepro.analysis", "rbrepro.report")) and d.startswith(("rbrepro.drawing",
                                                                                          "rbrepro.plots"))]
    assert drawing == []
    for path in [*(PACKAGE / "analysis").rglob("*.py"), *(PACKAGE / "report").rglob("*.py")]:
        nodes = list(ast.walk(ast.parse(path.read_text())))
        names = {a.name for n in nodes if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in nodes if isinstance(n, ast.ImportFrom) and n.module}
        assert not [n for n in names if n.split(".")[0] == "matplotlib"], path


def test_computing_the_report_loads_no_matplotlib():
    """The report's claims and counts, computed from the committed CSVs in a fresh interpreter,
    leave matplotlib (and the figures) unloaded."""
    code = ("import sys; from rbrepro.report.render import build_report; report, block = build_report(sys.argv[1]); "
            "assert 'Verdicts in brief' in report and block; "
            "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib' "
            "or m.startswith(('rbrepro.plots', 'rbrepro.drawing'))); assert not loaded, loaded")
    done = subprocess.run([sys.executable, "-c", code, str(PACKAGE.parent)], capture_output=True, text=True,
                          cwd=PACKAGE.parent, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


#: the size limits every module and function keeps (numba kernels aside: a kernel is one loop nest)
MODULE_LINES, FUNCTION_LINES = 450, 80
#: where a method's name may be written: its registry entry, and the authors' own names for them
NAMED_METHODS_AT = {"rbrepro/models/registry.py", "rbrepro/published/__init__.py"}


def _python_files():
    root = PACKAGE.parent
    return [p for folder in ("rbrepro", "bench") for p in sorted((root / folder).rglob("*.py"))]


def test_every_module_and_function_stays_within_the_limits():
    over = []
    for path in _python_files():
        text = path.read_text()
        if len(text.splitlines()) > MODULE_LINES:
            over.append(f"{path.name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                kernel = any("jit" in ast.unparse(d) or "intrinsic" in ast.unparse(d) for d in node.decorator_list)
                if not kernel and node.end_lineno - node.lineno + 1 > FUNCTION_LINES:
                    over.append(f"{path.name}:{node.lineno} {node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert over == []


def test_no_module_outside_the_registry_names_a_method_to_decide_behaviour():
    """A method's name written as a string in a comparison, a membership test, a dict key or a default
    argument decides behaviour: only the registry (and the authors' names for their methods) may."""
    from rbrepro.models.registry import BUILT_IN

    names = {spec.name for spec in BUILT_IN}
    found = []
    for path in _python_files():
        rel = path.relative_to(PACKAGE.parent).as_posix()
        if rel in NAMED_METHODS_AT or rel.startswith("bench/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            deciding = []
            if isinstance(node, ast.Compare):
                deciding = [node.left, *node.comparators]
            elif isinstance(node, ast.Dict):
                deciding = list(node.keys)
            elif isinstance(node, ast.arguments):
                deciding = [*node.defaults, *node.kw_defaults]
            for value in deciding:
                parts = value.elts if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else [value]
                found += [f"{rel}:{node.lineno if hasattr(node, 'lineno') else ''} {p.value!r}" for p in parts
                          if isinstance(p, ast.Constant) and p.value in names]
    assert found == []
