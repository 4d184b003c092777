"""The benchmark tables README and the docs show, each from its committed CSV under bench/results/.

One function per benchmark file: it reads the rows the benchmark wrote (with their provenance),
applies the benchmark's rule (medians over seeds, ratios against the same run's baseline, the
thresholds stated beside the table where the benchmark judges one), and returns Markdown ending in where the numbers
come from. A file that is not committed gives one line naming the command that writes it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rbrepro.report.markdown import band, fmt, table

BENCH_RESULTS = Path("bench") / "results"
#: the default may trail the authors' 50 steps by this much and still count as giving nothing up:
#: accuracy in points, relative error in absolute terms
ACCURACY_SLACK, ERROR_SLACK = 0.05, 0.001
#: the speed-up over the authors' C++ the default aims at
AUTHORS_TARGET = 40.0
#: two times within this ratio of each other are level, not a win
LEVEL_RATIO = 1.1
#: the speed-ups over the authors' C++ at their fixed 50 CG steps that rbrepro aims at, per (dataset, R)
FIFTY_STEP_AIMS = {**{("ijcnn1", R): 30.0 for R in (64, 256, 1024)},
                   **{(name, 256): 10.0 for name in ("cadata", "letter", "cod_rna_split")},
                   **{("mnist", R): 10.0 for R in (64, 256)}}
#: a part of a step within this factor of the machine's floor for it counts as at the floor
AT_THE_FLOOR = 1.3
#: the roofline's two sums of parts: a fit's featurization and one CG step
FEATURIZE, STEP = "featurize", "whole CG step"
#: plain CG's whole step where it runs in row space (bench/roofline.py): the authors' rule's step there
STEP_IN_ROW_SPACE = "whole CG step in row space"
#: what the aims block says of each aim
AIM_VERDICTS = ("met", "within the floor", "past the floor", "no floor measured")


def _read(root: Path, name: str, make: str) -> tuple[pd.DataFrame | None, str]:
    """(the rows, "") or (None, the line saying which command writes them)."""
    path = root / BENCH_RESULTS / name
    if not path.exists():
        return None, f"No `{BENCH_RESULTS / name}` is committed; `{make}` writes it."
    return pd.read_csv(path), ""


def provenance_line(frame: pd.DataFrame, name: str) -> str:
    """Where a table's numbers come from: the file, commit, machine, threads and how quiet the run was."""
    def one(column: str) -> str:
        if column not in frame:
            return "not recorded"
        values = frame[column].dropna().astype(str).unique()
        return ", ".join(values) if len(values) else "not recorded"

    parts = [f"`{BENCH_RESULTS / name}`", f"commit {one('git_commit')[:12]}"]
    if "git_dirty" in frame:
        dirty = frame["git_dirty"].astype(str).str.lower().eq("true").any()
        parts.append("tree dirty" if dirty else "clean tree")
    machine = one("cpu") if "cpu" in frame else one("machine")
    cores = f", {one('cpu_cores')} logical cores" if "cpu_cores" in frame else ""
    threads = one("numba_threads") if "numba_threads" in frame else one("threads")
    parts += [f"{machine}{cores}", f"{threads} threads"]
    if "load_other_cores" in frame:
        load = pd.to_numeric(frame["load_other_cores"], errors="coerce").max()
        quiet = frame["quiet"].astype(str).str.lower().eq("true").all() if "quiet" in frame else False
        parts.append(f"other cores' load {load:.2f} ({'quiet' if quiet else 'not quiet'})")
    else:
        parts.append("quiet not recorded")
    if "finished_at" in frame:
        parts.append(f"finished {one('finished_at')[:10]}")
    return "From " + "; ".join(parts) + "."


