"""Faults injected on purpose and bad input, each asserting what survives."""

import errno
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_svmlight_file
from typer.testing import CliRunner

from rbrepro.cli import app
from rbrepro.data import libsvm
from rbrepro.data.files import ParseError
from rbrepro.data.libsvm import parse_libsvm
from rbrepro.data.load import load_dataset, load_parsed
from rbrepro.data.user import _basename, spec_from_path
from rbrepro.sweep import store
from rbrepro.sweep.config import ConfigError, parse_config
from tests.cli_runner import CLI
from tests.conftest import make_binary_problem, write_libsvm, write_manifest
from tests.loopback import Behaviour, serve

PY = CLI  # Popen'd directly where a test kills or times the child


# --- faults ---------------------------------------------------------------------------

@pytest.mark.slow
def test_sigkill_during_fetch_never_leaves_data_that_is_used(tmp_path):
    root = tmp_path / "mirror"
    X, y = make_binary_problem(60000, 22, seed=1)  # a few MB, served slowly
    write_libsvm(root / "binary" / "ijcnn1.tr.bz2", X[:40000], y[:40000], compress=True)
    write_libsvm(root / "binary" / "ijcnn1.val.bz2", X[40000:45000], y[40000:45000], compress=True)
    write_libsvm(root / "binary" / "ijcnn1.t.bz2", X[45000:], y[45000:], compress=True)
    write_manifest(root)
    behaviour = Behaviour()
    behaviour.delay_s = 0.05
    srv, url = serve(root, behaviour)
    env = {**os.environ, "RBREPRO_DATA": str(tmp_path / "data")}
    try:
        proc = subprocess.Popen([*PY, "fetch", "ijcnn1", "--mirror", url, "-q"], env=env, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        part = tmp_path / "data" / "raw" / "binary" / "ijcnn1.tr.bz2.part"
        deadline = time.time() + 60
        while time.time() < deadline and not (part.exists() and part.stat().st_size > 100_000):
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert not (tmp_path / "data" / "raw" / "binary" / "ijcnn1.tr.bz2").exists()  # only the .part
        with pytest.raises(FileNotFoundError):
            load_dataset("ijcnn1", tmp_path / "data", fetch=False)
        behaviour.delay_s = 0.0
        done = subprocess.run([*PY, "fetch", "ijcnn1", "--mirror", url, "-q"], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert any(r.startswith("bytes=") for r in behaviour.ranges_seen)  # resumed, not restarted
        data = load_dataset("ijcnn1", tmp_path / "data", fetch=False)
        assert data.X_train.shape == (40000, 22)
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.mark.slow
def test_sigkill_during_cache_conversion_then_a_valid_cache(tmp_path):
    raw = tmp_path / "raw" / "big.txt"
    X, y = make_binary_problem(400000, 18, seed=2)
    write_libsvm(raw, X, y)
    code = ("import sys; from pathlib import Path; from rbrepro.data.load import load_parsed; "
            f"load_parsed(Path({str(raw)!r}), 18, Path({str(tmp_path / 'cache')!r}))")
    for delay in (0.3, 1.0, 2.0):
        proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
        time.sleep(delay)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        cache = tmp_path / "cache" / "big.txt.npz"
        if cache.exists():  # whatever a kill left behind is either complete and verified, or not used
            assert libsvm.load_cache(cache, load_parsed.__globals__["_source_digest"](raw)) is not None
    parsed = load_parsed(raw, 18, tmp_path / "cache")
    assert parsed.X.shape == (400000, 18)


@pytest.mark.slow
def test_a_write_failure_is_one_line_and_earlier_results_survive(tmp_path, monkeypatch):
    config = tmp_path / "w.yaml"
    config.write_text("name: w\ndatasets:\n  digits: {sigma: [0.1, 0.3, 1, 3], R: [8]}\n")
    out = tmp_path / "res"
    first = CliRunner().invoke(app, ["sweep", str(config), "--out", str(out), "--sigma", "0.1,0.3", "-q"])
    assert first.exit_code == 0, first.output
    before = {p.name: p.read_bytes() for p in (out / "cells").glob("*.json")}
    real = store.write_text_atomic

    def full_disk(path, text):
        if "cells" in str(path):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, text)

    monkeypatch.setattr(store, "write_text_atomic", full_disk)
    result = CliRunner().invoke(app, ["sweep", str(config), "--out", str(out), "-q", "--workers", "1"])
    assert result.exit_code == 2
    message = result.output.strip().splitlines()[-1]
    assert "No space left on device" in message and "cells" in message and "Traceback" not in result.output
    assert {p.name: p.read_bytes() for p in (out / "cells").glob("*.json")} == before
    assert len(pd.read_csv(out / "results.csv")) == 2


@pytest.mark.slow
def test_absurd_grids_are_refused_before_allocating(tmp_path):
    result = CliRunner().invoke(app, ["train", "digits", "--R", "2000000", "--sigma", "1e6"])
    assert result.exit_code == 2 and "rb features of 1437 rows at R = 2000000 needs about" in result.output
    # past the memory guard (a huge limit), the int32 guard on column ids refuses before allocating
    result = CliRunner().invoke(app, ["train", "digits", "--R", "2000000", "--sigma", "1e6", "--memory-limit", "1e6"])
    assert result.exit_code == 2 and "int32 column-id range" in result.output
    result = CliRunner().invoke(app, ["train", "digits", "--method", "rf", "--R", "100000000"])
    assert result.exit_code == 2 and "needs about" in result.output and "GB" in result.output


# --- bad input --------------------------------------------------------------------------

def test_ten_megabyte_lines(tmp_path):
    n = 1_200_000
    good = tmp_path / "wide.txt"
    good.write_text("1 " + " ".join(f"{j}:1" for j in range(1, n + 1)) + "\n-1 1:2\n")
    assert good.stat().st_size > 10_000_000
    parsed = parse_libsvm(good, n)
    assert parsed.X.shape == (2, n)
    assert (parsed.X.nnz if hasattr(parsed.X, "nnz") else np.count_nonzero(parsed.X)) == n + 1
    junk = tmp_path / "junk.txt"
    junk.write_bytes(b"1 " + b"x" * 10_000_000 + b"\n")
    with pytest.raises(ParseError, match=r"junk.txt:1: "):
        parse_libsvm(junk, 5)


def test_names_and_paths_cannot_escape_the_data_and_results_folders(tmp_path, monkeypatch):
    # run from a folder whose ../../x is known not to exist: a checkout at <dir>/x/main has one
    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a" / "b")
    result = CliRunner().invoke(app, ["fetch", "../../x"])
    assert result.exit_code == 2 and "../../x: no such file (and no dataset of that name)" in result.output
    for location in ("/a/b/..", "/a/..", "/a/.", "x/../../..", "../"):
        name = _basename(location)
        assert "/" not in name and name.strip(".") != ""
    with pytest.raises(ConfigError, match="starts with a letter or digit"):
        parse_config("name: ..\ndatasets:\n  digits: {sigma: [1]}\n", "c.yaml")
    (tmp_path / ".hidden.txt").write_text("1 1:1\n-1 1:0\n")
    spec = spec_from_path(str(tmp_path / ".hidden.txt"))
    assert not spec.name.startswith(".") and spec.train.path.startswith(f"user/{spec.name}/")


# --- property-based ---------------------------------------------------------------------

_value = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False, width=32)


