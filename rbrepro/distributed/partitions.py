"""Rows split into partitions, each read, checked and turned into targets on a worker.

A partition's source travels inside the task that reads it, so when a worker dies the scheduler
reads the partition again on another (a fit never depends on data that lived only on one worker).
Partitions are contiguous row ranges in order: merging them in order gives the single-process
numbering of Random Binning's bins (first appearance over rows 0 ... N-1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_array

from rbrepro.errors import InvalidParameter
from rbrepro.features.random_binning import canonical_rows
from rbrepro.models import targets


@dataclass(frozen=True, eq=False)
class RowBlock:
    """Rows held in memory (a dense array or CSR matrix) and their labels."""

    X: object
    y: np.ndarray

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    def nbytes(self) -> int:
        X = self.X
        return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) if hasattr(X, "indptr") else int(X.nbytes)

    def load(self):
        return self.X, self.y


@dataclass(frozen=True)
class NpyRows:
    """Rows [lo, hi) of an (n x d) X and (n,) y stored as .npy files, read on the worker (memory
    mapped, so only these rows are read): the partition's data never passes through the client or
    the scheduler, and a lost worker's rows are read again from the files."""

    X_path: str
    y_path: str
    lo: int
    hi: int
    n_features: int
    itemsize: int

    @property
    def n_rows(self) -> int:
        return self.hi - self.lo

    def nbytes(self) -> int:
        return self.n_rows * self.n_features * self.itemsize

    def load(self):
        X = np.load(self.X_path, mmap_mode="r")
        y = np.load(self.y_path, mmap_mode="r")
        return np.ascontiguousarray(X[self.lo:self.hi]), np.array(y[self.lo:self.hi])


def npy_partitions(X_path, y_path, n_partitions: int) -> list[NpyRows]:
    """n_partitions contiguous row ranges of X_path / y_path (.npy files every worker can read).

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from rbrepro.distributed import npy_partitions
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     X_path, y_path = os.path.join(folder, "X.npy"), os.path.join(folder, "y.npy")
    ...     np.save(X_path, np.zeros((10, 3)))
    ...     np.save(y_path, np.zeros(10))
    ...     parts = npy_partitions(X_path, y_path, 3)
    >>> [(part.lo, part.hi) for part in parts]
    [(0, 3), (3, 6), (6, 10)]
    """
    X = np.load(X_path, mmap_mode="r")
    y = np.load(y_path, mmap_mode="r")
    if X.ndim != 2 or y.shape[0] != X.shape[0]:
        raise InvalidParameter(f"{X_path} must hold an n x d array and {y_path} its n labels, got shapes "
                               f"{X.shape} and {y.shape}")
    bounds = _bounds(X.shape[0], n_partitions)
    return [NpyRows(str(X_path), str(y_path), int(lo), int(hi), int(X.shape[1]), int(X.dtype.itemsize))
            for lo, hi in zip(bounds[:-1], bounds[1:])]


def _bounds(n_rows: int, n_partitions: int) -> np.ndarray:
    if isinstance(n_partitions, bool) or not isinstance(n_partitions, (int, np.integer)) or n_partitions < 1:
        raise InvalidParameter(f"partitions must be a positive integer, got {n_partitions!r}")
    return np.linspace(0, n_rows, int(n_partitions) + 1).astype(np.int64)


def split_rows(X, y, n_partitions: int) -> list[RowBlock]:
    """n_partitions contiguous row blocks of (X, y), as even as can be (empty ones where rows run out)."""
    y = np.asarray(y)
    if y.shape[0] != X.shape[0]:
        raise InvalidParameter(f"X has {X.shape[0]} rows but y has {y.shape[0]}")
    bounds = _bounds(X.shape[0], n_partitions)
    return [RowBlock(X[lo:hi], y[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:])]


@dataclass(frozen=True, eq=False)
class DaskChunks:
    """A row chunk of a dask array X and its labels: `inputs` are dask futures of the two chunks,
    handed to the reading task as its arguments (the scheduler recomputes them if they are lost)."""

    inputs: tuple
    n_rows: int
    n_features: int
    itemsize: int

    def nbytes(self) -> int:
        return self.n_rows * self.n_features * self.itemsize

    def load(self, X, y):
        return X, y


def dask_partitions(client, X, y) -> list[DaskChunks]:
    """One partition per row chunk of the dask array X (its columns in one chunk), y chunked alike."""
    import dask.array as da

    if X.ndim != 2:
        raise InvalidParameter(f"X must be a 2-d dask array, got {X.ndim} dimensions")
    X = X.rechunk({1: -1})
    y = (y if isinstance(y, da.Array) else da.from_array(np.asarray(y), chunks=-1)).rechunk((X.chunks[0],))
    futures = client.compute([*X.to_delayed().ravel(), *y.to_delayed().ravel()])
    n = len(X.chunks[0])
    return [DaskChunks((futures[i], futures[n + i]), int(rows), int(X.shape[1]), int(X.dtype.itemsize))
            for i, rows in enumerate(X.chunks[0])]


def load_partition(source, n_features: int, *inputs):
    """On a worker: the source's rows (`inputs`: what dask computed for it), checked as the
    estimators check theirs (finite float rows, CSR in canonical form), and its labels."""
    X, y = source.load(*inputs)
    X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32], order="C", ensure_min_samples=0)
    if X.shape[1] != n_features:
        raise InvalidParameter(f"a partition has {X.shape[1]} features, the others {n_features}")
    return canonical_rows(X), np.asarray(y)


def labels_of(part, task: str) -> np.ndarray:
    """On a worker: the distinct labels of a partition (classification), to find every class of the fit."""
    y = part[1]
    return np.unique(y) if task == "classification" and y.size else np.empty(0, dtype=y.dtype)


def encode_targets(part, task: str, layout: str, classes) -> np.ndarray:
    """On a worker: the partition's targets against the classes of all partitions (a class absent
    here still has its column)."""
    y = part[1]
    if y.size == 0:
        return np.empty((0, 1 if classes is None or len(classes) == 2 else len(classes)))
    return targets.encode(y, task, layout, classes=classes)[0]


def column_sums(Y: np.ndarray) -> np.ndarray:
    return Y.sum(axis=0)


def take_rows(part, rows: np.ndarray):
    """On a worker: some of a partition's rows (Nystrom's landmarks)."""
    return part[0][rows]


def partition_sigma(part, sigma) -> float:
    """On a worker: the width a fit takes for `sigma` ("scale": from this partition's rows)."""
    from rbrepro.models.sigma_search import resolve_sigma

    return resolve_sigma(sigma, part[0])
