"""The rows of a Random Binning matrix that early stopping's held-out split keeps, seen by CG without a
copy of their ids (`BinnedMatrix.kept_rows`), and the held-out rows' scores of the solve's iterate.

A CG step on the kept rows needs Z_k^T Z_k p. The whole matrix's gather gives V = S p on every row; with
the held-out rows' entries of V set to zero, its scatter adds those zeros, which change no sum, so the
step is Z_k^T Z_k p exactly, and the held-out rows are never copied out of Z (ijcnn1 at R = 1024 held
129 MB of kept ids, whose fresh pages cost more than the copy). The held-out rows' entries of V are
Z_h p before they are cleared: the step moves the iterate by alpha p, so their scores Z_h W move by
alpha Z_h p, kept up to date at no more loads, where the copy made scoring each iterate a gather of its
own. The whole matrix's tuple layout serves the search as it serves the final steps after it.

The step gathers and scatters the held-out rows too (a tenth more than the kept rows alone), and |Z p|^2
sums the kept rows with zeros among them: the step length differs from the copy's in its last bits, and
the held-out scores, summed step by step, from a gather of the iterate in theirs.
"""

from __future__ import annotations

import numpy as np


class KeptRows:
    """The rows of `whole` (a BinnedMatrix) that `held` (a boolean mask of its rows) does not hold out, as a
    CG operator (solvers.operator: shape, matvec, rmatvec, the diagonal, the split step); `held_out` is the
    held-out rows' operator, whose products of a solve's own iterate come from its steps while it runs."""

    def __init__(self, whole, held: np.ndarray):
        self.whole = whole
        self.held = np.asarray(held, dtype=bool)
        self.held_rows = np.flatnonzero(self.held)
        self.shape = (whole.n_rows - len(self.held_rows), whole.n_columns)
        self.scale = whole.scale
        self._column_counts = None
        self._iterate = None  # the iterate whose held-out scores are tracked, and those scores
        self._scores = None
        self._held_products = None  # the last step's S_h p
        self.held_out = HeldOutRows(self)

    def matvec(self, W: np.ndarray) -> np.ndarray:
        return self.whole.matvec(W)[~self.held]

    def rmatvec(self, V: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Z_k^T V: V spread over the whole matrix's rows, zero on the held-out ones."""
        V = np.asarray(V, dtype=np.float64)
        spread = np.zeros((self.whole.n_rows,) + V.shape[1:])
        spread[~self.held] = V
        return self.whole.rmatvec(spread, out)

    def column_counts(self) -> np.ndarray:
        """S_k^T 1: the whole matrix's counts less the held-out rows' (`counts_without`), kept."""
        if self._column_counts is None:
            self._column_counts = self.whole.counts_without(self.held_rows)
        return self._column_counts

    def gram_diagonal(self) -> np.ndarray:
        """diag(Z_k^T Z_k), as the whole matrix's class takes it from the counts."""
        return type(self.whole).gram_diagonal(self)

    def gram_diagonal_levels(self) -> tuple[np.ndarray, np.ndarray]:
        return type(self.whole).gram_diagonal_levels(self)

    def normal_gather(self, P: np.ndarray, work=None) -> tuple:
        """The whole matrix's gather V = S p, the held-out rows' entries kept aside (S_h p) and cleared, and
        |Z_k p|^2 per column. Without `work` (a solve's first gather: solvers.operator) no iterate is tracked
        yet: a solve on kept buffers (solvers.cg.CGBuffers) starts from an array the last one moved."""
        if work is None:
            self._iterate, self._scores = None, None
        work = self.whole.pattern_gather(P, work)
        self._held_products = work.V[self.held_rows]
        work.V[self.held_rows] = 0.0
        return work, self.whole.pattern_squares(work)

    def normal_update(self, work, P: np.ndarray, lam: float, alpha: np.ndarray, W: np.ndarray,
                      Rk: np.ndarray, inv_diag: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """The whole matrix's fused scatter of V (zero on the held-out rows: Z_k^T Z_k p), and the held-out
        scores of W moved as W is. An iterate not seen before is scored in full first (zero where W is)."""
        if W is not self._iterate or self._scores is None:
            self._scores = self.held_out.score_in_full(W)
            self._iterate = W
        sums = self.whole.normal_update(work, P, lam, alpha, W, Rk, inv_diag)
        self._scores += (self.scale * np.asarray(alpha)) * self._held_products
        return sums

    def end_solve(self) -> None:
        """The solve is over (solvers.cg): its iterate is no longer tracked, since whatever moves that array
        next (the final steps on the whole matrix, on the same buffers) does so without these steps."""
        self._iterate, self._scores, self._held_products = None, None, None

    def tracked_scores(self, W: np.ndarray) -> np.ndarray | None:
        """Z_h W where W is the iterate a running solve's steps have moved (a copy), else None."""
        return self._scores.copy() if W is self._iterate and self._scores is not None else None

    @property
    def nbytes(self) -> int:
        return int(self.held.nbytes + self.held_rows.nbytes)


class HeldOutRows:
    """The held-out rows of a `KeptRows` split: `matvec(W)` is Z_h W, taken from the steps for the solve's
    own iterate and gathered in full otherwise (the zero start of a search: no gather)."""

    def __init__(self, kept: KeptRows):
        self.kept = kept
        self.shape = (len(kept.held_rows), kept.whole.n_columns)

    def matvec(self, W: np.ndarray) -> np.ndarray:
        tracked = self.kept.tracked_scores(W)
        scores = self.score_in_full(W) if tracked is None else tracked
        return scores.reshape((self.shape[0],) + np.shape(W)[1:])

    def score_in_full(self, W: np.ndarray) -> np.ndarray:
        """Z_h W by the whole matrix's gather (zeros where W is zero), as (held-out rows, C)."""
        W2 = np.asarray(W, dtype=np.float64).reshape(self.shape[1], -1)
        if not W2.any():
            return np.zeros((self.shape[0], W2.shape[1]))
        return self.kept.whole.matvec(W2)[self.kept.held_rows]
