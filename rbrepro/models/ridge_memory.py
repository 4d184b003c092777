"""The memory model of a ridge fit on random features: featurizing (each feature map's own model),
CG's vectors, the normal equations; checked before anything is allocated (rbrepro.memory)."""

from __future__ import annotations

from rbrepro.dotted import resolve
from rbrepro.errors import InvalidParameter
from rbrepro.models.registry import MethodSpec, method_spec
from rbrepro.solver_registry import is_cg, solver_spec


def _feature_spec(method: str | MethodSpec) -> MethodSpec:
    spec = method if isinstance(method, MethodSpec) else method_spec(method)
    if not spec.has_features:
        raise InvalidParameter(f"no feature map named {spec.name!r}; {spec.title} has none")
    return spec


def featurize_memory(method: str | MethodSpec, n: int, d: int, R: int) -> float:
    """Bytes of the big arrays of featurizing n rows (checked before allocating): each feature
    map's own `fit_memory`; an unknown method is refused, never modelled as another."""
    return _feature_spec(method).fit_memory(n, d, R)


def _cg_memory(D: int, C: int, early_stopping: bool = False) -> float:
    """CG's D x C arrays: 7, and one more for early stopping's best iterate."""
    return 8.0 * D * C * (8 if early_stopping else 7)


def solve_memory(method: str | MethodSpec, solver: str, D: int, C: int, early_stopping: bool = False) -> float:
    """Bytes of the ridge solve for D columns and C targets: CG's vectors (with early stopping's best
    iterate), a solver's own model (solver_registry), or the normal equations (dense; a sparse feature
    map's LU fill-in is not predictable, so bounded as dense)."""
    if is_cg(solver):
        return _cg_memory(D, C, early_stopping)
    sparse = bool(getattr(_feature_spec(method).feature_class(), "sparse", False))
    own = solver_spec(solver).memory
    if own is not None:
        return float(resolve(own)(D, C, sparse))
    if sparse:
        return 8.0 * D * D
    return 8.0 * D * D * 2 + 8.0 * D * C


def cg_columns_per_pass(D: int, C: int, limit_bytes: float, early_stopping: bool = False) -> int:
    """Targets one CG pass can take: all C when their vectors fit `limit_bytes`, else as many as
    fit beside the full D x C coefficient matrix (0: not even one)."""
    if _cg_memory(D, C, early_stopping) <= limit_bytes:
        return C
    return max(0, min(C, int((limit_bytes - 8.0 * D * C) // _cg_memory(D, 1, early_stopping))))
