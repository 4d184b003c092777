"""The published runs the report reads: where each lies, loading it once, and whether it is still
what today's config and data registry would make (config drift, stale generated data)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rbrepro.figure_registry import FIGURE_SPECS
from rbrepro.sweep.results_folder import load_results

#: The published runs the report reads, by protocol: Theorem 1's, each figure's (its FigureSpec's runs,
#: rbrepro.figure_registry), and the paper-scale cells; a run that is not committed is named as missing.
RUNS = {"theory": ("theory",), **{name: spec.runs for name, spec in FIGURE_SPECS.items() if spec.runs},
        "paper-scale": ("paper-scale",)}
#: the published runs that are sweeps (rows of cells with their wall time): every run but the theory one
SWEEP_RUNS = tuple(run for runs in RUNS.values() for run in runs if run != "theory")
#: the Theorem 1 measurements (`rbrepro diagnose configs/theory.yaml --out results/theory`)
THEORY_CSV = "diagnostics.csv"
#: runs the report reads where committed, beside a figure's published ones (its FigureSpec's extra_runs):
#: the thread sweep of Fig. 6 at the paper's thread counts, on a machine with as many cores
#: (`configs/fig6-threads.yaml`)
EXTRA_RUNS = {name: spec.extra_runs for name, spec in FIGURE_SPECS.items() if spec.extra_runs}
#: the runs set beside the authors' published points, in the report's order
FIDELITY_RUNS = ("fig5-as-published", "fig5", "fig3-as-published", "fig3")
#: how the synthetic shapes bin beside the authors' real training rows (`make shape-binning`)
SHAPE_BINS = Path("results") / "shape-binning" / "bins.csv"


def load_run(root: Path, run: str) -> tuple[pd.DataFrame, dict] | None:
    """A published run's rows and config (the theory run: its diagnostics), or None where not committed."""
    folder = root / "results" / run
    if run == "theory":
        if not (folder / THEORY_CSV).exists():
            return None
        return pd.read_csv(folder / THEORY_CSV), {"protocol": "measured"}
    if not (folder / "results.csv").exists():
        return None
    frame, config = load_results(folder)
    return frame, config or {}


#: the protocol column's values as the report names them (`sweep.config`: fair, as-published, custom)
PROTOCOL_NAMES = {"as-published": "as published", "fair": "fair", "custom": "custom"}


def protocol_of(run: str, rows: pd.DataFrame | None = None) -> str:
    """The protocol a run is named by in the report: the one its rows record (`protocol` column: fair,
    as published, custom: a config that chose its sigma by hand); without rows, by its name
    (measured, as published or fair)."""
    if rows is not None and "protocol" in rows and rows["protocol"].notna().any():
        recorded = sorted(set(rows["protocol"].dropna().astype(str)))
        return " and ".join(PROTOCOL_NAMES.get(p, p) for p in recorded)
    return "measured" if run == "theory" else "as published" if run.endswith("as-published") else "fair"


def config_drift(root: Path, run: str) -> list[str]:
    """The top-level keys in which the config a run was made with (its config.resolved.yaml)
    differs from today's configs/<run>.yaml: a run made under an older config is not what the
    config now says, and the report says so beside its numbers."""
    import yaml

    from rbrepro.sweep.config import load_config, load_resolved_config
    from rbrepro.theory.config import load_theory_config, parse_theory_config
    from rbrepro.yamlconf import ConfigError

    resolved_path = root / "results" / run / "config.resolved.yaml"
    try:
        if run == "theory":
            resolved = yaml.safe_load(resolved_path.read_text()) or {}
            resolved.pop("provenance", None)
            then = parse_theory_config(yaml.safe_dump(resolved), str(resolved_path)).to_dict()
            now = load_theory_config(root / "configs" / f"{run}.yaml").to_dict()
        else:
            then = load_resolved_config(resolved_path).to_dict()
            now = load_config(root / "configs" / f"{run}.yaml").to_dict()
    except (OSError, ConfigError) as exc:
        return [f"unreadable ({exc})"]
    return sorted(k for k in set(then) | set(now) if then.get(k) != now.get(k))


def drift_note(keys: list[str], stale_data: list[str] = ()) -> str:
    """The provenance table's config cell: current, or what the run was made under that is no longer so."""
    notes = [f"made under an older config (differs in: {', '.join(keys)})"] if keys else []
    if stale_data:
        notes.append(f"made on data the registry no longer generates ({', '.join(stale_data)})")
    return "; ".join(notes) or "current"


def stale_generated_data(frame: pd.DataFrame) -> list[str]:
    """The generated sets (synthetic shapes) whose rows' data fingerprint is not what the registry
    makes of them today: rows made before a generator or shape change."""
    from rbrepro.data.load import dataset_availability
    from rbrepro.data.registry import REGISTRY

    if "data_fingerprint" not in frame:
        return []
    stale = []
    for dataset, group in frame.groupby("dataset"):
        spec = REGISTRY.get(str(dataset))
        if spec is None or not spec.source.startswith("synthetic:"):
            continue
        now = dataset_availability(str(dataset), fetch=False)[0]
        if set(group["data_fingerprint"].dropna().astype(str)) - {now}:
            stale.append(str(dataset))
    return stale


def stale_shape_bins(frame: pd.DataFrame) -> list[str]:
    """The shapes whose binning rows were measured on other generator settings than today's."""
    from rbrepro.data.synthetic import SHAPES, shape_digest

    if "shape_digest" not in frame:
        return sorted(set(frame["dataset"].astype(str)))
    return sorted({str(r.dataset) for r in frame.itertuples()
                   if str(r.shape) not in SHAPES or shape_digest(SHAPES[str(r.shape)]) != str(r.shape_digest)})
