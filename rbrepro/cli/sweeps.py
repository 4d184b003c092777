"""`rbrepro sweep`: a config's grid, resumably, on local workers or dask."""

from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from rbrepro.cli.app import app
from rbrepro.cli.common import (
    DataDir,
    Mirror,
    Quiet,
    _check_memory_limit,
    _fail,
    _guard,
    _parse_floats,
    _validated,
    err,
    say,
)
from rbrepro.settings import CLUSTER_DEADLINES


@app.command()
def sweep(
    config: Path = typer.Argument(..., help="Sweep config (YAML), e.g. configs/fig3.yaml."),
    out: Optional[Path] = typer.Option(None, "--out", help="Results folder [default: runs/<config name>; the "
                                                           "published results/<name> only when named here]."),
    dataset: List[str] = typer.Option([], "--dataset", "-d", help="Run only this dataset (repeatable)."),
    sigma: List[str] = typer.Option([], "--sigma", help="Run only these sigma values (repeatable or a,b,c)."),
    R: List[int] = typer.Option([], "--R", "-R", help="Run only these R values (repeatable)."),
    seed: List[int] = typer.Option([], "--seed", min=0, help="Run only these seeds (repeatable)."),
    method: List[str] = typer.Option([], "--method", "-m", help="Run only this method (repeatable)."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1,
                                          help="Cells run at once [default: cores / threads per cell; 1 if the "
                                               "config is exclusive]."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler",
                                            help="Run cells on dask.distributed: a scheduler address "
                                                 "(tcp://HOST:PORT) or 'local' for an embedded local cluster. Deadlines: "
                                                 f"{CLUSTER_DEADLINES}; a first worker: --worker-timeout."),
    fresh_process: bool = typer.Option(False, "--fresh-process",
                                       help="Run every cell in a new worker process (slower to start)."),
    memory_limit: Optional[float] = typer.Option(None, "--memory-limit", callback=_validated(_check_memory_limit),
                                                 help="GB the running cells may use together and each cell may "
                                                      "use [default: $RBREPRO_MEMORY_LIMIT_GB or 60% of RAM]. Cells "
                                                      "skipped under a lower limit are retried."),
    reuse_stale: bool = typer.Option(False, "--reuse-stale",
                                     help="Take finished cells of older code or other data as done (never the "
                                          "default: their keys differ, so they are normally kept aside)."),
    reuse_from: List[Path] = typer.Option([], "--reuse-from",
                                          help="Another sweep's results folder (repeatable): its finished cells "
                                               "with the same key (same parameters, data and algorithms) are "
                                               "taken instead of run again, marked reused_from. An exclusive "
                                               "config takes only cells that were run exclusively."),
    worker_timeout: float = typer.Option(60.0, "--worker-timeout", min=1.0,
                                         help="With --scheduler: seconds to wait for a first dask worker."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List the cells and which are done; run nothing."),
    mirror: Mirror = None,
    data_dir: DataDir = None,
    quiet: Quiet = False,
):
    """Run a config's grid (datasets x methods x sigma x R x seeds x threads) and write the results CSV.

    Cells run in parallel worker processes (or on a dask cluster with --scheduler), under
    the same rules either way: at most one cell per core budget, only while their memory
    estimates fit, one at a time for exclusive configs. Each finished cell is written
    atomically to OUT/cells/<key>.json and OUT/results.csv is rebuilt from them, so a killed
    or interrupted sweep resumes where it stopped; cells already done are skipped, failed
    cells are retried on the next run, cells the memory guard refuses are recorded as
    skipped and retried under a higher --memory-limit. results.csv holds exactly the
    config's cells; cells of other configs, data or code stay aside in OUT/cells. With
    sigma_selection on validation data, the selection cells run first; a dataset whose files
    cannot be had here gets no cells and is named once. Filters narrow the grid without editing
    the YAML. OUT defaults to runs/<name>, so the published results/ are never touched unless
    named with --out.
    """
    from rbrepro.memory import memory_limit_bytes
    from rbrepro.sweep.backends import DaskBackend, LocalBackend, default_workers
    from rbrepro.sweep.config import load_config
    from rbrepro.sweep.runner import run_sweep, select

    cfg = _guard(lambda: load_config(config))
    _check_request(cfg, config, dataset, memory_limit, reuse_from)
    sigmas = _parse_floats(sigma, "--sigma")

    def narrow(cells):
        return select(cells, dataset, sigmas, R, seed, method)

    out_dir = out or Path("runs") / cfg.name
    grid_cells = _grid_cells(cfg, narrow, config)
    if dry_run:
        return _dry_run(cfg, out_dir, narrow, data_dir, mirror, reuse_stale, reuse_from, dataset)
    n_workers = workers or default_workers(grid_cells, cfg.exclusive)
    backend = (DaskBackend(None if scheduler == "local" else scheduler, n_workers, cfg.exclusive, worker_timeout)
               if scheduler else LocalBackend(n_workers, fresh_process, exclusive=cfg.exclusive,
                                              memory_budget=_guard(lambda: memory_limit_bytes(memory_limit))))
    backend.on_event = lambda message: err.print(f"rbrepro: {message}", highlight=False, markup=False,
                                                 soft_wrap=True)

    run = lambda on_progress: run_sweep(cfg, out_dir, None, data_dir, mirror, backend=backend,  # noqa: E731
                                         on_progress=on_progress, narrow=narrow, reuse_stale=reuse_stale,
                                         memory_limit_gb=memory_limit, reuse_from=reuse_from)
    counts = _with_progress(run, cfg.name, backend.description, len(grid_cells), out_dir, quiet)
    _report(cfg, counts, out_dir, reuse_from, dataset)



#: off a terminal, a status line at most this often (seconds) while cells finish
STATUS_EVERY_S = 10.0


def _with_progress(run, name: str, where: str, n_cells: int, out_dir: Path, quiet: bool) -> dict:
    """run(on_progress) under a progress bar; SIGINT and SIGTERM stop it with one line (the workers
    stopped, the finished cells kept) and exit 128 + the signal's number, so a rerun resumes."""
    import signal

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    def on_signal(signum, frame):  # SIGTERM (kill, timeout) stops the sweep like SIGINT does
        raise KeyboardInterrupt(signum)

    signal.signal(signal.SIGTERM, on_signal)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), TextColumn("{task.fields[failed]} failed"), console=err,
                  disable=quiet) as bar:
        task = bar.add_task(f"sweep {name} on {where}", total=n_cells, failed=0)

        said = [time.monotonic()]

        def progress(done, failed, total):
            bar.update(task, completed=done + failed, total=max(total, n_cells), failed=failed)
            if not quiet and not err.is_terminal and time.monotonic() - said[0] >= STATUS_EVERY_S:
                said[0] = time.monotonic()  # no bar off a terminal (a log, CI): a line now and then instead
                err.print(f"rbrepro: sweep {name}: {done + failed} of {max(total, n_cells)} cells finished, "
                          f"{failed} failed", highlight=False, markup=False)

        try:
            return _guard(lambda: run(progress))
        except KeyboardInterrupt as exc:
            signum = exc.args[0] if exc.args and isinstance(exc.args[0], int) else signal.SIGINT
            bar.stop()
            kept = len(list((out_dir / "cells").glob("*.json")))
            err.print(f"rbrepro: sweep {name} interrupted by {signal.Signals(signum).name}: its workers are "
                      f"stopped, {kept} finished cell(s) are kept in {out_dir}; run the same command to resume",
                      highlight=False, markup=False, soft_wrap=True)
            raise typer.Exit(128 + int(signum))



