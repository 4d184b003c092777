"""Run a sweep's cells, resumably: choose sigma where the protocol says, run the cells not yet
done on a backend, and assemble results.csv.

A killed sweep resumes where it stopped (cells whose file exists are skipped, and a cell is
either wholly written or absent), while cells of other configs, other data or older code stay
on disk but out of results.csv (counted as "kept aside"; `reuse_stale` takes cells of older
code or data on purpose). A failed cell is recorded with status "failed" and its error, the
sweep goes on, and the next run retries it; a cell refused by the memory guard is recorded as
"skipped" with the limit it was refused under, and retried once the limit is higher. A cell
whose worker dies is retried once (and the retry reported), then recorded as failed. A cell
of an exclusive config timed under load (`rbrepro.sweep.quiet`) is retimed, up to the config's
`retime` times, and the quietest attempt kept; a resumed sweep retimes such a row while its
retimes last. The folder layout is `rbrepro.sweep.store`'s; the backends are `rbrepro.sweep.backends`.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd
import yaml

from rbrepro.data.atomic import write_text_atomic
from rbrepro.data.registry import REGISTRY, DatasetSpec
from rbrepro.memory import memory_limit_bytes
from rbrepro.metrics import same_sigma
from rbrepro.models.cell import ALGORITHM_VERSION, CellParams
from rbrepro.models.kernel_ridge import ExactKernelRegressor
from rbrepro.models.registry import METHODS
from rbrepro.models.ridge_memory import featurize_memory
from rbrepro.provenance import provenance
from rbrepro.sweep.backends import LocalBackend, default_workers
from rbrepro.sweep.cells import band_cells, cells_on_test, selection_cells
from rbrepro.sweep.config import SweepConfig
from rbrepro.sweep.keys import params_key
from rbrepro.sweep.plan import CellTask, ClusterCellTask, Job, SweepCounts, SweepPlan, plan_sweep
from rbrepro.sweep.quiet import LOAD_FLAG_CORES, quietness
from rbrepro.sweep.selection import best_sigmas
from rbrepro.sweep.store import (
    CSV_NAME,
    UNAVAILABLE_NAME,
    assemble_csv,
    cell_path,
    cell_states,
    claim_folder,
    json_default,
    own_partial_files,
    published_rows,
    read_row,
    retimes_left,
    sweep_lock,
    write_row,
)

log = logging.getLogger(__name__)

#: a running sweep rebuilds results.csv at most this often (and once at its end)
CSV_EVERY_S = 2.0


def select(cells: Iterable[CellParams], datasets=(), sigmas=(), Rs=(), seeds=(), methods=()) -> list[CellParams]:
    """Narrow the grid from the command line (an empty filter keeps everything)."""
    def keep(c: CellParams) -> bool:
        return ((not datasets or c.dataset in datasets)
                and (not sigmas or any(same_sigma(c.sigma, s) for s in sigmas))
                and (not Rs or c.R in Rs or not METHODS[c.method].has_R) and (not seeds or c.seed in seeds)
                and (not methods or c.method in methods))
    return [c for c in cells if keep(c)]

def _chosen_sigma(config: SweepConfig, out: Path, fingerprints: dict, reuse_stale: bool = False) -> dict:
    """(dataset, method, R) -> (sigma, edge), chosen from the finished cells of `out`: the
    validation cells, or the test grid when choosing on test (selection.best_sigmas)."""
    if config.selection is None:
        return {}
    source = selection_cells(config) if config.selection.on == "validation" else cells_on_test(config)
    rows = [s.row for s in cell_states(source, out, fingerprints, reuse_stale) if s.status == "done"]
    return best_sigmas(config, rows)

def annotate(frame: pd.DataFrame, config: SweepConfig, chosen: dict) -> pd.DataFrame:
    """Mark the rows sigma selection chose: `selected` (the chosen sigma of its dataset, method
    and R, on test data), `sigma_edge` (low / high: the choice sits at the grid's edge) and
    `selected_on` (validation / test / "" without selection)."""
    if frame.empty or "dataset" not in frame:
        return frame
    frame = frame.copy()
    frame["selected_on"] = "" if config.selection is None else config.selection.on
    if config.selection is None:
        frame["selected"] = False
        frame["sigma_edge"] = ""
        return frame
    picked = [chosen.get((d, m, int(r))) if e == "test" else None
              for d, m, r, e in zip(frame["dataset"], frame["method"], frame["R"].fillna(0),
                                    frame.get("evaluate_on", pd.Series("test", index=frame.index)).fillna("test"))]
    frame["selected"] = [p is not None and bool(same_sigma(float(s), p[0]))
                         for p, s in zip(picked, frame["sigma"])]
    frame["sigma_edge"] = [p[1] if ok else "" for p, ok in zip(picked, frame["selected"])]
    return frame

def run_sweep(config: SweepConfig, out: Path, cells: list[CellParams] | None = None, data_path=None, mirror=None,
              backend=None, on_progress: Callable[[int, int, int], None] | None = None,
              narrow: Callable[[list[CellParams]], list[CellParams]] | None = None, reuse_stale: bool = False,
              memory_limit_gb: float | None = None, reuse_from: Iterable[Path] = ()) -> dict:
    """Run the cells not yet done; returns counts {total, done, failed, skipped, ran, reused,
    aside, unavailable}.

    With sigma selection on validation data, the selection cells run first and the chosen
    sigma defines the test cells; choosing on test (as-published only), the test grid runs
    and the choice is read from it. Datasets whose files cannot be had here get no cells:
    they are named once, in `unavailable` and in unavailable.json. `narrow` filters every
    phase's cells (command-line filters). results.csv then holds every finished cell of the
    whole config (not only the narrowed ones), with the choice marked (`annotate`), and
    nothing else: cells of other configs, data or code in the folder are counted in `aside`.

    `reuse_from`: other sweeps' folders whose finished cells of the same key (the same
    parameters, data and algorithms, so the same computation) are taken instead of run again
    (`reused_row`); counted in `reused`."""
    limit = memory_limit_bytes(memory_limit_gb)
    with sweep_lock(out):
        claim_folder(out, config.name)
        for stale in own_partial_files(out):
            stale.unlink(missing_ok=True)  # temp files of a killed run: never read, now removed
        write_text_atomic(out / "config.resolved.yaml",
                          yaml.safe_dump({**config.to_dict(), "provenance": provenance()}, sort_keys=False))
        plan = plan_sweep(config, out, narrow, cells, data_path, mirror)
        fingerprints, unavailable = plan.fingerprints, plan.unavailable
        write_text_atomic(out / UNAVAILABLE_NAME, json.dumps(unavailable, indent=1, sort_keys=True) + "\n")
        sources = [Path(p) for p in reuse_from if Path(p).resolve() != Path(out).resolve()]
        counts = SweepCounts(unavailable=unavailable)
        run = functools.partial(_run_phase, plan, data_path=data_path, mirror=mirror, backend=backend,
                                on_progress=on_progress, counts=counts, memory_limit_gb=memory_limit_gb,
                                sources=sources, reuse_stale=reuse_stale, limit=limit)

        run(list(plan.selection))  # choosing on validation data: those cells first, then the chosen sigmas on test
        chosen = _chosen_sigma(config, out, fingerprints, reuse_stale)
        sigma_of = {k: v[0] for k, v in chosen.items()}
        run(list(plan.keep(cells_on_test(config, sigma_of))) if cells is None else list(plan.cells))
        if config.selection is not None and config.selection.on == "test":  # the test grid just ran: its rows choose
            chosen = _chosen_sigma(config, out, fingerprints, reuse_stale)
            sigma_of = {k: v[0] for k, v in chosen.items()}
            if cells is None:  # methods that take another's choice (per: exact) run now
                run(list(plan.keep(cells_on_test(config, sigma_of))))
        band = band_cells(config, sigma_of) if cells is None else []
        if band:  # the extra seeds that make each published point a band
            run(list(plan.keep(band)))
        config_cells = [c for c in (*selection_cells(config), *cells_on_test(config, sigma_of), *band, *(cells or []))
                        if c.dataset not in unavailable]  # cells of a dataset gone since are not results
        states = cell_states(config_cells, out, fingerprints, reuse_stale, limit)
        known = {s.key: s.row for s in states if s.row is not None}  # read once, not again by assemble_csv
        _, counts.aside = assemble_csv(out, [s.key for s in states], lambda frame: annotate(frame, config, chosen),
                                       known=known)
        return counts.as_dict()


def _published(folder: Path) -> dict[str, dict]:
    csv = folder / CSV_NAME
    return _published_at(folder, csv.stat().st_mtime_ns if csv.exists() else 0)


@functools.lru_cache(maxsize=8)
def _published_at(folder: Path, mtime_ns: int) -> dict[str, dict]:
    """published_rows, read once per version of the CSV (a sweep asks for every cell)."""
    return published_rows(folder)


def reused_row(key: str, sources: Iterable[Path], config: SweepConfig) -> dict | None:
    """A finished row of cell `key` from another sweep's folder, relabelled for `config`, or None.

    The key fixes the parameters, the data and the algorithms' version, so the row is the
    result this sweep would compute. Its provenance (git_commit, finished_at, timings) is kept,
    and `reused_from` names the sweep that ran it. An exclusive config (timings on an idle
    machine) takes only rows that were themselves run exclusively, and not a row timed under load
    that it would retime (`retime`): that cell runs here."""
    for source in sources:
        row = read_row(cell_path(Path(source), key))
        if row is None:  # a published folder commits its results.csv only: its rows serve as well
            row = _published(Path(source)).get(key)
        if row is None or row["status"] != "ok" or (config.exclusive and not row.get("exclusive")) \
                or retimes_left(row, config.retime):
            continue
        return {**row, "reused_from": row.get("reused_from") or row.get("sweep", str(source)), "sweep": config.name,
                "figure": config.figure, "protocol": config.protocol}
    return None

def _announce(backend, message: str) -> None:
    """Say it where the user sees it (the backend's event line: the command line prints it), and log it."""
    log.info("%s", message)
    notify = getattr(backend, "on_event", None)
    if notify is not None:
        notify(message)


def _run_phase(plan: SweepPlan, cells: list[CellParams], *, data_path, mirror, backend, on_progress,
               counts: SweepCounts, memory_limit_gb, sources, reuse_stale: bool, limit: float) -> None:
    """Run one phase's cells (selection, test or band) that are not done: take what `sources`
    have, queue the rest as jobs on the backend, and write each row as it comes (`_Rows`). A cell of
    an exclusive config timed under load is queued again (`retime`), in rounds after the others,
    until one attempt is quiet or its retimes are spent (`kept_attempt`)."""
    config = plan.config
    states = cell_states(cells, plan.out, plan.fingerprints, reuse_stale, limit, config.retime)
    todo = _take_reused([s for s in states if s.status in ("todo", "failed", "retime")], sources, plan, counts)
    counts.finished_keys.extend(s.key for s in states if s.status in ("done", "skipped"))
    counts.total += len(states)
    counts.done += sum(s.status == "done" for s in states)
    counts.skipped += sum(s.status == "skipped" for s in states)
    counts.ran += len(todo)
    if states:
        log.info("sweep %s: %d cell(s) in this phase, %d to run, %d already done", config.name, len(states),
                 len(todo), len(states) - len(todo))
    if on_progress:
        on_progress(counts.done + counts.skipped, counts.failed, counts.total)
    if not todo:
        return
    backend = backend or LocalBackend(default_workers([s.params for s in todo], config.exclusive),
                                      memory_budget=memory_limit_bytes(memory_limit_gb), exclusive=config.exclusive)
    rows = _Rows(plan, states, todo, counts, backend, on_progress)

    def task(params):
        args = (params, config.user_datasets.get(params.dataset, params.dataset), data_path, mirror, memory_limit_gb)
        return ClusterCellTask(*args, config.cluster) if config.cluster else CellTask(*args)

    jobs = [Job(s.key, task(s.params)) for s in rows.by_key.values()]
    estimates = {job.key: cell_memory_estimate(job.args.params, job.args.dataset_ref) for job in jobs}
    try:
        while jobs:  # the cells timed under load again, once every other cell has run (the load may pass)
            rows.again.clear()
            backend.run(jobs, rows.on_row, estimates)
            jobs = [Job(key, task(rows.by_key[key].params)) for key in rows.again]
    except BaseException:  # Ctrl-C or a fault: results.csv holds every cell finished so far, not the last rebuild's
        assemble_csv(plan.out, counts.finished_keys, known=rows.known)
        raise


def _take_reused(todo: list, sources, plan: SweepPlan, counts: SweepCounts) -> list:
    """The cells of `todo` that `sources` (--reuse-from folders) do not have finished: those they have
    are written here as done (a retime is never taken from elsewhere)."""
    if not sources:
        return todo
    still = []
    for s in todo:
        row = None if s.status == "retime" else reused_row(s.key, sources, plan.config)
        if row is None:
            still.append(s)
            continue
        write_text_atomic(cell_path(plan.out, s.key), json.dumps(row, default=json_default) + "\n")
        s.status, s.row = "done", row
        counts.reused += 1
    return still


class _Rows:
    """Where a phase's rows arrive (`on_row`, the backend's callback): each row keyed and stamped with
    the sweep's provenance, the attempt kept (`kept_attempt`), written, counted, and the CSV rebuilt
    at most every CSV_EVERY_S; a cell timed under load is announced and queued in `again`."""

    def __init__(self, plan: SweepPlan, states: list, todo: list, counts: SweepCounts, backend, on_progress):
        self.plan, self.counts, self.backend, self.on_progress = plan, counts, backend, on_progress
        self.by_key = {s.key: s for s in todo}
        self.known = {s.key: s.row for s in states if s.row is not None and s.status in ("done", "skipped")}
        self.kept = {s.key: s.row for s in todo if s.status == "retime"}  # the quietest ok attempt so far
        self.again: list[str] = []
        self.last_csv, self.pending = 0.0, len(self.by_key)

    def _stamp(self, key: str, row: dict) -> dict:
        params, config = self.by_key[key].params, self.plan.config
        row.update(cell_key=key, params_key=params_key(params), algorithm_version=ALGORITHM_VERSION,
                   data_fingerprint=self.plan.fingerprints.get(params.dataset, ""), sweep=config.name,
                   figure=config.figure, protocol=config.protocol, exclusive=bool(config.exclusive),
                   finished_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        return row

    def on_row(self, key: str, row: dict) -> None:
        params, config, counts = self.by_key[key].params, self.plan.config, self.counts
        attempt = self._stamp(key, row)
        row = kept_attempt(self.kept.get(key), attempt)
        write_row(self.plan.out, key, row)  # after every attempt: a sweep killed mid-retime resumes with the retimes left
        if retimes_left(row, config.retime):
            self.kept[key] = row
            self.again.append(key)
            _announce(self.backend, f"retiming {params.dataset} {params.method} R={params.R} sigma={params.sigma:g} "
                                    f"seed={params.seed}: timed under load "
                                    f"({float(attempt.get('load_other_cores') or 0):.2f} other cores busy, more than "
                                    f"{LOAD_FLAG_CORES:g}); attempt {row['retimes'] + 1} of {config.retime}")
            return
        counts.retimed += bool(row.get("retimes"))
        self.known[key] = row
        status = row.get("status")
        log.info("cell %s %s: %s %s R=%s sigma=%g seed=%s (%.1f s)%s", key, status, params.dataset, params.method,
                 params.R, params.sigma, params.seed, float(row.get("wall_s") or 0.0),
                 f": {row.get('error')}" if status != "ok" else "")
        if status == "ok":
            counts.done += 1
        elif status == "skipped":
            counts.skipped += 1
        else:
            counts.failed += 1
        counts.finished_keys.append(key)
        self.pending -= 1
        if time.monotonic() - self.last_csv >= CSV_EVERY_S or self.pending == 0:
            assemble_csv(self.plan.out, counts.finished_keys, known=self.known)  # mid-sweep: at most every CSV_EVERY_S
            self.last_csv = time.monotonic()
        if self.on_progress:
            self.on_progress(counts.done + counts.skipped, counts.failed, counts.total)


def kept_attempt(kept: dict | None, attempt: dict) -> dict:
    """The row to keep of a cell after its latest attempt: the first attempt's row; after a retime,
    the quieter of the row kept so far and the new attempt (`sweep.quiet.quietness`; the earlier on a
    tie, and never a retime that did not finish ok), with `retimes`, the attempts beyond the first,
    counted over every sweep that ran the cell. The results are the same given the seed; only the
    timings differ (a retime whose results differ is logged)."""
    if kept is None:
        return {**attempt, "retimes": 0}
    retimes = int(kept.get("retimes") or 0) + 1
    if attempt.get("status") != "ok":
        log.warning("cell %s: a retime did not finish (%s); the row timed before is kept", kept.get("cell_key"),
                    attempt.get("error"))
        return {**kept, "retimes": retimes}
    if not _same(attempt.get("test_metric"), kept.get("test_metric")):
        log.warning("cell %s: a retime gave test_metric %s where the first run gave %s (the same seed should "
                    "give the same results)", kept.get("cell_key"), attempt.get("test_metric"), kept.get("test_metric"))
    quietest = min((kept, attempt), key=quietness)
    return {**quietest, "retimes": retimes}


def cell_memory_estimate(params: CellParams, dataset) -> float:
    """Bytes a cell's big arrays need, from the dataset's published size (0 when unknown):
    the exact kernel's N x N matrix, or the feature matrix of RB, RF and Nystrom."""
    spec = dataset if isinstance(dataset, DatasetSpec) else REGISTRY.get(dataset)
    if spec is None or not spec.n_train or not spec.n_features:
        return 0.0
    n, d = spec.n_train, spec.n_features
    memory = METHODS[params.method].memory
    if memory == "kernel":
        return ExactKernelRegressor.memory_needed(n, d)
    if memory == "features":
        return featurize_memory(params.method, n, d, params.R)
    return 0.0  # blocks: leaf-size blocks, small beside the data


def _same(a, b) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)  # NaN: the same
