"""Benchmark: RB on ijcnn1 against the authors' own C++ (teddylfwu/RandomBinning), in one run.

    python -m bench.authors --checkout PATH [--R 64 --R 256 --R 1024] [--threads N] [--repeats 5]
    (or RBREPRO_AUTHORS_CHECKOUT=PATH; `make bench-authors AUTHORS=PATH`)

Builds `codes_KRR_randbin/KRR_OneVsAll_RandBin.cpp` from the checkout you point to, with
-O3 -fopenmp -DUSE_OPENMP -DUSE_OPENBLAS, linked -no-pie against their prebuilt
lib/libcmatrix.a and the system OpenBLAS and gfortran (Debian: libopenblas-dev gfortran),
into build/authors/ (ignored by git; this project never contains their code). Then it
trains both on ijcnn1 at the same settings — R grids, sigma 1.58 (both draw the bin widths
from Gamma(2, 1/sigma)), lambda 0.01, 50 CG iterations, the same number of threads — and
prints, at each R, the median train time of `--repeats` alternating runs of each (theirs: the
first number after `time =` on their OneVsAll line; ours: featurize + solve, the same span)
with the ratio of the medians and its range over the pairs. Then, per R, the time rbrepro needs to
reach the test accuracy their binary reaches with its 50 iterations (issue 35): with `train`'s
default rule (Jacobi PCG, the best iterate on a held-out tenth of the training rows; no test data),
and the floor (the fewest PCG steps whose test accuracy reaches theirs, found on the test rows).
Without a checkout it says so and exits 0. Needs the mirror: RBREPRO_MIRROR=../shared/data/libsvm.
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

from bench.record import record

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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=os.environ.get("RBREPRO_AUTHORS_CHECKOUT") or None,
                        help="a checkout of github.com/teddylfwu/RandomBinning")
    parser.add_argument("--R", type=int, action="append", default=[], help="R grids (repeatable; default 64, "
                                                                             "256 and 1024)")
    parser.add_argument("--sigma", type=float, default=1.58)
    parser.add_argument("--lam", type=float, default=0.01)
    parser.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    if not args.checkout:
        print("bench.authors: skipped: no checkout of the authors' code given (--checkout PATH, "
              "RBREPRO_AUTHORS_CHECKOUT, or make bench-authors AUTHORS=PATH; "
              "git clone https://github.com/teddylfwu/RandomBinning)")
        return 0
    exe = build(Path(args.checkout).expanduser().resolve())

    from rbrepro.data.folders import data_dir
    from rbrepro.data.load import load_dataset
    from rbrepro.models.cell import CellParams, run_cell

    data = load_dataset("ijcnn1", progress=False)
    raw = data_dir() / "raw" / "binary"
    train = text_file(raw / "ijcnn1.tr.bz2", BUILD / "ijcnn1.train")
    test = text_file(raw / "ijcnn1.t.bz2", BUILD / "ijcnn1.test")
    numba.set_num_threads(args.threads)
    import statistics

    print(f"ijcnn1 sigma={args.sigma} lam={args.lam}, {args.threads} threads, median of {args.repeats} alternating "
          f"runs each:")
    print("|    R | authors' C++ s | rbrepro s | ratio of medians | pairwise ratios | D (theirs / ours) | "
          "test acc. (theirs / ours) |")
    print("|---|---|---|---|---|---|---|")
    reach = []
    for R in args.R or [64, 256, 1024]:
        params = CellParams("ijcnn1", sigma=args.sigma, R=R, lam=args.lam, threads=args.threads)
        run_cell(params, data)  # warm: compiled kernels and page cache, as their second run would have
        ours, theirs = [], []
        for _ in range(args.repeats):  # alternating, so both see the same machine load
            theirs.append(run_theirs(exe, train, test, R, args.sigma, args.lam, args.threads))
            ours.append(run_cell(params, data))
        mine = statistics.median(r["train_s"] for r in ours)
        their = statistics.median(r["train_s"] for r in theirs)
        pairs = sorted(t["train_s"] / o["train_s"] for t, o in zip(theirs, ours))
        print(f"| {R:4d} | {their:.3f} | {mine:.3f} | x{their / mine:.1f} | x{pairs[0]:.1f} ... x{pairs[-1]:.1f} | "
              f"{theirs[0]['D']} / {ours[0]['D']} | {theirs[0]['accuracy']:.2f} / {ours[0]['test_metric']:.2f} |")
        record("authors", f"ijcnn1 R={R} train, rbrepro (median of {args.repeats})", mine, their,
               "authors' C++ (same run, median)", note=f"{args.threads} threads, sigma {args.sigma}, lam {args.lam}")
        target = statistics.median(t["accuracy"] for t in theirs)  # their 50 iterations' test accuracy
        reach.append((R, their, target, *time_to_accuracy(params, data, target, args.repeats)))
    print_reach(reach, args.repeats)
    return 0


def time_to_accuracy(params, data, target: float, repeats: int) -> tuple[dict, dict | None]:
    """rbrepro's time to the authors' test accuracy, two ways (median of `repeats` runs each):
    - the rule a user runs, `train`'s default: Jacobi PCG stopped on a held-out tenth of the training
      rows (no test data), whatever accuracy it reaches;
    - the floor: the fewest Jacobi PCG steps on all rows whose test accuracy reaches `target`, found on
      the test rows (so not a rule anyone can apply; it shows how much sooner the accuracy exists)."""
    from dataclasses import replace

    from rbrepro.models.cell import run_cell

    def median_row(p):
        rows = sorted((run_cell(p, data) for _ in range(repeats)), key=lambda row: row["train_s"])
        return rows[len(rows) // 2]

    rule = median_row(replace(params, solver="pcg", stopping="validation"))
    floor = None
    for steps in range(1, params.maxit + 1):
        probe = replace(params, solver="pcg", maxit=steps, tol=1e-300)
        if run_cell(probe, data)["test_metric"] >= target:
            floor = dict(median_row(probe))
            floor["steps"] = steps
            break
    return rule, floor


def print_reach(reach: list, repeats: int) -> None:
    """The time-to-accuracy table: their 50-iteration accuracy, our rule's and the floor's times."""
    from bench.record import record

    print(f"\ntime to the authors' 50-iteration test accuracy (rbrepro: median of {repeats} runs):")
    print("|    R | authors' C++: acc. %, s | rbrepro pcg + held-out stop: it (kept), acc. %, s, ratio | "
          "floor: fewest pcg steps reaching it, s, ratio |")
    print("|---|---|---|---|")
    for R, their_s, target, rule, floor in reach:
        reached = rule["test_metric"] >= target
        rule_text = (f"{rule['cg_iterations']} ({rule['best_iteration']}), {rule['test_metric']:.2f}, "
                     f"{rule['train_s']:.3f} s, " + (f"**×{their_s / rule['train_s']:.1f}**" if reached
                                                     else "below their accuracy"))
        floor_text = ("not reached in 50 steps" if floor is None else
                      f"{floor['steps']} steps, {floor['train_s']:.3f} s, ×{their_s / floor['train_s']:.1f}")
        print(f"| {R:4d} | {target:.2f}, {their_s:.3f} s | {rule_text} | {floor_text} |", flush=True)
        if reached:
            record("authors", f"ijcnn1 R={R} time to their accuracy, rbrepro pcg + held-out stop", rule["train_s"],
                   their_s, "authors' C++ 50 iterations (same run, median)",
                   note=f"acc {rule['test_metric']:.2f} vs their {target:.2f}")


if __name__ == "__main__":
    sys.exit(main())
