"""The compact Random Binning feature matrix (docs/design.md §2).

Every row of Z has exactly R non-zeros, all equal to 1/sqrt(R), so Z is stored as an
R x N int32 array of column ids (grid-major: one contiguous row per grid) instead of a
general CSR matrix: half the memory, Z w becomes a gather and Z^T v a scatter-add in
which each thread owns whole grids (disjoint column ranges).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from rbrepro.features import _matvec_kernels as kernels
from rbrepro.memory import fault_in


class BinnedMatrix:
    """Z = S / sqrt(R) with S the 0/1 bin-membership pattern, stored as column ids.

    What `RandomBinningFeatures.fit_transform_binned` returns, and what CG runs on: every row has
    one entry per grid, so Z is an R x N int32 array of column ids, half a CSR matrix's memory.
    Z w is a gather and Z^T v a scatter-add in which each thread owns whole grids.

    Parameters
    ----------
    ids : ndarray of shape (R, N), int32
        ids[r, i] in [offsets[r], offsets[r + 1]), row i's column in grid r, or -1 (a bin unseen
        in training: the entry is absent).
    offsets : ndarray of shape (R + 1,), int64
        The first column of each grid; D = offsets[-1].

    Attributes
    ----------
    n_grids, n_rows, n_columns : int
        R, N and D.
    scale : float
        1/sqrt(R), the value of every entry.

    Examples
    --------
    >>> import numpy as np
    >>> from rbrepro.features import BinnedMatrix
    >>> ids = np.array([[0, 1, 0], [2, 2, 3]], dtype=np.int32)  # 2 grids, 3 rows
    >>> Z = BinnedMatrix(ids, offsets=np.array([0, 2, 4]))
    >>> Z.shape, Z.nnz
    ((3, 4), 6)
    >>> Z.to_csr().toarray() * np.sqrt(2)
    array([[1., 0., 1., 0.],
           [0., 1., 1., 0.],
           [1., 0., 0., 1.]])
    >>> np.allclose(Z.matvec(np.ones(4)), np.sqrt(2)), Z.rmatvec(np.ones(3)).shape
    (True, (4,))
    """

    def __init__(self, ids: np.ndarray, offsets: np.ndarray):
        self.ids = ids
        self.offsets = offsets
        self.n_grids, self.n_rows = ids.shape
        self.n_columns = int(offsets[-1])
        self.scale = 1.0 / np.sqrt(self.n_grids)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n_rows, self.n_columns)

    @property
    def nnz(self) -> int:
        return int(np.count_nonzero(self.ids >= 0))

    @property
    def nbytes(self) -> int:
        return self.ids.nbytes + self.offsets.nbytes

    def matvec(self, W: np.ndarray) -> np.ndarray:
        """Z W for W of shape (D,) or (D, C)."""
        W2 = np.ascontiguousarray(W.reshape(self.n_columns, -1), dtype=np.float64)
        out = fault_in(np.empty((self.n_rows, W2.shape[1])))
        if W2.shape[1] == 1:
            kernels.gather_vector(self.ids, W2[:, 0], out[:, 0])
        else:
            kernels.gather(self.ids, W2, out)
        out *= self.scale
        return out.reshape((self.n_rows,) + W.shape[1:])

    def rmatvec(self, V: np.ndarray) -> np.ndarray:
        """Z^T V for V of shape (N,) or (N, C)."""
        V2 = np.ascontiguousarray(V.reshape(self.n_rows, -1), dtype=np.float64)
        out = fault_in(np.empty((self.n_columns, V2.shape[1])))
        if V2.shape[1] == 1:
            kernels.scatter_vector(self.ids, V2[:, 0], self.offsets, out[:, 0])
        else:
            kernels.scatter(self.ids, V2, self.offsets, out)
        out *= self.scale
        return out.reshape((self.n_columns,) + V.shape[1:])

    def gram_apply_dots(self, P: np.ndarray, lam: float, Rk: np.ndarray, inv_diag: np.ndarray | None,
                        out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Q = (Z^T Z + lam I) P for P of shape (D, C), and per column the dots a CG step needs
        (p^T q, r^T M q, q^T M q; M = diag(inv_diag), or I where it is None), shape (3, C): a gather, then one scatter fused with the scaling, the lam term and the dots
        (`scatter_gram_dots`), so CG updates its vectors in one pass (solvers.cg). out: a (D, C)
        buffer to write Q into (a CG loop's own, reused: a fresh D x C array each step costs its page
        faults again)."""
        P = np.ascontiguousarray(P, dtype=np.float64)
        Rk = np.ascontiguousarray(Rk, dtype=np.float64)
        m = np.empty(0) if inv_diag is None else inv_diag
        out = fault_in(np.empty_like(P)) if out is None else out
        C = P.shape[1]
        if C == 1:  # 1-D views: the one-target kernels, which the compiler vectorizes and unrolls
            v = np.empty(self.n_rows)
            kernels.gather_vector(self.ids, P.reshape(-1), v)
            grid_dots = np.empty((self.n_grids, kernels.N_DOTS))
            kernels.scatter_gram_vector(self.ids, v, self.offsets, P.reshape(-1), Rk.reshape(-1), m,
                                        self.scale ** 2, float(lam), out.reshape(-1), grid_dots)
            return out, grid_dots.sum(axis=0).reshape(kernels.N_DOTS, 1)
        V = fault_in(np.empty((self.n_rows, C)))
        kernels.gather(self.ids, P, V)
        grid_dots = np.empty((self.n_grids, kernels.N_DOTS, C))
        kernels.scatter_gram_dots(self.ids, V, self.offsets, P, Rk, m, self.scale ** 2, float(lam), out, grid_dots)
        return out, grid_dots.sum(axis=0)

    def gram_diagonal(self) -> np.ndarray:
        """diag(Z^T Z): each column's bin count / R (solvers.operator)."""
        return self.rmatvec(np.ones(self.n_rows)) * self.scale

    def rows(self, mask: np.ndarray) -> BinnedMatrix:
        """The rows `mask` selects (a copy of their ids), the same columns: a column none of them
        holds stays, empty (solvers.operator)."""
        # np.take along the rows' axis writes C order at once (boolean indexing there gives another
        # order, and making it contiguous cost five times the copy: ijcnn1, R = 1024)
        return BinnedMatrix(np.take(self.ids, np.flatnonzero(mask), axis=1), self.offsets)

    def one_value_columns(self) -> tuple[np.ndarray, np.ndarray, float]:
        """(ids, offsets, value): every row holds n_grids entries of one value (solvers.operator)."""
        return self.ids, self.offsets, float(self.scale)

    def to_csr(self) -> sp.csr_matrix:
        """The same Z as a scipy CSR matrix (N x D), for interoperability."""
        rows = np.broadcast_to(np.arange(self.n_rows), self.ids.shape)
        keep = self.ids >= 0
        coo = sp.coo_matrix(
            (np.full(int(keep.sum()), self.scale), (rows[keep], self.ids[keep])),
            shape=self.shape,
        )
        return coo.tocsr()
