"""Where the numbers come from: each run's rows, commits, dirty rows, protocol and config drift."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd

from rbrepro.analysis.chosen import draws_of
from rbrepro.report.fidelity import true_values
from rbrepro.report.markdown import table
from rbrepro.report.runs import SHAPE_BINS, drift_note, stale_generated_data, stale_shape_bins
from rbrepro.report.sections.configs import row_seeds
from rbrepro.sweep.quiet import LOAD_FLAG_CORES, disturbed_timings


def _when(frame: pd.DataFrame) -> str:
    """The days the rows finished on (their finished_at), or – where the rows do not say."""
    if "finished_at" not in frame:
        return "–"
    days = sorted(set(frame["finished_at"].dropna().astype(str).str[:10]))
    return "–" if not days else days[0] if len(days) == 1 else f"{days[0]} – {days[-1]}"


def _quiet(frame: pd.DataFrame) -> str:
    """The share of successful rows timed quiet: other processes' load at most LOAD_FLAG_CORES, no cell beside."""
    ok = frame[frame["status"] == "ok"] if "status" in frame else frame
    if ok.empty or not {"load_other_cores", "concurrent_cells"} & set(ok.columns):
        return "–"
    return f"{100.0 * (~disturbed_timings(ok)).mean():.0f} %"


def _retimed(frame: pd.DataFrame) -> str:
    """How many successful rows an exclusive sweep retimed (timed under load, run again: their `retimes`);
    – for rows of a sweep that did not record it."""
    if "retimes" not in frame:
        return "–"
    ok = frame[frame["status"] == "ok"] if "status" in frame else frame
    return str(int((pd.to_numeric(ok["retimes"], errors="coerce").fillna(0) > 0).sum()))


def _seeds(frame: pd.DataFrame) -> str:
    if {"R", "sigma", "seed", "method", "dataset"} <= set(frame.columns):
        return row_seeds(frame)
    return str(frame["seed"].nunique()) if "seed" in frame else "–"


def _commits_note(found: dict[str, tuple[list[str], str]]) -> str:
    """Which runs come from which commit, and which are older than the newest run (by their rows' dates)."""
    by_commit: dict[str, list[str]] = {}
    for run, (commits, _) in found.items():
        for c in commits:
            by_commit.setdefault(c[:7], []).append(run)
    if len(by_commit) < 2:
        return ("Every run comes from one commit." if by_commit else "")
    newest_run = max(found, key=lambda r: found[r][1])
    newest = {c[:7] for c in found[newest_run][0]}
    older = sorted(r for r, (commits, _) in found.items() if {c[:7] for c in commits} - newest)
    return (f"The runs come from {len(by_commit)} commits ("
            + "; ".join(f"{c}: {', '.join(runs)}" for c, runs in sorted(by_commit.items())) + "). "
            + f"{', '.join(older)} {'is' if len(older) == 1 else 'are'} older than the code of the newest run "
            f"({', '.join(sorted(newest))}, by the rows' dates): their numbers are what that older code made, and "
            "the report sets them beside the others as they are. `make publish COMMIT=<sha>` makes every run "
            "from one commit.")


