"""Assemble a dataset: fetch if needed, parse (cached), check, split, scale (docs/design.md §3)."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from rbrepro.data import libsvm, user
from rbrepro.data.checks import ContentError, check_parsed, task_of, with_task
from rbrepro.data.delimited import parse_csv
from rbrepro.data.fetch import (
    FetchError,
    fetch_dataset,
    file_lock,
    is_own_local_file,
    read_record,
    sha256_file,
    write_record,
)
from rbrepro.data.files import ParseError
from rbrepro.data.folders import data_dir
from rbrepro.data.generated import generated_origin, generated_rows
from rbrepro.data.inputs import redact
from rbrepro.data.registry import REGISTRY, DataFile, DatasetSpec, get_spec
from rbrepro.data.scaling import MinMaxScaler, ScalingError
from rbrepro.errors import InvalidParameter, MissingData
from rbrepro.memory import MemoryLimitError, out_of_memory
from rbrepro.vocabulary import SCALINGS

log = logging.getLogger(__name__)

TRAIN_SHARE = 0.8


def default_mirror(mirror=None):
    return mirror if mirror not in (None, "") else (os.environ.get("RBREPRO_MIRROR") or None)


def user_datasets(datasets_file=None) -> dict[str, DatasetSpec]:
    """Datasets registered in a YAML file (`datasets_file`, else $RBREPRO_DATASETS)."""
    path = datasets_file or os.environ.get("RBREPRO_DATASETS")
    return user.load_datasets_file(path) if path else {}


def _names_a_file(name: str) -> bool:
    """Whether a dataset argument is a path to something on disk (a file, or a special file or a
    symlink loop, which spec_from_path then refuses naming the path) rather than a dataset name."""
    return ("/" in name or "." in name) and os.path.lexists(Path(name).expanduser())


#: endings that make a dataset argument a path, not a name ("data/nope.libsvm": no such file)
_DATA_SUFFIXES = (".libsvm", ".svm", ".csv", ".txt", ".bz2", ".gz", ".xz", ".scale", ".t", ".tr")


def _looks_like_path(name: str) -> bool:
    return "/" in name or name.startswith("~") or name.lower().endswith(_DATA_SUFFIXES)


def resolve_spec(name: str | DatasetSpec, root: Path, extra: dict[str, DatasetSpec] | None = None) -> DatasetSpec:
    """A registry name, a user-registered name, a DatasetSpec, or a path to a data file."""
    if isinstance(name, DatasetSpec):
        spec = name
    elif not (extra and name in extra) and name not in REGISTRY and not _names_a_file(name) \
            and _looks_like_path(name):
        raise MissingData(f"{name}: no such file (and no dataset of that name)")
    elif (extra and name in extra) or not _names_a_file(name):
        spec = get_spec(name, extra)
    else:
        spec = user.spec_from_path(name)
    if spec.source == "user" and spec.train is None:
        spec = user.with_supplied_files(spec, root)
    return spec


@dataclass
class Dataset:
    """A dataset ready for training, as `load_dataset` returns it: the training and test rows (dense
    or CSR) and labels, the validation rows where the site has a file of them, the task ("regression",
    "binary" or "multiclass"), how it was scaled and split, and `info` (sizes, the paper's counts)."""

    name: str
    task: str
    X_train: np.ndarray | sp.csr_matrix
    y_train: np.ndarray
    X_test: np.ndarray | sp.csr_matrix
    y_test: np.ndarray
    scaling: str
    split: str
    X_val: np.ndarray | sp.csr_matrix | None = None
    y_val: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    @property
    def model_task(self) -> str:
        return "regression" if self.task == "regression" else "classification"

    @property
    def n_features(self) -> int:
        return self.X_train.shape[1]


def _source_digest(path: Path) -> str:
    """sha256 of a raw file, from its fetch record while size and mtime still match. A file whose
    bytes changed after it was fetched and verified is refused (never parsed into a training run);
    a file that was only touched keeps its record."""
    rec = read_record(path)
    if rec:
        return rec["sha256"]
    digest = sha256_file(path)
    try:
        earlier = json.loads(path.with_name(path.name + ".meta.json").read_text())
    except (OSError, ValueError):
        earlier = None
    if isinstance(earlier, dict) and earlier.get("sha256") and earlier.get("origin") != "local":
        if digest != earlier["sha256"]:
            raise ContentError(f"{path}: its bytes changed after it was fetched and verified (sha256 {digest[:16]}, "
                               f"recorded {str(earlier['sha256'])[:16]} from {earlier.get('origin')}); delete it "
                               f"and {path.name}.meta.json, then fetch it again")
        write_record(path, digest, earlier["origin"], earlier.get("expected_rows"))
        return digest
    write_record(path, digest, "local", None)
    return digest


def load_parsed(raw: Path, n_features: int, cache_dir: Path, fmt: str = "libsvm", key: str | None = None,
                repairs: tuple = (), label_column: int = 0, memory_limit_gb: float | None = None) -> libsvm.Parsed:
    """Parse a raw file once; later calls read the hash-checked binary cache (cache_dir/<key>.npz).
    `repairs`: the registry's known defects of this file, repaired exactly (libsvm.parse_libsvm);
    `label_column`: a CSV's label column (a parse with another column is cached apart)."""
    digest = _source_digest(raw)
    key = (key or raw.name).replace("/", "__") + (f".label{label_column}" if fmt == "csv" and label_column else "")
    cache = cache_dir / (key + ".npz")
    with file_lock(cache_dir.parent / "locks" / (key + ".parse.lock")):
        parsed = libsvm.load_cache(cache, digest)
        if parsed is not None:
            log.debug("%s: parsed rows read from the cache %s", raw.name, cache)
        if parsed is None or (n_features and parsed.X.shape[1] != n_features):
            log.info("%s: parsing (the cache is missing or older than the file)", raw.name)
            parsed = parse_csv(raw, n_features, label_column, memory_limit_gb) if fmt == "csv" else \
                libsvm.parse_libsvm(raw, n_features, repairs=repairs, memory_limit_gb=memory_limit_gb)
            libsvm.save_cache(parsed, cache, digest)
    return parsed


def _needs_fetch(spec: DatasetSpec, root: Path) -> bool:
    """Whether a dataset's files must be fetched: one is not in raw/ yet, or is a user's local file
    (copied again when it changed since; fetch_file sees that cheaply from its size and mtime)."""
    return any(not (root / "raw" / f.path).exists() or is_own_local_file(f) for f in spec.files)


def _check_rows(raw: Path, parsed: libsvm.Parsed, file: DataFile) -> None:
    rec = read_record(raw) or {}
    expected = rec.get("expected_rows")
    if expected is not None and parsed.X.shape[0] != expected:
        raise ContentError(f"{raw}: parsed {parsed.X.shape[0]} rows, but {rec.get('origin', 'its source')} "
                           f"promises {expected}; delete the file and fetch again")


def _on_training_names(spec: DatasetSpec, names: tuple[str, ...], part, role: str):
    """A test or validation file's rows with labels as indices into the training file's class
    names (files of names are numbered each by its own names). Names the training file lacks,
    or names on one side and numbers on the other, are refused."""
    if part is None or (not names and not part.classes):
        return part
    if not names or not part.classes:
        which = "training" if names else role
        raise ContentError(f"{spec.name}: the {which} file's labels are class names and the other's are numbers")
    extra = sorted(set(part.classes) - set(names))
    if extra:
        raise ContentError(f"{spec.name}: the {role} file has labels the training file lacks: {extra[:5]}")
    remap = np.searchsorted(np.array(names), np.array(part.classes))
    return libsvm.Parsed(part.X, remap[part.y.astype(np.int64)].astype(np.float64), part.repairs, names)


def _pad(X, width: int):
    if X is None or X.shape[1] == width:
        return X
    if sp.issparse(X):
        return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))
    return np.hstack([X, np.zeros((X.shape[0], width - X.shape[1]), X.dtype)])


