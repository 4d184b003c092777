"""Benchmark: RB against the authors' own C++ (teddylfwu/RandomBinning) on every mirror dataset, in one run.

    python -m bench.authors --checkout PATH [DATASET ...] [--threads N] [--repeats 3]
    (or RBREPRO_AUTHORS_CHECKOUT=PATH; `make bench-authors AUTHORS=PATH`)

Builds `codes_KRR_randbin/KRR_OneVsAll_RandBin.cpp` from the checkout you point to, with
-O3 -fopenmp -DUSE_OPENMP -DUSE_OPENBLAS, linked -no-pie against their prebuilt
lib/libcmatrix.a and the system OpenBLAS and gfortran (Debian: libopenblas-dev gfortran),
into build/authors/ (ignored by git; this project never contains their code). Both read the same rows:
our loader's training and test rows (scaled as the dataset's registry entry says) written as LIBSVM
text for their reader, labels as their driver wants them (+-1, 0 ... C-1, or the values).

Per dataset and R (ijcnn1, cadata, letter, cod_rna_split at R = 64, 256, 1024; mnist at 64 and 256), at the
same sigma, lambda (0.01), threads, `--repeats` alternating runs each, the medians of:
- their `KRR_OneVsAll_RandBin`: 50 CG iterations; its train time (the first number after `time =`)
  and test performance are the targets;
- rbrepro with the authors' rule (plain CG, 50 steps): the same work, the speed of our kernels;
- rbrepro's default (`--stopping auto`: PCG, the step count the held-out tenth of the training rows
  picks, then a few steps from there on every row): the time to their accuracy a user gets without test data, when its
  test performance reaches theirs (their ratio: their time / ours);
- the floor: the fewest PCG steps on every row whose test performance reaches theirs (found on the
  test rows, so no rule a user can run), timed as featurize + those steps: how soon the accuracy exists.
Rows go to bench/results/authors.csv with provenance. Without a checkout it says so and exits 0.
Needs the mirror: RBREPRO_MIRROR=../shared/data/libsvm.
"""

from __future__ import annotations

import argparse
import bz2
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numba

BUILD = Path("build") / "authors"
SOURCE = Path("codes_KRR_randbin") / "KRR_OneVsAll_RandBin.cpp"
LINE = re.compile(r"OneVsAll\. r = (\d+), D = (\d+), param = \S+ \S+, perf = ([\d.]+), time = ([\d.eE+-]+)")


