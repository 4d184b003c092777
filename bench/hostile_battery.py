"""The hostile-input battery: the bad inputs and injected faults of issues 14 and 23, through the real CLI.

Each case runs `rbrepro` in a subprocess and is classified:
  clean error  exit status 2 and one line naming the file / line / key / variable at fault
  correct      exit status 0 and the right result (where the input is valid after all)
  BAD          anything else: a traceback, a crash, a hang (60 s), an error that names nothing,
               or a wrong result accepted silently
Faults (SIGKILL of a sweep at random moments, of its coordinator alone or of one worker, a
raw file damaged after its verified fetch, bad first downloads) count as survived when the
rerun gives exactly the uninterrupted run's rows, or the damaged data is refused.

    python -m bench.hostile_battery [--kills N] [--seed S]

prints one line per case and the counts for the README's reliability table; exit status 1
if any case is BAD.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "libsvm"
REPO = Path(__file__).resolve().parents[1]
ESCAPE = "\x1b"
TIMEOUT_S = 60


@dataclass
class Case:
    group: str
    name: str
    args: list
    needles: tuple = ()             # an error line must contain each of these
    expect: str = "error"           # "error" or "ok"
    check_ok: object = None         # for "ok": callable(stdout) -> bool
    env: dict = field(default_factory=dict)
    check_err: object = None        # callable(stderr) -> bool: what stderr must also say (a note, a refusal)


def run_cli(args, env, cwd):
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "rbrepro", *map(str, args)], capture_output=True, text=True,
                              env={**os.environ, **env}, cwd=cwd, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start
    return proc, time.monotonic() - start


def classify(case: Case, proc) -> tuple[str, str]:
    if proc is None:
        return "BAD", f"hang (> {TIMEOUT_S} s)"
    lines = [line for line in proc.stderr.strip().splitlines() if "━" not in line and line.strip()]
    if "Traceback" in proc.stderr or proc.returncode < 0 or proc.returncode > 2:
        return "BAD", f"exit {proc.returncode}: {(lines or [''])[-1][:120]}"
    if ESCAPE in "".join(lines):  # a crafted name's terminal escape codes reached the terminal raw
        return "BAD", f"raw terminal escape on stderr: {ascii(lines[0])[:120]}"
    if case.check_err is not None and not case.check_err(proc.stderr):
        return "BAD", f"stderr lacks what it must say: {' '.join(lines)[:120]}"
    if case.expect == "ok":
        if proc.returncode == 0 and (case.check_ok is None or case.check_ok(proc.stdout)):
            return "correct", " ".join(proc.stdout.split())[:120]
        return "BAD", f"exit {proc.returncode}: {(lines or [proc.stdout])[-1][:120]}"
    if proc.returncode != 2 or len(lines) != 1:
        return "BAD", f"exit {proc.returncode}, {len(lines)} lines: {(lines or [' '.join(proc.stdout.split())])[0][:120]}"
    missing = [n for n in case.needles if n not in lines[0]]
    if missing:
        return "BAD", f"names none of {missing}: {lines[0][:120]}"
    return "clean error", lines[0][:140]


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
    return path


def libsvm_cases(tmp: Path) -> list[Case]:
    good = "".join(f"{(-1) ** i} 1:0.{i % 9 + 1} 2:0.{(3 * i) % 9 + 1}\n" for i in range(40))
    bad_lines = {
        "index 4000000000": "1 1:0.5 4000000000:0.5\n", "index 4294967297 (wraps to 1)": "1 4294967297:0.5\n",
        "index 1e20": "1 99999999999999999999:1\n", "index 0": "1 0:0.5\n", "negative index": "1 -3:0.5\n",
        "value 1e39 (float32 overflow)": "1 1:1e39\n", "value nan": "1 1:nan\n", "value inf": "1 1:inf\n",
        "label 'abc'": "abc 1:0.5\n", "value 'x'": "1 1:x\n", "token without ':'": "1 1 0.5\n",
        "duplicate index": "1 1:0.5 1:0.6\n", "unsorted indices": "1 2:0.5 1:0.6\n", "missing label": "1:0.5 2:0.1\n",
    }
    cases = []
    for label, line in bad_lines.items():
        rows = good.splitlines(keepends=True)
        path = write(tmp / "libsvm" / f"{len(cases)}.txt", "".join(rows[:13] + [line] + rows[13:]))
        cases.append(Case("LIBSVM file", label, ["train", path, "--R", "8"], (str(path),)))
    for label, data in {"empty file": b"", "binary junk": bytes(range(256)) * 8,
                        "plain text named .bz2": good.encode(), "truncated .bz2": None}.items():
        suffix = ".bz2" if "bz2" in label else ".txt"
        if data is None:
            import bz2
            noisy = "".join(f"{(-1) ** i} 1:{v:.6f} 2:{w:.6f}\n" for i, (v, w) in
                            enumerate(np.random.default_rng(1).random((2000, 2))))
            full = bz2.compress(noisy.encode())
            data = full[: len(full) // 2]
        path = write(tmp / "libsvm" / f"{len(cases)}{suffix}", data)
        cases.append(Case("LIBSVM file", label, ["train", path, "--R", "8"], (str(path),)))
    wide = write(tmp / "libsvm" / "wide.txt", "1 1:0.5 200000000:0.5\n" + good * 5)
    cases.append(Case("LIBSVM file", "index 200,000,000 in a 5 kB file", ["train", wide, "--R", "8"],
                      ("feature index 200000000", "features wide")))
    fine = write(tmp / "libsvm" / "fine.txt", good * 5)
    cases.append(Case("LIBSVM file", "valid file, width inferred", ["train", fine, "--R", "8"], expect="ok",
                      check_ok=lambda out: "accuracy" in out))
    return cases


def csv_cases(tmp: Path) -> list[Case]:
    body = "".join(f"{i % 2},{i / 40:.3f},{(i * 7 % 40) / 40:.3f}\n" for i in range(60))
    bad = {
        "missing value in the first row": ("1,,0.5\n" + body, ":1:"),
        "typo in the first row": ("1,0.5x,0.5\n" + body, ":1:"),
        "bad value after comments and blanks": ("y,a,b\n# c\n\n" + body[:40] + "1,oops,2\n" + body, ":6:"),
        "ragged row": ("y,a,b\n" + body[:40] + "1,2\n", ":"),
        "value 1e39 (float32 overflow)": ("1,1e39,0.5\n" + body, ":1:"),
        "header only": ("y,a,b\n", "no data rows"),
    }
    cases = []
    for label, (text, where) in bad.items():
        path = write(tmp / "csv" / f"{len(cases)}.csv", text)
        cases.append(Case("CSV file", label, ["train", path, "--R", "8"], (str(path), where)))
    ok = write(tmp / "csv" / "ok.csv", "label,x1,x2\n# comment\n" + body)
    cases.append(Case("CSV file", "valid with header and comment", ["train", ok, "--R", "8"], expect="ok",
                      check_ok=lambda out: "accuracy" in out))
    return cases


def model_cases(tmp: Path) -> list[Case]:
    rng = np.random.default_rng(0)
    X = rng.random((300, 4))
    y = np.where(X[:, 0] + X[:, 1] > 1, 1, -1)
    lines = [f"{label} " + " ".join(f"{j + 1}:{v:.5f}" for j, v in enumerate(row)) for row, label in zip(X, y)]
    train = write(tmp / "model" / "train.txt", "\n".join(lines[:200]) + "\n")
    test = write(tmp / "model" / "test.txt", "\n".join(lines[200:]) + "\n")
    model = tmp / "model" / "m.npz"
    proc, _ = run_cli(["train", train, "--R", "16", "--sigma", "2", "--save-model", model],
                      {"RBREPRO_DATA": str(tmp / "d")}, tmp)
    if proc is None or proc.returncode != 0:
        raise SystemExit(f"could not train the model the battery damages: {proc and proc.stderr}")
    good = model.read_bytes()
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0x04
    damaged = {"truncated": good[: len(good) // 2], "empty": b"", "bit flipped": bytes(flipped),
               "not a zip file": b"PK\x03\x04 nope" * 10}
    cases = []
    for label, data in damaged.items():
        path = write(tmp / "model" / f"{label.replace(' ', '_')}.npz", data)
        cases.append(Case("model file", label, ["predict", path, test], (str(path),)))
    other = write(tmp / "model" / "reg.txt", "".join(f"{3.5 + i} 1:0.{i} 2:0.5\n" for i in range(1, 9)))
    cases.append(Case("model file", "labels that are not the model's classes (predicted, not scored)",
                      ["predict", model, other, "--json", "--pad"], expect="ok",
                      check_ok=lambda out: '"value": null' in out and "not classes of the model" in out))
    unlabelled = write(tmp / "model" / "unlabelled.txt", "".join(f"1:0.{i} 2:0.5\n" for i in range(1, 9)))
    cases.append(Case("model file", "rows without labels (predicted, not scored)", ["predict", model, unlabelled, "--pad"],
                      expect="ok", check_ok=lambda out: len(out.split()) == 8))
    cases.append(Case("model file", "the intact model", ["predict", model, test], expect="ok",
                      check_ok=lambda out: len(out.split()) >= 100))
    for label, edit in CRAFTED.items():  # valid checksums: only the content checks stand between them and a kernel
        path = _crafted(model, tmp / "model" / f"crafted_{label.replace(' ', '_')}.npz", edit)
        cases.append(Case("crafted model (valid checksums)", label, ["predict", path, test], (str(path),)))
    return cases


def _first_id_far(a, h):
    ids = a["features._table_ids"].copy()
    ids[np.flatnonzero(ids >= 0)[0]] = 10**6
    a["features._table_ids"] = ids


#: hostile edits of a saved RB model that keep every checksum valid (issue 23's crafted files)
CRAFTED = {
    "a bin id past every column": _first_id_far,
    "bin ids of -7": lambda a, h: a.update({"features._table_ids": np.where(a["features._table_ids"] >= 0, -7,
                                                                            a["features._table_ids"])}),
    "n_grids doubled": lambda a, h: h["params"].update(n_grids=h["params"]["n_grids"] * 2),
    "the feature map's n_grids changed": lambda a, h: h["scalars"]["features"]["params"].update(n_grids=64),
    "NaN weights": lambda a, h: a.update({"model.coef_": np.full_like(a["model.coef_"], np.nan)}),
    "negative sigma": lambda a, h: h["params"].update(sigma=-2.0),
    "zero bin widths": lambda a, h: a.update({"features.deltas_": np.zeros_like(a["features.deltas_"])}),
    "infinite offsets": lambda a, h: a.update({"features.offsets_": np.full_like(a["features.offsets_"], np.inf)}),
    "weights for fewer bins": lambda a, h: a.update({"model.coef_": a["model.coef_"][:-1]}),
    "a class too many": lambda a, h: a.update({"model.classes_": np.array([-1, 1, 2])}),
}


def _crafted(src: Path, dest: Path, edit) -> Path:
    """A copy of the model file edited by `edit(arrays, header)` with every checksum recomputed."""
    import json

    from rbrepro.models import persist

    with np.load(src, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    header = json.loads(str(arrays.pop("__header__")))
    edit(arrays, header)
    header["checksums"] = {name: persist._checksum(np.asarray(a)) for name, a in arrays.items()}
    header["header_sha256"] = persist._header_checksum(header)
    arrays["__header__"] = np.array(json.dumps(header))
    with open(dest, "wb") as fh:
        np.savez(fh, **arrays)
    return dest


def settings_cases(tmp: Path) -> list[Case]:
    cases = [Case("settings", f"{var}={value}", ["train", "digits", "--R", "8"], (var,), env={var: value})
             for var, value in [("RBREPRO_MEMORY_LIMIT_GB", "abc"), ("RBREPRO_MEMORY_LIMIT_GB", "-1"),
                                ("RBREPRO_MEMORY_LIMIT_GB", "inf")]]
    cases.append(Case("settings", "RBREPRO_FETCH_TIMEOUT=abc", ["fetch", "cadata", "--mirror", "http://127.0.0.1:9"],
                      ("RBREPRO_FETCH_TIMEOUT",), env={"RBREPRO_FETCH_TIMEOUT": "abc"}))
    for option, value in [("--lam", "inf"), ("--lam", "-1"), ("--sigma", "nan"), ("--R", "0"), ("--seed", "x")]:
        cases.append(Case("settings", f"{option} {value}", ["train", "digits", option, value], (option,)))
    configs = {
        "binary YAML file": (bytes(range(256)), ()),
        "unknown key": ("name: x\ndatasets:\n  digits: {sigma: [1], R: [8], colour: red}\n", ("colour",)),
        "wrong type": ("name: x\ndatasets:\n  digits: {sigma: [1], R: [eight]}\n", ("R",)),
        "duplicate key": ("name: x\nname: y\ndatasets:\n  digits: {sigma: [1], R: [8]}\n", ("name",)),
        "invalid YAML": ("name: x\ndatasets: [\n", ()),
        "empty file": ("", ()),
        "test selection in a fair config": ("name: x\nprotocol: fair\nsigma_selection: test\ndatasets:\n"
                                            "  digits: {sigma: [1], R: [8]}\n", ("test",)),
        "unknown dataset": ("name: x\ndatasets:\n  nosuch: {sigma: [1], R: [8]}\n", ("nosuch",)),
    }
    for label, (text, needles) in configs.items():
        path = write(tmp / "configs" / f"c{len(cases)}.yaml", text)
        cases.append(Case("config", label, ["sweep", path, "--dry-run", "--out", tmp / "res"], (str(path), *needles)))
    sci = write(tmp / "configs" / "sci.yaml", "name: x\ndatasets:\n  digits: {sigma: [1e-3], R: [8]}\n")
    cases.append(Case("config", "YAML 1e-3 (no dot)", ["sweep", sci, "--dry-run", "--out", tmp / "res"],
                      expect="ok", check_ok=lambda out: "0.001" in out or "1 cell" in out))
    return cases


def fetch_cases(tmp: Path) -> list[Case]:
    if not (SHARED / "MANIFEST.tsv").exists():
        return []
    cadata = (SHARED / "regression" / "cadata").read_bytes()
    cases = []

    def bare(label, files):
        root = tmp / "mirrors" / str(len(cases))
        for rel, data in files.items():
            write(root / rel, data)
        return root

    for label, rel, data, needle in [
        ("truncated first copy, no manifest", "regression/cadata", cadata[:700_000], "20,640 rows"),
        ("HTML page not starting <html", "regression/cadata", b"<!-- proxy -->\n<head>login</head>\n", "web page"),
        ("CSV bytes where LIBSVM is expected", "regression/cadata", b"452600,8.3,41\n" * 20640, "not LIBSVM"),
        ("HTML served as .bz2", "binary/ijcnn1.tr.bz2", b"<!doctype html><p>404</p>", "bz2"),
        ("corrupt .bz2 stream", "binary/ijcnn1.tr.bz2", b"BZh91AY&SYjunk", "damaged"),
    ]:
        mirror = bare(label, {rel: data})
        name = "cadata" if "cadata" in rel else "ijcnn1"
        cases.append(Case("fetch", label, ["fetch", name, "--mirror", mirror, "-q"], (rel, needle),
                          env={"RBREPRO_DATA": str(tmp / "data" / str(len(cases)))}))
    for label, row in [("manifest row with an empty sha256", "regression/cadata\t\t20640"),
                       ("manifest row without a sha256 column", "regression/cadata")]:
        mirror = bare(label, {"regression/cadata": cadata, "MANIFEST.tsv": f"file\tsha256\trows\n{row}\n"})
        cases.append(Case("fetch", label, ["fetch", "cadata", "--mirror", mirror, "-q"], ("MANIFEST.tsv:2",),
                          env={"RBREPRO_DATA": str(tmp / "data" / str(len(cases)))}))
    cases.append(Case("fetch", "unreachable mirror URL", ["fetch", "cadata", "--mirror", "http://127.0.0.1:9", "-q"],
                      ("127.0.0.1:9",), env={"RBREPRO_DATA": str(tmp / "data" / "dead")}))
    return cases


def sweep_config_cases(tmp: Path) -> list[Case]:
    """Configs that must be refused before any work, each naming the file, line and key."""
    grid = "datasets:\n  digits: {sigma: [1], R: [8]}\n"
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [*a{'' if i == 1 else i - 1}, *a{'' if i == 1 else i - 1}, *a{'' if i == 1 else i - 1}]\n"
        for i in range(1, 12))
    bad = {
        "5,000-deep nesting": ("name: x\ndatasets:\n  digits: " + "[" * 5000 + "]" * 5000 + "\n", ("nested",)),
        "alias bomb": ("name: x\n" + bomb + grid, ("too large",)),
        "python object tag": ("name: !!python/object:os.system x\n" + grid, ()),
        "unknown method": ("name: x\nmethods: [svm]\n" + grid, ("methods[0]",)),
        "rcd on Nystrom": ("name: x\nmethods: [nystrom]\nsolver: {name: rcd}\n" + grid, ("solver.name",)),
        "unknown solver": ("name: x\nsolver: {name: lbfgs}\n" + grid, ("solver.name",)),
        "negative seed": ("name: x\nseeds: [-1]\n" + grid, ("seeds",)),
        "R of 0": ("name: x\ndatasets:\n  digits: {sigma: [1], R: [0]}\n", ("R",)),
        "negative sigma": ("name: x\ndatasets:\n  digits: {sigma: [-1], R: [8]}\n", ("sigma",)),
        "threads of -1": ("name: x\nthreads: [-1]\n" + grid, ("threads",)),
        "unknown figure": ("name: x\nfigure: fig9\n" + grid, ("figure",)),
        "unknown protocol": ("name: x\nprotocol: lenient\n" + grid, ("protocol",)),
        "unknown kernel": ("name: x\nkernel: cosine\n" + grid, ("kernel",)),
        "band at the chosen sigma without selection": ("name: x\nband: {seeds: [0, 1]}\n" + grid, ("band",)),
        "a fair protocol on the euclidean kernel": ("name: x\nprotocol: fair\nkernel: euclidean\n" + grid,
                                                    ("protocol",)),
        "datasets is a list": ("name: x\ndatasets: [digits]\n", ("datasets",)),
        "no datasets": ("name: x\n", ("datasets",)),
        "a name with a slash": ("name: ../x\n" + grid, ("name",)),
        "NaN tolerance": ("name: x\nsolver: {name: cg, tol: .nan}\n" + grid, ("solver.tol",)),
        "maxit of -5": ("name: x\nsolver: {name: cg, maxit: -5}\n" + grid, ("solver.maxit",)),
    }
    cases = []
    for label, (text, needles) in bad.items():
        path = write(tmp / "configs2" / f"c{len(cases)}.yaml", text)
        cases.append(Case("config", label, ["sweep", path, "--dry-run", "--out", tmp / "res2"], (str(path), *needles)))
    return cases


def own_data_cases(tmp: Path) -> list[Case]:
    """The researcher's next step (issue 23): CSV label columns, own test files, special files."""
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


