"""REPRODUCTION.md, generated: every number, table and verdict from the committed result CSVs
and the authors' figure data, by the rules of `claims` and `fidelity`.

`write_report(root)` writes REPRODUCTION.md, results/cost-profile.md and the generated blocks of
README.md and docs/*.md (`blocks`: the counts, the verdicts, the cell time, the seeds per run, and
the benchmark tables of bench/results/*.csv); `check_report(root)` says which of them differ from
what the CSVs give, so CI can fail when a number has gone stale. Prose here holds no
number: numbers come from code.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rbrepro.analysis.costs import cost_rows, profile, to_markdown, total_line
from rbrepro.data.atomic import write_text_atomic
from rbrepro.errors import InvalidParameter, MissingData
from rbrepro.report import blocks as generated
from rbrepro.report.markdown import table
from rbrepro.report.runs import EXTRA_RUNS, RUNS, SHAPE_BINS, SWEEP_RUNS, config_drift, load_run
from rbrepro.report.sections.bench import BENCH_BLOCKS
from rbrepro.report.sections.claims import claims_section
from rbrepro.report.sections.configs import seeds_table
from rbrepro.report.sections.edges import edges_section
from rbrepro.report.sections.fidelity import fidelity_section
from rbrepro.report.sections.figures import figures_section
from rbrepro.report.sections.provenance import machine_section, provenance_section
from rbrepro.report.sections.scale import paper_scale_section, scale_lines, scaling_section
from rbrepro.report.text import INTRO, REPRODUCING

REPORT = "REPRODUCTION.md"
README = generated.README
REPORT_BEGIN, REPORT_END = generated.opening("report:counts"), generated.closing("report:counts")
COST_PROFILE = Path("results") / "cost-profile.md"


def _costs(loaded_runs: dict) -> tuple[str, str]:
    """(results/cost-profile.md, the cost block): every committed sweep run's cell time from its rows."""
    frames = {run: loaded_runs[run][0] for run in SWEEP_RUNS if loaded_runs.get(run) is not None}
    if not frames:
        return "# Cost profile of the published runs\n\nNo figure run is committed.\n", "No figure run is committed."
    runs, centres = profile(cost_rows(frames))
    profile_md = ("# Cost profile of the published runs\n\nWritten by `rbrepro report` from the committed "
                  "results/*/results.csv (`rbrepro.analysis.costs`; `python -m bench.cost_profile` prints the "
                  "same for any folders). Do not edit.\n\n" + to_markdown(runs, centres))
    rows = [[run, int(r.cells), f"{r.wall_min:.1f}", f"{r.reused_min:.1f}"] for run, r in runs.iterrows()]
    block = "\n".join([total_line(runs) + " Per run (`results/cost-profile.md` splits it by phase and cost "
                        "centre):", "", table(["run", "cells", "cell time (min)", "of it reused (min)"], rows, str)])
    return profile_md, block


def build_report(root: str | Path = ".") -> tuple[str, str]:
    """(REPRODUCTION.md text, README's counts block with its markers) from the committed results under `root`."""
    report, blocks, _ = build_all(root)
    return report, "\n".join([REPORT_BEGIN, blocks["report:counts"], REPORT_END])


