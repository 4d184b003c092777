"""Where the numbers come from: each run's rows, commits, dirty rows, protocol and config drift."""

from __future__ import annotations

import pandas as pd

from rbrepro.report.fidelity import draws_of, true_values
from rbrepro.report.markdown import table
from rbrepro.report.runs import SHAPE_BINS, drift_note, stale_generated_data, stale_shape_bins


def provenance_section(loaded_runs: dict, drifts: dict[str, list[str]], bins: pd.DataFrame | None = None) -> str:
    """One row per published run (and the shape-binning rows): rows, commits, dirty rows, protocol, config."""
    rows = []
    for run in sorted(loaded_runs):
        loaded = loaded_runs[run]
        if loaded is None:
            rows.append([f"results/{run}", "not committed", "–", "–", "–", "–", "–"])
            continue
        frame, config = loaded
        commits = sorted(set(frame.get("git_commit", pd.Series(dtype=str)).dropna().astype(str)))
        dirty = int(frame.get("git_dirty", pd.Series(dtype=bool)).fillna(False).astype(bool).sum())
        draws = sorted(set(draws_of(frame)))
        scoring = sorted(set(frame["scoring"].fillna("standard"))) if "scoring" in frame else ["standard"]
        seeds = frame[frame["method"] != "exact"]["seed"].nunique() if "seed" in frame else 0
        rows.append([f"results/{run}", len(frame), ", ".join(c[:7] for c in commits) or "–", dirty,
                     f"{config.get('protocol', '–')}; draws {', '.join(draws)}; scoring {', '.join(scoring)}",
                     seeds, drift_note(drifts[run], stale_generated_data(frame))])
    if bins is not None:
        commits = sorted(set(bins["git_commit"].dropna().astype(str)))
        rows.append([f"{SHAPE_BINS.parent}", len(bins), ", ".join(c[:7] for c in commits) or "–",
                     int(true_values(bins["git_dirty"]).sum()), "measured; draws authors", "–",
                     drift_note([], stale_shape_bins(bins))])
    return ("## Where the numbers come from\n\nEach published run, the commits its rows were computed at, how "
            "many rows came from a tree with uncommitted changes, its protocol, and whether it was made under "
            "today's `configs/<run>.yaml`:\n\n"
            + table(["run", "rows", "commits", "dirty rows", "protocol", "seeds", "config"], rows))