def _scale(spec: DatasetSpec, how: str, parts: tuple):
    """(scaler or None, the parts scaled, the scaling's description) for `how` (docs/design.md §3)."""
    X_train = parts[0]
    if how not in ("minmax", "maxabs", "maxabs-all"):
        return None, parts, "as published"
    try:
        if how == "maxabs-all":
            stack = sp.vstack if sp.issparse(X_train) else np.vstack
            scaler = MinMaxScaler.fit_maxabs(stack([X for X in parts if X is not None]))
        else:
            scaler = MinMaxScaler.fit(X_train) if how == "minmax" else MinMaxScaler.fit_maxabs(X_train)
    except ScalingError as exc:
        raise ContentError(f"{spec.train.url if spec.train and spec.train.url else spec.name}: {exc}") from None
    described = {"minmax": "minmax[0,1] on train", "maxabs": "maxabs on train", "maxabs-all": "maxabs on all rows"}
    return scaler, tuple(scaler.transform(X) for X in parts), described[how]


def split_sizes(n: int, spec: DatasetSpec) -> int:
    """Training rows of a seeded split: the paper's counts when the file has exactly their sum,
    else floor(0.8 N)."""
    if spec.n_train and spec.n_test and n == spec.n_train + spec.n_test:
        return spec.n_train
    return int(np.floor(TRAIN_SHARE * n))




