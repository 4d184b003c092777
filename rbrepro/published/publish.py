"""Publish every run from one commit: our results, made where nothing but that commit's code can run.

    python -m rbrepro.published.publish COMMIT [--runs fig5 fig3 ...] [--worktree DIR] [--no-sweep]
    make publish COMMIT=<sha>

1. A clean git worktree of COMMIT is made outside this checkout (or the one made before is reused:
   it must be at COMMIT and have no change outside results/, figures/ and runs/);
2. each run's command (the Makefile's: `rbrepro sweep configs/<run>.yaml --out results/<run>`, with
   `--reuse-from` as `make figures` does; `rbrepro diagnose` for theory) runs there with that
   worktree's code first on the path. A sweep resumes from the cells it finished before, and a run
   whose rows were checked once is marked done and not run again, so an interrupted publish goes on
   where it stopped;
3. every row of every run must name COMMIT (`git_commit`) and a clean tree (`git_dirty` false);
   otherwise nothing is copied and the rows at fault are named;
4. the runs' files (results.csv, config.resolved.yaml, unavailable.json, ...; not cells/) are
   copied into this checkout's results/, the figures redrawn (`rbrepro plot`, as `make plots`,
   theory's from its diagnostics.csv) and the report regenerated (`rbrepro report`). Committing them is left
   to you.

Not a model of the authors' published data (the rest of this package): it publishes ours, and
runs everything in subprocesses, so it imports nothing above its layer.
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from rbrepro.figure_registry import figure_of_run

#: the Makefile's order: Fig. 5 before Fig. 3, whose common cells it reuses
FIGURE_RUNS = ("fig5", "fig3", "fig5-as-published", "fig3-as-published", "fig4", "fig6")
OTHER_RUNS = ("theory", "scaling", "paper-scale", "shape-binning")
ALL_RUNS = FIGURE_RUNS + OTHER_RUNS
REUSE = {"fig3": "results/fig5", "fig3-as-published": "results/fig5-as-published"}
#: the file of rows each run writes (the others: results.csv)
ROWS = {"theory": "diagnostics.csv", "shape-binning": "bins.csv"}
#: the memory limit the scaling runs were published under (Makefile's SCALE_MEMORY_GB)
SCALE_MEMORY_GB = "20"
#: where a run's rows were checked: the run is done, a rerun of the publish skips it
DONE = ".published"
#: paths a sweep writes into its own tree (provenance leaves them out of git_dirty)
OWN_OUTPUT = ("results", "figures", "runs")

Runner = Callable[..., subprocess.CompletedProcess]


class PublishError(RuntimeError):
    """A publish that cannot go on: a wrong worktree, a failed command, rows from elsewhere."""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if done.returncode:
        raise PublishError(f"git {' '.join(args)} in {repo}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout.strip()


def resolve_commit(repo: Path, commit: str) -> str:
    """The full sha of `commit` in `repo` (a branch, tag or short sha)."""
    return git(repo, "rev-parse", "--verify", f"{commit}^{{commit}}")


def worktree_for(repo: Path, sha: str, where: Path | None = None) -> Path:
    """A clean worktree of `sha` outside `repo`: made, or the one made before reused after checking it."""
    top = Path(git(repo, "rev-parse", "--show-toplevel")).resolve()
    where = (where or top.parent / f"{top.name}-publish-{sha[:12]}").resolve()
    if where == top or top in where.parents:
        raise PublishError(f"{where}: the worktree must lie outside this checkout ({top})")
    if where.exists():
        head = git(where, "rev-parse", "HEAD")
        if head != sha:
            raise PublishError(f"{where} is at {head[:12]}, not {sha[:12]}: remove it (git worktree remove) or "
                               f"name another with --worktree")
    else:
        git(repo, "worktree", "add", "--detach", str(where), sha)
    changed = git(where, "status", "--porcelain", "--", ".", *(f":(exclude){p}" for p in OWN_OUTPUT))
    if changed:
        raise PublishError(f"{where} has changes outside {', '.join(OWN_OUTPUT)}: its rows would be dirty\n{changed}")
    return where


def run_commands(run: str, python: str) -> list[list[str]]:
    """The commands that make `run` inside the worktree (the Makefile's, with the worktree's code)."""
    cli = [python, "-m", "rbrepro"]
    if run == "theory":
        return [cli + ["diagnose", "configs/theory.yaml", "--out", "results/theory", "--figure", "figures/theory"]]
    if run == "shape-binning":
        return [[python, "-m", "bench.shape_binning", "--out", "results/shape-binning"]]
    sweep = cli + ["sweep", f"configs/{run}.yaml", "--out", f"results/{run}"]
    if run in REUSE:
        sweep += ["--reuse-from", REUSE[run]]
    if run in ("scaling", "paper-scale"):
        sweep += ["--memory-limit", SCALE_MEMORY_GB]
    fetch = [cli + ["fetch", "--all", "-q"]] if run in FIGURE_RUNS else []
    return fetch + [sweep]


def _true(value: str) -> bool:
    return str(value).strip().lower() == "true"


def row_problems(rows_csv: Path, sha: str) -> list[str]:
    """Why the rows of `rows_csv` are not all from a clean tree at `sha` (empty: they are)."""
    if not rows_csv.exists():
        return [f"{rows_csv}: no rows"]
    with rows_csv.open(newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"git_commit", "git_dirty"} - set(reader.fieldnames or ())
        if missing:
            return [f"{rows_csv}: no {', '.join(sorted(missing))} column"]
        other, dirty, count = {}, [], 0
        for line, row in enumerate(reader, start=2):
            count += 1
            if row["git_commit"] != sha:
                other.setdefault(row["git_commit"] or "(blank)", []).append(line)
            if _true(row["git_dirty"]):
                dirty.append(line)
    problems = [f"{rows_csv}: {len(lines)} row(s) from commit {commit[:12]} (lines {', '.join(map(str, lines[:5]))}"
                f"{', ...' if len(lines) > 5 else ''})" for commit, lines in sorted(other.items())]
    if dirty:
        problems.append(f"{rows_csv}: {len(dirty)} row(s) from a dirty tree (lines "
                        f"{', '.join(map(str, dirty[:5]))}{', ...' if len(dirty) > 5 else ''})")
    return problems + ([f"{rows_csv}: no rows"] if not count else [])


def _run(worktree: Path, run: str, python: str, runner: Runner) -> None:
    """Run `run`'s commands in the worktree with its own code first on the path; a sweep's exit 1
    (some cells failed, recorded as rows) goes on, as `make figures` does."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(worktree), os.environ.get("PYTHONPATH", "")]).rstrip(
        os.pathsep)}
    for command in run_commands(run, python):
        done = runner(command, cwd=worktree, env=env)
        tolerated = (0, 1) if {"sweep", "fetch"} & set(command) else (0,)
        if done.returncode not in tolerated:
            raise PublishError(f"{run}: `{' '.join(command)}` exited {done.returncode} in {worktree}")


