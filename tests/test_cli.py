"""Round trips through the real command line (subprocesses), against a loopback HTTP mirror."""

import json
import re

import pandas as pd
import pytest

from rbrepro.sweep.store import sweep_lock
from tests.cli_runner import run_cli

CONFIG = """\
name: rt
figure: fig3
seeds: [0]
datasets:
  ijcnn1:
    sigma: [0.1, 0.5, 2.0]
    R: [16]
"""


def rbrepro(*args, env_extra=None, cwd=None, check=True):
    """The CLI; with `env_extra`, the caller's RBREPRO_MIRROR is dropped unless it is given there."""
    drop = ("RBREPRO_MIRROR",) if env_extra is not None and "RBREPRO_MIRROR" not in env_extra else ()
    return run_cli(*args, env=env_extra, cwd=cwd, check=check, drop=drop)


@pytest.fixture
def env(tmp_path):
    return {"RBREPRO_DATA": str(tmp_path / "data")}


@pytest.mark.slow
def test_fetch_sweep_resume_plot_round_trip(http_mirror, tmp_path, env):
    url, _ = http_mirror
    out = rbrepro("fetch", "ijcnn1", "--mirror", url, "-q", env_extra=env).stdout
    assert "1000 train / 400 test rows" in out
    config = tmp_path / "rt.yaml"
    config.write_text(CONFIG)
    results = tmp_path / "results"
    # a dry run downloads nothing: in a fresh cache the data is not fetched yet, every cell is to run
    fresh = {"RBREPRO_DATA": str(tmp_path / "fresh"), "RBREPRO_MIRROR": url}
    dry = rbrepro("sweep", config, "--out", results, "--dry-run", env_extra=fresh).stdout
    assert "ijcnn1: not fetched yet (a dry run downloads nothing)" in dry and "3 cells, 0 done" in dry
    assert not (tmp_path / "fresh" / "raw").exists()
    # narrowed from the command line: two of the three sigmas
    out = rbrepro("sweep", config, "--out", results, "--sigma", "0.1,2", "-q", env_extra=env).stdout
    assert "2/2 cells done (2 run now" in out
    first = pd.read_csv(results / "results.csv")
    assert len(first) == 2 and set(first["sigma"]) == {0.1, 2.0} and (first["status"] == "ok").all()
    # the full grid resumes: only the missing sigma runs
    out = rbrepro("sweep", config, "--out", results, "-q", env_extra=env).stdout
    assert "3/3 cells done (1 run now, 2 already done)" in out
    # a lost cell file (as after a kill before its write) is redone, nothing duplicated
    cells = sorted((results / "cells").glob("*.json"))
    cells[0].unlink()
    rbrepro("sweep", config, "--out", results, "-q", env_extra=env)
    final = pd.read_csv(results / "results.csv")
    assert len(final) == 3 and final["cell_key"].is_unique
    merged = final.merge(first, on="cell_key", suffixes=("", "_first"))
    assert (merged["test_metric"] == merged["test_metric_first"]).all()  # deterministic under the seed
    assert (merged["D"] == merged["D_first"]).all()
    for column in ("git_commit", "numpy", "numba", "cpu", "scaling", "train_s", "featurize_s", "solve_s"):
        assert column in final
    dry = rbrepro("sweep", config, "--out", results, "--dry-run", env_extra=env).stdout
    assert "3 cells, 3 done, 0 failed, 0 to run" in dry
    # a second folder takes the same cells from the first instead of running them
    out = rbrepro("sweep", config, "--out", tmp_path / "again", "--reuse-from", results, "-q", env_extra=env).stdout
    assert "3/3 cells done (0 run now, 3 taken from --reuse-from, 0 already done)" in out
    again = pd.read_csv(tmp_path / "again" / "results.csv").merge(final, on="cell_key", suffixes=("", "_first"))
    assert len(again) == 3 and (again["test_metric"] == again["test_metric_first"]).all()
    assert (results / "config.resolved.yaml").exists()
    paths = rbrepro("plot", "fig3", results, "--out", tmp_path / "fig" / "fig3").stdout.split()
    assert [p.rsplit(".", 1)[1] for p in paths] == ["png", "pdf"]
    png = tmp_path / "fig" / "fig3.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


@pytest.mark.slow
def test_train_json_prints_exactly_one_result_row(http_mirror, env):
    url, _ = http_mirror
    proc = rbrepro("train", "ijcnn1", "--method", "rb", "--R", "32", "--sigma", "0.5", "--json", "--mirror", url,
                   "--memory-limit", "3", env_extra=env)
    row = json.loads(proc.stdout)  # the whole of stdout is one JSON object
    assert row["memory_limit_bytes"] == 3 * 1024**3 and "memory_limit_gb" not in row  # the limit that applied
    for key in ("test_metric", "train_metric", "metric", "D", "featurize_s", "solve_s", "train_s", "predict_s",
                "kappa", "nnz", "cg_iterations", "git_commit"):
        assert key in row
    # train's default stops on a held-out slice of the training rows, then trains on every row
    assert row["stopping"] == "validation" and 0 < row["n_validation"] < 1000
    assert row["metric"] == "accuracy" and row["R"] == 32 and row["nnz"] == 32 * 1000
    assert row["train_s"] == pytest.approx(row["featurize_s"] + row["solve_s"])
    assert row["test_metric"] > 80  # a ball in 3 of 22 dims: far above the 50-70% of a constant guess


