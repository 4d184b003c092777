"""The hostile-input battery's cases of a researcher's own data and answers: own files and test files,
special files, answers that must never be silently wrong, memory limits and command-line options."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

from bench.battery_cases import REPO, Case, run_cli, write


def own_data_cases(tmp: Path) -> list[Case]:
    """The researcher's next step: CSV label columns, own test files, special files."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (300, 2))
    rows = "".join(f"{a:.4f},{b:.4f},{int(a * a + b * b < 0.5)}\n" for a, b in X)
    last = write(tmp / "own" / "last.csv", "a,b,label\n" + rows)
    headless = write(tmp / "own" / "headless.csv", rows)
    named_rows = "".join(f"{a:.4f},{b:.4f},{'in' if a * a + b * b < 0.5 else 'out'}\n" for a, b in X)
    names = write(tmp / "own" / "names.csv", "a,b,label\n" + named_rows)
    empty_name = write(tmp / "own" / "empty_name.csv", "a,b,label\n0.1,0.2,\n" + named_rows)
    lib = "".join(f"{int(a * a + b * b < 0.5)} 1:{a:.4f} 2:{b:.4f}\n" for a, b in X)
    lines = lib.splitlines(keepends=True)
    train, test = write(tmp / "own" / "tr.txt", "".join(lines[:150])), write(tmp / "own" / "te.txt", "".join(lines[150:]))
    long_first = write(tmp / "own" / "long.txt", "1 " + " ".join(f"{j}:0.5" for j in range(1, 9000)) + "\n" + lib)
    folder = tmp / "own" / "a_folder.txt"
    folder.mkdir(parents=True, exist_ok=True)
    loop = tmp / "own" / "loop.txt"
    if not loop.is_symlink():
        loop.symlink_to(loop)
    fifo = tmp / "own" / "pipe.txt"
    if not fifo.exists():
        os.mkfifo(fifo)
    cases = [
        Case("own data", "CSV header names another label column", ["train", last, "--R", "8"],
             (str(last), "--label-column 2")),
        Case("own data", "class names as CSV labels", ["train", names, "--R", "8", "--label-column", "-1"],
             expect="ok", check_ok=lambda out: "accuracy" in out),
        Case("own data", "a class name left empty", ["train", empty_name, "--R", "8", "--label-column", "-1"],
             (f"{empty_name}:2", "(the label) is empty")),
        Case("own data", "--label-column past the last column", ["train", headless, "--label-column", "9"],
             (str(headless), "label column 9")),
        Case("own data", "--label-column on a registered dataset", ["train", "digits", "--label-column", "1"],
             ("registered dataset",)),
        Case("own data", "--test on a registered dataset", ["train", "digits", "--test", test], ("registered dataset",)),
        Case("own data", "--test file that does not exist", ["train", train, "--test", tmp / "own" / "none.txt"],
             ("none.txt",)),
        Case("own data", "a folder as the data file", ["train", folder, "--R", "8"], (str(folder),)),
        Case("own data", "a symlink loop as the data file", ["train", loop, "--R", "8"], (str(loop),)),
        Case("own data", "a FIFO as the data file", ["train", fifo, "--R", "8"], (str(fifo),)),
        Case("own data", "/dev/zero as the data file", ["train", "/dev/zero", "--R", "8"], ("/dev/zero",)),
        Case("own data", "CSV label in the last column, said so", ["train", last, "--label-column", "-1", "--R", "32",
                                                                   "--sigma", "2"],
             expect="ok", check_ok=lambda out: "accuracy" in out),
        Case("own data", "own test file with --test", ["train", train, "--test", test, "--R", "32", "--json"],
             expect="ok", check_ok=lambda out: '"n_test": 150' in out),
        Case("own data", "LIBSVM first line of 9,000 features (> 64 kB)", ["train", long_first, "--R", "8"],
             expect="ok", check_ok=lambda out: "accuracy" in out),
    ]
    return cases