def _grid_cells(cfg, narrow, config: Path) -> list:
    """The cells known before the run, through the filters (the band at every sigma once); none is an error."""
    from rbrepro.sweep.cells import band_cells, cells_on_test, selection_cells

    cells = narrow(selection_cells(cfg)) + narrow(cells_on_test(cfg))
    cells += [c for c in narrow(band_cells(cfg)) if c not in set(cells)]
    if not cells:
        _fail(f"the filters select no cell of {config}")
    return cells

def _check_request(cfg, config: Path, datasets: list[str], memory_limit, reuse_from: list[Path]) -> None:
    """The options that name things the config or the disk must have, checked before any work."""
    unknown = [d for d in datasets if d not in {g.name for g in cfg.datasets}]
    if unknown:
        _fail(f"--dataset {unknown[0]!r} is not in {config}; it has {', '.join(g.name for g in cfg.datasets)}")
    if memory_limit is not None and memory_limit <= 0:
        _fail(f"--memory-limit {memory_limit:g}: expected a positive number of GB")
    for source in reuse_from:
        if not source.is_dir():
            _fail(f"--reuse-from {source}: no such results folder")

def _named(unavailable: dict, datasets: list[str]) -> list[tuple[str, str]]:
    """The unavailable datasets to name: those the --dataset filter kept (all without one)."""
    return sorted((n, why) for n, why in unavailable.items() if not datasets or n in datasets)