def stopping_block(root: Path) -> str:
    """The default (held-out stop, then every row) against the authors' 50 CG steps, per dataset."""
    rows, missing = _read(root, "stopping.csv", "make bench-stopping")
    if rows is None:
        return missing
    authors_rule, default_rule = rows["rule"].unique()[:2]
    out, meets = [], 0
    for name, mine in rows.groupby("dataset", sort=False):
        a, d = mine[mine["rule"] == authors_rule], mine[mine["rule"] == default_rule]
        error = mine["metric"].iloc[0] != "accuracy"
        diff = d["test_metric"].median() - a["test_metric"].median()
        as_good = diff <= ERROR_SLACK if error else diff >= -ACCURACY_SLACK
        ratio = a["train_s"].median() / d["train_s"].median()
        meets += bool(as_good and ratio >= 1.0)
        out.append([name, int(mine["R"].iloc[0]), mine["metric"].iloc[0], band(a["test_metric"]),
                    band(d["test_metric"]), f"{diff:+.4g}", f"{a['train_s'].median():.3g}",
                    f"{d['train_s'].median():.3g}", f"×{ratio:.2f}", "yes" if as_good else "no",
                    "yes" if ratio >= 1.0 else "no"])
    seeds = rows["seed"].nunique()
    head = (f"The default meets both (test metric at least the 50 steps' less {ACCURACY_SLACK} points of "
            f"accuracy or plus {ERROR_SLACK} relative error, and a train time no longer) on {meets} of "
            f"{len(out)} datasets; medians over {seeds} seeds, bands [min, max].")
    return _block(head, ["dataset", "R", "metric", "50 CG steps: test", "default: test",
                                       "default − 50 steps", "50 steps: train s", "default: train s",
                                       "time ratio", "as accurate", "no slower"], out, rows, "stopping.csv")


def authors_block(root: Path) -> str:
    """Time to the authors' 50-step test metric: their C++ against ours (50 steps, default, floor)."""
    rows, missing = _read(root, "authors.csv", "make bench-authors AUTHORS=PATH")
    if rows is None:
        return missing
    out = []
    for r in rows.itertuples():
        default = f"×{r.their_s / r.default_s:.1f}" if _true(r.default_reaches) else "below theirs"
        floor = f"×{r.their_s / r.floor_s:.1f}" if pd.notna(r.floor_s) else "not reached"
        out.append([r.dataset, int(r.R), fmt(float(r.their_perf)), f"{r.their_s:.3g}", fmt(float(r.cg50_perf)),
                    f"×{r.their_s / r.cg50_s:.1f}", fmt(float(r.default_perf)), default, floor])
    reached = rows[rows["default_reaches"].map(_true)]
    at_target = int((reached["their_s"] / reached["default_s"] >= AUTHORS_TARGET).sum())
    head = (f"Their C++ and ours on the same rows, sigma, lambda and threads (medians of "
            f"{int(rows['repeats'].iloc[0])} alternating runs). Columns ×: their train time over ours. The "
            f"default reaches their test metric at {len(reached)} of {len(rows)} points and does so ×"
            f"{AUTHORS_TARGET:g} sooner or more at {at_target}; the floor (the fewest steps that reach it, found on "
            f"the test rows, so no rule a user can run) shows how soon the accuracy exists.")
    return _block(head, ["dataset", "R", "theirs: test", "theirs: train s", "ours, 50 steps: test",
                                       "ours, 50 steps", "default: test", "default", "floor"], out, rows, "authors.csv")


def _block(head: str, header: list[str], out: list[list], rows: pd.DataFrame, name: str) -> str:
    """A generated block: its sentence (none where empty), its table, and the CSV's provenance line."""
    parts = ([head, ""] if head else []) + [table(header, out, str), "", provenance_line(rows, name)]
    return "\n".join(parts)


def _true(value) -> bool:
    return str(value).lower() == "true"


def sigma_auto_block(root: Path) -> str:
    """`--sigma auto` (the choice and the final fit) against one fit at the width it chose."""
    rows, missing = _read(root, "sigma-auto.csv", "make bench-sigma-auto")
    if rows is None:
        return missing
    out = []
    for name, mine in rows.groupby("dataset", sort=False):
        first = mine.iloc[0]
        out.append([name, int(first["R"]), f"{first['sigma']:g}", f"{first['sigma_every_row']:g}",
                    int(first["widths_scored"]), f"{mine['auto_s'].median():.3g}", f"{mine['one_fit_s'].median():.3g}",
                    f"×{mine['auto_s'].median() / mine['one_fit_s'].median():.2f}"])
    head = (f"Times after loading, medians of {rows['repeat'].nunique()} repeats in one process; the sample "
            f"column is the width the same search picks when it scores every training row.")
    return _block(head, ["dataset", "R", "chosen sigma", "every row's choice", "widths scored",
                                       "--sigma auto s", "one fit s", "ratio"], out, rows, "sigma-auto.csv")


