"""What a results folder was swept for (its rows read by rbrepro.sweep.results_folder.load_results)."""

from __future__ import annotations

import pandas as pd


def swept_for(frame: pd.DataFrame, config: dict | None) -> str | None:
    """The figure a results CSV was swept for: its resolved config's `figure`, else the rows' own."""
    if config and config.get("figure"):
        return str(config["figure"])
    if "figure" in frame and frame["figure"].notna().any():
        return str(frame["figure"].dropna().iloc[0])
    return None
