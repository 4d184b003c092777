"""Seeds, from one place: what each published run's config asks for, beside what its committed rows hold
(the seeds table of docs/sweeps.md and the counts read these, never a hand-written number)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rbrepro.analysis.chosen import numpy_test_rows
from rbrepro.figure_registry import FIGURE_SPECS
from rbrepro.models.registry import REFERENCE
from rbrepro.report.markdown import table
from rbrepro.report.runs import FIDELITY_RUNS

#: the runs whose seeds the seeds table gives, in its order: the runs of the figures declared `seeded`
SEEDED_RUNS = tuple(run for spec in FIGURE_SPECS.values() if spec.seeded for run in spec.runs)


def config_seeds(config: dict) -> str:
    """The seeds a config asks for: the band's where it has one (beside the one sweep seed), with each
    dataset's own seeds where they differ."""
    band = (config.get("band") or {}).get("seeds")
    at = "every sigma" if (config.get("band") or {}).get("at") == "grid" else "the chosen sigma"
    text = f"{len(band)} (band, at {at})" if band else f"{len(config.get('seeds') or [])}"
    own = {name: spec["seeds"] for name, spec in (config.get("datasets") or {}).items() if spec.get("seeds")}
    return text + "".join(f"; {name} {len(seeds)}" for name, seeds in own.items())


def row_seeds(frame: pd.DataFrame) -> str:
    """The seeds the committed rows hold per point (numpy draws, the exact kernel left out): min – max."""
    rows = numpy_test_rows(frame)
    rows = rows[rows["method"] != REFERENCE] if "method" in rows else rows
    if rows.empty:
        return "–"
    per_point = rows.groupby(["dataset", "method", "R", "sigma"])["seed"].nunique()
    lo, hi = int(per_point.min()), int(per_point.max())
    low = per_point[per_point == lo].index.get_level_values("dataset").unique()
    return f"{hi}" if lo == hi else f"{lo} – {hi} ({', '.join(sorted(low))} {lo})"


def seeds_table(root: Path, loaded_runs: dict) -> str:
    """Per published run: the seeds its config asks for and those its committed rows hold."""
    from rbrepro.sweep.config import load_config
    from rbrepro.yamlconf import ConfigError

    rows = []
    for run in SEEDED_RUNS:
        try:
            asked = config_seeds(load_config(root / "configs" / f"{run}.yaml").to_dict())
        except (OSError, ConfigError) as exc:
            asked = f"unreadable ({exc})"
        loaded = loaded_runs.get(run)
        rows.append([f"`configs/{run}.yaml`", asked, "not committed" if loaded is None else row_seeds(loaded[0])])
    note = ("Seeds per point: what each config asks for, and what the committed rows hold (they differ only "
            "for a run made under an older config; " + ", ".join(f"`results/{r}`" for r in FIDELITY_RUNS)
            + " count their bands over the rows' seeds):")
    return note + "\n\n" + table(["config", "seeds (config)", "seeds (committed rows)"], rows, str)