def provenance_section(loaded_runs: dict, drifts: dict[str, list[str]], bins: pd.DataFrame | None = None) -> str:
    """One row per published run (and the shape-binning rows): rows, commits, dirty rows, protocol, config."""
    rows, found = [], {}
    # the retimed rows' column once a run records retimes (older CSVs have no such column)
    retimes = any(loaded is not None and "retimes" in loaded[0] for loaded in loaded_runs.values())
    for run in sorted(loaded_runs):
        loaded = loaded_runs[run]
        if loaded is None:
            rows.append([f"results/{run}", "not committed", "–", "–", "–", "–", *(["–"] if retimes else []),
                         "–", "–", "–"])
            continue
        frame, config = loaded
        commits = sorted(set(frame.get("git_commit", pd.Series(dtype=str)).dropna().astype(str)))
        dirty = int(frame.get("git_dirty", pd.Series(dtype=bool)).fillna(False).astype(bool).sum())
        draws = sorted(set(draws_of(frame)))
        scoring = sorted(set(frame["scoring"].fillna("standard"))) if "scoring" in frame else ["standard"]
        found[run] = (commits, str(frame["finished_at"].dropna().astype(str).max()) if "finished_at" in frame else "")
        rows.append([f"results/{run}", len(frame), ", ".join(c[:7] for c in commits) or "–", _when(frame), dirty,
                     _quiet(frame), *([_retimed(frame)] if retimes else []),
                     f"{config.get('protocol', '–')}; draws {', '.join(draws)}; scoring {', '.join(scoring)}", _seeds(frame), drift_note(drifts[run], stale_generated_data(frame))])
    if bins is not None:
        commits = sorted(set(bins["git_commit"].dropna().astype(str)))
        rows.append([f"{SHAPE_BINS.parent}", len(bins), ", ".join(c[:7] for c in commits) or "–", _when(bins),
                     int(true_values(bins["git_dirty"]).sum()), "–", *(["–"] if retimes else []),
                     "measured; draws authors", "–", drift_note([], stale_shape_bins(bins))])
    return ("## Where the numbers come from\n\nEach published run, the commits its rows were computed at and the "
            "days they finished, how many rows came from a tree with uncommitted changes, the share of its "
            f"successful rows timed quiet (other processes' load at most {LOAD_FLAG_CORES} cores, no cell "
            "beside: the others' times carry load), "
            + ("how many of them an exclusive sweep retimed (timed under load, so run again and the quietest "
               "attempt kept), " if retimes else "")
            + "its protocol, the seeds per point its rows hold, and "
            "whether it was made under today's `configs/<run>.yaml`:\n\n"
            + table(["run", "rows", "commits", "finished", "dirty rows", "quiet timings",
                     *(["retimed rows"] if retimes else []), "protocol", "seeds", "config"], rows) + "\n\n" + _commits_note(found)).rstrip()


#: the software a row names (its column) and, where rows older than the column lack it, where it is read
SOFTWARE = (("python", "Python"), ("numpy", "numpy"), ("scipy", "scipy"), ("numba", "numba"),
            ("scikit_learn", "scikit-learn"))
PINS = "constraints.txt"


def pinned_at(commit: str, package: str, root: Path) -> str:
    """The version `constraints.txt` pinned for `package` at `commit` (git), or "" where git cannot say."""
    try:
        out = subprocess.run(["git", "show", f"{commit}:{PINS}"], cwd=root, capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    for line in out.stdout.splitlines() if out.returncode == 0 else []:
        name, _, version = line.partition("==")
        if name.strip().lower() == package.lower():
            return version.strip()
    return ""


def _values(frame: pd.DataFrame, column: str) -> list[str]:
    if column not in frame:
        return []
    return sorted({str(v) for v in frame[column].dropna() if str(v).strip() not in ("", "nan")})


def _machine_row(run: str, frame: pd.DataFrame, root: Path) -> list[str]:
    commits = _values(frame, "git_commit")
    cores = _values(frame, "cpu_cores")
    ram = [f"{float(v) / 2**30:.1f} GiB" for v in _values(frame, "ram_bytes")]
    limit = [f"{float(v) / 1e9:.1f} GB" for v in _values(frame, "memory_limit_bytes")]
    cells = [f"results/{run}", ", ".join(_values(frame, "cpu")) or "–", ", ".join(cores) or "not recorded",
             ", ".join(ram) or "not recorded", ", ".join(limit) or "–"]
    for column, package in SOFTWARE:
        found = _values(frame, column)
        if not found and commits:
            pins = {pinned_at(c, package, root) for c in commits} - {""}
            found = [f"{v} (pinned in {PINS} at {', '.join(c[:7] for c in commits)})" for v in sorted(pins)]
        cells.append(", ".join(found) or "not recorded")
    cells.append(", ".join(_values(frame, "blas")) or "–")
    return cells


def machine_section(loaded_runs: dict, root: str | Path = ".") -> str:
    """Per committed run: the machine and software its rows were made on, as the rows record them."""
    rows = [_machine_row(run, loaded_runs[run][0], Path(root)) for run in sorted(loaded_runs)
            if loaded_runs[run] is not None]
    if not rows:
        return ""
    return ("### The machine and software behind each run\n\nAs each run's rows record them (`rbrepro.provenance`): "
            "the CPU model, its logical cores and RAM, the memory limit the guard applied, and the versions a "
            f"rerun needs. Where rows predate a column, the version comes from `{PINS}` at the rows' commit "
            "(every install is pinned by it) and cores or RAM say \"not recorded\".\n\n"
            + table(["run", "CPU", "cores", "RAM", "memory limit", *(p for _, p in SOFTWARE), "BLAS"], rows))
