"""Assemble a registry dataset: fetch if needed, parse (cached), split, scale (DESIGN §3)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from rbrepro.data import libsvm
from rbrepro.data.atomic import write_text_atomic
from rbrepro.data.fetch import fetch_dataset, sha256_file
from rbrepro.data.registry import DatasetSpec, get_spec

TRAIN_SHARE = 0.8


def data_dir(path: str | os.PathLike | None = None) -> Path:
    """The cache folder: `path`, else $RBREPRO_DATA, else ./datasets."""
    return Path(path or os.environ.get("RBREPRO_DATA") or "datasets")


def default_mirror(mirror=None):
    return mirror if mirror not in (None, "") else (os.environ.get("RBREPRO_MIRROR") or None)


@dataclass
class Dataset:
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


def _source_digest(path: Path) -> str:
    """sha256 of a raw file, remembered in a sidecar keyed by size and mtime."""
    st = path.stat()
    sidecar = path.with_name(path.name + ".sha256.json")
    stamp = {"size": st.st_size, "mtime_ns": st.st_mtime_ns}
    if sidecar.exists():
        try:
            rec = json.loads(sidecar.read_text())
            if {k: rec.get(k) for k in stamp} == stamp:
                return rec["sha256"]
        except (ValueError, KeyError):
            pass
    digest = sha256_file(path)
    write_text_atomic(sidecar, json.dumps({**stamp, "sha256": digest}))
    return digest


def load_parsed(raw: Path, n_features: int, cache_dir: Path) -> libsvm.Parsed:
    """Parse a raw LIBSVM file once; later calls read the binary cache."""
    digest = _source_digest(raw)
    cache = cache_dir / (raw.name + ".npz")
    parsed = libsvm.load_cache(cache, digest)
    if parsed is None or parsed.X.shape[1] != n_features:
        parsed = libsvm.parse_libsvm(raw, n_features)
        libsvm.save_cache(parsed, cache, digest)
    return parsed



def minmax_scale(X_train, others):
    """Scale every column to [0, 1] on the training split; apply the same map to the others."""
    if sp.issparse(X_train):
        lo = X_train.min(axis=0).toarray().ravel()
        if np.any(lo != 0):
            return minmax_scale(X_train.toarray(), [o.toarray() if o is not None else None for o in others])
        hi = X_train.max(axis=0).toarray().ravel()
        inv = np.where(hi > 0, 1.0 / np.where(hi > 0, hi, 1.0), 1.0).astype(np.float32)
        D = sp.diags(inv)
        return (X_train @ D).tocsr(), [None if o is None else (o @ D).tocsr() for o in others]
    lo = X_train.min(axis=0)
    span = X_train.max(axis=0) - lo
    inv = np.where(span > 0, 1.0 / np.where(span > 0, span, 1.0), 1.0).astype(np.float32)
    return ((X_train - lo) * inv).astype(np.float32), [
        None if o is None else ((o - lo) * inv).astype(np.float32) for o in others]


def _embedded(spec: DatasetSpec):
    import sklearn.datasets

    loader = getattr(sklearn.datasets, spec.source.split(":", 1)[1])
    X, y = loader(return_X_y=True)
    return libsvm.Parsed(np.ascontiguousarray(X, dtype=np.float32), y.astype(np.float64))


def load_dataset(name: str, data_path=None, mirror=None, fetch: bool = True, progress: bool = True) -> Dataset:
    """Load a registry dataset ready for training (split and scaled per DESIGN §3).

    Missing files are fetched (from `mirror`, $RBREPRO_MIRROR or the site) unless
    fetch=False. A dataset without a test file is split 80/20 with its fixed seed.
    """
    spec = get_spec(name)
    root = data_dir(data_path)
    if spec.source.startswith("sklearn:"):
        train, test, val = _embedded(spec), None, None
    else:
        if spec.source == "user":
            path = root / "raw" / "user" / f"{spec.name}"
            if not path.exists():
                raise FileNotFoundError(f"{spec.name}: {spec.note} (expected at {path})")
            raws = {"train": path}
        else:
            missing = [f for f in spec.files if not (root / "raw" / f.path).exists()]
            if missing and not fetch:
                raise FileNotFoundError(f"{spec.name}: {missing[0].path} is not in {root / 'raw'}; "
                                        f"run `rbrepro fetch {spec.name}`")
            if missing:
                fetch_dataset(spec, root, default_mirror(mirror), progress=progress)
            raws = {role: root / "raw" / f.path
                    for role, f in (("train", spec.train), ("test", spec.test), ("val", spec.val)) if f}
        cache_dir = root / "cache"
        train = load_parsed(raws["train"], spec.n_features, cache_dir)
        test = load_parsed(raws["test"], spec.n_features, cache_dir) if "test" in raws else None
        val = load_parsed(raws["val"], spec.n_features, cache_dir) if "val" in raws else None

    if test is None:
        n = train.X.shape[0]
        perm = np.random.default_rng(spec.split_seed).permutation(n)
        cut = int(np.floor(TRAIN_SHARE * n))
        tr, te = np.sort(perm[:cut]), np.sort(perm[cut:])
        test = libsvm.Parsed(train.X[te], train.y[te])
        train = libsvm.Parsed(train.X[tr], train.y[tr])
        split = f"seeded {int(TRAIN_SHARE * 100)}/{100 - int(TRAIN_SHARE * 100)} (seed {spec.split_seed})"
    else:
        split = "provided test file"

    X_train, X_test, X_val = train.X, test.X, val.X if val else None
    if spec.scaling == "minmax":
        X_train, (X_test, X_val) = minmax_scale(X_train, [X_test, X_val])
        scaling = "minmax[0,1] on train"
    else:
        scaling = "as published"
    return Dataset(name=spec.name, task=spec.task, X_train=X_train, y_train=train.y, X_test=X_test,
                   y_test=test.y, X_val=X_val, y_val=val.y if val else None, scaling=scaling, split=split,
                   info={"n_train": X_train.shape[0], "n_test": X_test.shape[0], "n_features": spec.n_features})