def _gzip_lines(path: Path, line: bytes, count: int) -> Path:
    import gzip

    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wb", compresslevel=1) as fh:
        for _ in range(count // 100_000):
            fh.write(line * 100_000)
    return path


def _results(folder: Path, test_metric) -> Path:
    """A results folder of two finished fig3-style rows, the second with `test_metric`."""
    import pandas as pd

    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"dataset": ["d", "d"], "method": ["rb", "rb"], "sigma": [1.0, 2.0], "R": [8, 8], "seed": [0, 0],
                  "metric": ["accuracy"] * 2, "train_metric": [90.0, 91.0], "test_metric": [89.0, test_metric],
                  "train_s": [0.1, 0.1], "D": [10, 12], "status": ["ok", "ok"]}).to_csv(folder / "results.csv",
                                                                                        index=False)
    return folder


def _answer_files(tmp: Path) -> dict:
    """The files the own-answer cases read: whole-number quantities, alternating classes, rows narrower
    and wider than a model's, a model of them, a folder of another program's CSV, a sweep config and a
    copy of the published Fig. 4 folder with a killed plot's partial file."""
    d = tmp / "answers"
    rng = np.random.default_rng(37)
    X = rng.uniform(0, 1000, (600, 5))
    counts = np.round(X[:, 0] / 20 + rng.normal(0, 1, 600)).clip(0, None)
    files = {"d": d}
    files["quantity"] = write(d / "quantity.txt", "".join(f"{int(t)} " + " ".join(f"{j + 1}:{v:.3f}" for j, v in
                                                                                    enumerate(x)) + "\n"
                                                           for x, t in zip(X, counts)))
    files["classes"] = write(d / "classes.txt", "".join(f"{i % 2} " + " ".join(f"{j + 1}:{v:.3f}" for j, v in
                                                                               enumerate(x)) + "\n"
                                                        for i, x in enumerate(X)))
    files["narrow"] = write(d / "narrow.txt", "".join(f"{int(t)} 1:{x[0]:.3f} 2:{x[1]:.3f} 3:{x[2]:.3f}\n"
                                                      for x, t in zip(X, counts)))
    files["wide_csv"] = write(d / "wide.csv", "".join(",".join(f"{v:.3f}" for v in x) + ",1,2,3\n" for x in X))
    files["model"] = d / "quantity.npz"
    run_cli(["train", files["quantity"], "--task", "regression", "--R", "16", "--save-model", files["model"], "-q"],
            {"RBREPRO_DATA": str(tmp / "d")}, tmp)
    files["foreign"] = write(d / "foreign" / "results.csv", "a,b\n1,2\n")
    files["sweep_cfg"] = write(d / "s.yaml", "name: s\ndatasets:\n  digits: {sigma: [1], R: [8]}\n")
    files["fig4"] = d / "fig4"
    shutil.copytree(REPO / "results" / "fig4", files["fig4"], dirs_exist_ok=True)
    files["dead_part"] = write(files["fig4"] / ".fig4.png.999999999.abc.part", "")
    return files


