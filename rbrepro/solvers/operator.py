"""What the solvers see of a feature matrix Z (N x D): an operator, not a data type (as Falkon's
solvers do). Every operator has `shape`, `matvec(W) = Z W`, `rmatvec(V) = Z^T V`, `gram_diagonal()`
(diag Z^T Z, the Jacobi preconditioner) and `to_csr()` or a dense `Z` for the direct solve
(`FeatureOperator` declares the first four). Four methods are optional, and a solver uses them where
they exist (it asks with `hasattr`):

- `gram_apply_dots(P, lam, R, inv_diag)`: Q = (Z^T Z + lam I) P and, per column, the dots p^T q,
  r^T M q and q^T M q (M = diag(inv_diag), or I) fused in the operator's own pass (Random Binning's
  `BinnedMatrix`): CG then knows its step and next direction before it touches a vector, and updates
  them all in one pass;
- `gram_apply(P, lam)`: the same for a block P (D x C), as (AP, per-column p^T A p): a whole CG
  step in one call (rbrepro.distributed's operator reduces it from the workers that hold the rows);
- `one_value_columns()`: (ids, offsets, value) when every row holds the same number of entries of
  one value, stored as column ids (Random Binning), for coordinate descent by columns;
- `rows(mask)`: the operator of the rows a boolean mask selects, with the same columns (a held-out
  split, solvers.stopping).

`features.BinnedMatrix` implements the protocol for Random Binning, `DenseOperator` here for dense
features (RF, Nystrom); `as_operator` wraps a plain array. solvers/ imports nothing from features/.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class FeatureOperator(Protocol):
    shape: tuple[int, int]

    def matvec(self, W: np.ndarray) -> np.ndarray: ...

    def rmatvec(self, V: np.ndarray) -> np.ndarray: ...

    def gram_diagonal(self) -> np.ndarray: ...


class DenseOperator:
    """A dense feature matrix seen by the solvers: Z W and Z^T V through BLAS."""

    def __init__(self, Z: np.ndarray):
        self.Z = Z
        self.shape = Z.shape

    def matvec(self, W):
        return np.asarray(self.Z @ W.astype(self.Z.dtype, copy=False), dtype=np.float64)

    def rmatvec(self, V):
        return np.asarray(self.Z.T @ V.astype(self.Z.dtype, copy=False), dtype=np.float64)

    def gram_diagonal(self) -> np.ndarray:
        """The squared column norms."""
        return np.einsum("ij,ij->j", self.Z, self.Z, dtype=np.float64)

    def rows(self, mask: np.ndarray) -> DenseOperator:
        """The rows `mask` selects (a copy), the same columns."""
        return DenseOperator(self.Z[mask])

    @property
    def nbytes(self) -> int:
        return int(self.Z.nbytes)


def as_operator(Z) -> FeatureOperator:
    """Z itself when it is an operator already, else a dense array wrapped in DenseOperator."""
    if hasattr(Z, "matvec") and hasattr(Z, "rmatvec"):
        return Z
    return DenseOperator(np.asarray(Z))
