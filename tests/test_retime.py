"""Quiet timings: a cell of an exclusive config timed under load is retimed, not drawn.

The load is never the machine's own: the function worker.py measures the other cores' busy time
with is replaced by a script of loads, so each attempt of a cell sees the load the test names.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from rbrepro.sweep import worker
from rbrepro.sweep.config import ConfigError, parse_config
from rbrepro.sweep.plan import plan_sweep
from rbrepro.sweep.quiet import LOAD_FLAG_CORES, disturbed_timings
from rbrepro.sweep.runner import run_sweep
from tests.cli_runner import run_cli

ONE_CELL = "methods: [rb]\ndatasets:\n  digits: {sigma: [0.3], R: [8]}\n"


class ScriptedLoad:
    """Stands in for worker._busy_cpu_seconds: the cell's k-th attempt finds `loads[k]` other cores
    busy for as long as it runs; when the script is spent, the next cell start is interrupted (a
    sweep killed mid-run)."""

    def __init__(self, loads):
        self.loads = list(loads)
        self.used: list[float] = []
        self.since: float | None = None

    def __call__(self) -> tuple[float, float]:
        now = time.time()
        if self.since is None:  # a cell starts
            if not self.loads:
                raise KeyboardInterrupt("the sweep is killed as the next cell starts")
            self.since = now
            return 0.0, 0.0
        load = self.loads.pop(0)
        self.used.append(load)
        busy, self.since = load * (now - self.since), None
        return busy, 0.0


class InlineBackend:
    """The backends' protocol in this process, one cell at a time (so the scripted load reaches the
    cells, and no worker processes are spawned on a shared machine)."""

    def __init__(self):
        self.ran: list[str] = []

    def run(self, jobs, on_row, estimates=None):
        for key, args in jobs:
            row = worker.run_cell_task(*args)
            row["concurrent_cells"], row["attempts"] = 0, 1
            self.ran.append(key)
            on_row(key, row)


@pytest.fixture
def load(monkeypatch):
    def script(*loads):
        fake = ScriptedLoad(loads)
        monkeypatch.setattr(worker, "_busy_cpu_seconds", fake)
        return fake
    return script


def _rows(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "results.csv")


def test_a_cell_timed_under_load_is_retimed_until_quiet_and_the_quiet_row_kept(tmp_path, load):
    cfg = parse_config(f"name: q\nexclusive: true\n{ONE_CELL}", "q.yaml")
    assert cfg.retime == 3  # the default of an exclusive config
    fake, backend = load(2.0, 0.9, 0.05, 0.0), InlineBackend()
    counts = run_sweep(cfg, tmp_path / "res", backend=backend)
    assert fake.used == [2.0, 0.9, 0.05] and fake.loads == [0.0]  # quiet at the third attempt: no fourth
    assert len(backend.ran) == 3 and len(set(backend.ran)) == 1
    assert counts["ran"] == 1 and counts["done"] == 1 and counts["retimed"] == 1
    row = _rows(tmp_path / "res").iloc[0]
    assert row["retimes"] == 2 and row["load_other_cores"] <= 0.05 and row["status"] == "ok"
    assert not disturbed_timings(_rows(tmp_path / "res")).any()


def test_the_retime_cap_is_honoured_and_the_quietest_of_busy_attempts_kept_flagged(tmp_path, load):
    cfg = parse_config(f"name: q\nexclusive: true\nretime: 2\n{ONE_CELL}", "q.yaml")
    fake = load(2.0, 0.6, 1.5, 0.0)
    counts = run_sweep(cfg, tmp_path / "res", backend=InlineBackend())
    assert fake.used == [2.0, 0.6, 1.5]  # the first run and two retimes, however busy
    assert counts["done"] == 1 and counts["retimed"] == 1
    frame = _rows(tmp_path / "res")
    row = frame.iloc[0]
    assert row["retimes"] == 2 and 0.5 < row["load_other_cores"] <= 0.6  # the second attempt's row
    assert disturbed_timings(frame).all()  # still under load: kept, and flagged
    # its retimes are spent: a rerun into the same folder trusts it
    fake = load(0.0)
    again = run_sweep(cfg, tmp_path / "res", backend=InlineBackend())
    assert again["ran"] == 0 and fake.used == []


def test_a_non_exclusive_config_never_retimes(tmp_path, load):
    cfg = parse_config("name: n\nmethods: [rb]\ndatasets:\n  digits: {sigma: [0.3, 3], R: [8]}\n", "n.yaml")
    assert cfg.retime == 0 and not cfg.exclusive
    fake, backend = load(2.0, 2.0, 0.0, 0.0), InlineBackend()
    counts = run_sweep(cfg, tmp_path / "res", backend=backend)
    assert fake.used == [2.0, 2.0] and len(backend.ran) == 2 and counts["retimed"] == 0
    frame = _rows(tmp_path / "res")
    assert (frame["retimes"] == 0).all() and disturbed_timings(frame).all()
    fake = load(0.0, 0.0)
    assert run_sweep(cfg, tmp_path / "res", backend=InlineBackend())["ran"] == 0 and fake.used == []


def test_a_resumed_sweep_retimes_a_disturbed_row_with_the_retimes_left(tmp_path, load):
    """A sweep killed after a cell's busy first attempt (as a publish can be) left its row on disk;
    the resumed sweep retimes it rather than trust it, and counts the retimes spent before."""
    cfg = parse_config(f"name: q\nexclusive: true\nretime: 2\n{ONE_CELL}", "q.yaml")
    out = tmp_path / "res"
    load(2.0)  # the first attempt is busy; the sweep is killed as the retime starts
    with pytest.raises(KeyboardInterrupt):
        run_sweep(cfg, out, backend=InlineBackend())
    (cell,) = (out / "cells").glob("*.json")
    first = json.loads(cell.read_text())
    assert first["status"] == "ok" and first["retimes"] == 0 and first["load_other_cores"] > LOAD_FLAG_CORES
    assert [s.status for s in plan_sweep(cfg, out).states()] == ["retime"]
    (tmp_path / "q.yaml").write_text(f"name: q\nexclusive: true\nretime: 2\n{ONE_CELL}")
    dry = run_cli("sweep", tmp_path / "q.yaml", "--out", out, "--dry-run").stdout
    assert "1 cells, 0 done, 0 failed, 1 to run (1 to retime: timed under load)" in dry
    fake = load(1.5)  # resumed: the first retime is busy too, and the sweep is killed again
    with pytest.raises(KeyboardInterrupt):
        run_sweep(cfg, out, backend=InlineBackend())
    row = json.loads(cell.read_text())
    assert fake.used == [1.5] and row["retimes"] == 1 and 1.4 < row["load_other_cores"] <= 1.5

    fake, backend = load(1.0, 0.0), InlineBackend()
    counts = run_sweep(cfg, out, backend=backend)
    assert fake.used == [1.0]  # one retime left: taken, busy, and the cap reached
    assert counts["ran"] == 1 and counts["done"] == 1 and len(backend.ran) == 1
    row = json.loads(cell.read_text())
    assert row["retimes"] == 2 and 0.9 < row["load_other_cores"] <= 1.0  # quieter than the first attempt's
    assert [s.status for s in plan_sweep(cfg, out).states()] == ["done"]

    # and a resumed row whose retime is quiet ends there
    quiet = parse_config(f"name: q\nexclusive: true\nretime: 5\n{ONE_CELL}", "q.yaml")
    fake = load(0.0, 0.0)
    counts = run_sweep(quiet, out, backend=InlineBackend())
    assert fake.used == [0.0] and counts["ran"] == 1
    row = json.loads(cell.read_text())
    assert row["retimes"] == 3 and row["load_other_cores"] == 0.0
    assert not disturbed_timings(_rows(out)).any()


def test_an_exclusive_sweep_does_not_reuse_a_row_it_would_retime(tmp_path, load):
    busy = parse_config(f"name: a\nexclusive: true\nretime: 0\n{ONE_CELL}", "a.yaml")
    load(2.0)
    run_sweep(busy, tmp_path / "a", backend=InlineBackend())
    strict = parse_config(f"name: b\nexclusive: true\nretime: 1\n{ONE_CELL}", "b.yaml")
    fake = load(0.0)
    counts = run_sweep(strict, tmp_path / "b", backend=InlineBackend(), reuse_from=[tmp_path / "a"])
    assert counts["reused"] == 0 and counts["ran"] == 1 and fake.used == [0.0]
    lax = parse_config(f"name: c\nexclusive: true\nretime: 0\n{ONE_CELL}", "c.yaml")
    assert run_sweep(lax, tmp_path / "c", backend=InlineBackend(), reuse_from=[tmp_path / "a"])["reused"] == 1


@pytest.mark.parametrize("value, expected", [
    ("-1", r"q.yaml:3: retime: expected a non-negative integer, got -1"),
    ('"x"', r"q.yaml:3: retime: expected a non-negative integer, got 'x'"),
    ("true", r"q.yaml:3: retime: expected a non-negative integer, got True"),
    ("1.5", r"q.yaml:3: retime: expected a non-negative integer, got 1.5"),
])
def test_config_validation_refuses_a_bad_retime_naming_the_key(value, expected):
    with pytest.raises(ConfigError, match=expected.replace(".", r"\.")):
        parse_config(f"name: q\nexclusive: true\nretime: {value}\n{ONE_CELL}", "q.yaml")


def test_retime_needs_an_exclusive_config_and_resolves_into_the_typed_config():
    with pytest.raises(ConfigError, match=r"q.yaml:2: retime: got 2 without `exclusive: true`"):
        parse_config(f"name: q\nretime: 2\n{ONE_CELL}", "q.yaml")
    assert parse_config(f"name: q\nretime: 0\n{ONE_CELL}", "q.yaml").retime == 0
    cfg = parse_config(f"name: q\nexclusive: true\nretime: 5\n{ONE_CELL}", "q.yaml")
    assert cfg.retime == 5 and cfg.to_dict()["retime"] == 5
    import yaml

    resolved = {k: v for k, v in cfg.to_dict().items() if not (k == "center" and v is None)}  # as config_drift
    assert parse_config(yaml.safe_dump(resolved), "resolved.yaml").retime == 5  # the resolved config reads back


def test_the_provenance_table_counts_retimed_rows_and_older_csvs_keep_their_table():
    from rbrepro.report.sections.provenance import provenance_section

    def run(retimes: list[int] | None) -> tuple[pd.DataFrame, dict]:
        rows = [{"dataset": "d", "method": "rb", "R": 8, "sigma": 1.0, "seed": s, "status": "ok",
                 "evaluate_on": "test", "git_commit": "a" * 40, "git_dirty": False,
                 "finished_at": "2026-11-23T10:00:00+0000", "load_other_cores": 0.0, "concurrent_cells": 0,
                 **({"retimes": r} if retimes is not None else {})} for s, r in enumerate(retimes or [0, 0])]
        return pd.DataFrame(rows), {"protocol": "fair"}

    old = provenance_section({"fig3": run(None)}, {"fig3": []})
    assert "retimed" not in old and "| results/fig3 | 2 | aaaaaaa | 2026-11-23 | 0 | 100 % | fair;" in old
    new = provenance_section({"fig3": run(None), "fig5": run([0, 2, 1])}, {"fig3": [], "fig5": []})
    assert "| quiet timings | retimed rows | protocol |" in new
    assert "| results/fig5 | 3 | aaaaaaa | 2026-11-23 | 0 | 100 % | 2 | fair;" in new
    assert "| results/fig3 | 2 | aaaaaaa | 2026-11-23 | 0 | 100 % | – | fair;" in new


@pytest.mark.slow
def test_a_local_pool_retimes_a_cell_timed_under_load(tmp_path):
    """The same through spawned worker processes: each attempt takes its load from a script on disk."""
    sys.path.insert(0, str(Path(__file__).parent.parent))
    from rbrepro.sweep.backends import LocalBackend
    from tests import worker_tasks

    script = tmp_path / "loads"
    script.mkdir()
    (script / "loads.json").write_text(json.dumps([2.0, 0.0, 0.0]))
    cfg = parse_config(f"name: q\nexclusive: true\n{ONE_CELL}", "q.yaml")
    counts = run_sweep(cfg, tmp_path / "res", data_path=script,
                       backend=LocalBackend(1, exclusive=True, task=worker_tasks.under_scripted_load))
    assert counts["done"] == 1 and counts["retimed"] == 1
    assert json.loads((script / "loads.json").read_text()) == [0.0]
    row = _rows(tmp_path / "res").iloc[0]
    assert row["retimes"] == 1 and row["load_other_cores"] == 0.0 and row["concurrent_cells"] == 0
