"""Summary of sweep results: cells by status, and datasets without results and why.

    python -m rbrepro.sweep.summary results/fig3 results/fig4 ...
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from rbrepro.errors import RbreproError
from rbrepro.sweep.results_folder import load_results, results_csv


def summarize(csv: Path, frame: pd.DataFrame, config: dict | None) -> list[str]:
    """The lines of a results CSV's summary, from its validated rows and resolved config (load_results)."""
    expected = list((config or {}).get("datasets", {}))
    counts = frame["status"].value_counts().to_dict() if "status" in frame else {"ok": len(frame)}
    lines = [f"{csv}: {len(frame)} cells: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))]
    status = frame["status"] if "status" in frame else pd.Series("ok", index=frame.index)
    for name in expected:
        rows = frame["dataset"] == name
        if not rows.any():
            lines.append(f"  {name}: no cells ran")
        elif not (status[rows] == "ok").any():
            lines.append(f"  {name}: no results: {_first_error(frame[rows])}")
        elif (status[rows] != "ok").any():
            bad = frame[rows & (status != "ok")]
            lines.append(f"  {name}: {len(bad)} cell(s) {'/'.join(sorted(set(bad['status'])))}: {_first_error(bad)}")
    return lines


def _first_error(rows: pd.DataFrame) -> str:
    errors = rows["error"].dropna()
    return str(errors.iloc[0])[:160] if len(errors) else "(no error recorded)"


def main(argv: list[str]) -> int:
    for arg in argv:
        try:
            frame, config = load_results(arg)
        except RbreproError as exc:
            print(f"{arg}: no results ({exc})")
            continue
        print("\n".join(summarize(results_csv(arg), frame, config)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
