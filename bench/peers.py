"""Benchmark: the fastest CPU peers, same data, same machine, one run (issue 35, item 3).

    python -m bench.peers [--datasets ijcnn1 cadata letter] [--repeats 3] [--out bench/results/peers.csv]
                          [--budget 60] [--quick]
    (make bench-peers; needs the mirror: RBREPRO_MIRROR=../shared/data/libsvm)

Time to accuracy. For each dataset the exact kernel (rbrepro's ExactKernelClassifier /
Regressor: the paper's Laplacian kernel exp(-sigma ||x - y||_1), ridge lam) is fitted first, in
the same run, and sets three targets:
  - classification (accuracy %): the exact kernel's test accuracy minus 0.5, 1 and 2 points;
  - regression (cadata; relative error ||y - y_hat|| / ||y||, lower is better): the exact
    kernel's relative error plus 0.005, 0.01 and 0.02, i.e. plus 0.5, 1 and 2 points when the
    relative error is read as a percentage (absolute, not relative, slack: "exact + 0.5 %").
The exact kernel's sigma is the one the fair protocol chose on validation rows (results/fig3:
ijcnn1 0.56, cadata 0.28, letter 0.28); each approximation takes its own width, chosen on the
validation slice below (RB and Nystroem from rbrepro's `--sigma auto` grid at R = 256, RBFSampler
from its gamma grid; the authors' C++ RB takes RB's); lam the registry's (0.01 for all three).

Competitors. Those with a size R climb R = 16, 32, 64, ... (at most 8192): one fit per rung,
stopping at the first R that reaches every target, or after the first fit slower than
--budget seconds. A target's entry is the first R whose test metric reaches it; its time is the
median (min, max) of --repeats fits at that R with the same seed (the ladder's own fit is the
first of them). Time = fit wall time (featurize + solve), prediction excluded; rbrepro's numba
kernels are compiled before any timing.
  - rbrepro RB: RandomBinning{Classifier,Regressor}(n_grids=R, solver="pcg", early_stopping=True)
    where the estimator takes early_stopping, else solver="cg" with its defaults (50 iterations,
    tol 1e-3); the CSV's config column says which ran.
  - scikit-learn Nystroem(kernel="laplacian", gamma=sigma, n_components=R) + Ridge(alpha=lam).
  - scikit-learn RBFSampler(gamma=g, n_components=R) + Ridge(alpha=lam): Gaussian, so its own
    width g, chosen from g0 * {1/9, 1/3, 1, 3, 9} (g0 = 1 / (d var(X)), scikit-learn's "scale")
    at R = 512 on a validation slice: a seeded 20 % of the training rows, fitted on the other
    80 % (at most 10,000 of them). Never the test rows.
  Classification with Ridge is one-vs-all on +-1 targets and the argmax (rbrepro.models.targets,
  as bench.time_to_accuracy does).
  - the exact (Gaussian) kernel through scikit-learn-intelex: sklearnex.svm.SVC for
    classification; sklearnex has no KernelRidge, so sklearnex.svm.SVR for cadata (targets
    standardized on the training rows). C in {1, 10, 100} and gamma in g0 * {1/3, 1, 3} chosen
    on the same validation slice. One size, so a single time: it reaches a target or not.
    It runs in a child process: in this interpreter when sklearnex is installed here, else in
    the one $RBREPRO_SKLEARNEX_PYTHON names (an environment with numpy and scikit-learn-intelex).
    Installing sklearnex pulls in the tbb package, and with libtbb present numba switches its
    threading layer from omp to tbb, which would change rbrepro's own timings: hence a separate
    environment, and a separate process even when it is installed here.
  - the authors' C++ (KRR_OneVsAll_RandBin from teddylfwu/RandomBinning, built by
    bench.authors.build from $RBREPRO_AUTHORS_CHECKOUT): the same rows and scaling, written out
    as LIBSVM text (labels +-1, 0 ... C-1, or the values); their program is also the
    regression one (NumClasses = 1, as their run_exp.sh runs cadata). Time = their TimeTrain
    (features + PCG, 50 iterations, tol 1e-3), as bench.authors reads it.
Every competitor gets the same number of threads (numba's; their OpenMP/OpenBLAS; BLAS's).

Writes the rows to --out (CSV, atomically), every rung of every ladder beside it
(<out>-ladder.csv), the figure <out>.png (test metric against fit time, log x, the targets as
horizontal lines; `draw` redraws it from the two CSVs) and prints a markdown table. What is
missing (no mirror, no sklearnex, no checkout) is skipped with one line.
--quick: at most 2,000 training and 2,000 test rows, R <= 256, 1 repeat, a 10 s budget, written
to bench/results/peers-quick.* unless --out is given; for trying the code, not for numbers.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SIGMA = {"ijcnn1": 0.56, "cadata": 0.28, "letter": 0.28}  # the exact kernel's, chosen on validation (results/fig3)
RS = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
POINTS = (0.5, 1.0, 2.0)  # target slack in points of the metric (relative error: x 0.01)
RBF_SCAN_R = 512
SCAN_R = 256  # where RB's and Nystroem's sigma are chosen (the validation slice)
FIELDS = ["dataset", "target", "target_value", "metric", "method", "config", "reached_R", "median_s", "min_s",
          "max_s", "test_metric", "repeats", "note", "threads", "machine", "git_commit"]
LADDER_FIELDS = ["dataset", "method", "R", "fit_s", "test_metric"]


# ---------------------------------------------------------------------------------------------
# The ladder and the targets (pure: tests/test_bench_peers.py runs them on toy functions)

def higher_is_better(metric_name: str) -> bool:
    return metric_name != "rel_error"


def meets(metric: float, target: float, higher_is_better: bool) -> bool:
    return metric >= target if higher_is_better else metric <= target


def targets_from(exact_metric: float, higher_is_better: bool) -> list[tuple[str, float]]:
    """The three targets: exact - 0.5 / 1 / 2 points (accuracy %), exact + 0.005 / 0.01 / 0.02 (relative error)."""
    if higher_is_better:
        return [(f"exact - {p:g} pt", exact_metric - p) for p in POINTS]
    return [(f"exact + {p:g} pt", exact_metric + p / 100.0) for p in POINTS]


@dataclass
class Outcome:
    """One competitor on one dataset: its ladder [(R, fit_s, metric)], and per target the
    reaching R (None: not reached) with the fit times at that R."""
    method: str
    config: str = ""
    ladder: list = field(default_factory=list)
    reached: dict = field(default_factory=dict)   # target value -> R or None
    times: dict = field(default_factory=dict)     # R -> [fit seconds]
    metric_at: dict = field(default_factory=dict)  # R -> test metric
    note: str = ""


def climb(fit_score, targets: list[float], higher_is_better: bool, rs=RS, budget_s: float = 60.0,
          repeats: int = 3, method: str = "", config: str = "") -> Outcome:
    """Fit at R = rs[0], rs[1], ... (fit_score(R) -> (fit_s, metric)) until every target is
    reached or a fit takes longer than budget_s; then refit at each reaching R until it has
    `repeats` times (the ladder's fit counts as the first)."""
    out = Outcome(method, config)
    out.reached = {t: None for t in targets}
    for R in rs:
        fit_s, metric = fit_score(R)
        out.ladder.append((R, fit_s, metric))
        out.times[R], out.metric_at[R] = [fit_s], metric
        for t in targets:
            if out.reached[t] is None and meets(metric, t, higher_is_better):
                out.reached[t] = R
        if all(r is not None for r in out.reached.values()):
            break
        if fit_s > budget_s:
            out.note = f"ladder ended after R = {R}: one fit took {fit_s:.1f} s > budget {budget_s:g} s"
            break
    for R in sorted({r for r in out.reached.values() if r is not None}):
        while len(out.times[R]) < repeats:
            out.times[R].append(fit_score(R)[0])
    return out


def single(times: list[float], metric: float, targets: list[float], higher_is_better: bool, method: str,
           config: str = "", note: str = "") -> Outcome:
    """A competitor without R (the exact kernel): one size, reaching a target or not."""
    out = Outcome(method, config, ladder=[(None, statistics.median(times), metric)], note=note)
    out.times[None], out.metric_at[None] = list(times), metric
    out.reached = {t: (None if not meets(metric, t, higher_is_better) else "-") for t in targets}
    return out


def skipped(method: str, why: str) -> Outcome:
    return Outcome(method, note=why)


def rows_of(dataset: str, metric_name: str, targets: list[tuple[str, float]], outcome: Outcome,
            machine: dict) -> list[dict]:
    rows = []
    for name, value in targets:
        base = {"dataset": dataset, "target": name, "target_value": value, "metric": metric_name,
                "method": outcome.method, "config": outcome.config, "note": outcome.note, **machine}
        if not outcome.ladder:  # skipped
            rows.append({**base, "reached_R": "not run"})
            continue
        R = outcome.reached.get(value)
        if R is None:
            metrics_seen = [m for _, _, m in outcome.ladder]  # the best it got, on the largest R tried
            best = max(metrics_seen) if higher_is_better(metric_name) else min(metrics_seen)
            rows.append({**base, "reached_R": "not reached", "test_metric": best, "repeats": 0})
            continue
        key = None if R == "-" else R
        ts = outcome.times[key]
        rows.append({**base, "reached_R": R, "median_s": statistics.median(ts), "min_s": min(ts), "max_s": max(ts),
                     "test_metric": outcome.metric_at[key], "repeats": len(ts)})
    return rows


def write_csv(path: Path, rows: list[dict], fields: list[str]) -> None:
    """All rows at once, atomically: a .part beside it, then os.replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    with open(part, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    os.replace(part, path)


def ladder_rows(dataset: str, outcome: Outcome) -> list[dict]:
    return [{"dataset": dataset, "method": outcome.method, "R": "" if R is None else R, "fit_s": s,
             "test_metric": m} for R, s, m in outcome.ladder]


def markdown(rows: list[dict]) -> str:
    """One line per (dataset, target), one column per method: 'R = 64: 0.81 s' or 'not reached'."""
    methods = list(dict.fromkeys(r["method"] for r in rows if r["target"] != "exact kernel (reference)"))
    lines = ["| dataset | target | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    cells = {}
    for r in rows:
        R = r["reached_R"]
        if R in ("not reached", "not run"):
            text = R if R == "not run" else f"not reached ({float(r['test_metric']):.4g})"
        elif R in ("-", ""):
            text = f"{r['median_s']:.3g} s"
        else:
            text = f"R = {R}: {r['median_s']:.3g} s"
        cells[r["dataset"], r["target"], r["target_value"], r["method"]] = text
    for (dataset, target, value) in dict.fromkeys((r["dataset"], r["target"], r["target_value"]) for r in rows):
        if target == "exact kernel (reference)":
            continue
        line = [cells.get((dataset, target, value, m), "") for m in methods]
        lines.append(f"| {dataset} | {target} = {value:.4g} | " + " | ".join(line) + " |")
    return "\n".join(lines)


def firsts(rows: list[dict]) -> str:
    """Per method, at how many targets it is the first (the least median time among those reaching it)."""
    targets = [k for k in dict.fromkeys((r["dataset"], r["target"], r["target_value"]) for r in rows)
               if k[1] != "exact kernel (reference)"]
    count = dict.fromkeys((r["method"] for r in rows if r["target"] != "exact kernel (reference)"), 0)
    for key in targets:
        reached = [r for r in rows if (r["dataset"], r["target"], r["target_value"]) == key
                   and r["reached_R"] not in ("not reached", "not run")]
        if reached:
            count[min(reached, key=lambda r: float(r["median_s"]))["method"]] += 1
    return "first to the target: " + "; ".join(f"{m} {n} of {len(targets)}" for m, n in count.items())


def read_rows(path: Path) -> list[dict]:
    """The rows CSV back, with its numbers as numbers (what markdown and firsts read)."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for name in ("target_value", "median_s", "min_s", "max_s", "test_metric"):
            r[name] = float(r[name]) if r.get(name) not in (None, "") else float("nan")
    return rows


def draw(out_csv: Path, ladder_csv: Path, png: Path) -> None:
    """The figure from the two CSVs alone: per dataset, each method's test metric against its
    fit time (log x; the ladder as a line, a single fit as a marker), the targets as lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(out_csv, newline="") as fh:
        rows = list(csv.DictReader(fh))
    with open(ladder_csv, newline="") as fh:
        ladder = list(csv.DictReader(fh))
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    if not datasets:
        return
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.5 * len(datasets), 4.2), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        mine = [r for r in ladder if r["dataset"] == dataset]
        for method in dict.fromkeys(r["method"] for r in mine):
            pts = [(float(r["fit_s"]), float(r["test_metric"]), r["R"]) for r in mine if r["method"] == method]
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            ax.plot(xs, ys, marker="o" if len(pts) > 1 else "*", ms=5 if len(pts) > 1 else 12, label=method)
        for r in rows:
            if r["dataset"] == dataset and r["target"] != "exact kernel (reference)":
                ax.axhline(float(r["target_value"]), color="0.6", lw=0.8, ls="--")
        metric = next(r["metric"] for r in rows if r["dataset"] == dataset)
        goals = [float(r["target_value"]) for r in rows if r["dataset"] == dataset]
        if higher_is_better(metric):  # the region around the targets, not the smallest R's misses
            ax.set_ylim(min(goals) - 4.0, max(goals) + 1.5)
        else:
            ax.set_ylim(min(goals) - 0.01, max(goals) + 0.06)
        ax.set_xscale("log")
        ax.set_xlabel("fit time (s, featurize + solve)")
        ax.set_ylabel(metric)
        ax.set_title(f"{dataset}: targets (dashed) = exact kernel -/+ 0.5, 1, 2 pt")
        ax.legend(fontsize=7)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    part = png.with_name(png.stem + ".part.png")
    fig.savefig(part, dpi=120)
    plt.close(fig)
    os.replace(part, png)


def machine_info(threads: int) -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return {"machine": f"{platform.platform()}; {cpu}; {os.cpu_count()} cores", "threads": threads,
            "git_commit": commit}


# ---------------------------------------------------------------------------------------------
# Validation slices and the scikit-learn-intelex child (numpy and sklearn only: the child runs
# this file as a script in an environment that need not have rbrepro's dependencies)

def validation_slice(n: int, seed: int = 0, cap: int = 10_000) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (fit, validate) of the training rows: a seeded 20 % to validate, at most `cap` of the rest to fit."""
    order = np.random.default_rng(seed).permutation(n)
    n_val = max(1, n // 5)
    return order[n_val:][:cap], order[:n_val]


def scale_gamma(X: np.ndarray) -> float:
    """scikit-learn's gamma="scale": 1 / (d var(X))."""
    var = float(np.var(X))
    return 1.0 / (X.shape[1] * var) if var > 0 else 1.0


def _rel_error(y, p) -> float:
    return float(np.linalg.norm(y - p) / np.linalg.norm(y))


def sklearnex_fit(X, y, X_test, y_test, regression: bool, repeats: int, seed: int = 0) -> dict:
    """C and gamma on the validation slice, then `repeats` timed fits on all training rows."""
    from sklearnex.svm import SVC, SVR

    def make(C, gamma):
        return SVR(C=C, gamma=gamma) if regression else SVC(C=C, gamma=gamma)

    mu, sd = (float(np.mean(y)), float(np.std(y)) or 1.0) if regression else (0.0, 1.0)

    def score(model, Xs, ys):
        p = model.predict(Xs)
        return -_rel_error(ys, p * sd + mu) if regression else float(100.0 * np.mean(p == ys))

    fit_rows, val_rows = validation_slice(len(y), seed)
    g0 = scale_gamma(X)
    best = None
    for C in (1.0, 10.0, 100.0):
        for gamma in (g0 / 3, g0, g0 * 3):
            m = make(C, gamma).fit(X[fit_rows], (y[fit_rows] - mu) / sd)
            s = score(m, X[val_rows], y[val_rows])
            if best is None or s > best[0]:
                best = (s, C, gamma)
    _, C, gamma = best
    times = []
    for _ in range(repeats):
        m = make(C, gamma)
        t0 = time.perf_counter()
        m.fit(X, (y - mu) / sd)
        times.append(time.perf_counter() - t0)
    test = score(m, X_test, y_test)
    return {"times": times, "metric": -test if regression else test, "C": C, "gamma": gamma,
            "estimator": type(m).__module__ + "." + type(m).__name__}


def _worker(npz: str, out: str) -> None:
    d = np.load(npz)
    res = sklearnex_fit(d["X"], d["y"], d["X_test"], d["y_test"], bool(d["regression"]), int(d["repeats"]))
    Path(out).write_text(json.dumps(res))


def sklearnex_python() -> tuple[str | None, str]:
    """The interpreter to run sklearnex in, or None with the reason."""
    import importlib.util

    if importlib.util.find_spec("sklearnex") is not None:
        return sys.executable, ""
    other = os.environ.get("RBREPRO_SKLEARNEX_PYTHON")
    if other:
        probe = subprocess.run([other, "-c", "import sklearnex.svm"], capture_output=True, text=True)
        if probe.returncode == 0:
            return other, ""
        return None, f"sklearnex does not import in {other}: {probe.stderr.strip().splitlines()[-1:]}"
    return None, ("not installed (pip install scikit-learn-intelex in a separate environment and name its "
                  "python in RBREPRO_SKLEARNEX_PYTHON)")


# ---------------------------------------------------------------------------------------------
# The competitors on a real dataset (rbrepro, scikit-learn, the authors' binary)

def _dense(X):
    import scipy.sparse as sp

    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)


def rb_estimator(task: str, R: int, sigma: float, lam: float, seed: int):
    """rbrepro RB at R with PCG and early stopping where this build has it, else CG with its defaults."""
    from rbrepro import models

    cls = models.RandomBinningRegressor if task == "regression" else models.RandomBinningClassifier
    if "early_stopping" in cls().get_params():
        try:
            return cls(n_grids=R, sigma=sigma, lam=lam, solver="pcg", early_stopping=True, random_state=seed), \
                "solver=pcg, early_stopping=True"
        except TypeError:
            pass
    return cls(n_grids=R, sigma=sigma, lam=lam, solver="cg", random_state=seed), \
        "solver=cg (early_stopping not in this build), maxit=50, tol=1e-3"


class RidgeOnFeatures:
    """A scikit-learn feature map + Ridge(alpha=lam); classification one-vs-all on +-1 targets, argmax."""

    def __init__(self, transformer, lam: float, task: str):
        from sklearn.linear_model import Ridge

        self.transformer, self.ridge, self.task = transformer, Ridge(alpha=lam), task

    def fit(self, X, y):
        from rbrepro.models import targets as tg

        Y, self.classes = tg.encode(y, self.task)
        self.ridge.fit(self.transformer.fit_transform(X), Y)
        return self

    def predict(self, X):
        from rbrepro.models import targets as tg

        s = self.ridge.predict(self.transformer.transform(X))
        return tg.decode(s.reshape(len(s), -1), self.classes)


def timed_fit_score(make, X, y, X_test, y_test, task: str, warm=None):
    """fit_score(R) for climb: a fresh model, its fit timed, its test metric."""
    from rbrepro import metrics

    def fit_score(R):
        model = make(R)
        if warm is not None:
            warm(model)
        t0 = time.perf_counter()
        model.fit(X, y)
        fit_s = time.perf_counter() - t0
        return fit_s, metrics.score(task, y_test, model.predict(X_test))

    return fit_score


def choose_rbf_gamma(X, y, task: str, lam: float, R: int, seed: int = 0) -> float:
    """RBFSampler's gamma from g0 * {1/9, 1/3, 1, 3, 9} on the validation slice of the training rows."""
    from sklearn.kernel_approximation import RBFSampler

    from rbrepro import metrics

    fit_rows, val_rows = validation_slice(len(y), seed)
    g0 = scale_gamma(X)
    scores = {}
    for g in (g0 / 9, g0 / 3, g0, g0 * 3, g0 * 9):
        m = RidgeOnFeatures(RBFSampler(gamma=g, n_components=R, random_state=seed), lam, task).fit(X[fit_rows],
                                                                                                   y[fit_rows])
        s = metrics.score(task if task == "regression" else "classification", y[val_rows], m.predict(X[val_rows]))
        scores[g] = s if task != "regression" else -s
    return max(scores, key=scores.get)


def choose_sigma(make, X, y, task: str, seed: int = 0, sigmas=None) -> float:
    """A method's own sigma from rbrepro's `--sigma auto` grid (0.01 ... 100, three a decade) on the
    validation slice of the training rows (never the test rows); the smaller sigma on a tie."""
    from rbrepro import metrics
    from rbrepro.models.sigma_search import AUTO_SIGMAS

    fit_rows, val_rows = validation_slice(len(y), seed)
    best, best_score = None, -np.inf
    for sigma in sigmas or AUTO_SIGMAS:
        m = make(sigma).fit(X[fit_rows], y[fit_rows])
        s = metrics.score(task if task == "regression" else "classification", y[val_rows], m.predict(X[val_rows]))
        s = -s if task == "regression" else s
        if s > best_score:
            best, best_score = sigma, s
    return best


def write_libsvm(path: Path, X: np.ndarray, labels: np.ndarray) -> Path:
    """Rows as LIBSVM text (1-based indices, zeros left out, values to 17 digits), written atomically."""
    part = path.with_name(path.name + ".part")
    with open(part, "w") as fh:
        for row, label in zip(X, labels):
            nz = np.flatnonzero(row)
            fh.write(f"{label:.17g} " + " ".join(f"{j + 1}:{row[j]:.17g}" for j in nz) + "\n")
    os.replace(part, path)
    return path


def authors_labels(y: np.ndarray, task: str) -> tuple[np.ndarray, int]:
    """Labels as their program reads them, and its NumClasses: values (1), +-1 (2), 0 ... C-1 (C)."""
    if task == "regression":
        return np.asarray(y, dtype=np.float64), 1
    classes = np.unique(y)
    index = np.searchsorted(classes, y)
    if len(classes) == 2:
        return np.where(index == 1, 1.0, -1.0), 2
    return index.astype(np.float64), len(classes)


def run_dataset(name: str, args, machine: dict, exe, authors_why: str, sx_python, sx_why: str):
    from sklearn.kernel_approximation import Nystroem, RBFSampler

    from rbrepro import metrics, models
    from rbrepro.data.load import load_dataset

    mirror = os.environ.get("RBREPRO_MIRROR")
    try:  # without a mirror, only what the cache already holds (never the LIBSVM site)
        ds = load_dataset(name, progress=False, fetch=bool(mirror))
    except Exception as e:  # noqa: BLE001  (one line, then the next dataset)
        print(f"bench.peers: {name} skipped: " + ("no data mirror (set RBREPRO_MIRROR=../shared/data/libsvm, or "
                                                   "make bench-peers) and not cached" if not mirror else
                                                   f"not loaded from {mirror}: {e}"), flush=True)
        return [], []
    task = ds.model_task
    Xtr, ytr, Xte, yte = _dense(ds.X_train), np.asarray(ds.y_train), _dense(ds.X_test), np.asarray(ds.y_test)
    if args.quick:
        rng = np.random.default_rng(0)
        tr = np.sort(rng.permutation(len(ytr))[:2000])
        te = np.sort(rng.permutation(len(yte))[:2000])
        Xtr, ytr, Xte, yte = Xtr[tr], ytr[tr], Xte[te], yte[te]
    sigma, lam = SIGMA.get(name, 1.0), ds.info["spec"].lam
    higher = task != "regression"
    metric_name = metrics.metric_name(ds.task)
    seed = 0
    print(f"\n== {name}: {len(ytr)} train / {len(yte)} test rows, sigma {sigma}, lam {lam}, {metric_name}", flush=True)

    exact_cls = models.ExactKernelRegressor if task == "regression" else models.ExactKernelClassifier
    exact = exact_cls(sigma=sigma, lam=lam)
    exact.warm_up(Xtr)
    t0 = time.perf_counter()
    exact.fit(Xtr, ytr)
    exact_s = time.perf_counter() - t0
    exact_metric = metrics.score(task, yte, exact.predict(Xte))
    del exact
    targets = targets_from(exact_metric, higher)
    tvals = [v for _, v in targets]
    print(f"  exact kernel (rbrepro, L1 Laplacian): {metric_name} {exact_metric:.4f} in {exact_s:.2f} s; targets "
          + ", ".join(f"{n} = {v:.4f}" for n, v in targets), flush=True)
    rows = [{"dataset": name, "target": "exact kernel (reference)", "target_value": exact_metric,
             "metric": metric_name, "method": "rbrepro exact kernel", "config": f"sigma={sigma}, lam={lam}, cholesky",
             "reached_R": "-", "median_s": exact_s, "min_s": exact_s, "max_s": exact_s, "test_metric": exact_metric,
             "repeats": 1, **machine}]
    rs = [R for R in RS if R <= (256 if args.quick else 8192)]
    outcomes = []

    def ladder(method, config, fit_score):
        o = climb(fit_score, tvals, higher, rs, args.budget, args.repeats, method, config)
        print(f"  {method}: " + "; ".join(f"R={R} {s:.3g}s {m:.4g}" for R, s, m in o.ladder)
              + (f"  ({o.note})" if o.note else ""), flush=True)
        outcomes.append(o)

    # each approximation's own sigma, chosen on the validation slice at R = SCAN_R (the exact
    # kernel's sets the targets only): a width good for the kernel need not be good for its features
    scan = min(SCAN_R, rs[-1])
    rb_sigma = choose_sigma(lambda s: rb_estimator(task, scan, s, lam, seed)[0], Xtr, ytr, task, seed)
    ny_sigma = choose_sigma(lambda s: RidgeOnFeatures(Nystroem(kernel="laplacian", gamma=s, n_components=scan,
                                                               random_state=seed), lam, task), Xtr, ytr, task, seed)
    print(f"  sigma chosen on the validation slice at R = {scan}: RB {rb_sigma:g}, Nystroem {ny_sigma:g}", flush=True)
    _, rb_config = rb_estimator(task, 16, rb_sigma, lam, seed)
    ladder("rbrepro RB", f"sigma={rb_sigma:g} (validation slice), {rb_config}",
           timed_fit_score(lambda R: rb_estimator(task, R, rb_sigma, lam, seed)[0],
                           Xtr, ytr, Xte, yte, task, warm=lambda m: m.warm_up(Xtr)))
    ladder("sklearn Nystroem+Ridge", f"kernel=laplacian, gamma={ny_sigma:g} (validation slice), alpha={lam}",
           timed_fit_score(lambda R: RidgeOnFeatures(Nystroem(kernel="laplacian", gamma=ny_sigma,
                                                              n_components=min(R, len(ytr)), random_state=seed),
                                                     lam, task), Xtr, ytr, Xte, yte, task))
    g = choose_rbf_gamma(Xtr, ytr, task, lam, min(RBF_SCAN_R, rs[-1]), seed)
    ladder("sklearn RBFSampler+Ridge", f"gamma={g:.4g} (validation slice), alpha={lam}",
           timed_fit_score(lambda R: RidgeOnFeatures(RBFSampler(gamma=g, n_components=R, random_state=seed), lam,
                                                     task), Xtr, ytr, Xte, yte, task))

    if sx_python is None:
        outcomes.append(skipped("sklearnex exact (SVC/SVR)", sx_why))
        print(f"  sklearnex: skipped: {sx_why}", flush=True)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            npz, res = Path(tmp) / "data.npz", Path(tmp) / "out.json"
            np.savez(npz, X=Xtr, y=ytr, X_test=Xte, y_test=yte, regression=task == "regression", repeats=args.repeats)
            proc = subprocess.run([sx_python, str(Path(__file__).resolve()), "--sklearnex-worker", str(npz), str(res)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                why = "failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
                outcomes.append(skipped("sklearnex exact (SVC/SVR)", why))
                print(f"  sklearnex: {why}", flush=True)
            else:
                r = json.loads(res.read_text())
                est = r["estimator"].rsplit(".", 1)[-1]
                note = "Gaussian kernel" + ("; sklearnex has no KernelRidge, SVR instead" if est == "SVR" else "")
                o = single(r["times"], r["metric"], tvals, higher, "sklearnex exact (SVC/SVR)",
                           f"{r['estimator']}, C={r['C']:g}, gamma={r['gamma']:.4g} (validation slice)", note)
                outcomes.append(o)
                print(f"  sklearnex {est}: {metric_name} {r['metric']:.4f} in {statistics.median(r['times']):.3g} s "
                      f"(C={r['C']:g}, gamma={r['gamma']:.4g})", flush=True)

    if exe is None:
        outcomes.append(skipped("authors' C++ RB", authors_why))
        print(f"  authors' C++: skipped: {authors_why}", flush=True)
    else:
        from bench.authors import run_theirs

        with tempfile.TemporaryDirectory() as tmp:
            labels_tr, n_classes = authors_labels(ytr, task)
            labels_te, _ = authors_labels(yte, task)
            train = write_libsvm(Path(tmp) / f"{name}.train", Xtr, labels_tr)
            test = write_libsvm(Path(tmp) / f"{name}.test", Xte, labels_te)

            def theirs(R):
                r = run_theirs(exe, train, test, R, rb_sigma, lam, machine["threads"], n_classes=n_classes,
                               n_features=Xtr.shape[1])
                return r["train_s"], r["accuracy"]

            try:
                ladder("authors' C++ RB", f"sigma={rb_sigma:g} (RB's), NumClasses={n_classes}, PCG maxit=50, tol=1e-3",
                       theirs)
            except SystemExit as e:
                why = f"their program failed: {str(e).splitlines()[0]}"
                outcomes.append(skipped("authors' C++ RB", why))
                print(f"  authors' C++: {why}", flush=True)
    for o in outcomes:
        rows += rows_of(name, metric_name, targets, o, machine)
    reference = {"dataset": name, "method": "rbrepro exact kernel", "R": "", "fit_s": exact_s,
                 "test_metric": exact_metric}
    return rows, [reference] + [r for o in outcomes for r in ladder_rows(name, o)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["ijcnn1", "cadata", "letter"])
    parser.add_argument("--repeats", type=int, default=None, help="fits per reported time (default 3; --quick 1)")
    parser.add_argument("--budget", type=float, default=None, help="a fit slower than this ends a ladder "
                                                                   "(seconds; default 60, --quick 10)")
    parser.add_argument("--out", type=Path, default=None, help="CSV (default bench/results/peers.csv; "
                                                              "--quick: bench/results/peers-quick.csv)")
    parser.add_argument("--quick", action="store_true", help="2,000 rows, R <= 256: tries the code, not for numbers")
    parser.add_argument("--from-csv", type=Path, help="measure nothing: print the table and the counts of a rows CSV "
                                                      "written before, and redraw its figure")
    args = parser.parse_args(argv)
    if args.from_csv:
        rows = read_rows(args.from_csv)
        print(markdown(rows) + "\n\n" + firsts(rows))
        draw(args.from_csv, args.from_csv.with_name(args.from_csv.stem + "-ladder.csv"), args.from_csv.with_suffix(".png"))
        return 0
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.budget = args.budget or (10.0 if args.quick else 60.0)
    out = args.out or Path("bench/results") / ("peers-quick.csv" if args.quick else "peers.csv")

    import numba

    threads = numba.get_num_threads()
    machine = machine_info(threads)
    checkout = os.environ.get("RBREPRO_AUTHORS_CHECKOUT")
    exe, authors_why = None, "no checkout given (RBREPRO_AUTHORS_CHECKOUT or make bench-peers AUTHORS=PATH)"
    if checkout:
        from bench.authors import build

        try:
            exe = build(Path(checkout).expanduser().resolve())
        except SystemExit as e:
            authors_why = f"build failed: {str(e).splitlines()[0]}"
    sx_python, sx_why = sklearnex_python()
    print(f"bench.peers: {machine['machine']}, {threads} threads, commit {machine['git_commit']}, "
          f"median of {args.repeats}, budget {args.budget:g} s per fit" + (" (--quick)" if args.quick else ""))
    rows, ladder = [], []
    for name in args.datasets:
        r, lad = run_dataset(name, args, machine, exe, authors_why, sx_python, sx_why)
        rows += r
        ladder += lad
        write_csv(out, rows, FIELDS)  # after every dataset, so a stopped run keeps what finished
        write_csv(out.with_name(out.stem + "-ladder.csv"), ladder, LADDER_FIELDS)
    draw(out, out.with_name(out.stem + "-ladder.csv"), out.with_suffix(".png"))
    print("\n" + markdown(rows) + "\n\n" + firsts(rows))
    print(f"\nrows: {out}   ladders: {out.with_name(out.stem + '-ladder.csv')}   figure: {out.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--sklearnex-worker":
        _worker(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
