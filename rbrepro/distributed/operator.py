"""Z split by rows over dask workers, as the solvers see a feature matrix (solvers.operator): a CG
step (Z^T Z + lam I) P is the sum over partitions of Z_i^T (Z_i P), computed where Z_i is, so a step
moves P to each partition and its D x C share back (2 D C 8 bytes per partition), never rows."""

from __future__ import annotations

import numpy as np

from rbrepro.distributed.cluster import ordered_sum
from rbrepro.solvers.operator import into


def _rmatvec(Z, V: np.ndarray) -> np.ndarray:
    """Z^T V, zeros for a partition without rows (its share of every sum)."""
    if Z.shape[0] == 0:
        return np.zeros((Z.shape[1],) + V.shape[1:])
    return Z.rmatvec(V)


def gram_part(Z, P: np.ndarray) -> np.ndarray:
    """On a worker: Z_i^T (Z_i P)."""
    return _rmatvec(Z, Z.matvec(P))


def rhs_part(Z, Y: np.ndarray, y_mean) -> np.ndarray:
    """On a worker: Z_i^T (Y_i - y_mean)."""
    return _rmatvec(Z, Y - y_mean)


def scores_part(Z, W: np.ndarray) -> np.ndarray:
    return Z.matvec(W)


class DistributedOperator:
    """The solvers' operator over partitions: `matrices` are futures of each partition's Z (a
    BinnedMatrix or DenseOperator), in row order."""

    def __init__(self, runner, matrices: list, n_rows: int, n_columns: int, diagonal: np.ndarray | None = None):
        self.runner = runner
        self.matrices = matrices
        self.shape = (int(n_rows), int(n_columns))
        self._diagonal = diagonal
        self.steps = 0

    def _sum(self, fn, what: str, *args) -> np.ndarray:
        parts = self.runner.gather(self.runner.map(fn, self.matrices, *args), what)
        return ordered_sum(parts)

    def gram_apply(self, P: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
        """(Z^T Z + lam I) P and the per-column P^T (Z^T Z + lam I) P (a whole CG step)."""
        self.steps += 1
        AP = self._sum(gram_part, f"CG step {self.steps}", P)
        AP += lam * P
        return AP, np.einsum("ij,ij->j", P, AP)

    def rhs(self, targets: list, y_mean: np.ndarray) -> np.ndarray:
        """Z^T (Y - y_mean), Y held by the workers as futures in partition order."""
        futures = [self.runner.submit(rhs_part, Z, Y, y_mean) for Z, Y in zip(self.matrices, targets)]
        return ordered_sum(self.runner.gather(futures, "Z^T y"))

    def gram_diagonal(self) -> np.ndarray:
        if self._diagonal is None:
            self._diagonal = self._sum(_diagonal_part, "diag(Z^T Z)")
        return self._diagonal

    def matvec(self, W: np.ndarray) -> np.ndarray:
        """Z W, gathered in row order (the training scores)."""
        return np.concatenate(self.runner.gather(self.runner.map(scores_part, self.matrices, W), "Z w"), axis=0)

    def rmatvec(self, V: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Z^T V for V held here (N rows): each partition gets its rows (into `out` where given)."""
        sizes = self.runner.gather(self.runner.map(_n_rows, self.matrices), "partition sizes")
        blocks = np.split(np.asarray(V, dtype=np.float64), np.cumsum(sizes)[:-1])
        futures = [self.runner.submit(rhs_part, Z, block, 0.0) for Z, block in zip(self.matrices, blocks)]
        return into(ordered_sum(self.runner.gather(futures, "Z^T v")), out)


def _diagonal_part(Z) -> np.ndarray:
    """On a worker: diag(Z_i^T Z_i), zeros for a partition without rows (a search's partition whose rows
    are all held out)."""
    return Z.gram_diagonal() if Z.shape[0] else np.zeros(Z.shape[1])


def _n_rows(Z) -> int:
    return Z.shape[0]
