"""LIBSVM text -> a binary cache that loads in well under a second.

Parsing uses scikit-learn's compiled `load_svmlight_file` (fast, streams its input,
well tested) on a decompressing file object (.bz2, .xz, .gz or plain). The parsed
matrix is cached as an uncompressed .npz beside a record of the source's sha256, so a
changed source is re-parsed. Dense float32 is stored when at least half the entries
are non-zero, CSR float32 otherwise.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from rbrepro.data.atomic import atomic_path

CACHE_FORMAT = 1
DENSE_IF_DENSITY_AT_LEAST = 0.5


class ParseError(ValueError):
    """A LIBSVM file that cannot be parsed; the message names the file."""


@dataclass
class Parsed:
    X: np.ndarray | sp.csr_matrix
    y: np.ndarray


def open_text(path: Path):
    """A binary file object that decompresses by suffix."""
    suffix = path.suffix.lower()
    if suffix == ".bz2":
        return bz2.open(path, "rb")
    if suffix == ".xz":
        return lzma.open(path, "rb")
    if suffix == ".gz":
        return gzip.open(path, "rb")
    return open(path, "rb")


def parse_libsvm(path: Path, n_features: int) -> Parsed:
    """Parse a one-based LIBSVM file into float32 features (n_features columns) and labels."""
    try:
        with open_text(path) as fh:
            X, y = load_svmlight_file(fh, n_features=n_features, dtype=np.float32, zero_based=False)
    except (ValueError, OSError, EOFError, lzma.LZMAError) as exc:
        raise ParseError(f"{path}: not a valid LIBSVM file for {n_features} features: {exc}") from exc
    if X.shape[0] == 0:
        raise ParseError(f"{path}: no data rows")
    if not np.isfinite(X.data).all() or not np.isfinite(y).all():
        raise ParseError(f"{path}: contains NaN or infinite values")
    X = X.tocsr()
    X.sum_duplicates()
    density = X.nnz / max(1, X.shape[0] * X.shape[1])
    return Parsed(X.toarray() if density >= DENSE_IF_DENSITY_AT_LEAST else X, y.astype(np.float64))


def save_cache(parsed: Parsed, dest: Path, source_sha256: str) -> None:
    meta = json.dumps({"format": CACHE_FORMAT, "source_sha256": source_sha256})
    arrays = {"y": parsed.y, "meta": np.array(meta)}
    if sp.issparse(parsed.X):
        arrays.update(data=parsed.X.data, indices=parsed.X.indices, indptr=parsed.X.indptr,
                      shape=np.array(parsed.X.shape))
    else:
        arrays["X"] = parsed.X
    with atomic_path(dest) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)


def load_cache(path: Path, source_sha256: str) -> Parsed | None:
    """The cached parse, or None if absent, unreadable, stale or of another format."""
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as npz:
            meta = json.loads(str(npz["meta"]))
            if meta.get("format") != CACHE_FORMAT or meta.get("source_sha256") != source_sha256:
                return None
            if "X" in npz.files:
                X = npz["X"]
            else:
                X = sp.csr_matrix((npz["data"], npz["indices"], npz["indptr"]), shape=tuple(npz["shape"]))
            return Parsed(X, npz["y"])
    except (OSError, ValueError, KeyError, json.JSONDecodeError):
        return None
