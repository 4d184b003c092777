"""The user's own data: a file (or train/test pair) named on the command line, or datasets
registered in a YAML file, going through the same parsing, scaling and caching.

A datasets file::

    datasets:
      mydata:
        train: data/mydata.train      # path (relative to this file) or http(s) URL
        test: data/mydata.test        # optional: otherwise a seeded 80/20 split
        format: libsvm                # or csv (label in the first column, optional header)
        task: binary                  # regression | binary | multiclass | auto (inferred from labels)
        n_features: 123               # optional: inferred from the data
        scaling: minmax               # minmax or maxabs (on the training split) or published (as given)
        R: 64                         # default R for sweeps
        lam: 0.01

Files are fetched into DATA_DIR/raw/user/<name>/<hash of the location>-<file name> (so two files
of one name in different folders never share a copy); a URL's hash is recorded on first use, and a
local file is copied again whenever it changes. A URL's password is never written (inputs.redact).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from rbrepro.data.atomic import write_text_atomic
from rbrepro.data.inputs import InputFileError, open_regular, redact, regular_stat
from rbrepro.data.registry import REGISTRY, DataFile, DatasetSpec
from rbrepro.errors import MissingData
from rbrepro.vocabulary import FILE_SCALINGS, TASKS
from rbrepro.yamlconf import ConfigError, Reader, compose

FORMATS = ("libsvm", "csv")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def _location(text: str, base: Path) -> str:
    """A URL as given, or an absolute path (`~` expanded, relative to `base`) with symlinks resolved
    (a symlink loop is left for inputs.regular_stat to name, not raised here)."""
    if "://" in text:
        return text
    return os.path.realpath(Path(base, Path(text).expanduser()))


def _basename(location: str) -> str:
    """The file name a user's file is stored under: its last path component, made safe (it can
    never be '.', '..' or contain a separator, so it cannot escape DATA_DIR/raw/user/<name>/)."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", redact(location).rstrip("/").rsplit("/", 1)[-1])
    return name if name.strip(".") else "data"


def _stored_name(location: str) -> str:
    """The name of a user's file in the cache: a short hash of its location (password redacted), then
    its own name, so files of one name in different folders (or at different URLs) never collide."""
    return f"{hashlib.sha256(redact(location).encode()).hexdigest()[:12]}-{_basename(location)}"


def _guess_format(location: str) -> str:
    name = _basename(location).lower()
    for suffix in (".bz2", ".xz", ".gz"):
        name = name.removesuffix(suffix)
    return "csv" if name.endswith(".csv") else "libsvm"


def user_file(name: str, location: str, fmt: str | None = None, label_column: int = 0) -> DataFile:
    return DataFile(path=f"user/{name}/{_stored_name(location)}", url=location, format=fmt or _guess_format(location),
                    label_column=label_column)


def spec_from_files(name: str, train: str, test: str | None = None, task: str = "auto", fmt: str | None = None,
                    n_features: int = 0, scaling: str = "minmax", default_R: int | None = None,
                    lam: float = 0.01, note: str = "", label_column: int = 0) -> DatasetSpec:
    """A dataset of the user's files (paths or URLs); n_features 0 = infer from the data;
    `label_column` is a CSV's label column (0 the first, -1 the last)."""
    return DatasetSpec(name=name, task=task, n_features=n_features, n_train=0, n_test=0, source="user",
                       train=user_file(name, train, fmt, label_column),
                       test=user_file(name, test, fmt, label_column) if test else None,
                       scaling=scaling, default_R=default_R, lam=lam, note=note or "user data")


#: (training file ending, test file endings) of the pairs LIBSVM's site and libsvmdata use: a9a with
#: a9a.t, ijcnn1.tr with ijcnn1.t, name.train with name.test, name_train with name_test
PAIRED_ENDINGS = (("", (".t", ".test")), (".tr", (".t", ".test")), (".train", (".test", ".t")),
                  ("_train", ("_test",)))


def paired_test_file(path: str) -> str | None:
    """The test file beside a training file, as LIBSVM's site pairs them (PAIRED_ENDINGS), compression
    suffix kept; None where there is none (then the rows are split)."""
    p = Path(path).expanduser()
    name, compressed = p.name, ""
    for suffix in (".bz2", ".xz", ".gz"):
        if name.endswith(suffix):
            name, compressed = name.removesuffix(suffix), suffix
            break
    for train_end, test_ends in PAIRED_ENDINGS:
        if train_end and not name.endswith(train_end):
            continue
        stem = name.removesuffix(train_end) if train_end else name
        for end in test_ends:
            candidate = p.with_name(stem + end + compressed)
            if candidate != p and candidate.is_file():
                return str(candidate)
    return None