def load_dataset(name: str | DatasetSpec, data_path=None, mirror=None, fetch: bool = True, progress: bool = True,
                 datasets_file=None, scaling: str = "default", test_file: str | Path | None = None,
                 label_column: int | None = None, task: str = "auto", memory_limit_gb: float | None = None) -> Dataset:
    """Load a dataset ready for training: fetched if needed, parsed (cached), split and scaled.

    Parameters
    ----------
    name : str or DatasetSpec
        A registry name (the paper's Table 1 sets, "digits", the synthetic shapes), a name from a
        datasets YAML file (`datasets_file` or $RBREPRO_DATASETS), a DatasetSpec, or a path to a
        LIBSVM or CSV file. A dataset without a test file is split with its fixed seed.
    data_path : str or Path, optional
        The cache folder (default: $RBREPRO_DATA, else the platform's user cache).
    mirror : str, optional
        Where missing files are fetched from (default: $RBREPRO_MIRROR, else the LIBSVM site).
    fetch, progress : bool, default=True
        Fetch missing files (False: raise instead); show a download's progress.
    datasets_file : str or Path, optional
        A datasets YAML file registering the user's own datasets by name.
    scaling : {"default", "minmax", "maxabs", "maxabs-all", "published"}, default="default"
        The registry's scaling, or: each column to [0, 1] on the training split; each column divided
        by its maximum |x| on the training split, or on every row before the split (the authors'
        cadata); as the file has it.
    test_file : str or Path, optional
        Score on this file instead of a split of `name`, which must then be a file too.
    label_column : int, optional
        A CSV file's label column (0 the first, the default; -1 the last).
    task : {"auto", "regression", "binary", "multiclass"}, default="auto"
        The task of the user's own data ("auto": the registry's, else inferred from the labels).
    memory_limit_gb : float, optional
        The limit parsing is held to (a file whose arrays would pass it stops early).

    Returns
    -------
    Dataset
        X_train, y_train, X_test, y_test (and X_val, y_val where the site has a validation file),
        task, scaling and split.

    Examples
    --------
    >>> import tempfile
    >>> from rbrepro.data import load_dataset
    >>> with tempfile.TemporaryDirectory() as cache:  # scikit-learn's bundled digits: no download
    ...     data = load_dataset("digits", data_path=cache)
    >>> data.task, data.X_train.shape, data.X_test.shape
    ('multiclass', (1437, 64), (360, 64))
    >>> float(data.X_train.min()), float(data.X_train.max())  # min-max scaled on the training split
    (0.0, 1.0)
    """
    if scaling not in SCALINGS:
        raise InvalidParameter(f"scaling {scaling!r} is not available; choose from {', '.join(SCALINGS)}")
    spec, root = _resolve(name, data_path, datasets_file, test_file, label_column, task)
    train, test, val = _read(spec, root, fetch, mirror, progress, memory_limit_gb)
    class_names = train.classes
    test, val = (_on_training_names(spec, class_names, part, role) for part, role in ((test, "test"), (val, "validation")))
    width = spec.n_features or max(p.X.shape[1] for p in (train, test, val) if p is not None)
    task = task_of(spec, train.y, class_names)
    _check_labels(spec, task, train, test, val)
    train, test, split = _split(spec, train, test)
    X_train, X_test, X_val = (_pad(p.X, width) if p is not None else None for p in (train, test, val))
    how = spec.scaling if scaling == "default" else scaling
    scaler, (X_train, X_test, X_val), scaling = _scale(spec, how, (X_train, X_test, X_val))
    return Dataset(name=spec.name, task=task, X_train=X_train, y_train=train.y, X_test=X_test,
                   y_test=test.y, X_val=X_val, y_val=val.y if val else None, scaling=scaling, split=split,
                   info={"n_train": X_train.shape[0], "n_test": X_test.shape[0], "n_features": width,
                         "paper_n_train": spec.n_train, "paper_n_test": spec.n_test, "note": spec.note,
                         "spec": replace(spec, task=task), "scaler": scaler, "class_names": class_names,
                         "repairs": tuple(r for p in (train, test, val) if p is not None for r in p.repairs)})


