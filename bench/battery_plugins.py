"""The hostile-input battery's plug-in cases: installed packages (a dist-info folder a process sees by
PYTHONPATH, as pip would leave it) whose entry point in `rbrepro.methods` is broken in one way each,
and the commands that must keep working beside them, or name the plug-in at fault."""

from __future__ import annotations

from pathlib import Path

from bench.battery_cases import Case

#: a feature method whose feature map's output or memory model is broken as FAULT (an environment variable) says
HOSTILE_MODULE = '''
import os
import numpy as np
from sklearn.base import BaseEstimator
from rbrepro.models.registry import MethodSpec

FAULT = os.environ.get("HOSTILE_FAULT", "")


class Features(BaseEstimator):
    _saved_arrays = ()
    _saved_scalars = ("n_features_in_",)

    def __init__(self, *, n_components=1, sigma=1.0, random_state=None):
        self.n_components, self.sigma, self.random_state = n_components, sigma, random_state

    @staticmethod
    def fit_memory(n, d, R):
        return {"nan memory": float("nan"), "zero memory": 0.0}.get(FAULT, 8.0 * n * d)

    def fit(self, X, y=None):
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X):
        Z = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
        if FAULT == "a row short":
            return Z[:-1]
        if FAULT == "nan":
            return np.full_like(Z, np.nan)
        if FAULT == "1-d":
            return Z[:, 0]
        if FAULT == "strings":
            return Z.astype(str)
        return Z


METHOD = MethodSpec(name="hostile", title="hostile", role="baseline", r_meaning="unused",
                    r_parameter="n_components", default_solver="direct", solvers=("default", "cg", "direct"),
                    kernels=("l1",), memory="features", features=Features, center=True,
                    style=("hostile", "tab:olive", "x"))
'''


def plugin_dist(root: Path, dist: str, entries: dict[str, str], modules: dict[str, str] | None = None) -> Path:
    """An installed distribution `dist` under `root` (put `root` on PYTHONPATH): its dist-info folder
    declaring `entries` (name -> "module:attr") in the group rbrepro.methods, and `modules`
    (name -> source) beside it."""
    info = root / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[rbrepro.methods]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items()))
    for name, source in (modules or {}).items():
        (root / f"{name}.py").write_text(source)
    return root


#: broken packages: (distribution, entry point, module source or None for a missing module)
BROKEN = {
    "a missing module": ("broken-missing", "gone", None),
    "a module that exits": ("broken-exits", "quits", "raise SystemExit(3)\n"),
    "a module that raises": ("broken-raises", "raises", "raise RuntimeError('plug-in bug')\n"),
    "an entry that is not a MethodSpec": ("broken-type", "number", "METHOD = 42\n"),
}


def plugin_cases(tmp: Path) -> list[Case]:
    cases = []
    for label, (dist, entry, source) in BROKEN.items():
        module = dist.replace("-", "_")
        root = plugin_dist(tmp / "plugins" / dist, dist, {entry: f"{module}:METHOD"},
                           {module: source} if source else None)
        env = {"PYTHONPATH": str(root)}
        said = (lambda d: lambda err: d in err)(dist)  # the warning names the package
        cases += [
            Case("plug-in", f"{label}: --version", ["--version"], expect="ok", env=env, check_err=said,
                 check_ok=lambda out: out.startswith("rbrepro ")),
            Case("plug-in", f"{label}: train rb", ["train", "digits", "--R", "8"], expect="ok", env=env, check_err=said,
                 check_ok=lambda out: "accuracy" in out),
        ]
    root = plugin_dist(tmp / "plugins" / "hostile", "hostile-features", {"hostile": "hostile_features:METHOD"},
                       {"hostile_features": HOSTILE_MODULE})
    for fault in ("a row short", "nan", "1-d", "strings", "nan memory", "zero memory"):
        cases.append(Case("plug-in", f"feature map: {fault}", ["train", "digits", "--method", "hostile", "--R", "4"],
                          ("hostile-features", "'hostile'"), env={"PYTHONPATH": str(root), "HOSTILE_FAULT": fault}))
    cases.append(Case("plug-in", "feature map that keeps its contract",
                      ["train", "digits", "--method", "hostile", "--R", "4"], expect="ok",
                      env={"PYTHONPATH": str(root)}, check_ok=lambda out: "accuracy" in out))
    return cases
