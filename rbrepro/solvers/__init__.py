"""Solvers for ridge on features (CG on Z)."""

from rbrepro.solvers.cg import MAXIT, TOL, CGResult, ridge_cg

__all__ = ["MAXIT", "TOL", "CGResult", "ridge_cg"]
