"""Every committed result row keeps its key: params_key re-derived from the resolved config
and the row's own coordinates equals the key the row was published under (the
hashed fields are frozen, so adding a CellParams field never re-keys published rows)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rbrepro.sweep.cells import cell
from rbrepro.sweep.config import load_resolved_config
from rbrepro.sweep.keys import cell_key, params_key

RESULTS = Path(__file__).resolve().parents[1] / "results"
FOLDERS = sorted(p.parent for p in RESULTS.glob("*/results.csv"))


def _config(folder: Path):
    return load_resolved_config(folder / "config.resolved.yaml")


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_every_committed_row_keeps_its_key(folder):
    config = _config(folder)
    grids = {g.name: g for g in config.datasets}
    rows = pd.read_csv(folder / "results.csv", low_memory=False)
    assert len(rows), folder
    for row in rows.to_dict("records"):
        rng = row.get("rng") if isinstance(row.get("rng"), str) else None  # band rows: numpy draws in any config
        params = cell(config, grids[row["dataset"]], row["method"], float(row["sigma"]), int(row["R"]),
                      int(row["seed"]), int(row["threads"]), row["variant"], row["evaluate_on"], rng=rng)
        assert params_key(params) == row["params_key"], (folder.name, row["cell_key"])
        assert cell_key(params, row["data_fingerprint"], int(row["algorithm_version"])) == row["cell_key"]