def own_answer_cases(tmp: Path) -> list[Case]:
    """No silent wrong answer (issue 37): each class at least twice, the project's own cases."""
    d = tmp / "answers"
    rng = np.random.default_rng(37)
    X = rng.uniform(0, 1000, (600, 5))
    counts = np.round(X[:, 0] / 20 + rng.normal(0, 1, 600)).clip(0, None)
    quantity = write(d / "quantity.txt", "".join(f"{int(t)} " + " ".join(f"{j + 1}:{v:.3f}" for j, v in
                                                                           enumerate(x)) + "\n"
                                                  for x, t in zip(X, counts)))
    classes = write(d / "classes.txt", "".join(f"{i % 2} " + " ".join(f"{j + 1}:{v:.3f}" for j, v in enumerate(x))
                                               + "\n" for i, x in enumerate(X)))
    narrow = write(d / "narrow.txt", "".join(f"{int(t)} 1:{x[0]:.3f} 2:{x[1]:.3f} 3:{x[2]:.3f}\n"
                                             for x, t in zip(X, counts)))
    wide_csv = write(d / "wide.csv", "".join(",".join(f"{v:.3f}" for v in x) + ",1,2,3\n" for x in X))
    model = d / "quantity.npz"
    run_cli(["train", quantity, "--task", "regression", "--R", "16", "--save-model", model, "-q"],
            {"RBREPRO_DATA": str(tmp / "d")}, tmp)
    foreign = write(d / "foreign" / "results.csv", "a,b\n1,2\n")
    sweep_cfg = write(d / "s.yaml", "name: s\ndatasets:\n  digits: {sigma: [1], R: [8]}\n")
    fig4 = d / "fig4"
    shutil.copytree(REPO / "results" / "fig4", fig4, dirs_exist_ok=True)
    dead_part = fig4 / ".fig4.png.999999999.abc.part"
    write(dead_part, "")
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
             expect="ok", check_ok=lambda out: '"sigma_selection": "validation' in out),
    ]
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