def own_answer_cases(tmp: Path) -> list[Case]:
    """No silent wrong answer: each class at least twice, the project's own cases."""
    f = _answer_files(tmp)
    d, quantity, classes, narrow, wide_csv = f["d"], f["quantity"], f["classes"], f["narrow"], f["wide_csv"]
    model, foreign, sweep_cfg, fig4, dead_part = f["model"], f["foreign"], f["sweep_cfg"], f["fig4"], f["dead_part"]
    edge = {"labels and no feature at all": ("1\n-1\n1\n-1\n", "no line names a feature"),
            "labels near 1e200": ("".join(f"{1e200 * (i + 1)} 1:{i / 50}\n" for i in range(50)), "label 1e+200"),
            "labels near -1e300": ("".join(f"{-1e300} 1:{i / 50}\n" for i in range(50)), "label -1e+300"),
            "features at +-3e38 in one column": ("".join(f"{i % 2} 1:{3e38 if i % 3 else -3e38} 2:{i}\n"
                                                         for i in range(50)), "feature 1 spans"),
            "one line naming index 200,000,000": ("1 200000000:1\n", "feature index 200000000")}
    cases = []
    for label, (text, needle) in edge.items():
        path = write(d / f"edge{len(cases)}.txt", text)
        cases.append(Case("own answers", label, ["train", path, "--R", "8"], (str(path), needle)))
    bomb = _gzip_lines(d / "bomb.txt.gz", b"1 1:1 2:1\n", 3_000_000)
    csv_bomb = _gzip_lines(d / "bomb.csv.gz", b"1,0.5,0.25\n", 3_000_000)
    small = {"RBREPRO_MEMORY_LIMIT_GB": "0.05"}
    escape = d / "esc\x1b[31mred.txt"
    cases += [
        Case("own answers", "gzip bomb of valid LIBSVM lines", ["train", bomb, "--R", "8"], ("bomb.txt.gz", "parsing"),
             env=small),
        Case("own answers", "gzip bomb of valid CSV lines", ["train", csv_bomb, "--R", "8"], ("bomb.csv.gz", "CSV text"),
             env=small),
        Case("own answers", "--seed -1", ["train", "digits", "--R", "8", "--seed", "-1"], ("--seed",)),
        Case("own answers", "--seed -1 with the block method", ["train", "digits", "--method", "block", "--seed", "-1"],
             ("--seed",)),
        Case("own answers", "sweep --seed -2", ["sweep", sweep_cfg, "--seed", "-2", "--dry-run"], ("--seed",)),
        Case("own answers", "RF map of 10^9 features (featurize)", ["featurize", "digits", "--method", "rf", "--R",
                                                                   "1000000000"], ("rf", "memory limit")),
        Case("own answers", "Nystrom map past a 10 MB limit (featurize)", ["featurize", "digits", "--method",
                                                                          "nystrom", "--R", "1000"],
             ("nystrom", "memory limit"), env={"RBREPRO_MEMORY_LIMIT_GB": "0.01"}),
        Case("own answers", "RB lookup tables past the limit", ["featurize", "digits", "--R", "4096", "--sigma",
                                                               "1000"], ("memory limit",),
             env={"RBREPRO_MEMORY_LIMIT_GB": "0.3"}),
        Case("own answers", "plot fig3 of rows with a NaN metric", ["plot", "fig3", _results(d / "nan", "nan")],
             ("results.csv:3", "test_metric")),
        Case("own answers", "plot fig3 of rows with an inf metric", ["plot", "fig3", _results(d / "inf", "inf")],
             ("results.csv:3", "test_metric")),
        Case("own answers", "sweep into a folder with another results.csv", ["sweep", sweep_cfg, "--out",
                                                                             foreign.parent, "-q"],
             ("results.csv", "no sweep wrote")),
        Case("own answers", "regression model on a file of class labels", ["predict", model, classes],
             expect="ok", check_err=lambda err: "look like classes" in err),
        Case("own answers", "predict on dense rows of 3 of 5 features", ["predict", model, narrow],
             ("3 features", "takes 5", "--pad")),
        Case("own answers", "predict on a CSV of 8 columns (model: 5)", ["predict", model, wide_csv],
             ("8 columns", "5 features")),
        Case("own answers", "predict on narrower rows with --pad", ["predict", model, narrow, "--pad"], expect="ok",
             check_err=lambda err: "taken as zeros" in err),
        Case("own answers", "a killed plot's partial file", ["plot", "fig4", fig4, "--out", fig4 / "fig4"],
             expect="ok", check_ok=lambda out: not dead_part.exists()),
        Case("own answers", "terminal escape codes in a file name", ["train", escape], ("\\x1b",)),
        Case("own answers", "terminal escape codes in a dataset name", ["train", "digits\x1b[2J"], ("\\x1b",)),
        Case("own answers", "whole-number labels, 52 distinct, no --task", ["train", quantity, "--R", "8"],
             ("distinct whole numbers", "--task")),
        Case("own answers", "--task regression on a built-in dataset", ["train", "digits", "--task", "regression"],
             ("built-in", "--task")),
        Case("own answers", "a path that does not exist", ["train", "data/nope.libsvm"], ("no such file",)),
        Case("own answers", "a misspelt dataset name", ["train", "ijcnn11"], ("did you mean 'ijcnn1'",)),
        Case("own answers", "--sigma neither a number nor auto", ["train", "digits", "--sigma", "wide"], ("--sigma",)),
        Case("own answers", "--sigma auto on digits", ["train", "digits", "--R", "16", "--sigma", "auto", "--json"],
             expect="ok", check_ok=lambda out: '"sigma_selection": "held-out' in out),
    ]
    return cases


