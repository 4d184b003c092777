"""The best settings of a sweep, as `rbrepro summary` prints them: per dataset, method and R, the sigma
the protocol chose (`analysis.chosen`: the sweep's own choice, else the best median on test) and the
test metric there, the median over seeds with its band and n."""

from __future__ import annotations

import pandas as pd

from rbrepro.analysis.chosen import chosen_sigma_rows, draws_of
from rbrepro.analysis.rows import test_rows


def how_chosen(rows: pd.DataFrame) -> str:
    """On what data the sigma of these (chosen) rows was picked."""
    if "selected" in rows and rows["selected"].fillna(False).astype(bool).any():
        on = rows["selected_on"].dropna() if "selected_on" in rows else pd.Series(dtype=object)
        return f"chosen on {on.iloc[0]}" if len(on) else "chosen by the sweep"
    return "best median on test (a grid chooses nothing: a look at the test rows, not a selection)"


def best_settings(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, method, R): sigma, how it was chosen, the metric's median, min, max and n
    over our seeds (the authors' replayed draws left out), and how many sigmas were run."""
    ok = test_rows(results)
    if ok.empty:
        return pd.DataFrame(columns=["dataset", "method", "R", "sigma", "chosen", "metric", "median", "min", "max",
                                     "seeds", "sigmas"])
    out = []
    for (dataset, method, R), group in ok.groupby(["dataset", "method", "R"], sort=False):
        chosen = chosen_sigma_rows(group)
        seeds = chosen[draws_of(chosen) == "numpy"]
        if seeds.empty:
            continue
        values = seeds["test_metric"]
        kind = ("the only sigma run" if group["sigma"].nunique() == 1 else how_chosen(chosen))
        out.append({"dataset": dataset, "method": method, "R": int(R), "sigma": float(seeds["sigma"].iloc[0]),
                    "chosen": kind, "metric": str(seeds["metric"].iloc[0]), "median": float(values.median()),
                    "min": float(values.min()), "max": float(values.max()), "seeds": int(len(values)),
                    "sigmas": int(group["sigma"].nunique())})
    return pd.DataFrame(out)
