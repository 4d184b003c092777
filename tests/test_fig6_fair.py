"""Fig. 6 on the fair protocol: sigma chosen on validation with the L1 RCD model, the chosen sigma
run at every thread count and variant; the speedups and claim 7 read the chosen test rows alone."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.cli_runner import run_cli
from tests.conftest import write_libsvm

ROOT = Path(__file__).resolve().parents[1]


def _libsvm(path: Path, rng, n: int) -> None:
    X = rng.random((n, 4))
    write_libsvm(path, X, np.where(X[:, 0] + 0.3 * X[:, 1] > 0.65, 1, -1))


@pytest.mark.slow
def test_a_fig6_like_fair_sweep_chooses_sigma_on_validation_and_runs_it_at_every_thread_count(tmp_path):
    rng = np.random.default_rng(0)
    _libsvm(tmp_path / "tr", rng, 300)
    _libsvm(tmp_path / "te", rng, 100)
    (tmp_path / "sets.yaml").write_text("datasets:\n  tiny:\n    train: tr\n    test: te\n    task: binary\n"
                                        "    n_features: 4\n")
    (tmp_path / "f6.yaml").write_text(
        "name: f6\nfigure: fig6\nprotocol: fair\nmethods: [rb, rf]\nseeds: [0, 1]\nthreads: [1, 2]\n"
        "solver: {name: rcd, loss: squared_hinge, epochs: 3, variant: [async, sync], stopping: residual}\n"
        "sigma_selection: {on: validation, per: R, run: chosen}\n"
        f"dataset_files: [{tmp_path / 'sets.yaml'}]\n"
        "defaults: {R: [16], lam: 1.0e-5, sigma: [0.1, 1, 10]}\ndatasets:\n  tiny: {}\n")
    run_cli("sweep", tmp_path / "f6.yaml", "--out", tmp_path / "res", "--data-dir", tmp_path / "data", check=True,
            timeout=600)
    rows = pd.read_csv(tmp_path / "res" / "results.csv")
    assert (rows["status"] == "ok").all() and set(rows["protocol"]) == {"fair"}
    validation = rows[rows["evaluate_on"] == "validation"]
    test = rows[rows["evaluate_on"] == "test"]
    for method in ("rb", "rf"):
        chose = validation[validation["method"] == method]
        assert sorted(chose["sigma"]) == [0.1, 1.0, 10.0] and set(chose["threads"]) == {1}
        best = chose.sort_values(["test_metric", "sigma"], ascending=[False, True])["sigma"].iloc[0]
        ran = test[test["method"] == method]
        assert set(ran["sigma"]) == {best} and ran["selected"].all()
        # every seed at one thread (sequential) and at two threads in both variants
        assert sorted(zip(ran["seed"], ran["threads"], ran["variant"])) == sorted(
            (s, t, v) for s in (0, 1) for t, v in ((1, "async"), (2, "async"), (2, "sync")))


def _trace(seconds_per_epoch: float, floor: float = 0.0) -> str:
    return json.dumps([[i * seconds_per_epoch, f] for i, f in enumerate([1.0, 0.5, 0.2, floor])])


def _rcd_rows() -> pd.DataFrame:
    """Test rows at the chosen sigma (RB twice as fast on two threads, RF not at all), then
    validation rows at other sigmas whose traces would move the target and the one-thread time."""
    base = {"status": "ok", "dataset": "d", "R": 16, "D": 400.0, "metric": "accuracy", "test_metric": 90.0}
    rows = []
    for seed in range(3):
        for method in ("rb", "rf"):
            for threads, variant in ((1, "async"), (2, "async"), (2, "sync")):
                step = 1.0 / threads if method == "rb" else 1.0
                rows.append({**base, "method": method, "sigma": 1.0, "seed": seed, "threads": threads,
                             "variant": variant, "evaluate_on": "test", "selected": True, "rcd_trace": _trace(step)})
    for method in ("rb", "rf"):
        for sigma in (0.1, 10.0):
            rows.append({**base, "method": method, "sigma": sigma, "seed": 0, "threads": 1, "variant": "async",
                         "evaluate_on": "validation", "selected": False, "D": 5.0e4,
                         "rcd_trace": _trace(9.0, floor=-3.0)})
    return pd.DataFrame(rows)


def test_claim7_and_fig6_tables_read_only_the_chosen_test_rows():
    from rbrepro.report.claims_theory import claim7_parallel_rcd
    from rbrepro.report.tables import fig6_tables

    rows = _rcd_rows()
    chosen = rows[rows["evaluate_on"] == "test"]
    with_selection, alone = claim7_parallel_rcd(rows), claim7_parallel_rcd(chosen)
    assert with_selection.rows == alone.rows and with_selection.verdict == alone.verdict
    assert with_selection.rows[0][2].startswith("2")          # RB's speedup at two threads: 2
    assert fig6_tables(rows) == fig6_tables(chosen)


def test_fig6_configs_choose_sigma_on_validation_with_the_same_selection_cells():
    from rbrepro.sweep.cells import selection_cells
    from rbrepro.sweep.config import load_config
    from rbrepro.sweep.keys import params_key

    fig6, threads = (load_config(ROOT / "configs" / f"{n}.yaml") for n in ("fig6", "fig6-threads"))
    for cfg in (fig6, threads):
        assert cfg.protocol == "fair" and cfg.selection.on == "validation"
        assert {g.R for g in cfg.datasets} == {(256,)}
    # the same choice at every thread count: both sweeps' selection cells are the same cells
    assert {params_key(c) for c in selection_cells(fig6)} == {params_key(c) for c in selection_cells(threads)}
