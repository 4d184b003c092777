"""Random Binning across workers: every partition is binned on the same grids (the model's draw,
the authors' included); the workers' bin keys are merged into one numbering, the one a single
process gives, so D and every column are the single-process fit's.

Each worker numbers its grid's bins in order of first appearance in its rows and sends the distinct
keys (about D_r per grid) to the client. Partitions are contiguous and merged in order, so a key's
global column is its rank by (first partition holding it, first appearance there): exactly the order
of first appearance over all rows. The client sends each partition the global column of each of its
local bins, and the workers rewrite their ids; Z itself never leaves the workers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbrepro.distributed.cluster import ordered_sum
from rbrepro.features.binned_matrix import BinnedMatrix


@dataclass(eq=False)
class LocalBins:
    """A partition binned on its own: ids (R, n) local to each grid, keys[r] grid r's distinct keys."""

    ids: np.ndarray
    keys: list


def local_bins(features, part) -> LocalBins:
    """On a worker: bin a partition's rows on the drawn grids (features.prepare_grids done)."""
    X = part[0]
    features._check_bin_range(X)
    ids, _, keys = features.number_bins(X)
    return LocalBins(ids, keys)


def bin_keys(local: LocalBins) -> list:
    return local.keys


def merge_bin_keys(partition_keys: list[list[np.ndarray]]) -> tuple[list, list]:
    """(global keys per grid in column order, per partition (flat map, per-grid map offsets)): the map
    sends a partition's local bin c of grid r to column flat[offsets[r] + c] within grid r."""
    n_grids = len(partition_keys[0])
    merged, maps = [], [[] for _ in partition_keys]
    for r in range(n_grids):
        chunks = [keys[r] for keys in partition_keys]
        uniq, first, inverse = np.unique(np.concatenate(chunks), return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(uniq), dtype=np.int32)
        rank[order] = np.arange(len(uniq), dtype=np.int32)
        merged.append(uniq[order])
        columns = rank[inverse.reshape(-1)]
        for p, piece in enumerate(np.split(columns, np.cumsum([len(c) for c in chunks])[:-1])):
            maps[p].append(piece)
    return merged, [_flatten(pieces) for pieces in maps]


def _flatten(pieces: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(p) for p in pieces])
    return (np.concatenate(pieces) if pieces else np.empty(0, np.int32)), offsets


def global_matrix(local: LocalBins, column_map: tuple[np.ndarray, np.ndarray], col_offsets: np.ndarray) -> BinnedMatrix:
    """On a worker: the partition's Z with global column ids (a new array: the local bins stay as
    they were, so a retried task gives the same result)."""
    flat, offsets = column_map
    ids = np.empty_like(local.ids)
    for r in range(ids.shape[0]):
        ids[r] = flat[offsets[r] + local.ids[r]] + col_offsets[r]
    return BinnedMatrix(ids, col_offsets)


def column_counts(Z: BinnedMatrix) -> np.ndarray:
    """On a worker: each column's training rows in this partition (diag Z^T Z times R), counted as a
    fit counts them (`BinnedMatrix.column_counts`: a scatter, no copy of the ids), as int64."""
    return Z.column_counts().astype(np.int64)


def fit_binned(features, runner, parts: list, n_features: int, n_rows: int) -> tuple[list, np.ndarray]:
    """Fit `features` (RandomBinningFeatures) on the partitions as its own fit would on all rows;
    returns the futures of the partitions' Z and diag(Z^T Z)."""
    features.prepare_grids(n_features)
    features.n_features_in_ = n_features
    locals_ = [runner.submit(local_bins, features, part) for part in parts]
    keys = runner.gather(runner.map(bin_keys, locals_), "binning the partitions")
    merged, maps = merge_bin_keys(keys)
    col_offsets = np.zeros(len(merged) + 1, dtype=np.int64)
    col_offsets[1:] = np.cumsum([len(k) for k in merged])
    matrices = [runner.submit(global_matrix, loc, m, col_offsets) for loc, m in zip(locals_, maps)]
    counts = ordered_sum(runner.gather(runner.map(column_counts, matrices), "counting the bins"))
    max_count = np.maximum.reduceat(counts, col_offsets[:-1]) if n_rows else np.zeros(len(merged), np.int64)
    features.set_columns(merged, n_rows, max_count)
    return matrices, counts / float(features.n_grids)
