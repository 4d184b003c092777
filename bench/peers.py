"""Benchmark: the fastest CPU peers, same data, same machine, one run.

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
  - rbrepro RB: RandomBinning{Classifier,Regressor}(n_grids=R) with its defaults (pcg, the
    held-out early stop); the CSV's config column says what ran.
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
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.peers_ladder import (  # noqa: F401 - the ladder's names, read through this module too
    POINTS,
    RS,
    Outcome,
    climb,
    meets,
    rows_of,
    single,
    skipped,
    targets_from,
)
from bench.peers_report import draw, firsts, ladder_rows, markdown, read_rows, write_csv  # noqa: F401 - theirs
from bench.sklearnex_worker import scale_gamma, validation_slice

SIGMA = {"ijcnn1": 0.56, "cadata": 0.28, "letter": 0.28}  # the exact kernel's, chosen on validation (results/fig3)
RBF_SCAN_R = 512
SCAN_R = 256  # where RB's and Nystroem's sigma are chosen (the validation slice)
FIELDS = ["dataset", "target", "target_value", "metric", "method", "config", "reached_R", "median_s", "min_s",
          "max_s", "test_metric", "repeats", "note", "threads", "machine", "git_commit"]
LADDER_FIELDS = ["dataset", "method", "R", "fit_s", "test_metric"]


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
    """(rbrepro RB at R with its defaults, what those are for the CSV's config column)."""
    from rbrepro import models

    cls = models.RandomBinningRegressor if task == "regression" else models.RandomBinningClassifier
    model = cls(n_grids=R, sigma=sigma, lam=lam, random_state=seed)
    return model, f"solver={model.solver}, early_stopping={model.early_stopping}"


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


def scan_sigma(make, X, y, task: str, seed: int = 0, sigmas=None) -> float:
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


def _load(name: str, args):
    """(train X, y, test X, y, the dataset) as dense rows (--quick: 2,000 of each), or None where the
    data cannot be had here (said in one line)."""
    from rbrepro.data.load import load_dataset

    mirror = os.environ.get("RBREPRO_MIRROR")
    try:  # without a mirror, only what the cache already holds (never the LIBSVM site)
        ds = load_dataset(name, progress=False, fetch=bool(mirror))
    except Exception as e:  # noqa: BLE001  (one line, then the next dataset)
        print(f"bench.peers: {name} skipped: " + ("no data mirror (set RBREPRO_MIRROR=../shared/data/libsvm, or "
                                                   "make bench-peers) and not cached" if not mirror else
                                                   f"not loaded from {mirror}: {e}"), flush=True)
        return None
    Xtr, ytr, Xte, yte = _dense(ds.X_train), np.asarray(ds.y_train), _dense(ds.X_test), np.asarray(ds.y_test)
    if args.quick:
        rng = np.random.default_rng(0)
        tr = np.sort(rng.permutation(len(ytr))[:2000])
        te = np.sort(rng.permutation(len(yte))[:2000])
        Xtr, ytr, Xte, yte = Xtr[tr], ytr[tr], Xte[te], yte[te]
    return Xtr, ytr, Xte, yte, ds


def _exact(task: str, sigma: float, lam: float, Xtr, ytr, Xte, yte) -> tuple[float, float]:
    """(the exact kernel's fit seconds, its test metric): the reference the targets come from."""
    from rbrepro import metrics, models

    exact_cls = models.ExactKernelRegressor if task == "regression" else models.ExactKernelClassifier
    exact = exact_cls(sigma=sigma, lam=lam)
    exact.warm_up(Xtr)
    t0 = time.perf_counter()
    exact.fit(Xtr, ytr)
    return time.perf_counter() - t0, metrics.score(task, yte, exact.predict(Xte))


def _sklearnex(sx_python, sx_why: str, data: tuple, task: str, repeats: int, tvals: list, higher: bool,
               metric_name: str) -> Outcome:
    """The exact Gaussian kernel through scikit-learn-intelex, in its own process (or why not)."""
    Xtr, ytr, Xte, yte = data
    if sx_python is None:
        print(f"  sklearnex: skipped: {sx_why}", flush=True)
        return skipped("sklearnex exact (SVC/SVR)", sx_why)
    with tempfile.TemporaryDirectory() as tmp:
        npz, res = Path(tmp) / "data.npz", Path(tmp) / "out.json"
        np.savez(npz, X=Xtr, y=ytr, X_test=Xte, y_test=yte, regression=task == "regression", repeats=repeats)
        worker = Path(__file__).resolve().with_name("sklearnex_worker.py")
        proc = subprocess.run([sx_python, str(worker), str(npz), str(res)], capture_output=True, text=True)
        if proc.returncode != 0:
            why = "failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
            print(f"  sklearnex: {why}", flush=True)
            return skipped("sklearnex exact (SVC/SVR)", why)
        r = json.loads(res.read_text())
    est = r["estimator"].rsplit(".", 1)[-1]
    note = "Gaussian kernel" + ("; sklearnex has no KernelRidge, SVR instead" if est == "SVR" else "")
    print(f"  sklearnex {est}: {metric_name} {r['metric']:.4f} in {statistics.median(r['times']):.3g} s "
          f"(C={r['C']:g}, gamma={r['gamma']:.4g})", flush=True)
    return single(r["times"], r["metric"], tvals, higher, "sklearnex exact (SVC/SVR)",
                  f"{r['estimator']}, C={r['C']:g}, gamma={r['gamma']:.4g} (validation slice)", note)


def _authors(exe, authors_why: str, name: str, data: tuple, task: str, rb_sigma: float, lam: float, threads: int,
             ladder) -> Outcome | None:
    """The authors' C++ RB climbing its ladder on the same rows (or why not): None when `ladder` ran."""
    if exe is None:
        print(f"  authors' C++: skipped: {authors_why}", flush=True)
        return skipped("authors' C++ RB", authors_why)
    from bench.authors import run_theirs

    Xtr, ytr, Xte, yte = data
    with tempfile.TemporaryDirectory() as tmp:
        labels_tr, n_classes = authors_labels(ytr, task)
        labels_te, _ = authors_labels(yte, task)
        train = write_libsvm(Path(tmp) / f"{name}.train", Xtr, labels_tr)
        test = write_libsvm(Path(tmp) / f"{name}.test", Xte, labels_te)

        def theirs(R):
            r = run_theirs(exe, train, test, R, rb_sigma, lam, threads, n_classes=n_classes, n_features=Xtr.shape[1])
            return r["train_s"], r["accuracy"]

        try:
            ladder("authors' C++ RB", f"sigma={rb_sigma:g} (RB's), NumClasses={n_classes}, PCG maxit=50, tol=1e-3",
                   theirs)
        except SystemExit as e:
            why = f"their program failed: {str(e).splitlines()[0]}"
            print(f"  authors' C++: {why}", flush=True)
            return skipped("authors' C++ RB", why)
    return None


def run_dataset(name: str, args, machine: dict, exe, authors_why: str, sx_python, sx_why: str):
    """Every competitor on one dataset: (the rows per target, every rung of every ladder)."""
    from sklearn.kernel_approximation import Nystroem, RBFSampler

    from rbrepro import metrics

    loaded = _load(name, args)
    if loaded is None:
        return [], []
    Xtr, ytr, Xte, yte, ds = loaded
    task = ds.model_task
    sigma, lam = SIGMA.get(name, 1.0), ds.info["spec"].lam
    higher = task != "regression"
    metric_name = metrics.metric_name(ds.task)
    seed = 0
    print(f"\n== {name}: {len(ytr)} train / {len(yte)} test rows, sigma {sigma}, lam {lam}, {metric_name}", flush=True)
    exact_s, exact_metric = _exact(task, sigma, lam, Xtr, ytr, Xte, yte)
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
    rb_sigma = scan_sigma(lambda s: rb_estimator(task, scan, s, lam, seed)[0], Xtr, ytr, task, seed)
    ny_sigma = scan_sigma(lambda s: RidgeOnFeatures(Nystroem(kernel="laplacian", gamma=s, n_components=scan,
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
    data = (Xtr, ytr, Xte, yte)
    outcomes.append(_sklearnex(sx_python, sx_why, data, task, args.repeats, tvals, higher, metric_name))
    theirs = _authors(exe, authors_why, name, data, task, rb_sigma, lam, machine["threads"], ladder)
    if theirs is not None:
        outcomes.append(theirs)
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
    sys.exit(main())
