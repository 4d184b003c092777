"""Cell keys: the same cell of the same code on the same data has the same key, across runs.

A key hashes the cell's parameters (a frozen list of CellParams fields, so adding a field never
re-keys a published row), the data's fingerprint and ALGORITHM_VERSION.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

from rbrepro.models.cell import ALGORITHM_VERSION, CellParams

#: The CellParams fields every published key hashes, frozen: adding a field to CellParams must
#: not change the key of any committed result row (tests re-derive them all).
KEYED_FIELDS = ("dataset", "method", "sigma", "kernel", "R", "lam", "solver", "maxit", "tol", "center", "seed",
                "threads", "loss", "epochs", "variant", "evaluate_on", "scaling")

#: Fields added since, hashed only when they differ from their default (so older keys stand).
KEYED_IF_SET = {"rng": "numpy", "scoring": "standard", "stopping": "residual"}

def params_key(params: CellParams) -> str:
    """A hash of the cell's parameters alone (the memory limit is a setting, not a parameter), with the
    stopping rule settled (CellParams.resolved): the same model has the same key whichever door asked."""
    values = asdict(params.resolved())
    fields = {name: values[name] for name in KEYED_FIELDS}
    fields.update({name: values[name] for name, default in KEYED_IF_SET.items() if values[name] != default})
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=float).encode()).hexdigest()[:16]

def cell_key(params: CellParams, data_fingerprint: str = "", version: int = ALGORITHM_VERSION) -> str:
    """A stable key from the cell's parameters, its data's fingerprint and the algorithms'
    version: the same cell of the same code on the same data has the same key across runs."""
    text = json.dumps({"params": params_key(params), "data": data_fingerprint, "algorithms": version},
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