def memory_cases(tmp: Path) -> list[Case]:
    """Inputs bigger than the memory the process may use, under an address-space limit (`ulimit -v`):
    the guard reads that limit, so they are refused in one line naming the file, never a MemoryError."""
    import gzip

    cases = []
    for gb in (1, 4):
        bomb = tmp / "memory" / f"zeros_{gb}gb.libsvm.gz"
        bomb.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(bomb, "wb", compresslevel=9) as fh:
            chunk = b"\0" * (1 << 24)
            for _ in range(gb * 64):
                fh.write(chunk)
        cases.append(Case("memory", f"a {gb} GB gzip bomb under ulimit -v 3 GB", ["train", bomb, "--R", "8"],
                          (str(bomb),), address_space=3 << 30))
    cases.append(Case("memory", "--cluster with a solver it cannot run, before it starts",
                      ["train", "digits", "--R", "8", "--solver", "direct", "--cluster", "local:2"],
                      ("rb with solver direct",)))
    return cases


def cli_option_cases(tmp: Path) -> list[Case]:
    """Options with impossible values or places: one line naming the option or path, never a traceback."""
    missing_dir = tmp / "no" / "such" / "dir"
    results = tmp / "not-results"
    results.mkdir(parents=True, exist_ok=True)
    config = write(tmp / "configs2" / "ok.yaml", "name: ok\ndatasets:\n  digits: {sigma: [1], R: [8]}\n")
    return [
        Case("options", "--log-file in a missing folder", ["--log-file", missing_dir / "x.log", "train", "digits"],
             ("--log-file",)),
        Case("options", "--log-file that is a folder", ["--log-file", tmp, "train", "digits"], ("--log-file",)),
        Case("options", "--memory-limit 0", ["train", "digits", "--memory-limit", "0"], ("memory limit",)),
        Case("options", "--memory-limit nan", ["train", "digits", "--memory-limit", "nan"], ("memory limit",)),
        Case("options", "--threads -1", ["train", "digits", "--threads", "-1"], ("--threads",)),
        Case("options", "--epochs -1", ["train", "digits", "--solver", "rcd", "--epochs", "-1"], ("--epochs",)),
        Case("options", "R = 10^9 (memory guard)", ["train", "digits", "--R", "1000000000"], ("memory limit",)),
        Case("options", "--l1 without rcd", ["train", "digits", "--l1", "0.1"], ("--l1",)),
        Case("options", "--kernel euclidean for RB", ["train", "digits", "--kernel", "euclidean"], ("l1",)),
        Case("options", "--solver cg for the exact kernel", ["train", "digits", "--method", "exact", "--solver", "cg"],
             ("Cholesky",)),
        Case("options", "predict with a missing model", ["predict", tmp / "none.npz", config], ("none.npz",)),
        Case("options", "sweep --dataset not in the config", ["sweep", config, "--dataset", "mnist", "--dry-run"],
             ("--dataset",)),
        Case("options", "sweep --reuse-from a missing folder", ["sweep", config, "--reuse-from", missing_dir,
                                                                "--dry-run"], ("--reuse-from",)),
        Case("options", "sweep --sigma not a number", ["sweep", config, "--sigma", "wide", "--dry-run"], ("--sigma",)),
        Case("options", "plot an unknown figure", ["plot", "fig9", results], ("fig9",)),
        Case("options", "plot a folder without results", ["plot", "fig3", results], (str(results),)),
        Case("options", "compare a folder without results", ["compare", results], (str(results),)),
        Case("options", "diagnose an unknown dataset", ["diagnose", "nosuch"], ("nosuch",)),
        Case("options", "fetch an unknown dataset", ["fetch", "nosuch"], ("nosuch",)),
    ]
