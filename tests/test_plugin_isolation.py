"""An installed plug-in never takes rbrepro down: one that fails to load in any way is one warning naming
its package and entry point while every other command works; what its feature map returns is checked at
the boundary and a violation names the plug-in and the method; a saved model of a method not installed
names the method and the package; a worker process names why a method of the parent's only is missing.
Each plug-in is a real installed distribution (a dist-info folder, as pip leaves it) seen by PYTHONPATH."""

from __future__ import annotations

import pandas as pd
import pytest

from bench.battery_plugins import BROKEN, HOSTILE_MODULE, plugin_dist
from tests.cli_runner import one_line_error, run_cli


def _broken(tmp_path, label):
    dist, entry, source = BROKEN[label]
    module = dist.replace("-", "_")
    root = plugin_dist(tmp_path / dist, dist, {entry: f"{module}:METHOD"}, {module: source} if source else None)
    return {"PYTHONPATH": str(root)}, dist, entry


@pytest.mark.parametrize("label", sorted(BROKEN))
def test_a_plugin_that_fails_to_load_is_one_warning_and_every_command_works(tmp_path, label):
    env, dist, entry = _broken(tmp_path, label)
    version = run_cli("--version", env=env)
    assert version.returncode == 0 and version.stdout.startswith("rbrepro "), version.stderr
    warnings = [line for line in version.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1 and dist in warnings[0] and "Traceback" not in version.stderr, version.stderr
    helped = run_cli("train", "--help", env=env)
    assert helped.returncode == 0 and "--method" in helped.stdout


def test_a_plugin_that_exits_does_not_silence_training(tmp_path):
    env, dist, entry = _broken(tmp_path, "a module that exits")
    proc = run_cli("train", "digits", "--R", 8, env=env)
    assert proc.returncode == 0 and "accuracy" in proc.stdout, proc.stderr
    assert f"{entry!r}" in proc.stderr and dist in proc.stderr and "SystemExit" in proc.stderr


@pytest.fixture
def hostile(tmp_path):
    root = plugin_dist(tmp_path / "hostile", "hostile-features", {"hostile": "hostile_features:METHOD"},
                       {"hostile_features": HOSTILE_MODULE})
    return {"PYTHONPATH": str(root)}


@pytest.mark.parametrize("fault, says", [("a row short", "rows for"), ("nan", "NaN"), ("1-d", "2-D"),
                                         ("strings", "not floats"), ("nan memory", "fit_memory"),
                                         ("zero memory", "fit_memory")])
def test_a_feature_map_breaking_its_contract_is_one_line_naming_plugin_and_method(hostile, fault, says):
    proc = run_cli("train", "digits", "--method", "hostile", "--R", 4, env={**hostile, "HOSTILE_FAULT": fault})
    one_line_error(proc, "'hostile-features'", "'hostile'", says)


def test_a_model_of_a_method_not_installed_names_it_and_its_package(hostile, tmp_path):
    model = tmp_path / "h.npz"
    run_cli("train", "digits", "--method", "hostile", "--R", 4, "--save-model", model, env=hostile, check=True)
    rows = tmp_path / "rows.txt"
    rows.write_text("".join(f"1 1:0.{i} 2:0.5\n" for i in range(1, 5)))
    proc = run_cli("predict", model, rows)
    one_line_error(proc, str(model), "'hostile'", "not installed", "hostile-features")


def test_a_method_registered_in_the_parent_only_says_so_in_a_worker(tmp_path):
    from rbrepro.models.registry import register_method, unregister_method
    from rbrepro.sweep.backends import LocalBackend
    from rbrepro.sweep.config import parse_config
    from rbrepro.sweep.runner import run_sweep
    from tests.test_plugin_method import LINEAR

    register_method(LINEAR)
    try:
        cfg = parse_config("name: lin\nmethods: [linear]\ndatasets:\n  digits: {sigma: [0.3], R: [4]}\n", "lin.yaml")
        counts = run_sweep(cfg, tmp_path / "res", backend=LocalBackend(1))
    finally:
        unregister_method("linear")
    error = pd.read_csv(tmp_path / "res" / "results.csv")["error"].iloc[0]
    assert counts["failed"] == 1
    assert "registered by register_method in the parent process only" in error and "rbrepro.methods" in error
