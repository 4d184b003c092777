"""Plain-numpy references of the Random Binning kernels (slow): the tests compare the numba kernels
against them; nothing in the package runs them."""

import numpy as np


def bin_vectors(X, u, inv_delta):
    """Integer bin vectors: grids x rows x features, b = floor((x - u) / delta) (Alg. 1)."""
    X = np.asarray(X, dtype=np.float64)
    return np.floor((X[None, :, :] - u[:, None, :]) * inv_delta[:, None, :]).astype(np.int64)


def bin_keys(X, u, inv_delta, mult):
    """Keys (grids x rows): sum over features of a_j b_j, mod 2^64 (a_j: odd multipliers)."""
    b = bin_vectors(X, u, inv_delta)
    with np.errstate(over="ignore"):
        terms = b.astype(np.uint64) * mult[None, None, :]
        return terms.sum(axis=2, dtype=np.uint64)


def column_ids(keys):
    """Per grid, distinct keys numbered in order of first appearance (local ids)."""
    ids = np.empty(keys.shape, dtype=np.int64)
    n_bins = []
    for r, row in enumerate(keys):
        uniq, first, inverse = np.unique(row, return_index=True, return_inverse=True)
        rank = np.empty(len(uniq), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(uniq))
        ids[r] = rank[inverse]
        n_bins.append(len(uniq))
    return ids, np.array(n_bins)


def dense_features(ids, n_columns):
    """Dense N x D feature matrix from grid-major column ids (value 1/sqrt(R), -1 = no entry)."""
    n_grids, n = ids.shape
    Z = np.zeros((n, n_columns))
    for r in range(n_grids):
        ok = ids[r] >= 0
        Z[np.flatnonzero(ok), ids[r][ok]] += 1.0 / np.sqrt(n_grids)
    return Z


def laplacian_kernel(X, Y, sigma):
    """exp(-sigma * ||x - y||_1) for every pair (dense, brute force)."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    return np.exp(-sigma * np.abs(X[:, None, :] - Y[None, :, :]).sum(axis=2))