@st.composite
def libsvm_rows(draw):
    n_rows = draw(st.integers(1, 20))
    rows = []
    for _ in range(n_rows):
        cols = sorted(draw(st.sets(st.integers(1, 12), max_size=8)))
        label = draw(st.integers(-3, 3))
        sep = draw(st.sampled_from([" ", "\t", "  "]))
        rows.append(f"{label}{sep}" + sep.join(f"{c}:{draw(_value)!r}" for c in cols))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    return eol.join(rows) + draw(st.sampled_from(["", eol]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=libsvm_rows())
def test_property_valid_files_parse_like_scikit_learn(tmp_path, text):
    path = tmp_path / "p.txt"
    path.write_text(text, newline="")
    ours = parse_libsvm(path, 12)
    X_ref, y_ref = load_svmlight_file(str(path), n_features=12, zero_based=False, dtype=np.float64)
    np.testing.assert_array_equal(ours.y, y_ref)
    dense = ours.X.toarray() if hasattr(ours.X, "toarray") else ours.X
    np.testing.assert_allclose(dense, X_ref.toarray().astype(np.float32), rtol=1e-6)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300))
def test_property_any_bytes_parse_or_fail_with_a_located_error(tmp_path, data):
    path = tmp_path / "b.txt"
    path.write_bytes(data)
    try:
        parsed = parse_libsvm(path, 10)
    except ParseError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
    else:
        assert np.isfinite(parsed.y).all() and parsed.X.shape[1] == 10


_yaml_scalar = st.one_of(st.integers(-5, 5), st.floats(allow_nan=True), st.text(max_size=6), st.booleans(),
                         st.none())
_yaml_value = st.recursive(_yaml_scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                                  st.dictionaries(st.text(max_size=6), inner,
                                                                                  max_size=3)), max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(doc=st.dictionaries(st.sampled_from(["name", "methods", "seeds", "threads", "solver", "defaults", "datasets",
                                            "figure", "sigma_selection", "bogus"]), _yaml_value, max_size=6))
def test_property_config_loader_accepts_or_names_the_fault(doc):
    import yaml

    text = yaml.safe_dump(doc)
    try:
        cfg = parse_config(text, "p.yaml")
    except ConfigError as exc:
        assert str(exc).startswith("p.yaml") and "\n" not in str(exc)
    else:
        assert cfg.name and cfg.datasets
