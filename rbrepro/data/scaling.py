"""Feature scaling fitted on the training split (docs/design.md §3): min-max to [0, 1] per column, or
division by the largest |x| (the authors' cadata), applied alike to every split and to new rows
(a saved model keeps the map). A leaf of the data layer: it imports only the memory model."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from rbrepro.errors import RbreproError


class ScalingError(RbreproError, ValueError):
    """A column min-max scaling cannot represent (the message names it and what to do)."""


def _check_width(X) -> None:
    """A file's largest feature index sets the width: refuse widths whose per-column arrays do not fit."""
    from rbrepro.memory import check_memory

    check_memory(f"scaling {X.shape[1]} feature columns (the largest feature index sets the width)",
                 24.0 * X.shape[1])


@dataclass(frozen=True)
class MinMaxScaler:
    """x -> (x - lo) * inv per column, fitted on the training split (inv = 1/span, 1 if constant)."""

    lo: np.ndarray
    inv: np.ndarray

    @classmethod
    def fit_maxabs(cls, X) -> "MinMaxScaler":
        """x -> x / max|x| per column (lo = 0, so sparse input stays sparse): the authors' cadata
        scaling (docs/design.md §2a)."""
        _check_width(X)
        top = abs(X).max(axis=0)
        top = top.toarray().ravel() if sp.issparse(top) else np.asarray(top).ravel()
        inv = np.where(top > 0, 1.0 / np.where(top > 0, top, 1.0), 1.0)
        return cls(np.zeros(X.shape[1], np.float32), inv.astype(np.float32))

    @classmethod
    def fit(cls, X) -> "MinMaxScaler":
        _check_width(X)
        if sp.issparse(X):
            lo = X.min(axis=0).toarray().ravel()
            hi = X.max(axis=0).toarray().ravel()
        else:
            lo, hi = X.min(axis=0), X.max(axis=0)
        span = np.asarray(hi, np.float64) - np.asarray(lo, np.float64)
        wide = np.flatnonzero(span > np.finfo(np.float32).max)
        if len(wide):
            j = wide[0]
            raise ScalingError(f"feature {j + 1} spans {float(lo[j]):g} to {float(hi[j]):g}, beyond what min-max "
                               f"scaling can represent in float32 (3.4e38); rescale that column or use --scaling "
                               f"published")
        inv = np.where(span > 0, 1.0 / np.where(span > 0, span, 1.0), 1.0)
        return cls(lo.astype(np.float32), inv.astype(np.float32))

    def transform(self, X):
        """Scaled copy; a sparse matrix stays sparse when every column's minimum is 0."""
        if X is None:
            return None
        if sp.issparse(X):
            if np.any(self.lo != 0):
                from rbrepro.memory import check_memory

                check_memory(f"min-max scaling densifies {X.shape[0]} x {X.shape[1]} values (a column with negative "
                             f"values shifts its zeros)", 8.0 * X.shape[0] * X.shape[1])
                X = X.toarray()
            else:
                return _scale_columns(X.tocsr(), self.inv)
        return ((X - self.lo) * self.inv).astype(np.float32)


def _scale_columns(X, inv):
    """X @ diag(inv) as float32 CSR with each row's indices in increasing order (binning reads rows in
    canonical order and would otherwise sort a copy on every call). On rows already canonical each entry
    is scaled in place of the product (the same one rounding in the same dtype, so the same bits)."""
    if X.has_canonical_format:
        dtype = np.result_type(X.dtype, inv.dtype)
        out = sp.csr_matrix((X.data.astype(dtype) * inv.astype(dtype)[X.indices], X.indices.copy(),
                             X.indptr.copy()), shape=X.shape)
        out.eliminate_zeros()  # as the product drops them
        out.data = out.data.astype(np.float32)  # only the values change type: no second copy of the indices
        return out
    out = (X @ sp.diags(inv)).tocsr().astype(np.float32)
    out.sort_indices()
    return out


def minmax_scale(X_train, others):
    """Scale every column to [0, 1] on the training split; apply the same map to the others."""
    scaler = MinMaxScaler.fit(X_train)
    return scaler.transform(X_train), [scaler.transform(o) for o in others]
