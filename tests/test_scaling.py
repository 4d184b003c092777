"""How cost grows (configs/scaling.yaml): the power-law fit, the series it picks, the figure, and a
real sweep over R through the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rbrepro.data.registry import REGISTRY
from rbrepro.plots.scaling import plot_scaling
from rbrepro.sweep.config import load_config
from rbrepro.sweep.growth import exponent_table, exponents, fit_exponent, series
from tests.cli_runner import run_cli


def test_the_fit_recovers_known_exponents_and_its_interval_covers_them():
    rng = np.random.default_rng(0)
    x = np.geomspace(8, 4096, 10)
    for true in (1.0, 3.0):
        y = 2e-3 * x ** true * np.exp(rng.normal(0, 0.05, x.size))
        slope, low, high, intercept = fit_exponent(x, y)
        assert low < true < high and high - low < 0.2 and abs(slope - true) < 0.05
    slope, low, high, _ = fit_exponent(x, 5 * x)  # an exact line: no spread
    assert slope == pytest.approx(1.0) and high - low == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ValueError, match="at least 3 points"):
        fit_exponent([1, 2], [1, 2])


def _frame() -> pd.DataFrame:
    """rb: featurize and solve linear in R and N; nystrom: solve cubic in R; three repeats a point, one
    of them slow (the median ignores it)."""
    rows = []
    for method, solve_power in (("rb", 1.0), ("nystrom", 3.0)):
        for n, Rs in ((100_000, (8, 16, 32, 64, 128)), (10_000, (64,)), (1_000_000, (64,)), (4_000_000, (64,))):
            for R in Rs:
                for seed, slow in ((0, 1.0), (1, 1.0), (2, 7.0)):
                    rows.append({"dataset": f"n{n}", "method": method, "R": R, "n_train": n, "seed": seed,
                                 "status": "ok", "evaluate_on": "test", "metric": "accuracy", "test_metric": 80.0,
                                 "featurize_s": slow * 1e-8 * n * R, "solve_s": slow * 1e-9 * n * R ** solve_power,
                                 "predict_s": 1e-9 * n * R, "peak_fit_mb": 1e-4 * n * R})
    return pd.DataFrame(rows)


def test_exponents_come_from_the_sweep_over_R_at_one_N_and_over_N_at_one_R():
    frame = _frame()
    at, part = series(frame[frame.method == "rb"], "R")
    assert at == 100_000 and sorted(part["R"].unique()) == [8, 16, 32, 64, 128]
    at, part = series(frame[frame.method == "rb"], "N")
    assert at == 64 and sorted(part["n_train"].unique()) == [10_000, 100_000, 1_000_000, 4_000_000]
    found = {(e.method, e.cost, e.against): e for e in exponents(frame)}
    assert found["rb", "featurize_s", "R"].slope == pytest.approx(1.0)
    assert found["rb", "solve_s", "N"].slope == pytest.approx(1.0)
    assert found["nystrom", "solve_s", "R"].slope == pytest.approx(3.0)  # the R x R solve bends
    assert found["nystrom", "featurize_s", "N"].points == 4
    header, rows = exponent_table(list(found.values()))
    assert header[4] == "exponent" and ["rb", "solve (s)", "N", "R = 64", "1.00", "1.00 – 1.00", 4] in rows
    assert series(frame[(frame.method == "rb") & (frame.R <= 16)], "R") is None  # two R: no sweep over R


def test_the_figure_is_drawn_with_its_fits(tmp_path):
    paths = plot_scaling(_frame(), tmp_path / "scaling")
    assert [p.suffix for p in paths] == [".png", ".pdf"] and all(p.stat().st_size > 10_000 for p in paths)


def test_the_scaling_config_sweeps_registered_susy_shaped_sets():
    config = load_config("configs/scaling.yaml")
    assert config.figure == "scaling" and set(config.methods) == {"rb", "rf", "nystrom", "block", "exact"}
    sizes = [REGISTRY[g.name].n_train for g in config.datasets]
    assert sizes == [10_000, 100_000, 1_000_000, 4_000_000]


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_sweep_over_R_through_the_cli_gives_the_figure_and_an_exponent_near_one(tmp_path):
    config = tmp_path / "scaling-mini.yaml"
    # one cell at a time and R over a factor of 64: milliseconds of featurizing measured beside another
    # cell, or over a narrow range, gave slopes of 0.4 on a busy machine
    config.write_text("name: scaling-mini\nfigure: scaling\nmethods: [rb]\nseeds: [0, 1, 2]\nthreads: [1]\n"
                      "exclusive: true\ndefaults: {sigma: [1.0]}\ndatasets:\n  susy_shape_10k: {R: [16, 128, 1024]}\n")
    env = {"RBREPRO_DATA": str(tmp_path / "data")}
    run = run_cli("sweep", config, "--out", tmp_path / "res", "-q", env=env)
    assert run.returncode == 0, run.stderr
    plot = run_cli("plot", "scaling", tmp_path / "res", "--out", tmp_path / "fig", env=env)
    assert plot.returncode == 0, plot.stderr
    assert (tmp_path / "fig.png").exists()
    frame = pd.read_csv(tmp_path / "res" / "results.csv")
    featurize = [e for e in exponents(frame) if e.cost == "featurize_s"][0]
    assert featurize.against == "R" and featurize.points == 3 and 0.5 < featurize.slope < 1.5
