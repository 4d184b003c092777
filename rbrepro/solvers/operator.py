"""What the solvers see of a feature matrix Z (N x D): an operator, not a data type (as Falkon's
solvers do). Every operator has `shape`, `matvec(W) = Z W`, `rmatvec(V, out=None) = Z^T V` (into `out`,
a (D, C) buffer, where given), `gram_diagonal()`
(diag Z^T Z, the Jacobi preconditioner) and `to_csr()` or a dense `Z` for the direct solve
(`FeatureOperator` declares the first four). The rest are optional, and a solver uses them where
they exist (it asks with `hasattr`):

- `normal_gather(P, work)` and `normal_update(work, P, lam, alpha, W, Rk, inv_diag)`: a CG step on
  (Z^T Z + lam I) split where its step length is known: the first applies Z to P and returns |Z p|^2 per
  column (so p^T (Z^T Z + lam I) p = |Z p|^2 + lam |p|^2 before any column of Z^T Z p exists), the second
  updates W += alpha P and Rk -= alpha (Z^T Z + lam I) P inside the operator's own pass over the columns
  and returns the new residual's r^T r and r^T M r (M = diag(inv_diag), or I); `work` holds the
  operator's buffers from step to step (Random Binning's `BinnedMatrix`: Z^T Z p is never stored);
- `gram_apply(P, lam)`: (Z^T Z + lam I) P for a block P (D x C), as (AP, per-column p^T A p): a whole CG
  step in one call (rbrepro.distributed's operator reduces it from the workers that hold the rows);
- `row_gram(V, out, work)`: out = Z Z^T V for a block V (N x C), `work` a (D x C) buffer it returns and
  is given back on the next call: plain CG in row space (solvers.cg, `ridge_cg_rows`) applies only this;
- `gram_diagonal_levels()`: (levels, index) with levels[index] = `gram_diagonal()`, where the diagonal
  takes few distinct values (Random Binning: bin counts), so that a function of it entry by entry (PCG's
  preconditioner) is evaluated once a level;
- `one_value_columns()`: (ids, offsets, value) when every row holds the same number of entries of
  one value, stored as column ids (Random Binning), for coordinate descent by columns;
- `rows(mask)`: the operator of the rows a boolean mask selects, with the same columns (a copy: a
  distributed worker's held-out split, solvers.stopping);
- `kept_rows(held)`: the rows a held-out split keeps without a copy, its `held_out` the held-out rows'
  operator (early stopping's search on one machine, Random Binning: `features.kept_rows`);
- `end_solve()`: called when a CG solve ends, so that an operator tracking the solve's iterate
  (`kept_rows`) stops.

`features.BinnedMatrix` implements the protocol for Random Binning, `DenseOperator` here for dense
features (RF, Nystrom); `as_operator` wraps a plain array. solvers/ imports nothing from features/.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class FeatureOperator(Protocol):
    shape: tuple[int, int]

    def matvec(self, W: np.ndarray) -> np.ndarray: ...

    def rmatvec(self, V: np.ndarray, out: np.ndarray | None = None) -> np.ndarray: ...

    def gram_diagonal(self) -> np.ndarray: ...


class DenseOperator:
    """A dense feature matrix seen by the solvers: Z W and Z^T V through BLAS."""

    def __init__(self, Z: np.ndarray):
        self.Z = Z
        self.shape = Z.shape

    def matvec(self, W):
        return np.asarray(self.Z @ W.astype(self.Z.dtype, copy=False), dtype=np.float64)

    def rmatvec(self, V, out=None):
        return into(np.asarray(self.Z.T @ V.astype(self.Z.dtype, copy=False), dtype=np.float64), out)

    def gram_diagonal(self) -> np.ndarray:
        """The squared column norms."""
        return np.einsum("ij,ij->j", self.Z, self.Z, dtype=np.float64)

    def rows(self, mask: np.ndarray) -> DenseOperator:
        """The rows `mask` selects (a copy), the same columns."""
        return DenseOperator(self.Z[mask])

    @property
    def nbytes(self) -> int:
        return int(self.Z.nbytes)


def into(result: np.ndarray, out: np.ndarray | None) -> np.ndarray:
    """result, or result copied into `out` where the caller gave a buffer (an operator's rmatvec whose
    product is made elsewhere: BLAS, the workers), in result's shape."""
    if out is None:
        return result
    np.copyto(out, result.reshape(out.shape))
    return out.reshape(result.shape)


def as_operator(Z) -> FeatureOperator:
    """Z itself when it is an operator already, else a dense array wrapped in DenseOperator."""
    if hasattr(Z, "matvec") and hasattr(Z, "rmatvec"):
        return Z
    return DenseOperator(np.asarray(Z))