def _resolve(name, data_path, datasets_file, test_file, label_column, task: str) -> tuple[DatasetSpec, Path]:
    """(the spec `name` stands for, the data folder): a registered or user-registered dataset, or a
    file named here (with its test file and label column, which only a file named here may take)."""
    if test_file is not None or label_column is not None:
        what = f"a test file ({test_file})" if test_file is not None else f"a label column ({label_column})"
        if not isinstance(name, str) or not _names_a_file(name):
            registered = not isinstance(name, str) or name in REGISTRY or name in user_datasets(datasets_file)
            raise (InvalidParameter(f"{what} goes with a data file named on the command line, but {name!r} is a "
                                    f"registered dataset with its own files; give the training file's path")
                   if registered else MissingData(f"{name}: no such file (and no dataset of that name)"))
        name = user.spec_from_path(name, None if test_file is None else str(test_file), label_column or 0)
        if label_column and name.train.format != "csv":
            raise InvalidParameter(f"{what} applies to CSV files; {name.train.url} is LIBSVM, whose label is each "
                                   f"line's first token")
    root = data_dir(data_path)
    return with_task(resolve_spec(name, root, user_datasets(datasets_file)), task), root


def _read(spec: DatasetSpec, root: Path, fetch: bool, mirror, progress: bool, memory_limit_gb: float | None = None):
    """(train, test, val) rows as parsed (test and val None where the dataset has no such file),
    fetching missing files unless fetch=False; each file's rows and content checked."""
    if spec.generated:
        return generated_rows(spec, root), None, None
    missing = [f for f in spec.files if not (root / "raw" / f.path).exists()]
    if missing and not fetch:
        raise MissingData(f"{spec.name}: {missing[0].path} is not in {root / 'raw'}; "
                          f"run `rbrepro fetch {spec.name}`")
    if _needs_fetch(spec, root):
        fetch_dataset(spec, root, default_mirror(mirror), progress=progress)
    parsed = {}
    for role, f in (("train", spec.train), ("test", spec.test), ("val", spec.val)):
        if f is None:
            continue
        raw = root / "raw" / f.path
        try:
            parsed[role] = load_parsed(raw, spec.n_features, root / "cache", f.format, key=f.path,
                                       repairs=f.repairs, label_column=f.label_column,
                                       memory_limit_gb=memory_limit_gb)
        except (MemoryLimitError, ParseError) as exc:
            if not f.url:
                raise
            # a user's file is parsed from its copy under raw/user/: name the file the user gave
            raise type(exc)(str(exc).replace(str(raw), redact(f.url))) from None
        except MemoryError:  # not the guard's refusal: an allocation the machine's limits refused
            raise MemoryLimitError(out_of_memory(redact(f.url) if f.url else str(raw), "reading its rows",
                                                 memory_limit_gb)) from None
        _check_rows(raw, parsed[role], f)
        check_parsed(redact(f.url) if f.url else str(raw), parsed[role], spec.n_features)
    return parsed["train"], parsed.get("test"), parsed.get("val")


def _check_labels(spec: DatasetSpec, task: str, train, test, val) -> None:
    """A classification's classes: as many as the registry says, and none in test or validation
    rows that training lacks."""
    if task == "regression":
        return
    classes = np.unique(train.y)
    if spec.n_classes and len(classes) != spec.n_classes:
        raise ContentError(f"{spec.name}: the training file has {len(classes)} classes "
                           f"({classes[:10].tolist()}), the registry expects {spec.n_classes}")
    for role, part in (("test", test), ("validation", val)):
        if part is not None and not np.isin(np.unique(part.y), classes).all():
            extra = np.setdiff1d(np.unique(part.y), classes)[:5].tolist()
            raise ContentError(f"{spec.name}: the {role} file has labels the training file lacks: {extra}")


