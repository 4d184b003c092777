"""Where a full reproduction's time goes: summed cell wall time by run, method, dataset and phase.

    python -m bench.cost_profile [RESULTS ...]

Reads each results folder's results.csv (default: every published figure run under results/) and
prints the profile of `rbrepro.analysis.costs`: each cell's wall time split into its phases as the
rows record them (featurize, solve, predict, the rest), the totals per run and the largest cost
centres. The committed `results/cost-profile.md` and the generated cost block are written from the
same numbers by `rbrepro report` (`make report`), so they always describe the committed CSVs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from rbrepro.analysis.costs import cost_rows, profile, to_markdown
from rbrepro.report.runs import SWEEP_RUNS


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="*", type=Path, help="results folders (default: every published sweep run)")
    parser.add_argument("--top", type=int, default=15, help="cost centres to list")
    args = parser.parse_args(argv)
    folders = args.results or [Path("results") / run for run in SWEEP_RUNS]
    frames = {}
    for folder in folders:
        if not (folder / "results.csv").exists():
            print(f"{folder}: no results.csv, skipped", file=sys.stderr)
            continue
        frames[folder.name] = pd.read_csv(folder / "results.csv", low_memory=False)
    if not frames:
        raise SystemExit("no results to profile")
    print(to_markdown(*profile(cost_rows(frames)), args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
