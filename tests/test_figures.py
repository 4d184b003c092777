"""Figures 3-6 from real (small) sweeps, and the notes they carry for what is missing."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from rbrepro.analysis.chosen import exact_reference
from rbrepro.analysis.speedups import eq29_speedup, speedups
from rbrepro.analysis.targets import ladder
from rbrepro.plots import make_figure
from rbrepro.sweep.backends import LocalBackend
from rbrepro.sweep.config import parse_config
from rbrepro.sweep.results_folder import load_results
from rbrepro.sweep.runner import run_sweep
from tests.conftest import make_binary_problem, write_libsvm


def _png_ok(path):
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 20_000


@pytest.fixture(scope="module")
def binary_sets(tmp_path_factory):
    root = tmp_path_factory.mktemp("own")
    X, y = make_binary_problem(900, 5, seed=11)
    write_libsvm(root / "ball.train", X[:700], y[:700])
    write_libsvm(root / "ball.test", X[700:], y[700:])
    (root / "sets.yaml").write_text("datasets:\n  ball: {train: ball.train, test: ball.test, task: binary}\n")
    return root / "sets.yaml"


def _sweep(tmp_path, text, monkeypatch=None):
    cfg = parse_config(text, str(tmp_path / "cfg.yaml"))
    out = tmp_path / cfg.name
    run_sweep(cfg, out, data_path=tmp_path / "data", backend=LocalBackend(2))
    return out


@pytest.mark.slow
def test_fig3_with_exact_line_refused_exact_note_and_missing_dataset(tmp_path, monkeypatch):
    out = _sweep(tmp_path, "name: f3\nfigure: fig3\nmethods: [rb, exact]\ndatasets:\n"
                           "  digits: {sigma: [0.1, 0.3, 1], R: [32], exact_sigma: [0.3]}\n")
    paths = make_figure("fig3", out, tmp_path / "fig3")
    assert [p.suffix for p in paths] == [".png", ".pdf"] and _png_ok(paths[0])
    frame, _ = load_results(out)
    value, label = exact_reference(frame, "digits")
    assert value > 90 and label == "exact kernel (best test)"
    # the exact kernel refused by the memory guard: recorded as skipped, named on the figure
    monkeypatch.setenv("RBREPRO_MEMORY_LIMIT_GB", "0.001")
    out2 = _sweep(tmp_path, "name: f3b\nfigure: fig3\nmethods: [rb, exact]\ndatasets:\n"
                            "  digits: {sigma: [0.3], R: [8], exact_sigma: [0.3]}\n  ijcnn1: {sigma: [1], R: [8]}\n")
    frame2, config = load_results(out2)
    assert set(frame2[(frame2["method"] == "exact") & (frame2["dataset"] == "digits")]["status"]) == {"skipped"}
    value, label = exact_reference(frame2, "digits")
    assert value is None and re.fullmatch(r"exact kernel: needs [0-9.]+ [GM]B, not run \([0-9,]+ training rows\)", label)
    make_figure("fig3", out2, tmp_path / "fig3b")
    assert "ijcnn1" in config["datasets"]  # no data here: failed cells, named on the figure note


@pytest.mark.slow
def test_fig4_fig5_fig6_from_small_sweeps(tmp_path, binary_sets):
    out4 = _sweep(tmp_path, "name: f4\nfigure: fig4\nseeds: [0, 1]\ndatasets:\n  digits: {sigma: [0.3], R: [4, 16, 64]}\n")
    assert _png_ok(make_figure("fig4", out4, tmp_path / "fig4")[0])
    out5 = _sweep(tmp_path, "name: f5\nfigure: fig5\nmethods: [rb, rf, nystrom, block, exact]\nsigma_selection: validation\n"
                            "datasets:\n  digits: {sigma: [0.1, 0.3, 1], R: [8, 32, 128], select_R: 32,"
                            " targets: [80, 90, 95]}\n")
    frame5, _ = load_results(out5)
    assert set(frame5["method"]) == {"rb", "rf", "nystrom", "block", "exact"}
    assert _png_ok(make_figure("fig5", out5, tmp_path / "fig5")[0])
    out6 = _sweep(tmp_path, f"name: f6\nfigure: fig6\ndataset_files: [{binary_sets}]\nmethods: [rb, rf]\nthreads: [1, 2]\n"
                            "solver: {name: rcd, epochs: 15, variant: [async, sync]}\n"
                            "datasets:\n  ball: {sigma: [1], R: [32], lam: 1.0e-4}\n")
    frame6, _ = load_results(out6)
    assert len(frame6) == 6 and (frame6["status"] == "ok").all()
    table = speedups(frame6[frame6["dataset"] == "ball"])
    assert set(table["variant"]) == {"sequential", "async", "sync"}
    assert (table[table["threads"] == 1]["speedup"] == 1.0).all()
    assert _png_ok(make_figure("fig6", out6, tmp_path / "fig6")[0])

    # the markdown tables behind REPRODUCTION.md quote the same numbers as the CSVs
    from rbrepro.report.tables import tables

    t4 = tables(out4, "fig4")
    at16 = load_results(out4)[0].query("R == 16")["test_metric"]
    row16 = next(line for line in t4.splitlines() if line.startswith("| 16 |"))
    assert f"{at16.median():.4g} [{at16.min():.4g}, {at16.max():.4g}]" in row16  # the median over seeds, its band
    t5 = tables(out5, "fig5")
    header = next(line for line in t5.splitlines() if line.startswith("| R |"))
    assert set(header.strip("| ").split(" | ")) == {"R", "rb", "rf", "nystrom", "block"}
    assert "| 80.0 |" in t5 and "| 95.0 |" in t5
    assert "exact kernel" in t5
    t6 = tables(out6, "fig6")
    assert "| rb | sequential | 1 |" in t6 and "| rf | async | 2 |" in t6


def test_speedup_arithmetic_and_eq29():
    rows = pd.DataFrame([
        {"method": "rb", "threads": 1, "variant": "async", "D": 1000, "R": 10,
         "rcd_trace": json.dumps([[0, 1.0], [1, 0.5], [2, 0.1]])},
        {"method": "rb", "threads": 2, "variant": "async", "D": 1000, "R": 10,
         "rcd_trace": json.dumps([[0, 1.0], [0.5, 0.5], [1.0, 0.1]])},
    ])
    table = speedups(rows).set_index("threads")
    assert table.loc[2, "speedup"] == pytest.approx(2.0)
    tau = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(eq29_speedup(tau, omega=1, D=100), tau)        # separable: linear
    np.testing.assert_allclose(eq29_speedup(tau, omega=100, D=100), [1, 1, 1])  # dense rows: none


def test_speedup_is_the_median_over_seeds_each_against_its_own_draw():
    """Three repeats with speedups 2, 4 and 1.5: the table gives the median 2 and says 3 runs. Seed 1's
    objectives are ten times larger, so one target pooled over the seeds would misjudge them."""
    def cells(seed, scale, t1, t2):
        def trace(t):
            return json.dumps([[0, 1.0 * scale], [t / 2, 0.5 * scale], [t, 0.1 * scale]])
        return [{"method": "rb", "seed": seed, "threads": 1, "variant": "async", "D": 1000, "R": 10, "rcd_trace": trace(t1)},
                {"method": "rb", "seed": seed, "threads": 2, "variant": "async", "D": 1000, "R": 10, "rcd_trace": trace(t2)}]
    rows = pd.DataFrame(cells(0, 1.0, 2.0, 1.0) + cells(1, 10.0, 4.0, 1.0) + cells(2, 1.0, 3.0, 2.0))
    table = speedups(rows).set_index("threads")
    assert table.loc[2, "speedup"] == pytest.approx(2.0)
    assert table.loc[2, "time_to_target"] == pytest.approx(1.0)
    assert table.loc[2, "runs"] == 3 and table.loc[1, "speedup"] == pytest.approx(1.0)
    lone = rows[~((rows["seed"] == 2) & (rows["threads"] == 1))]  # seed 2 lost its 1-thread cell: no speedup
    assert speedups(lone).set_index("threads").loc[2, "runs"] == 2


def test_default_targets_ladder():
    assert ladder(np.array([(90.0, 97.0), (92.0, 96.0)]), True) == pytest.approx([92.0, 94.0, 96.0])
    assert ladder(np.array([(0.3, 0.2), (0.35, 0.22)]), False) == pytest.approx([0.3, 0.26, 0.22])


def test_a_refused_exact_kernel_is_named_by_the_fit_on_every_training_row():
    import re
    from pathlib import Path

    from rbrepro.data.registry import REGISTRY
    from rbrepro.memory import GB
    from rbrepro.models.kernel_ridge import _ExactKernelRidge

    spec = REGISTRY["mnist"]
    full = _ExactKernelRidge.memory_needed(spec.n_train, spec.n_features) / GB
    split = _ExactKernelRidge.memory_needed(int(0.8 * spec.n_train), spec.n_features) / GB
    rows = pd.DataFrame([{"dataset": "mnist", "method": "exact", "status": "skipped", "evaluate_on": on,
                          "error": f"the exact kernel on N = {n} rows needs about {gb:.1f} GB, more than the limit"}
                         for on, n, gb in (("validation", int(0.8 * spec.n_train), split),
                                           ("test", spec.n_train, full))])
    value, label = exact_reference(rows, "mnist")
    assert value is None and label == f"exact kernel: needs {full:.1f} GB, not run ({spec.n_train:,} training rows)"
    # README's sentence gives the same model's numbers
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for name, gb in re.findall(r"(cadata|ijcnn1|mnist) \(([0-9.]+) GB\)", readme):
        s = REGISTRY[name]
        assert float(gb) == round(_ExactKernelRidge.memory_needed(s.n_train, s.n_features) / GB, 1), name