def _split(spec: DatasetSpec, train, test):
    """(train, test, how they were had): the test file, or a seeded split of the training rows."""
    if test is not None:
        where = spec.test.url if spec.source == "user" and spec.test is not None else ""
        return train, test, f"test file {os.path.basename(where)}" if where else "provided test file"
    n = train.X.shape[0]
    perm = np.random.default_rng(spec.split_seed).permutation(n)
    cut = split_sizes(n, spec)
    if not 0 < cut < n:
        raise ContentError(f"{spec.name}: {spec.train.path if spec.train else 'the data'} has {n} row(s), which "
                           f"cannot be split into training and test rows; give it more rows or a test file")
    tr, te = np.sort(perm[:cut]), np.sort(perm[cut:])
    return (libsvm.Parsed(train.X[tr], train.y[tr]), libsvm.Parsed(train.X[te], train.y[te]),
            f"seeded split {len(tr)}/{len(te)} (seed {spec.split_seed})")


VALIDATION_SHARE = 0.2
VALIDATION_SEED = 12345


def validation_split(data: Dataset) -> Dataset:
    """Train on the training split minus validation data, evaluate on the validation data:
    the site's validation file where there is one (ijcnn1, letter; then the whole training
    split trains), otherwise a seeded 20 % of the training split (docs/design.md §2, choosing sigma)."""
    if data.X_val is not None:
        return replace(data, X_test=data.X_val, y_test=data.y_val, X_val=None, y_val=None,
                       split="validation file")
    n = data.X_train.shape[0]
    perm = np.random.default_rng(VALIDATION_SEED).permutation(n)
    cut = n - int(round(VALIDATION_SHARE * n))
    tr, va = np.sort(perm[:cut]), np.sort(perm[cut:])
    return replace(data, X_train=data.X_train[tr], y_train=data.y_train[tr], X_test=data.X_train[va],
                   y_test=data.y_train[va], split=f"validation: seeded 20% of train (seed {VALIDATION_SEED})")


def dataset_fingerprint(name, data_path=None, mirror=None, datasets_file=None) -> str:
    """A short hash that changes whenever the data a cell would train on changes: the spec
    (files, width, task, scaling, split seed) and the sha256 of each raw file (from its fetch
    record; missing files are fetched first). A dataset that cannot be had gets
    "unavailable", so its cells are still keyed and run, and fail with the reason."""
    return dataset_availability(name, data_path, mirror, datasets_file)[0]


#: dataset_availability's answer for files not fetched yet, when asked not to fetch (a dry run)
NOT_FETCHED = "not-fetched"


def dataset_availability(name, data_path=None, mirror=None, datasets_file=None, fetch: bool = True) -> tuple[str, str]:
    """(fingerprint, "") for a dataset that can be had; ("unavailable", why) for one whose files
    cannot be fetched from the data source (not in the mirror, not on the site, no network).
    With fetch=False nothing is downloaded or copied: files not in the cache yet give
    (NOT_FETCHED, "") (a dry run lists their cells as to run)."""
    import hashlib
    import json

    root = data_dir(data_path)
    try:
        spec = resolve_spec(name, root, user_datasets(datasets_file))
        if spec.generated:
            digests = [generated_origin(spec)]
        else:
            if not fetch and any(not (root / "raw" / f.path).exists() for f in spec.files):
                return NOT_FETCHED, ""
            if fetch and _needs_fetch(spec, root):
                fetch_dataset(spec, root, default_mirror(mirror), progress=False)
            digests = [_source_digest(root / "raw" / f.path) for f in spec.files]
    except (FetchError, FileNotFoundError) as exc:  # cannot be had here (not in the mirror, or a user's
        return "unavailable", str(exc)               # dataset not supplied): named once, no cells
    except Exception:  # noqa: BLE001 - damaged data and the like: the cells run, fail and say why in full
        return "unavailable", ""
    described = {"files": [f.path for f in spec.files], "d": spec.n_features, "task": spec.task,
                 "scaling": spec.scaling, "split_seed": spec.split_seed, "digests": digests}
    if any(f.label_column for f in spec.files):  # a CSV read with another label column is other data
        described["label_columns"] = [f.label_column for f in spec.files]  # (absent at 0: old keys stay)
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()[:16], ""