@pytest.mark.slow
def test_featurize_reports_D_nnz_kappa(http_mirror, env):
    url, _ = http_mirror
    out = rbrepro("featurize", "ijcnn1", "--R", "8", "--sigma", "1", "--mirror", url, env_extra=env).stdout
    assert "D=" in out and "nnz=8000" in out and "kappa=" in out


@pytest.mark.slow
def test_errors_are_one_line_with_exit_status_2(tmp_path, env):
    proc = rbrepro("train", "nosuchdata", env_extra=env, check=False)
    assert proc.returncode == 2 and "unknown dataset 'nosuchdata'" in proc.stderr
    assert "Traceback" not in proc.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ndatasets:\n  ijcnn1: {sigma: [1], R: zero}\n")
    proc = rbrepro("sweep", bad, env_extra=env, check=False)
    assert proc.returncode == 2 and f"{bad}:3: datasets.ijcnn1.R[0]" in proc.stderr
    proc = rbrepro("plot", "fig3", tmp_path / "nothing", env_extra=env, check=False)
    assert proc.returncode == 2 and f"{tmp_path / 'nothing'}: no such results folder or CSV" in proc.stderr
    bad.with_name("ok.yaml").write_text("name: x\ndatasets:\n  ijcnn1: {sigma: [1], R: [8]}\n")
    proc = rbrepro("sweep", bad.with_name("ok.yaml"), "--reuse-from", tmp_path / "nowhere", env_extra=env, check=False)
    assert proc.returncode == 2 and f"--reuse-from {tmp_path / 'nowhere'}: no such results folder" in proc.stderr


@pytest.mark.slow
def test_a_second_sweep_on_the_same_folder_refuses(tmp_path, env):
    config = tmp_path / "q.yaml"
    config.write_text("name: q\ndatasets:\n  digits: {sigma: [1], R: [4]}\n")
    with sweep_lock(tmp_path / "res"):
        proc = rbrepro("sweep", config, "--out", tmp_path / "res", "-q", env_extra=env, check=False)
    assert proc.returncode == 2 and "another sweep is running" in proc.stderr
    assert not (tmp_path / "res" / "cells").exists()


def test_help_explains_every_command():
    """Every command's --help names each of its options and says something about each."""
    import typer.main

    from rbrepro.cli import app
    group = typer.main.get_command(app)
    for command in ("fetch", "featurize", "train", "sweep", "plot", "compare"):
        out = rbrepro(command, "--help", env_extra={"COLUMNS": "200"}).stdout
        assert out.startswith("\n Usage: ") or out.startswith("Usage: "), out[:80]
        summary = (group.commands[command].help or "").strip().splitlines()[0]
        assert summary[:40] in " ".join(out.split()), command
        for param in group.commands[command].params:
            for flag in param.opts:
                if flag.startswith("-"):
                    assert flag in out, (command, flag)
            if param.param_type_name == "option":
                assert param.help and len(param.help) > 8, (command, param.opts)


# constant guess: 61%; ridge methods at R = 64 reach > 75%, R = 8 or 20 epochs of L1 RCD > 65%
@pytest.mark.parametrize("method, extra, floor", [
    ("rf", [], 75), ("nystrom", [], 75), ("block", [], 75), ("exact", [], 75),
    ("rb", ["--solver", "direct", "--R", "8"], 65),
    ("rb", ["--solver", "rcd", "--l1", "1e-4", "--threads", "2"], 65),
    ("rf", ["--solver", "rcd", "--l1", "1e-4", "--variant", "sync", "--threads", "2"], 65)])
@pytest.mark.slow
def test_every_method_trains_from_the_cli(http_mirror, env, method, extra, floor):
    url, _ = http_mirror
    args = ["train", "ijcnn1", "--method", method, "--R", "64", "--sigma", "0.5", "--json", "--mirror", url, *extra]
    row = json.loads(rbrepro(*args, env_extra=env).stdout)
    assert row["method"] == method and row["test_metric"] > floor
    expected_solver = {"rf": "direct", "nystrom": "direct", "block": "cholesky", "exact": "cholesky"}.get(method)
    if "--solver" in extra:
        expected_solver = extra[extra.index("--solver") + 1]
    assert row["solver"] == expected_solver
    if row["solver"] == "rcd":
        assert row["rcd_variant"] == extra[extra.index("--variant") + 1] if "--variant" in extra else "async"
        assert row["nnz_w"] > 0 and row["rcd_epochs"] == 20
    assert row["peak_fit_mb"] >= 0 and row["memory_model_entries"] > 0


