"""A ridge solver added from outside rbrepro: one function and one registration.

    import lstsq_solver  # registers "lstsq"
    from rbrepro.models import RandomFourierRegressor
    RandomFourierRegressor(n_components=64, solver="lstsq").fit(X, y)

The solver solves the normal equations (Z^T Z + lam I) W = Z^T Y by numpy's least squares (an SVD),
which holds up where lam is tiny and Z^T Z singular. From the registration on, the estimators'
`solver` parameter, a cell's parameters and a sweep config's `solver: {name: lstsq}` take it (in this
process), and every method with a feature map runs it; early stopping is refused, as for any solver
that does not iterate CG. Its memory is the normal equations' (rbrepro's default model).
"""

from __future__ import annotations

import numpy as np

from rbrepro.solver_registry import SOLVER_SPECS, SolverSpec, register_solver

NAME = "lstsq"


def ridge_lstsq(Z, Y: np.ndarray, lam: float) -> np.ndarray:
    """W (D x C) solving (Z^T Z + lam I) W = Z^T Y in the least-squares sense, Z dense or a sparse
    operator with to_csr() (Random Binning's)."""
    Z = Z.to_csr() if hasattr(Z, "to_csr") else np.asarray(Z, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64).reshape(Z.shape[0], -1)
    gram = np.asarray((Z.T @ Z).todense() if hasattr(Z, "tocsc") else Z.T @ Z, dtype=np.float64)
    gram[np.diag_indices_from(gram)] += lam
    return np.linalg.lstsq(gram, np.asarray(Z.T @ Y), rcond=None)[0]


SPEC = SolverSpec(name=NAME, help="numpy's least squares on the normal equations", solve=ridge_lstsq)
if NAME not in SOLVER_SPECS:
    register_solver(SPEC)