def redraw_commands(runs: tuple[str, ...], python: str) -> list[list[str]]:
    """The figures of the copied runs, drawn here by this checkout's code (as `make plots` does;
    theory's from its diagnostics.csv)."""
    drawn = {run: "theory" if run == "theory" else getattr(figure_of_run(run), "name", None) for run in runs}
    return [[python, "-m", "rbrepro", "plot", figure, f"results/{run}", "--out", f"figures/{run}"]
            for run, figure in drawn.items() if figure]


def copy_run(worktree: Path, repo: Path, run: str) -> list[Path]:
    """Copy a run's files (not its cells/ nor the done mark) into this checkout's results/<run>."""
    source, target = worktree / "results" / run, repo / "results" / run
    target.mkdir(parents=True, exist_ok=True)
    copied = []
    for path in sorted(source.iterdir()):
        if path.is_file() and path.name != DONE and not path.name.endswith(".lock"):
            shutil.copy2(path, target / path.name)
            copied.append(target / path.name)
    return copied


def publish(repo: Path, commit: str, runs: tuple[str, ...] = ALL_RUNS, python: str = sys.executable,
            worktree: Path | None = None, sweep: bool = True, runner: Runner = subprocess.run,
            say: Callable[[str], None] = print) -> list[Path]:
    """Make `runs` at `commit` in a worktree, check every row, copy them here, redraw and report."""
    unknown = sorted(set(runs) - set(ALL_RUNS))
    if unknown:
        raise PublishError(f"unknown run(s) {', '.join(unknown)}; known: {', '.join(ALL_RUNS)}")
    repo = Path(repo).resolve()
    sha = resolve_commit(repo, commit)
    tree = worktree_for(repo, sha, worktree)
    say(f"publishing {', '.join(runs)} from {sha[:12]} in {tree}")
    problems = []
    for run in runs:
        folder, done = tree / "results" / run, tree / "results" / run / DONE
        if sweep and not (done.exists() and done.read_text().strip() == sha):
            say(f"{run}: running (resumes from the cells finished before)")
            _run(tree, run, python, runner)
        found = row_problems(folder / ROWS.get(run, "results.csv"), sha)
        if not found and folder.is_dir():
            done.write_text(sha + "\n")
        problems += found
    if problems:
        raise PublishError("not published, rows that are not the commit's:\n" + "\n".join(problems))
    copied = [path for run in runs for path in copy_run(tree, repo, run)]
    for command in redraw_commands(runs, python) + [[python, "-m", "rbrepro", "report"]]:
        if runner(command, cwd=repo).returncode:
            raise PublishError(f"`{' '.join(command)}` failed in {repo}: the results are copied, redraw by hand")
    say(f"copied {len(copied)} file(s) into {repo / 'results'}; figures redrawn, report regenerated: review and "
        f"commit them")
    return copied


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rbrepro.published.publish",
                                     description="Make every published run from one commit, in a clean worktree "
                                                 "outside this checkout, check its rows, and copy them here.")
    parser.add_argument("commit", help="the commit to publish from (sha, branch or tag)")
    parser.add_argument("--runs", nargs="+", default=list(ALL_RUNS), help=f"[default: {' '.join(ALL_RUNS)}]")
    parser.add_argument("--worktree", type=Path, help="where the worktree lies [default: beside this checkout, "
                                                      "<name>-publish-<sha>]")
    parser.add_argument("--no-sweep", action="store_true", help="only check and copy the rows already made")
    parser.add_argument("--repo", type=Path, default=Path("."), help="this checkout [default: .]")
    parser.add_argument("--python", default=sys.executable, help="the interpreter the runs use [default: this one]")
    args = parser.parse_args(argv)
    try:
        publish(args.repo, args.commit, tuple(args.runs), python=args.python, worktree=args.worktree,
                sweep=not args.no_sweep)
    except PublishError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