def spec_from_path(path: str, test: str | None = None, label_column: int = 0) -> DatasetSpec:
    """An ad hoc dataset for a file named on the command line (name = the file's stem); without a test
    file, the one beside it that LIBSVM's naming pairs with it (`paired_test_file`), if any."""
    if test is None:
        test = paired_test_file(path)
    loc = _location(path, Path.cwd())
    if "://" not in loc:
        try:
            regular_stat(Path(path).expanduser())  # a FIFO, device, socket or loop is refused before any open
        except FileNotFoundError:
            raise MissingData(f"{path}: no such file") from None
    stem = _basename(loc)
    for suffix in (".bz2", ".xz", ".gz", ".csv", ".txt", ".libsvm", ".svm"):
        stem = stem.removesuffix(suffix)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", stem).lstrip("._-") or "data"
    return spec_from_files(name, loc, _location(test, Path.cwd()) if test else None, label_column=label_column)


def load_datasets_file(path: str | Path) -> dict[str, DatasetSpec]:
    """Validate a datasets YAML file into specs (errors name file:line: key path)."""
    path = Path(path)
    try:
        with open_regular(path) as fh:
            text = fh.read().decode("utf-8")
    except InputFileError as exc:
        raise ConfigError(f"cannot read the datasets file: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the datasets file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a YAML text file (byte {exc.start} is not UTF-8)") from None
    rd = Reader(str(path))
    top = rd.mapping(compose(text, str(path)), "", ("datasets",))
    if "datasets" not in top:
        raise ConfigError(f"{path}:1: datasets: missing")
    out = {}
    keys = ("train", "test", "format", "task", "n_features", "scaling", "R", "lam", "note", "label_column")
    if not isinstance(top["datasets"].value, dict):
        rd.fail(top["datasets"], "datasets", "expected a mapping of dataset names")
    for name, node in top["datasets"].value.items():
        where = f"datasets.{name}"
        if not _NAME.match(name):
            rd.fail(node, where, "a dataset name is letters, digits, '_', '-' or '.'")
        if name in REGISTRY:
            rd.fail(node, where, f"{name!r} is a built-in dataset; choose another name")
        d = rd.mapping(node, where, keys)
        if "train" not in d:
            rd.fail(node, where, "train: missing (a path or URL)")
        base = path.parent
        fmt = rd.choice(d["format"], f"{where}.format", FORMATS) if "format" in d else None
        out[name] = spec_from_files(
            name,
            _location(rd.string(d["train"], f"{where}.train"), base),
            _location(rd.string(d["test"], f"{where}.test"), base) if "test" in d else None,
            task=rd.choice(d["task"], f"{where}.task", TASKS + ("auto",)) if "task" in d else "auto",
            fmt=fmt,
            n_features=rd.number(d["n_features"], f"{where}.n_features", integer=True) if "n_features" in d else 0,
            scaling=rd.choice(d["scaling"], f"{where}.scaling", FILE_SCALINGS) if "scaling" in d else "minmax",
            default_R=rd.number(d["R"], f"{where}.R", integer=True) if "R" in d else None,
            lam=rd.number(d["lam"], f"{where}.lam", allow_zero=True) if "lam" in d else 0.01,
            note=rd.string(d["note"], f"{where}.note") if "note" in d else "",
            label_column=rd.number(d["label_column"], f"{where}.label_column", positive=False, integer=True)
            if "label_column" in d else 0,
        )
    return out


def supplied_record(root: Path, name: str) -> Path:
    return root / "raw" / "user" / name / "supplied.json"


def remember_supplied(root: Path, spec: DatasetSpec) -> None:
    """Record where a user-supplied built-in dataset (census) came from, for later loads (a URL's
    password is not written: a later fetch from it needs `--from` again)."""
    files = {role: {"path": f.path, "url": redact(f.url), "format": f.format}
             for role, f in (("train", spec.train), ("test", spec.test)) if f}
    write_text_atomic(supplied_record(root, spec.name), json.dumps(files, indent=1) + "\n")


def with_supplied_files(spec: DatasetSpec, root: Path) -> DatasetSpec:
    """A built-in 'user' dataset (census) completed with the files supplied earlier."""
    from dataclasses import replace

    record = supplied_record(root, spec.name)
    if not record.exists():
        raise MissingData(spec.note)
    files = json.loads(record.read_text())
    make = lambda f: DataFile(path=f["path"], url=f["url"], format=f.get("format", "libsvm"))  # noqa: E731
    return replace(spec, train=make(files["train"]), test=make(files["test"]) if "test" in files else None)
