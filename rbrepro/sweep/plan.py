"""A sweep's plan: the cells known before anything runs, the data they train on, and what only the
run can add (benchopt's plan). `rbrepro sweep --dry-run` prints it; `run_sweep` runs from it.

The typed pieces a sweep passes around live here too: `CellTask` (what a worker needs to run one
cell), `Job` (a task under its cell key, what a backend queues) and `SweepCounts`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, NamedTuple

from rbrepro.models.cell import CellParams
from rbrepro.sweep.cells import band_cells, cells_on_test, selection_cells
from rbrepro.sweep.config import SweepConfig
from rbrepro.sweep.store import CellState, cell_states


class CellTask(NamedTuple):
    """The arguments of `worker.run_cell_task`: one cell, the dataset it names (a registry name or a
    user's spec), where data is cached and fetched from, and the run's memory limit."""

    params: CellParams
    dataset_ref: object
    data_path: object = None
    mirror: object = None
    memory_limit_gb: float | None = None


class ClusterCellTask(NamedTuple):
    """A CellTask whose fit runs on a dask cluster (the config's `cluster`), passed as the task's last
    argument (so tasks of sweeps without a cluster keep their five)."""

    params: CellParams
    dataset_ref: object
    data_path: object
    mirror: object
    memory_limit_gb: float | None
    cluster: str


class Job(NamedTuple):
    """A task queued on a backend under its cell key."""

    key: str
    args: tuple


@dataclass
class SweepCounts:
    """What a sweep did, over all its phases (selection, test cells, band)."""

    total: int = 0
    done: int = 0
    failed: int = 0
    skipped: int = 0
    ran: int = 0
    reused: int = 0
    aside: int = 0
    retimed: int = 0  # cells of an exclusive config run again in this sweep because they were timed under load
    unavailable: dict = field(default_factory=dict)
    #: every phase's finished cells, in order (the CSV is rebuilt from them mid-sweep)
    finished_keys: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"total": self.total, "done": self.done, "failed": self.failed, "skipped": self.skipped,
                "ran": self.ran, "reused": self.reused, "aside": self.aside, "retimed": self.retimed, "unavailable": self.unavailable}


def fingerprints_for(config: SweepConfig, cells, data_path=None, mirror=None, unavailable: dict | None = None,
                     fetch: bool = True) -> dict:
    """dataset -> fingerprint of the data its cells would train on, fetching missing files first
    (the fingerprint hashes them); with fetch=False (a dry run) nothing is downloaded, and a
    dataset not fetched yet gets data.load.NOT_FETCHED. Datasets whose files cannot be had are put
    in `unavailable` (name -> why)."""
    from rbrepro.data.load import dataset_availability

    found = {}
    for name in sorted({c.dataset for c in cells}):
        found[name], why = dataset_availability(config.user_datasets.get(name, name), data_path, mirror, fetch=fetch)
        if why and unavailable is not None:
            unavailable[name] = why
    return found


@dataclass(frozen=True)
class SweepPlan:
    """The cells of a sweep known before it runs, in run order, narrowed by the command line's
    filters and without the datasets that cannot be had here.

    `selection`: the cells that choose sigma on validation data (run first); `cells`: the test cells
    known now (all of them, unless some wait for a choice); `band`: the band cells known now (a band
    at every grid sigma). `later` says which cells only the run can add, once sigma is chosen."""

    config: SweepConfig
    out: Path
    fingerprints: dict
    unavailable: dict
    selection: tuple
    cells: tuple
    band: tuple
    later: str
    narrow: Callable = field(default=lambda cs: cs, compare=False, repr=False)

    def keep(self, cells) -> tuple:
        """`cells` through the command line's filters, without the datasets that cannot be had here:
        every phase's cells, the ones known now and the ones the run adds, pass through it."""
        return tuple(c for c in self.narrow(cells) if c.dataset not in self.unavailable)

    @property
    def known(self) -> list[CellParams]:
        """Every cell known now, in run order, each once."""
        return list(dict.fromkeys((*self.selection, *self.cells, *self.band)))

    def states(self, reuse_stale: bool = False, memory_limit: float | None = None) -> list[CellState]:
        """Each known cell's state in the results folder (done, todo, failed, skipped, retime)."""
        return cell_states(self.known, self.out, self.fingerprints, reuse_stale, memory_limit, self.config.retime)


def plan_sweep(config: SweepConfig, out: Path, narrow: Callable | None = None, cells: list | None = None,
               data_path=None, mirror=None, fetch: bool = True) -> SweepPlan:
    """The plan of `config` into `out`. `cells` replaces the config's test cells (a caller's own
    list); `narrow` filters every list (command-line filters). The data fingerprints cover the
    whole config, narrowed or not, so a narrowed run keys its cells as the full run does.
    fetch=False (a dry run) downloads nothing: a dataset not fetched yet gets the fingerprint
    data.load.NOT_FETCHED, so its cells are listed as to run."""
    narrow = narrow or (lambda cs: cs)
    unavailable: dict = {}
    selection = selection_cells(config)
    config_cells = cells_on_test(config)
    on_test = config_cells if cells is None else list(cells)
    band = band_cells(config) if cells is None else []
    fingerprints = fingerprints_for(config, [*selection, *config_cells, *(cells or [])], data_path, mirror,
                                    unavailable, fetch=fetch)

    later = []
    if cells is None and selection:
        later.append("the chosen-sigma cells once selection is done")
    if cells is None and config.band_seeds and config.band_at == "chosen":
        later.append(f"{len(config.band_seeds)} band seed(s) at each chosen sigma")
    plan = SweepPlan(config, Path(out), fingerprints, unavailable, (), (), (),
                     "".join(f" (plus {what})" for what in later), narrow)
    return replace(plan, selection=plan.keep(selection), cells=plan.keep(on_test), band=plan.keep(band))