def roofline_block(root: Path) -> str:
    """Each part of RB's CG step against the machine's floor for that part, measured in the same
    process (bench/roofline.py): the part's time over the floor's ("x the floor", 1 at the floor)."""
    rows, missing = _read(root, "roofline.csv", "make bench-roofline")
    if rows is None:
        return missing
    out = [[r.figure, f"{r.value:.4g} {r.unit}", f"{r.baseline:.4g} {r.unit}" if pd.notna(r.baseline) else "–",
            f"×{r.value / r.baseline:.2f}" if pd.notna(r.baseline) and r.baseline else "–",
            f"{r.baseline_name}; {r.note}" if isinstance(r.baseline_name, str) and r.baseline_name else
            (r.note if isinstance(r.note, str) else "")] for r in rows.itertuples()]
    return _block("", ["part", "time", "the machine's floor", "× the floor", "note"], out, rows, "roofline.csv")


def _roofline_cell(roofline: pd.DataFrame, name: str, R: int) -> dict:
    """One (dataset, R) of roofline.csv: {part: (time, floor)} in seconds, the part named as after "R=.. "."""
    prefix = f"{name} R={R} "
    cell = roofline[roofline["figure"].str.startswith(prefix)]
    scale = cell["unit"].map({"s": 1.0, "ms": 1e-3})
    return {f[len(prefix):]: (v, b) for f, v, b in zip(cell["figure"], cell["value"] * scale, cell["baseline"] * scale)}


def aims_block(root: Path) -> str:
    """Each speed-up aimed at over the authors' 50 steps, against what this machine's floors allow: ours under
    their rule now, and featurization plus the steps their rule took with every part at its floor (a lower
    bound: the solve's setup and a fit's other fixed costs left out), from authors.csv and roofline.csv."""
    rows, missing = _read(root, "authors.csv", "make bench-authors AUTHORS=PATH")
    roofline, missing_roofline = _read(root, "roofline.csv", "make bench-roofline")
    if rows is None or roofline is None:
        return missing or missing_roofline
    out, verdicts = [], []
    floors_cpu = sorted(set(roofline["cpu"].astype(str))) if "cpu" in roofline else []
    for r in rows.itertuples():
        aim = FIFTY_STEP_AIMS.get((r.dataset, int(r.R)))
        if aim is None:
            continue
        # a floor is the machine's own: one measured on another CPU says nothing of this run
        same_machine = floors_cpu == [str(r.cpu)]
        cell = _roofline_cell(roofline, r.dataset, int(r.R)) if same_machine else {}
        needs, now = r.their_s / aim, r.their_s / r.cg50_s
        off = sorted(part for part, (value, floor) in cell.items()  # the parts, not their two sums
                     if part not in (FEATURIZE, STEP) and value > AT_THE_FLOOR * floor)
        steps = getattr(r, "cg50_steps", float("nan"))
        measured = STEP in cell and FEATURIZE in cell and pd.notna(steps)
        # their rule is plain CG: in row space where the solver runs it there (its own step and floor)
        step = STEP_IN_ROW_SPACE if STEP_IN_ROW_SPACE in cell else STEP
        at_floor = cell[FEATURIZE][1] + float(steps) * cell[step][1] if measured else float("nan")
        if now >= aim:
            verdict, would = "met", "–"
        elif not measured:
            verdict = "no floor measured"
            would = (f"`make bench-roofline` on this machine (the floors are of {', '.join(floors_cpu)})"
                     if floors_cpu and not same_machine else "`make bench-roofline` and `make bench-authors` at this R")
        elif r.their_s / at_floor >= aim:
            verdict = "within the floor"
            would = f"{r.cg50_s - needs:.3g} s less, of the {r.cg50_s - at_floor:.3g} s above the floor"
        else:
            verdict = "past the floor"
            would = f"a step ×{at_floor / needs:.2f} below its floor: fewer loads and updates per step, or fewer steps"
        verdicts.append(verdict)
        out.append([r.dataset, int(r.R), f"×{aim:g}", f"{r.their_s:.3g}", f"{r.cg50_s:.3g}",
                    int(steps) if pd.notna(steps) else "–", f"×{now:.1f}",
                    f"{needs:.3g}", f"{at_floor:.3g}" if measured else "–",
                    f"×{r.their_s / at_floor:.1f}" if measured else "–", verdict,
                    ", ".join(off) or "none", would])
    counts = {v: verdicts.count(v) for v in AIM_VERDICTS}
    head = (f"Of {len(verdicts)} aims, {counts['met']} met, {counts['within the floor']} within what the floors "
            f"allow (the parts above {AT_THE_FLOOR:g}× their floor hold them back) and {counts['past the floor']} "
            f"past them: even with featurization and every step their rule takes (at most 50) at this machine's floor "
            "(the solve's setup and other fixed costs left out) the aim is not reached"
            + (f"; {counts['no floor measured']} without a floor measured" if counts["no floor measured"] else "")
            + ". Seconds are train times; the floor's are from the roofline below, measured in its own run.")
    return _block(head, ["dataset", "R", "aim", "theirs s", "ours, their rule s", "steps", "× now", "the aim needs s",
                         "at the floor s", "× at the floor", "verdict", f"parts above {AT_THE_FLOOR:g}× their floor",
                         "what it would take"], out, rows, "authors.csv") + "\n" + provenance_line(roofline, "roofline.csv")


