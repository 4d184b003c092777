"""Summary of sweep results: cells by status, and datasets without results and why.

    python -m rbrepro.sweep.summary results/fig3 results/fig4 ...
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import yaml


def summarize(folder: Path) -> list[str]:
    csv = folder / "results.csv"
    if not csv.exists():
        return [f"{folder}: no results (the sweep did not run)"]
    try:
        frame = pd.read_csv(csv)
    except pd.errors.EmptyDataError:
        frame = pd.DataFrame()
    resolved = folder / "config.resolved.yaml"
    expected = list((yaml.safe_load(resolved.read_text()) or {}).get("datasets", {})) if resolved.exists() else []
    counts = frame["status"].value_counts().to_dict() if "status" in frame else {}
    lines = [f"{folder}: {len(frame)} cells: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))]
    for name in expected:
        rows = frame[frame["dataset"] == name] if "dataset" in frame else frame
        if rows.empty:
            lines.append(f"  {name}: no cells ran")
        elif not (rows["status"] == "ok").any():
            lines.append(f"  {name}: no results: {str(rows['error'].dropna().iloc[0])[:160]}")
        elif (rows["status"] != "ok").any():
            bad = rows[rows["status"] != "ok"]
            lines.append(f"  {name}: {len(bad)} cell(s) {'/'.join(sorted(set(bad['status'])))}: "
                         f"{str(bad['error'].dropna().iloc[0])[:160]}")
    return lines


def main(argv: list[str]) -> int:
    for arg in argv:
        print("\n".join(summarize(Path(arg))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