@pytest.mark.slow
def test_save_model_and_predict(http_mirror, env, tmp_path):
    url, root = http_mirror
    model = tmp_path / "m.npz"
    row = json.loads(rbrepro("train", "ijcnn1", "--R", "32", "--sigma", "0.5", "--json", "--mirror", url,
                             "--save-model", model, env_extra=env).stdout)
    out = tmp_path / "pred.txt"
    summary = json.loads(rbrepro("predict", model, root / "binary" / "ijcnn1.t.bz2", "--out", out, "--json").stdout)
    assert summary["rows"] == 400 and summary["value"] == pytest.approx(row["test_metric"])
    assert len(out.read_text().split()) == 400
    wide = tmp_path / "wide.txt"
    wide.write_text("1 1:0.5 30:1\n")
    proc = rbrepro("predict", model, wide, check=False)
    assert proc.returncode == 2 and "wide.txt:1: a feature index exceeds the dataset's number of features (22)" \
        in proc.stderr
    (tmp_path / "bad.npz").write_bytes(b"not a model")
    proc = rbrepro("predict", tmp_path / "bad.npz", wide, check=False)
    assert proc.returncode == 2 and "not a readable rbrepro model file" in proc.stderr and "bad.npz" in proc.stderr


@pytest.mark.slow
def test_an_exact_kernel_too_big_is_refused_with_one_line(http_mirror, env):
    url, _ = http_mirror
    proc = rbrepro("train", "ijcnn1", "--method", "exact", "--mirror", url, "--memory-limit", "0.001",
                   env_extra=env, check=False)
    assert proc.returncode == 2
    assert re.search(r"the exact kernel on N = 1000 rows needs about [0-9.]+ MB, more than the memory limit of "
                     r"1\.02 MB", proc.stderr)  # never "0.0 GB, more than 0.0 GB"
    assert "Traceback" not in proc.stderr and proc.stderr.strip().splitlines()[-1].startswith("rbrepro: error:")


def test_only_the_users_errors_become_one_line_a_bug_keeps_its_traceback():
    import errno

    from rbrepro.cli.common import _expected_message
    from rbrepro.errors import InvalidParameter, MissingData, RbreproError, UnknownName

    assert _expected_message(InvalidParameter("sigma must be positive")) == "sigma must be positive"
    assert _expected_message(UnknownName("unknown dataset 'x'")) == "unknown dataset 'x'"  # not KeyError's quotes
    assert _expected_message(MissingData("runs/x: no results")) == "runs/x: no results"
    assert issubclass(InvalidParameter, ValueError) and issubclass(MissingData, FileNotFoundError)
    full = OSError(errno.ENOSPC, "No space left on device", "runs/x/results.csv")
    assert _expected_message(full).startswith("runs/x/results.csv: No space left on device")
    for bug in (ValueError("a library bug"), KeyError("k"), ZeroDivisionError(), OSError("no file named")):
        assert _expected_message(bug) is None, bug  # the traceback is shown
    from rbrepro.data.files import ParseError
    from rbrepro.memory import MemoryLimitError
    from rbrepro.yamlconf import ConfigError
    assert all(issubclass(k, RbreproError) for k in (ParseError, MemoryLimitError, ConfigError))


def test_verbose_and_log_file_say_what_was_done(tmp_path):
    """-v shows the work on stderr; --log-file keeps it with timestamps; neither touches stdout."""
    log = tmp_path / "run.log"
    proc = rbrepro("-v", "--log-file", log, "train", "digits", "-R", "16", "--sigma", "0.3", "-q", cwd=tmp_path,
                   env_extra={"RBREPRO_DATA": str(tmp_path / "d")})
    assert "rbrepro: fit rb R=16 sigma=0.3 on digits" in proc.stderr
    assert proc.stdout.startswith("digits: rb R=16") and len(proc.stdout.splitlines()) == 1
    lines = log.read_text().splitlines()
    assert any(" INFO rbrepro.models.cell: fit rb R=16" in line for line in lines)
    assert all(line[:4].isdigit() for line in lines)  # each line starts with its timestamp
    config = tmp_path / "one.yaml"
    config.write_text("name: one\ndatasets:\n  digits: {sigma: [0.3], R: [16]}\n")
    rbrepro("--log-file", tmp_path / "sweep.log", "sweep", config, "--out", tmp_path / "one", "-q", cwd=tmp_path)
    swept = (tmp_path / "sweep.log").read_text()
    assert "rbrepro.sweep.runner: cell" in swept and "rbrepro.models.cell: fit rb R=16" in swept  # from the worker
    quiet = rbrepro("train", "digits", "-R", "16", "--sigma", "0.3", "-q", cwd=tmp_path,
                    env_extra={"RBREPRO_DATA": str(tmp_path / "d")})
    assert quiet.stderr == ""  # silent unless asked
    bad = rbrepro("--log-file", tmp_path / "no" / "such" / "dir.log", "train", "digits", cwd=tmp_path, check=False)
    assert bad.returncode == 2 and "--log-file" in bad.stderr and "Traceback" not in bad.stderr