def build_all(root: str | Path = ".") -> tuple[str, dict[str, str], str]:
    """REPRODUCTION.md, every generated block by name (without its markers), and results/cost-profile.md."""
    root = Path(root)
    loaded_runs = {run: load_run(root, run) for runs in (*RUNS.values(), *EXTRA_RUNS.values()) for run in runs}  # once each
    drifts = {run: config_drift(root, run) for run, loaded in loaded_runs.items() if loaded is not None}
    bins = pd.read_csv(root / SHAPE_BINS) if (root / SHAPE_BINS).exists() else None
    fidelity, counts = fidelity_section(loaded_runs, drifts)
    claims, summary = claims_section(loaded_runs)
    verdicts = "## Verdicts in brief\n\n" + table(["#", "claim", "verdict"], summary)
    report = "\n\n".join([INTRO.rstrip(), verdicts, fidelity, claims, edges_section(loaded_runs), paper_scale_section(loaded_runs, bins),
                           scaling_section(loaded_runs), provenance_section(loaded_runs, drifts, bins),
                           machine_section(loaded_runs, root),
                           REPRODUCING.rstrip(), figures_section(root)])
    block = "\n".join(["Against the authors' own figure data (two-sided, over a band of seeds; "
                       "[REPRODUCTION.md](REPRODUCTION.md) names every point):", "",
                       *[f"- `results/{run}`: {c.line()}"
                         + ("." if not drifts[run] else " (made under an older config; see the report).")
                         for run, c in counts.items()], *scale_lines(loaded_runs, bins)])
    profile_md, cost_block = _costs(loaded_runs)
    blocks = {"report:counts": block, "report:verdicts": table(["#", "claim", "verdict"], summary),
              "report:costs": cost_block, "report:seeds": seeds_table(root, loaded_runs),
              **{name: build(root) for name, build in BENCH_BLOCKS.items()}}
    return report.rstrip() + "\n", blocks, profile_md


def _generated(root: Path) -> dict[Path, str]:
    """Each generated file under `root` and the text the committed CSVs give it (README.md and docs/*.md:
    those that exist, their generated blocks filled)."""
    report, blocks, profile_md = build_all(root)
    files = {root / REPORT: report}
    if (root / "results").is_dir():
        files[root / COST_PROFILE] = profile_md
    for page in generated.documents(root):
        files[page] = generated.fill(page.read_text(), blocks, str(page.relative_to(root)))
    return files


#: what marks a folder as a checkout of this project (the report is computed from its committed results)
PROJECT_MARKERS = ("pyproject.toml", "results")
#: the line each whole file the report writes carries: one without it was not written by the report
OWN_MARKS = {REPORT: "Generated by `rbrepro report`", COST_PROFILE.name: "Written by `rbrepro report`"}


def project_root(root: str | Path) -> Path:
    """`root` once it is a checkout of rbrepro (a pyproject.toml naming the project, and results/);
    else MissingData saying what the report needs, before anything is computed or written."""
    root = Path(root)
    pyproject = root / "pyproject.toml"
    try:
        ours = 'name = "rbrepro"' in pyproject.read_text(encoding="utf-8", errors="replace")
    except OSError:
        ours = False
    if not (ours and (root / "results").is_dir()):
        raise MissingData(f"{root.resolve()}: not a checkout of rbrepro (no pyproject.toml naming the project "
                          f"beside a results/ folder); the report is computed from and written into a checkout: "
                          f"run it there, or give --root CHECKOUT")
    return root


def _refuse_foreign(path: Path) -> None:
    """Refuse to replace a whole file the report did not write (it lacks the report's own mark)."""
    mark = OWN_MARKS.get(path.name)
    if mark and path.exists() and mark not in path.read_text(encoding="utf-8", errors="replace"):
        raise InvalidParameter(f"{path}: a file that `rbrepro report` did not write (it lacks the line "
                               f"{mark!r}); the report replaces only its own files: move it aside")


def write_report(root: str | Path = ".") -> list[Path]:
    """Write REPRODUCTION.md, results/cost-profile.md and the generated blocks of README.md and docs/*.md
    inside a checkout (project_root), never over a whole file it did not write; returns the files written."""
    files = _generated(project_root(root))
    for path in files:
        _refuse_foreign(path)
    written = []
    for path, text in files.items():
        if not path.exists() or path.read_text() != text:
            write_text_atomic(path, text)
            written.append(path)
    return written


def check_report(root: str | Path = ".") -> list[str]:
    """The files that differ from what the committed CSVs give (empty: all current); a folder that is not
    a checkout is refused (project_root)."""
    root = project_root(root)
    stale = []
    for path, text in _generated(root).items():
        current = path.read_text() if path.exists() else None
        if current != text or (path.name == README and REPORT_BEGIN not in current):
            stale.append(str(path.relative_to(root)))
    return stale