def build(checkout: Path) -> Path:
    """Compile the authors' RB program from `checkout`; returns the executable."""
    src = checkout / SOURCE
    if not src.exists():
        raise SystemExit(f"{checkout}: no {SOURCE} (is this a checkout of teddylfwu/RandomBinning?)")
    if not shutil.which("g++"):
        raise SystemExit("g++ is needed to build the authors' code (Debian: apt-get install g++)")
    exe = BUILD / "KRR_OneVsAll_RandBin"
    BUILD.mkdir(parents=True, exist_ok=True)
    code = src.parent
    cmd = ["g++", "-std=c++11", "-O3", "-fopenmp", "-DUSE_OPENMP", "-DUSE_OPENBLAS", f"-I{code / 'include'}",
           str(src), "-no-pie", f"-L{code / 'lib'}", "-lcmatrix", "-lopenblas", "-lgfortran", "-lgomp",
           "-lpthread", "-lm", "-lrt", "-o", str(exe)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit("building the authors' code failed (needs libopenblas-dev and gfortran):\n"
                         + proc.stderr[-2000:])
    return exe


def text_file(raw: Path, dest: Path) -> Path:
    """Their reader takes plain LIBSVM text: decompress the verified raw file once."""
    if not dest.exists():
        with bz2.open(raw, "rb") as src, open(dest.with_suffix(".part"), "wb") as out:
            shutil.copyfileobj(src, out)
        dest.with_suffix(".part").replace(dest)
    return dest


def run_theirs(exe: Path, train: Path, test: Path, R: int, sigma: float, lam: float, threads: int,
               n_classes: int = 2, n_features: int = 22, maxit: int = 50, tol: float = 1e-3) -> dict:
    """One run of their program: n_classes 1 is regression (their perf is then the relative
    error), 2 binary (labels +-1), more one-vs-all (labels 0 ... n_classes - 1)."""
    args = [str(exe), str(threads), str(train), str(test), str(n_classes), str(n_features), str(R), "1", str(lam),
            "1", str(sigma), str(maxit), str(tol), "0"]
    proc = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": str(threads)})
    match = LINE.search(proc.stdout)
    if proc.returncode != 0 or not match:
        raise SystemExit(f"the authors' program failed (exit {proc.returncode}):\n{proc.stdout[-1500:]}{proc.stderr}")
    return {"train_s": float(match.group(4)), "accuracy": float(match.group(3)), "D": int(match.group(2))}


#: per dataset: the R it runs at (mnist's larger R would take the authors' program an hour each)
PLAN = {"ijcnn1": (64, 256, 1024), "cadata": (64, 256, 1024), "letter": (64, 256, 1024),
        "cod_rna_split": (64, 256, 1024), "mnist": (64, 256)}
OUT = Path("bench/results/authors.csv")


def their_files(data, name: str) -> tuple[Path, Path, int]:
    """Our training and test rows as LIBSVM text for their reader: (train, test, n_classes as their
    driver counts them: 1 regression, 2 binary (labels +-1), C (labels 0 ... C-1))."""
    import numpy as np
    from sklearn.datasets import dump_svmlight_file

    if data.task == "regression":
        codes, n_classes = (lambda y: np.asarray(y, dtype=float)), 1
    else:
        classes = np.unique(data.y_train)
        n_classes = len(classes)
        if n_classes == 2:
            def codes(y):
                return (np.where(y == classes[1], 1.0, -1.0))
        else:
            def codes(y):
                return (np.searchsorted(classes, y).astype(float))
    BUILD.mkdir(parents=True, exist_ok=True)
    paths = []
    for part, X, y in (("train", data.X_train, data.y_train), ("test", data.X_test, data.y_test)):
        path = BUILD / f"{name}.{part}"
        if not path.exists():
            dump_svmlight_file(X, codes(y), str(path.with_suffix(".part")), zero_based=False)
            path.with_suffix(".part").replace(path)
        paths.append(path)
    return paths[0], paths[1], n_classes


def _reaches(value: float, target: float, task: str) -> bool:
    return value <= target if task == "regression" else value >= target


def floor_time(params, data, target: float) -> tuple[int | None, float]:
    """(fewest PCG steps on every row whose test performance reaches `target`, featurize + those steps'
    seconds), read from one PCG run whose callback scores the test rows (its own time left out)."""
    import time

    from rbrepro import metrics
    from rbrepro.features import RandomBinningFeatures
    from rbrepro.models import targets as tg
    from rbrepro.solvers.cg import ridge_cg

    t0 = time.perf_counter()
    features = RandomBinningFeatures(n_grids=params.R, sigma=params.sigma, random_state=params.seed)
    Z = features.fit_transform_binned(data.X_train)
    featurize = time.perf_counter() - t0
    Y, classes = tg.encode(data.y_train, data.model_task)
    Zt = features.transform_binned(data.X_test)
    state = {"left_out": 0.0, "found": None}
    start = time.perf_counter()

    def probe(it, W):
        t = time.perf_counter()
        value = metrics.score(data.task, data.y_test, tg.decode(Zt.matvec(W), classes))
        if state["found"] is None and _reaches(value, target, data.task):
            state["found"] = (it, t - start - state["left_out"])
        state["left_out"] += time.perf_counter() - t
        return state["found"] is not None

    ridge_cg(Z, Y, params.lam, params.maxit, 1e-300, preconditioned=True, callback=probe)
    if state["found"] is None:
        return None, float("nan")
    return state["found"][0], featurize + state["found"][1]


def main(argv=None) -> int:
    import statistics
    from dataclasses import replace

    from bench.results_csv import write_rows
    from bench.stopping import SIGMAS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", default=list(PLAN))
    parser.add_argument("--checkout", type=Path, default=os.environ.get("RBREPRO_AUTHORS_CHECKOUT") or None,
                        help="a checkout of github.com/teddylfwu/RandomBinning")
    parser.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if not args.checkout:
        print("bench.authors: skipped: no checkout of the authors' code given (--checkout PATH, "
              "RBREPRO_AUTHORS_CHECKOUT, or make bench-authors AUTHORS=PATH; "
              "git clone https://github.com/teddylfwu/RandomBinning)")
        return 0
    exe = build(Path(args.checkout).expanduser().resolve())

    from rbrepro.data.load import load_dataset
    from rbrepro.models.cell import CellParams, run_cell

    numba.set_num_threads(args.threads)
    rows = []
    print(f"{args.threads} threads, median of {args.repeats} alternating runs each")
    print("| dataset | R | theirs: perf, s | ours, 50 CG steps: perf, s, ratio | ours, default: perf, s, ratio | "
          "floor: steps, s, ratio |")
    print("|---|---|---|---|---|---|")
    for name in args.datasets:
        data = load_dataset(name, progress=False)
        train, test, n_classes = their_files(data, name)
        lam, sigma = data.info["spec"].lam, SIGMAS[name]
        for R in PLAN[name]:
            authors = CellParams(name, sigma=sigma, R=R, lam=lam, threads=args.threads, stopping="residual")
            default = replace(authors, solver="pcg", stopping="validation")
            run_cell(default, data)  # warm: compiled kernels and page cache, as their second run would have
            theirs, fifty, ours = [], [], []
            for _ in range(args.repeats):  # alternating, so all see the same machine load
                theirs.append(run_theirs(exe, train, test, R, sigma, lam, args.threads, n_classes, data.n_features))
                fifty.append(run_cell(authors, data))
                ours.append(run_cell(default, data))
            their_s = statistics.median(r["train_s"] for r in theirs)
            target = statistics.median(r["accuracy"] for r in theirs)
            med = {k: (statistics.median(r["test_metric"] for r in v), statistics.median(r["train_s"] for r in v))
                   for k, v in (("fifty", fifty), ("default", ours))}
            steps, floor_s = floor_time(authors, data, target)
            row = {"dataset": name, "task": data.task, "R": R, "sigma": sigma, "lam": lam, "repeats": args.repeats,
                   "their_perf": target, "their_s": their_s, "their_D": theirs[0]["D"],
                   "cg50_perf": med["fifty"][0], "cg50_s": med["fifty"][1], "cg50_steps": fifty[0]["cg_iterations"],
                   "default_perf": med["default"][0], "default_s": med["default"][1],
                   "default_steps": ours[0]["cg_iterations"], "default_search_steps": ours[0].get("search_iterations", 0),
                   "default_reaches": _reaches(med["default"][0], target, data.task),
                   "floor_steps": steps if steps is not None else "", "floor_s": floor_s, "our_D": ours[0]["D"]}
            rows.append(row)
            def ratio(s):
                return (f"x{their_s / s:.1f}")
            print(f"| {name} | {R} | {target:.4g}, {their_s:.3f} | {med['fifty'][0]:.4g}, {med['fifty'][1]:.3f}, "
                  f"{ratio(med['fifty'][1])} | {med['default'][0]:.4g}, {med['default'][1]:.3f}, "
                  f"{ratio(med['default'][1]) if row['default_reaches'] else 'below theirs'} | "
                  f"{'not reached in 50 steps' if steps is None else f'{steps}, {floor_s:.3f}, {ratio(floor_s)}'} |",
                  flush=True)
            write_rows(args.out, rows, quiet_for=("their_s", "cg50_s", "default_s", "floor_s"))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
