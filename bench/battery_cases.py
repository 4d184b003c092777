"""The hostile-input battery's cases (bench.hostile_battery runs them): what a case is, how it runs the
real command line, and the cases of LIBSVM and CSV files, model files (damaged and crafted), settings,
fetches and sweep configs."""

from __future__ import annotations

import os
import subprocess
import sys
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
    address_space: int = 0          # bytes: run under this RLIMIT_AS (`ulimit -v`), 0: none


def run_cli(args, env, cwd, address_space: int = 0):
    start = time.monotonic()

    def cap():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    try:
        proc = subprocess.run([sys.executable, "-m", "rbrepro", *map(str, args)], capture_output=True, text=True,
                              env={**os.environ, **env}, cwd=cwd, timeout=TIMEOUT_S,
                              preexec_fn=cap if address_space else None)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start
    return proc, time.monotonic() - start


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


#: hostile edits of a saved RB model that keep every checksum valid (crafted files)
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
    "an infinite scaling": lambda a, h: a.update({"scaler.inv": np.full_like(a["scaler.inv"], np.inf)}),
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