def _dry_run(cfg, out_dir: Path, narrow, data_dir, mirror, reuse_stale: bool, reuse_from: list[Path],
             datasets: list[str]) -> None:
    """List the cells and their state (done, todo, failed, skipped, or `reuse`: a --reuse-from folder
    has the same key finished, so the run takes it instead of running it); run nothing."""
    from rbrepro.data.load import NOT_FETCHED
    from rbrepro.sweep.plan import plan_sweep
    from rbrepro.sweep.runner import reused_row

    plan = _guard(lambda: plan_sweep(cfg, out_dir, narrow, data_path=data_dir, mirror=mirror, fetch=False))
    for name, why in _named(plan.unavailable, datasets):
        typer.echo(f"{name}: not available here, no cells: {why}")
    unknown = {n for n, f in plan.fingerprints.items() if f == NOT_FETCHED}
    for name in sorted(unknown):
        typer.echo(f"{name}: not fetched yet (a dry run downloads nothing): its cells are listed as to run; "
                   f"`rbrepro fetch {name}` or the sweep itself fetches it")
    states = plan.states(reuse_stale)
    sources = [p for p in reuse_from if p.resolve() != out_dir.resolve()]
    n_reuse = 0
    for s in states:
        p = s.params
        key, status = ("?" * 16, "todo?") if p.dataset in unknown else (s.key, s.status)
        if status in ("todo", "failed") and sources and reused_row(s.key, sources, cfg) is not None:
            status, n_reuse = "reuse", n_reuse + 1
        typer.echo(f"{key} {status:7s} {p.dataset} {p.method} sigma={p.sigma:g} R={p.R} lam={p.lam:g} "
                   f"seed={p.seed} threads={p.threads}" + (f" variant={p.variant}" if p.solver == "rcd" else "")
                   + (f" [selects sigma on {p.evaluate_on} data]" if p.evaluate_on == "validation" else ""))
    n_done = sum(s.status in ("done", "skipped") for s in states)
    reuse = f", {n_reuse} to take from --reuse-from" if sources else ""
    n_retime = sum(s.status == "retime" for s in states)
    retime = f" ({n_retime} to retime: timed under load)" if n_retime else ""
    typer.echo(f"{len(states)} cells{plan.later}, {n_done} done, {sum(s.status == 'failed' for s in states)} "
               f"failed{reuse}, {len(states) - n_done - n_reuse} to run{retime} -> {out_dir}")


def _report(cfg, counts: dict, out_dir: Path, reuse_from: list[Path], datasets: list[str]) -> None:
    """The sweep's closing lines: datasets that could not be had, then the counts (exit 1 on failures)."""
    aside = f"; {counts['aside']} cell(s) of other configs, data or code kept aside in {out_dir / 'cells'}" \
        if counts["aside"] else ""
    for name, why in _named(counts.get("unavailable", {}), datasets):
        typer.echo(f"{name}: not available here, no cells run: {why}")
    n_reused = counts.get("reused", 0)
    reused = f", {n_reused} taken from --reuse-from" if n_reused or reuse_from else ""
    if counts.get("retimed"):
        reused += f", {counts['retimed']} retimed: timed under load, run again"
    typer.echo(f"{cfg.name}: {counts['done']}/{counts['total']} cells done ({counts['ran']} run now{reused}, "
               f"{counts['total'] - counts['ran'] - n_reused} already done), {counts['failed']} failed, {counts['skipped']} "
               f"skipped by the memory guard -> {out_dir / 'results.csv'}{aside}")
    if counts["failed"]:
        say(_first_failure(out_dir))
        raise typer.Exit(1)


def _first_failure(out_dir: Path) -> str:
    """The first failed cell's cause, for stderr (the rest are in results.csv's error column)."""
    import pandas as pd

    from rbrepro.errors import RbreproError
    from rbrepro.sweep.results_folder import load_results

    try:
        frame, _ = load_results(out_dir)
        failed = frame[frame["status"] == "failed"] if "status" in frame else frame.iloc[:0]
    except (RbreproError, OSError, KeyError, pd.errors.ParserError):
        failed = None
    if failed is None or failed.empty:
        return f"the failed cells' causes are in {out_dir / 'results.csv'} (column error)"
    row = failed.iloc[0]
    cell = " ".join(f"{k}={row[k]}" for k in ("dataset", "method", "sigma", "R", "seed") if k in row)
    return (f"first failed cell ({cell}): {str(row.get('error', ''))[:300]} (every cause: "
            f"{out_dir / 'results.csv'}, column error)")