def rcd_kernels_block(root: Path) -> str:
    """Seconds per RCD epoch of each kernel, against the sequential one in the same run."""
    rows, missing = _read(root, "rcd-kernels.csv", "python -m bench.rcd_kernels")
    if rows is None:
        return missing
    out = [[r.dataset, r.method, r.kernel, int(r.threads), f"{r.seconds_per_epoch:.4g}",
            f"{r.min_s:.4g} – {r.max_s:.4g}", f"×{r.sequential_over_this:.2f}"] for r in rows.itertuples()]
    return _block("", ["dataset", "method", "kernel", "threads", "s per epoch (median)", "range",
                             "sequential / this"], out, rows, "rcd-kernels.csv")


def peers_block(root: Path) -> str:
    """Time to the exact kernel's test metric less a margin: rbrepro's RB against the CPU peers."""
    rows, missing = _read(root, "peers.csv", "make bench-peers")
    if rows is None:
        return missing
    targets = rows[~rows["target"].str.startswith("exact kernel")]
    out, first, strict, contests = [], 0, 0, 0
    for (name, target), mine in targets.groupby(["dataset", "target"], sort=False):
        times = {r.method: r.median_s for r in mine.itertuples() if pd.notna(r.median_s)}
        ours = next((t for m, t in times.items() if m.startswith("rbrepro")), None)
        others = [t for m, t in times.items() if not m.startswith("rbrepro")]
        if ours is not None and others:
            contests += 1
            first += ours <= min(others)
            strict += ours * LEVEL_RATIO < min(others)
        for r in mine.itertuples():
            out.append([name, f"{target} ({fmt(float(r.target_value))})", r.method, f"{r.median_s:.3g}" if pd.notna(r.median_s) else "not reached",
                        r.reached_R if isinstance(r.reached_R, str) else fmt(r.reached_R)])
    head = (f"RB is first at {first} of {contests} targets that a peer reaches too; ahead by more than a "
            f"factor {LEVEL_RATIO:g} (not level) at {strict}.")
    return _block(head, ["dataset", "target", "method", "seconds (median)", "R reached"], out, rows, "peers.csv")


BENCH_BLOCKS = {"bench:stopping": stopping_block, "bench:authors": authors_block, "bench:aims": aims_block,
                "bench:sigma-auto": sigma_auto_block, "bench:roofline": roofline_block,
                "bench:rcd-kernels": rcd_kernels_block, "bench:peers": peers_block}
