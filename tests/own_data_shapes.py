"""Rows shaped like two LIBSVM sets the mirror lacks: a9a (32,561 sparse binary rows, 14 ones each among
123 columns, one per categorical group) and cpusmall (8,192 rows of 12 unscaled columns on scales from 1
to 2.5e6, regression). Labels follow a noisy rule of the columns, so a model that fits the data scores well."""
import numpy as np
import scipy.sparse as sp


def a9a_like(n=32561, seed=0):
    """14 one-hot groups over 123 binary columns (a9a's layout: each row has exactly 14 ones); the
    label a noisy rule of a few groups."""
    rng = np.random.default_rng(seed)
    sizes = np.array([9, 16, 7, 15, 6, 5, 2, 14, 8, 10, 12, 10, 5, 4])  # sums to 123
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    picks = np.stack([rng.integers(0, s, n) for s in sizes], axis=1)
    cols = (starts + picks).ravel()
    rows = np.repeat(np.arange(n), 14)
    X = sp.csr_matrix((np.ones(n * 14), (rows, cols)), shape=(n, 123))
    w = rng.standard_normal(123)
    score = X @ w + 0.8 * rng.standard_normal(n)
    y = np.where(score > np.median(score), 1, -1)
    return X, y

def cpusmall_like(n=8192, seed=0):
    rng = np.random.default_rng(seed)
    scales = np.array([1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 3e0, 3e1, 3e2, 3e3, 2.5e6])
    U = rng.random((n, 12))
    X = U * scales
    y = 90 - 30 * U[:, 0] - 20 * U[:, 3] ** 2 + 10 * np.sin(3 * U[:, 8]) + 5 * U[:, 11] + rng.standard_normal(n)
    return X, y
