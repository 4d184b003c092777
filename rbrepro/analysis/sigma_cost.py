"""Which sigma claim 2 compares the chosen one with: the cheapest over the grid (median train time
over seeds), or, at the paper's setting, the cheapest among the sigma whose median CG iterations
reach the chosen sigma's (the paper's tol forced similar iterations). The claim and Fig. 3's time
panels read it here."""

from __future__ import annotations

import numpy as np
import pandas as pd


def time_and_iterations(rows: pd.DataFrame) -> pd.DataFrame:
    """Per sigma: the median train time and CG iterations over the rows (NaN iterations where not recorded)."""
    cols = [c for c in ("train_s", "cg_iterations") if c in rows]
    return rows.groupby("sigma")[cols].median().reindex(columns=["train_s", "cg_iterations"])


def cheapest_sigma(rows: pd.DataFrame, chosen: float, equal_iterations: bool = False) -> float | None:
    """The sigma of least median train time; with `equal_iterations`, among those whose median CG
    iterations are at least the chosen sigma's. None where the chosen sigma did not run."""
    g = time_and_iterations(rows)
    at = g.index[np.isclose(g.index, chosen)]
    if at.empty or g["train_s"].isna().all():
        return None
    its = g.loc[at[0], "cg_iterations"]
    pool = g[g["cg_iterations"] >= its] if equal_iterations and np.isfinite(its) else g
    return float(pool["train_s"].idxmin())
