"""The compact Random Binning feature matrix (docs/design.md §2).

Every row of Z has exactly R non-zeros, all equal to 1/sqrt(R), so Z is stored as an
R x N int32 array of column ids (grid-major: one contiguous row per grid) instead of a
general CSR matrix: half the memory, Z w becomes a gather and Z^T v a scatter-add in
which each thread owns whole grids (disjoint column ranges).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace

import numba as nb
import numpy as np
import scipy.sparse as sp

from rbrepro.errors import InvalidParameter
from rbrepro.features import _matvec_kernels as kernels
from rbrepro.features import _tuple_kernels
from rbrepro.features._rows_kernels import count_rows, take_rows
from rbrepro.features._squares_kernels import column_squares
from rbrepro.features.tuples import TupleLayout, compile_kernels, tuple_layout
from rbrepro.memory import map_new_pages, memory_limit_bytes


@dataclass
class StepBuffers:
    """A CG step's buffers on a BinnedMatrix, kept by the solve from step to step: V = S P (N x C), the
    scatter's scratch (D long for one target, else each thread's widest group of columns x C), the
    number of grids the scatter walks together (`_matvec_kernels.scatter_group`) and, where one target
    runs on the tuple layout (`features.tuples`), a value a tuple (B p, then T^T v)."""

    V: np.ndarray
    acc: np.ndarray
    group: int
    tuples: np.ndarray | None = None

    def fits(self, n_rows: int, n_columns: int, C: int, n_tuples: int | None) -> bool:
        """Whether these buffers serve a step on a matrix of this shape, C targets and tuple layout
        (n_tuples, or None for the plain layout): a kernel indexes them without bounds checks."""
        tuples = None if self.tuples is None else self.tuples.shape[0]
        return (self.V.shape == (n_rows, C) and tuples == n_tuples
                and (C > 1 or self.acc.shape == (n_columns,)) and (C == 1 or self.acc.ndim == 3))


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
    memory_limit_gb : float or None
        The limit the tuple layout's memory is held to (`tuple_layout`), as `memory.memory_limit_bytes`
        reads it.

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

    def __init__(self, ids: np.ndarray, offsets: np.ndarray, memory_limit_gb: float | None = None):
        self.ids = ids
        self.offsets = offsets
        self.memory_limit_gb = memory_limit_gb
        self.n_grids, self.n_rows = ids.shape
        self.n_columns = int(offsets[-1])
        self.scale = 1.0 / np.sqrt(self.n_grids)
        self._column_counts = None
        self._tuples: TupleLayout | None | bool = False  # False: not looked at yet (`tuple_layout`)
        self._tuples_from: tuple[weakref.ref, np.ndarray] | None = None  # (matrix, rows) that `rows` took

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
        out = map_new_pages(np.empty((self.n_rows, W2.shape[1])))
        if W2.shape[1] == 1:
            kernels.gather_vector(self.ids, W2[:, 0], self.offsets, out[:, 0])
        else:
            kernels.gather(self.ids, W2, out)
        out *= self.scale
        return out.reshape((self.n_rows,) + W.shape[1:])

    def rmatvec(self, V: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Z^T V for V of shape (N,) or (N, C); out: a (D, C) float64 C-order array to write it into (a
        solve's buffer, `solvers.cg.CGBuffers`), else a new one."""
        V2 = np.ascontiguousarray(V.reshape(self.n_rows, -1), dtype=np.float64)
        shape = (self.n_columns, V2.shape[1])
        if out is None:
            out = map_new_pages(np.empty(shape))
        elif out.shape != shape or out.dtype != np.float64 or not out.flags.c_contiguous:
            raise ValueError(f"rmatvec: out must be a C-order float64 array of shape {shape}")
        if V2.shape[1] == 1:
            kernels.scatter_vector(self.ids, V2[:, 0], self.offsets, out[:, 0])
        else:
            kernels.scatter(self.ids, V2, self.offsets, out)
        out *= self.scale
        return out.reshape((self.n_columns,) + V.shape[1:])

    def row_gram(self, V: np.ndarray, out: np.ndarray, work: np.ndarray | None = None) -> np.ndarray:
        """out = Z Z^T V for V and out (N, C) C-contiguous (solvers.operator): a scatter into `work`, a
        (D, C) array kept from call to call (None makes one, returned), then a gather from it."""
        C = V.shape[1]
        if work is None or work.shape != (self.n_columns, C):
            work = map_new_pages(np.empty((self.n_columns, C)))
        if C == 1:
            kernels.scatter_vector(self.ids, V.reshape(-1), self.offsets, work.reshape(-1))
            kernels.gather_vector(self.ids, work.reshape(-1), self.offsets, out.reshape(-1))
        else:
            kernels.scatter(self.ids, V, self.offsets, work)
            kernels.gather(self.ids, work, out)
        out *= self.scale ** 2
        return work

    def normal_gather(self, P: np.ndarray, work: StepBuffers | None = None) -> tuple[StepBuffers, np.ndarray]:
        """The first half of a CG step on (Z^T Z + lam I) (solvers.operator): V = S P, the 0/1 pattern's
        product (N x C), into `work` (`pattern_gather`), and per column |Z p|^2 = |V|^2 / R
        (`pattern_squares`)."""
        work = self.pattern_gather(P, work)
        return work, self.pattern_squares(work)

    def pattern_squares(self, work: StepBuffers) -> np.ndarray:
        """|Z p|^2 per column from `work.V` = S p: |V|^2 / R, summed in an order fixed by the shape (the same
        bits on any number of threads)."""
        squares = np.empty(work.V.shape[1])
        column_squares(work.V, squares)
        return squares * self.scale ** 2

    def pattern_gather(self, P: np.ndarray, work: StepBuffers | None = None) -> StepBuffers:
        """V = S P, the 0/1 pattern's product (N x C), into `work`: the buffers of an earlier step of the same
        solve, reused (fresh ones each step cost their page faults again); None makes them."""
        P = np.ascontiguousarray(P, dtype=np.float64)
        C = P.shape[1]
        tuples = self.tuple_layout() if C == 1 else None
        if work is None or not work.fits(self.n_rows, self.n_columns, C, None if tuples is None else tuples.n_tuples):
            group = tuples.group if tuples is not None else kernels.scatter_group(self.offsets, C)
            acc = (np.empty(self.n_columns) if C == 1
                   else kernels.update_scratch(self.offsets, nb.get_num_threads(), C, group))
            work = StepBuffers(map_new_pages(np.empty((self.n_rows, C))), map_new_pages(acc), group,
                               None if tuples is None else np.empty(tuples.n_tuples))
        if tuples is not None:  # S p = T (B p): the tuples' sums, then one load a row and run
            _tuple_kernels.tuple_sums(P.reshape(-1), tuples.members, work.tuples)
            _tuple_kernels.gather_tuples(tuples.tuple_ids, tuples.starts, work.tuples, work.V.reshape(-1))
        elif C == 1:  # 1-D views: the one-target kernel, which the compiler vectorizes and unrolls
            kernels.gather_vector(self.ids, P.reshape(-1), self.offsets, work.V.reshape(-1))
        else:
            kernels.gather(self.ids, P, work.V)
        return work

    def normal_update(self, work: StepBuffers, P: np.ndarray, lam: float, alpha: np.ndarray, W: np.ndarray,
                      Rk: np.ndarray, inv_diag: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """The second half: W += alpha P and Rk -= alpha (Z^T Z + lam I) P, with `work` from
        `normal_gather(P)`, in one scatter whose sums are used while they are in cache and never stored
        (`scatter_update`); returns the new residual's r^T r and r^T M r per column (M = diag(inv_diag),
        or I where it is None), each summed grid by grid in a fixed order. W, Rk and P: (D, C), C order."""
        m = np.empty(0) if inv_diag is None else inv_diag
        C = P.shape[1]
        sums = np.empty((self.n_grids, kernels.N_SUMS, C))
        if work.tuples is not None:
            tuples = self.tuple_layout()
            _tuple_kernels.scatter_update_tuples(
                tuples.tuple_ids, work.V.reshape(-1), tuples.starts, tuples.members, tuples.k, self.offsets,
                P.reshape(-1), W.reshape(-1), Rk.reshape(-1), m, self.scale ** 2, float(lam), float(alpha[0]),
                work.tuples, work.acc, sums.reshape(self.n_grids, kernels.N_SUMS), work.group)
        elif C == 1:
            kernels.scatter_update_vector(self.ids, work.V.reshape(-1), self.offsets, P.reshape(-1), W.reshape(-1),
                                          Rk.reshape(-1), m, self.scale ** 2, float(lam), float(alpha[0]), work.acc,
                                          sums.reshape(self.n_grids, kernels.N_SUMS), work.group)
        else:
            kernels.scatter_update(self.ids, work.V, self.offsets, P, W, Rk, m, self.scale ** 2, float(lam),
                                   np.ascontiguousarray(alpha, dtype=np.float64), work.acc, sums, work.group)
        total = sums.sum(axis=0)  # grid by grid, in numpy's own order (the same on any thread count)
        return total[0], total[1]

    def tuple_layout(self) -> TupleLayout | None:
        """Z's 0/1 pattern as S = T B (`features.tuples`), built the first time a one-target CG step asks for
        it and kept, or None where it does not pay; ids are never changed after construction. Most rows of a
        larger matrix (`rows`: a distributed worker's held-out split, whose CG goes on over every row next) take that matrix's
        layout's rows, so a fit numbers its tuples once."""
        if self._tuples is False and self._tuples_from is not None:
            link, rows = self._tuples_from
            self._tuples_from = None
            source = link()
            if source is not None:
                whole = source.tuple_layout()
                if whole is not None:
                    tuple_ids = map_new_pages(np.empty((whole.tuple_ids.shape[0], len(rows)),
                                                       dtype=whole.tuple_ids.dtype))
                    take_rows(whole.tuple_ids, rows, tuple_ids)
                    whole = replace(whole, tuple_ids=tuple_ids)
                self._tuples = whole
        if self._tuples is False:  # numbered afresh (the source matrix gone, or without a layout)
            self._tuples = tuple_layout(self.ids, self.offsets, memory_limit_bytes(self.memory_limit_gb))
        return self._tuples

    def __getstate__(self) -> dict:
        """Pickled (a dask worker's split) without its tuple layout or the link to the matrix it took its
        rows from (a weak reference): the layout is numbered again where a step needs it."""
        state = dict(self.__dict__)
        state["_tuples"], state["_tuples_from"] = False, None
        return state

    @staticmethod
    def compile_tuple_kernels() -> None:
        """Compile the tuple layout's kernels (`tuples.compile_kernels`): a fit's warm-up, whose few rows
        never pick that layout."""
        compile_kernels()

    def column_counts(self) -> np.ndarray:
        """S^T 1: each column's rows (its bin's count), as float64 (exact below 2^53), counted once by the
        one-target scatter and kept (or given by `rows`, from the matrix it took its rows from): the fit
        reads it for kappa, PCG for its preconditioner. ids are never changed after construction (`rows`
        makes a new matrix)."""
        if self._column_counts is None:
            counts = map_new_pages(np.empty(self.n_columns))
            kernels.scatter_vector(self.ids, np.ones(self.n_rows), self.offsets, counts)
            self._column_counts = counts
        return self._column_counts

    def gram_diagonal(self) -> np.ndarray:
        """diag(Z^T Z): each column's bin count / R (solvers.operator), scaled as `rmatvec` scales."""
        return self.column_counts() * self.scale * self.scale

    def gram_diagonal_levels(self) -> tuple[np.ndarray, np.ndarray]:
        """diag(Z^T Z) as (levels, index) with levels[index] equal to `gram_diagonal()`, bit for bit: levels
        holds each bin count 0 ... the largest, scaled as `gram_diagonal` scales them, index each column's
        count. A function of the diagonal entry by entry (PCG's preconditioner, whose power took 10 ms a
        solve on ijcnn1's D = 427,637 at R = 256) then costs one evaluation a level and a gather."""
        counts = self.column_counts()
        top = int(counts.max(initial=0))
        return np.arange(top + 1, dtype=np.float64) * self.scale * self.scale, counts.astype(np.int32)

    def kept_rows(self, held: np.ndarray):
        """The rows a held-out split keeps (`held`: a boolean mask of the rows held out), seen by CG without
        a copy of their ids, with the held-out rows' operator as `.held_out` (`features.kept_rows`)."""
        from rbrepro.features.kept_rows import KeptRows  # it borrows this class's diagonal

        return KeptRows(self, self._row_mask(held, "kept_rows"))

    def _row_mask(self, mask, what: str) -> np.ndarray:
        """mask as a boolean array of this matrix's rows, else a refusal naming `what` asked for it."""
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.shape != (self.n_rows,):
            raise InvalidParameter(f"{what}: a boolean mask of the {self.n_rows} rows is needed, got {mask.dtype} "
                                   f"of shape {mask.shape}")
        return mask

    def counts_without(self, rows: np.ndarray) -> np.ndarray:
        """S^T 1 of every row but `rows` (increasing row numbers): the counts less those rows' (exact:
        integers in float64), counted over the rows left out, not over the many kept."""
        left_out = np.empty(self.n_columns)
        count_rows(self.ids, rows, self.offsets, left_out)
        return self.column_counts() - left_out

    def rows(self, mask: np.ndarray) -> BinnedMatrix:
        """The rows `mask` selects (a copy of their ids, `take_rows`), the same columns: a column none of
        them holds stays, empty (solvers.operator)."""
        mask = self._row_mask(mask, "rows")
        rows = np.flatnonzero(mask)
        ids = map_new_pages(np.empty((self.n_grids, len(rows)), dtype=self.ids.dtype))
        take_rows(self.ids, rows, ids)
        kept = BinnedMatrix(ids, self.offsets, self.memory_limit_gb)
        if 2 * len(rows) > self.n_rows:  # a weak link: the kept rows never hold the whole matrix alive
            kept._tuples_from = (weakref.ref(self), rows)
        if self._column_counts is not None and 2 * len(rows) > self.n_rows:  # most rows kept, their counts known
            kept._column_counts = self.counts_without(np.flatnonzero(~mask))
        return kept

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