def damaged_raw_fault(tmp: Path) -> tuple[str, str]:
    """Fetch cadata (verified), truncate the raw file, then train and fetch: both must refuse it."""
    env = {"RBREPRO_DATA": str(tmp / "raw-fault")}
    proc, _ = run_cli(["fetch", "cadata", "--mirror", SHARED, "-q"], env, tmp)
    raw = tmp / "raw-fault" / "raw" / "regression" / "cadata"
    os.truncate(raw, 700_000)
    for args in (["train", "cadata", "--mirror", SHARED, "--R", "16"], ["fetch", "cadata", "--mirror", SHARED]):
        proc, _ = run_cli(args, env, tmp)
        verdict, line = classify(Case("fault", "raw", args, (str(raw), "changed after it was fetched")), proc)
        if verdict != "clean error":
            return "BAD", line
    return "survived", "truncated raw file refused by train and fetch"


def sigkill_faults(tmp: Path, kills: int, seed: int) -> list[tuple[str, str, str]]:
    """SIGKILL a digits sweep at random moments (group, coordinator alone, one worker), then resume."""
    import pandas as pd
    import psutil

    config = write(tmp / "kill.yaml", "name: k\nseeds: [0, 1, 2, 3]\ndatasets:\n"
                                      "  digits: {sigma: [0.1, 0.3, 1, 3, 10], R: [32, 128]}\n")
    sweep = [sys.executable, "-m", "rbrepro", "sweep", str(config), "-q", "--out"]
    start = time.monotonic()
    subprocess.run([*sweep, str(tmp / "clean")], check=True, capture_output=True, timeout=600)
    clean_s = time.monotonic() - start
    rng = np.random.default_rng(seed)
    out, results = tmp / "killed", []
    for i in range(kills):
        target = ("group", "coordinator", "worker")[i % 3]
        proc = subprocess.Popen([*sweep, str(out)], start_new_session=True, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        moment = rng.uniform(0.05, 0.9) * clean_s
        time.sleep(moment)
        if proc.poll() is None:
            if target == "group":
                os.killpg(proc.pid, signal.SIGKILL)
            elif target == "worker" and (children := psutil.Process(proc.pid).children(recursive=True)):
                children[int(rng.integers(len(children)))].send_signal(signal.SIGKILL)
            else:
                proc.send_signal(signal.SIGKILL)
        try:
            proc.wait(timeout=300)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        results.append((f"SIGKILL {target} at {moment:.1f} s", ))
    subprocess.run([*sweep, str(out)], check=True, capture_output=True, timeout=600)
    cols = ["cell_key", "test_metric", "D", "cg_iterations"]
    a = pd.read_csv(tmp / "clean" / "results.csv")[cols].sort_values("cell_key").reset_index(drop=True)
    b = pd.read_csv(out / "results.csv")[cols].sort_values("cell_key").reset_index(drop=True)
    same = len(a) == len(b) == 40 and a.equals(b) and not list((out / "cells").glob(".*.part"))
    verdict = "survived" if same else "BAD"
    note = "resume gave the uninterrupted CSV" if same else "resumed CSV differs from the uninterrupted run"
    return [("fault", name, verdict, note) for (name,) in results]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=6, help="SIGKILLs of a sweep at random moments")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill moments")
    parser.add_argument("--group", action="append", default=[], help="run only the cases of this group (repeatable; "
                                                                        "no faults then)")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="rbrepro-battery-"))
    try:
        cases = [*libsvm_cases(tmp), *csv_cases(tmp), *model_cases(tmp), *settings_cases(tmp), *fetch_cases(tmp),
                 *sweep_config_cases(tmp), *own_data_cases(tmp), *cli_option_cases(tmp), *own_answer_cases(tmp)]
        if args.group:
            cases = [c for c in cases if c.group in args.group]
        counts = {"clean error": 0, "correct": 0, "BAD": 0}
        for case in cases:
            proc, _ = run_cli(case.args, {"RBREPRO_DATA": str(tmp / "d"), **case.env}, tmp)
            verdict, line = classify(case, proc)
            counts[verdict] += 1
            print(f"{verdict:12s} {case.group:12s} {case.name:42s} {line}", flush=True)
        faults = []
        if (SHARED / "MANIFEST.tsv").exists() and not args.group:
            verdict, note = damaged_raw_fault(tmp)
            faults.append(("fault", "raw file truncated after its verified fetch", verdict, note))
        faults += sigkill_faults(tmp, args.kills, args.seed) if not args.group else []
        for group, name, verdict, note in faults:
            print(f"{verdict:12s} {group:12s} {name:42s} {note}", flush=True)
        survived = sum(v == "survived" for *_, v, _ in faults)
        print()
        print("| inputs tried | clean one-line errors | correct results | BAD (traceback, crash, hang, silent) "
              "| faults injected | survived |")
        print("|---|---|---|---|---|---|")
        print(f"| {len(cases)} | {counts['clean error']} | {counts['correct']} | {counts['BAD']} | {len(faults)} "
              f"| {survived} |")
        return 1 if counts["BAD"] or survived < len(faults) else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
