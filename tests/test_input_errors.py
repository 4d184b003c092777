"""Hostile and damaged input: one clear line naming the file, line or variable at
fault, and damaged data or model files are never used."""

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rbrepro.data.atomic import atomic_path
from rbrepro.data.files import ParseError
from rbrepro.data.libsvm import parse_libsvm
from rbrepro.models.persist import ModelFileError, load_model
from rbrepro.sweep.cells import cells_on_test
from tests.cli_runner import one_line_error, run_cli

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "libsvm"
needs_mirror = pytest.mark.skipif(not (SHARED / "MANIFEST.tsv").exists(), reason="needs the mirror in ../shared/data/libsvm")


def rbrepro(*args, env=None, cwd=None):
    return run_cli(*args, env=env, cwd=cwd)


# --- LIBSVM input with the width inferred -------------------------------------------------------------

@pytest.mark.parametrize("text, match", [
    *((f"1 1:0.5\n-1 1:0.2 2:0.3\n1 1:0.5 {index}:0.5\n", r"s\.txt:3: a feature index above 2147483647")
      for index in ("4000000000", "4294967297", "99999999999999999999")),  # indices beyond int32
    *((f"1 1:0.5\n-1 1:{value}\n", r"s\.txt:2: a feature value (overflows float32|is not a finite number)")
      for value in ("1e39", "-3.5e38", "1e400")),  # values that overflow float32
])
def test_indices_and_values_out_of_range_are_refused_with_the_line(tmp_path, text, match):
    path = tmp_path / "s.txt"
    path.write_text(text)
    with pytest.raises(ParseError, match=match):
        parse_libsvm(path, 0)


@pytest.mark.slow
def test_a_feature_index_past_int32_is_one_line_from_the_cli(tmp_path):
    path = tmp_path / "s.txt"
    path.write_text("1 1:0.5 4000000000:0.5\n-1 1:0.2 2:0.3\n1 2:0.9\n-1 1:0.1\n1 1:0.7 2:0.1\n")
    one_line_error(rbrepro("train", path, "--R", "8", env={"RBREPRO_DATA": str(tmp_path / "d")}),
                   "s.txt:1:", "above 2147483647")


@pytest.mark.slow
def test_a_huge_inferred_width_is_refused_by_the_memory_guard(tmp_path):
    lines = ["1 1:0.5 200000000:0.5"] + [f"{(-1) ** i} 1:-0.{i} 2:0.3" for i in range(1, 300)]
    path = tmp_path / "wide.txt"
    path.write_text("\n".join(lines) + "\n")
    one_line_error(rbrepro("train", path, "--R", "8", env={"RBREPRO_DATA": str(tmp_path / "d")}),
                   "feature index 200000000", "features wide")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.tuples(st.integers(1, 2**40), st.floats(-1e6, 1e6, allow_nan=False)), max_size=5),
                min_size=1, max_size=8))
def test_property_inferred_width_parses_or_names_the_line(tmp_path, rows):
    """Random files with the width inferred: parsed exactly (width = largest index) or refused with a
    file:line error; never a crash, a wrap-around or a silent change."""
    lines = []
    for i, pairs in enumerate(rows):
        pairs = sorted(dict(pairs).items())
        lines.append(f"{(-1) ** i} " + " ".join(f"{j}:{v:.6g}" for j, v in pairs))
    path = tmp_path / "p.txt"
    path.write_text("\n".join(lines) + "\n")
    biggest = max((j for pairs in rows for j, _ in pairs), default=0)
    try:
        parsed = parse_libsvm(path, 0)
    except ParseError as exc:
        assert biggest > 2**31 - 1 and "p.txt:" in str(exc)
        return
    assert biggest <= 2**31 - 1 and parsed.X.shape[1] == biggest
    for i, pairs in enumerate(rows):
        for j, v in sorted(dict(pairs).items()):
            assert parsed.X[i, j - 1] == np.float32(float(f"{v:.6g}"))


# --- raw files damaged after a verified fetch ---------------------------------------------------------

@pytest.mark.slow
@pytest.mark.skipif(not (SHARED / "MANIFEST.tsv").exists(), reason="needs the mirror in ../shared/data/libsvm")
def test_a_raw_file_damaged_after_its_verified_fetch_is_never_parsed(tmp_path):
    env = {"RBREPRO_DATA": str(tmp_path / "d")}
    assert rbrepro("fetch", "cadata", "--mirror", SHARED, "-q", env=env).returncode == 0
    raw = tmp_path / "d" / "raw" / "regression" / "cadata"
    os.truncate(raw, 700_000)
    for args in (("train", "cadata", "--mirror", SHARED, "--R", "16"), ("fetch", "cadata", "--mirror", SHARED)):
        one_line_error(rbrepro(*args, env=env), str(raw), "changed after it was fetched and verified", "delete it")
    record = json.loads(raw.with_name("cadata.meta.json").read_text())
    assert record["origin"].startswith("mirror") and record["expected_rows"] == 20640  # not rewritten as local


# --- model files --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    root = tmp_path_factory.mktemp("model")
    X = np.random.default_rng(0).random((300, 4))
    y = np.where(X[:, 0] + X[:, 1] > 1, 1, -1)
    lines = [f"{label} " + " ".join(f"{j + 1}:{v:.5f}" for j, v in enumerate(row)) for row, label in zip(X, y)]
    (root / "train.txt").write_text("\n".join(lines[:200]) + "\n")
    (root / "test.txt").write_text("\n".join(lines[200:]) + "\n")
    (root / "sets.yaml").write_text("datasets:\n  toy: {train: train.txt, test: test.txt, task: binary}\n")
    proc = rbrepro("train", "toy", "--datasets", root / "sets.yaml", "--R", "16", "--sigma", "2", "--save-model",
                   root / "m.npz", env={"RBREPRO_DATA": str(root / "d")})
    assert proc.returncode == 0, proc.stderr
    return root


def _damaged(root: Path, name: str, data: bytes) -> Path:
    path = root / name
    path.write_bytes(data)
    return path


@pytest.mark.slow
def test_truncated_empty_and_bit_flipped_model_files_are_one_line(model_file):
    good = (model_file / "m.npz").read_bytes()
    flipped = bytearray(good)
    flipped[len(flipped) // 2] ^= 0x04
    for name, data in (("trunc.npz", good[: len(good) // 2]), ("empty.npz", b""), ("flip.npz", bytes(flipped))):
        path = _damaged(model_file, name, data)
        one_line_error(rbrepro("predict", path, model_file / "test.txt"), str(path))
        with pytest.raises(ModelFileError, match=str(path)):
            load_model(path)


def _rewrite(src: Path, dest: Path, edit) -> Path:
    """Copy a model file, letting `edit(arrays, header)` change arrays or the header (checksums kept
    as they were, as a careless or hostile editor would)."""
    with np.load(src, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    header = json.loads(str(arrays.pop("__header__")))
    edit(arrays, header)
    arrays["__header__"] = np.array(json.dumps(header))
    with open(dest, "wb") as fh:
        np.savez(fh, **arrays)
    return dest


@pytest.mark.parametrize("what, edit", [
    ("extra parameter", lambda a, h: h["params"].update(bogus=1)),
    ("wrong parameter type", lambda a, h: h["params"].update(n_grids="many")),
    ("short coef_", lambda a, h: a.update({"model.coef_": a["model.coef_"][:3]})),
    ("short scaler.lo", lambda a, h: a.update({"scaler.lo": a["scaler.lo"][:1]})),
    ("wrong n_features", lambda a, h: h.update(n_features=9)),
    ("hash table without an empty slot", lambda a, h: a.update({"features._table_ids":
                                                                 np.zeros_like(a["features._table_ids"])})),
])
@pytest.mark.slow
def test_edited_model_files_are_refused_not_used(model_file, what, edit):
    path = _rewrite(model_file / "m.npz", model_file / "edited.npz", edit)
    with pytest.raises(ModelFileError, match="damaged model|checksum"):
        load_model(path)
    one_line_error(rbrepro("predict", path, model_file / "test.txt"), str(path))


@pytest.mark.slow
def test_foreign_labels_are_predicted_but_not_scored_and_unlabelled_rows_are_predicted(model_file, tmp_path):
    other = tmp_path / "reg.txt"
    other.write_text("".join(f"{3.5 + i} 1:0.{i} 2:0.5\n" for i in range(1, 9)))
    proc = rbrepro("predict", model_file / "m.npz", other, "--json", "--pad")  # 2 of the model's 4 features
    summary = json.loads(proc.stdout)
    assert proc.returncode == 0 and summary["rows"] == 8 and summary["value"] is None
    assert "not classes of the model" in summary["why_no_metric"]
    bare = tmp_path / "bare.txt"
    bare.write_text("".join(f"1:0.{i} 2:0.5\n" for i in range(1, 9)))
    labelled = tmp_path / "labelled.txt"
    labelled.write_text("".join(f"1 1:0.{i} 2:0.5\n" for i in range(1, 9)))
    a, b = (rbrepro("predict", model_file / "m.npz", f, "--pad") for f in (bare, labelled))
    assert a.returncode == 0 and a.stdout == b.stdout and len(a.stdout.split()) == 8
    assert "no accuracy: the file has no labels" in a.stderr


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(0, 10**9), min_size=1, max_size=4))
def test_property_random_corruption_of_a_model_file_never_passes(model_file, positions):
    good = bytearray((model_file / "m.npz").read_bytes())
    for p in positions:
        good[p % len(good)] ^= 0xFF
    path = model_file / "random.npz"
    path.write_bytes(bytes(good))
    try:
        model, header, _ = load_model(path)
    except ModelFileError:
        return
    # only corruption the zip container ignores (for example its comment or padding) may load, and then it
    # must be the same model
    ref, _, _ = load_model(model_file / "m.npz")
    np.testing.assert_array_equal(model.coef_, ref.coef_)


# --- settings ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, value", [("RBREPRO_MEMORY_LIMIT_GB", "abc"), ("RBREPRO_MEMORY_LIMIT_GB", "-1"),
                                         ("RBREPRO_MEMORY_LIMIT_GB", "inf"), ("RBREPRO_FETCH_TIMEOUT", "abc")])
@pytest.mark.slow
def test_bad_environment_settings_name_the_variable(tmp_path, name, value):
    # the fetch timeout is read when a download starts: a loopback address where nothing listens
    args = ("train", "digits", "--R", "8") if "MEMORY" in name else ("fetch", "cadata", "--mirror", "http://127.0.0.1:9")
    one_line_error(rbrepro(*args, env={name: value, "RBREPRO_DATA": str(tmp_path / "d")}), name, repr(value))


@pytest.mark.slow
def test_a_file_too_small_to_split_names_the_file(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_text("1 1:1\n")
    one_line_error(rbrepro("train", path, "--R", "8", env={"RBREPRO_DATA": str(tmp_path / "d")}), "tiny",
                   "cannot be split")


def test_an_infinite_lambda_is_refused():
    one_line_error(rbrepro("train", "digits", "--lam", "inf"), "'--lam'", "finite number >= 0")


def test_yaml_scientific_notation_without_a_dot_is_the_number_meant():
    from rbrepro.sweep.config import parse_config

    cfg = parse_config("name: a\ndatasets:\n  digits: {sigma: [1e-3, 2E1], R: [1e2], lam: 1e-3}\n", "a.yaml")
    assert cfg.datasets[0].sigma == (0.001, 20.0) and cfg.datasets[0].R == (100,) and cfg.datasets[0].lam == 0.001


@pytest.mark.slow
def test_a_binary_yaml_file_is_named(tmp_path):
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"\x00\x01\x02\xff\xfe")
    one_line_error(rbrepro("sweep", path), str(path), "not a YAML text file")


@pytest.mark.slow
@pytest.mark.parametrize("content", ['["a", "list"]', '"a string"', '{"status": "ok"}', "42"])
def test_hand_made_cell_files_are_run_again_not_taken_as_finished(tmp_path, content):
    from rbrepro.sweep.backends import LocalBackend
    from rbrepro.sweep.config import parse_config
    from rbrepro.sweep.keys import cell_key
    from rbrepro.sweep.plan import fingerprints_for
    from rbrepro.sweep.runner import run_sweep

    cfg = parse_config("name: c\ndatasets:\n  digits: {sigma: [0.3], R: [8]}\n", "c.yaml")
    key = cell_key(cells_on_test(cfg)[0], fingerprints_for(cfg, cells_on_test(cfg))["digits"])
    (tmp_path / "cells").mkdir()
    (tmp_path / "cells" / f"{key}.json").write_text(content)
    counts = run_sweep(cfg, tmp_path, backend=LocalBackend(1))
    assert counts["ran"] == 1 and counts["done"] == 1


# --- disk full --------------------------------------------------------------------------------------

def test_a_full_disk_inside_a_writer_names_the_file(tmp_path):
    dest = tmp_path / "results.csv"
    with pytest.raises(OSError) as info:
        with atomic_path(dest):
            raise OSError(errno.ENOSPC, "No space left on device")  # as a writer reports it: no file name
    assert info.value.filename == str(dest) and info.value.errno == errno.ENOSPC
    assert not dest.exists() and not list(tmp_path.glob(".*.part"))


@pytest.mark.slow
def test_a_full_disk_during_a_sweep_is_one_line_naming_the_file(tmp_path):
    script = (
        "import errno, sys, pandas as pd\n"
        "def full(*a, **k): raise OSError(errno.ENOSPC, 'No space left on device')\n"
        "pd.DataFrame.to_csv = full\n"
        "from rbrepro.cli import app\n"
        f"sys.argv = ['rbrepro', 'sweep', {str(tmp_path / 'c.yaml')!r}, '--out', {str(tmp_path / 'res')!r}, '-q']\n"
        "app()\n")
    (tmp_path / "c.yaml").write_text("name: c\ndatasets:\n  digits: {sigma: [0.3], R: [8]}\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    one_line_error(proc, str(tmp_path / "res" / "results.csv"), "No space left on device")
    assert len(list((tmp_path / "res" / "cells").glob("*.json"))) == 1  # the finished cell survives


# --- trust on first use: a bad first copy is never trusted ---------------------------------------------

def _bare_mirror(tmp_path, files: dict[str, bytes]):
    """A mirror directory without a MANIFEST, so nothing but the registry and the bytes can vouch for a file."""
    root = tmp_path / "bare"
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


@pytest.mark.slow
@needs_mirror
def test_a_truncated_first_copy_is_refused_before_its_hash_is_recorded(tmp_path):
    good = (SHARED / "regression" / "cadata").read_bytes()
    mirror = _bare_mirror(tmp_path, {"regression/cadata": good[:700_000]})
    env = {"RBREPRO_DATA": str(tmp_path / "d")}
    one_line_error(rbrepro("fetch", "cadata", "--mirror", mirror, "-q", env=env),
                   "regression/cadata", "data lines, but this file has 20,640 rows", "no hash was recorded")
    lock = tmp_path / "d" / "hashes.lock.json"
    assert not lock.exists() or json.loads(lock.read_text()) == {}
    assert not (tmp_path / "d" / "raw" / "regression" / "cadata").exists()
    (mirror / "regression" / "cadata").write_bytes(good)  # the mirror repaired: the good file is taken
    proc = rbrepro("fetch", "cadata", "--mirror", mirror, "-q", env=env)
    assert proc.returncode == 0 and "16512 train / 4128 test" in proc.stdout, proc.stderr


@pytest.mark.parametrize("rel, data, needle", [
    ("regression/cadata", b"<!-- proxy -->\n<head><title>Login</title></head>\n", "web page"),
    ("regression/cadata", b"  <HTML><body>moved</body></HTML>\n", "web page"),
    ("regression/cadata", b"\x00\x01\x02binary junk\n" * 20, "web page or binary"),
    ("regression/cadata", b"452600,8.3252,41\n" * 20640, "not LIBSVM"),
    ("binary/ijcnn1.tr.bz2", b"<!doctype html><p>404</p>", "not bz2-compressed"),
    ("binary/ijcnn1.tr.bz2", b"BZh91AY&SYgarbage", "damaged or cut short"),
])
@pytest.mark.slow
def test_wrong_bytes_from_a_mirror_without_manifest_never_reach_raw(tmp_path, rel, data, needle):
    mirror = _bare_mirror(tmp_path, {rel: data})
    name = "cadata" if "cadata" in rel else "ijcnn1"
    one_line_error(rbrepro("fetch", name, "--mirror", mirror, "-q", env={"RBREPRO_DATA": str(tmp_path / "d")}),
                   rel, needle)
    assert not (tmp_path / "d" / "raw" / rel).exists()
    assert not list((tmp_path / "d" / "raw").rglob("*.part"))


@pytest.mark.slow
@needs_mirror
def test_a_first_use_hash_mismatch_names_the_lock_file_and_forget_hashes_resets_it(tmp_path):
    good = (SHARED / "regression" / "cadata").read_bytes()
    other = good.replace(b"452600 ", b"452601 ", 1)  # right shape and rows, other bytes
    mirror = _bare_mirror(tmp_path, {"regression/cadata": other})
    data = tmp_path / "d"
    env = {"RBREPRO_DATA": str(data)}
    assert rbrepro("fetch", "cadata", "--mirror", mirror, "-q", env=env).returncode == 0
    (mirror / "regression" / "cadata").write_bytes(good)
    for gone in ("raw", "cache"):
        subprocess.run(["rm", "-rf", str(data / gone)], check=True)
    one_line_error(rbrepro("fetch", "cadata", "--mirror", mirror, "-q", env=env),
                   "sha256 mismatch", str(data / "hashes.lock.json"), "--forget-hashes")
    proc = rbrepro("fetch", "cadata", "--mirror", mirror, "-q", "--forget-hashes", env=env)
    assert proc.returncode == 0 and "forgot 1 recorded hash" in proc.stdout, proc.stderr
    from rbrepro.data.fetch import sha256_file
    assert list(json.loads((data / "hashes.lock.json").read_text()).values()) == [sha256_file(mirror /
                                                                                              "regression/cadata")]


@pytest.mark.slow
@needs_mirror
@pytest.mark.parametrize("row", ["regression/cadata\t\t20640", "regression/cadata", "regression/cadata\tabc\t1"])
def test_a_manifest_row_without_a_usable_hash_is_an_error_not_unverified(tmp_path, row):
    mirror = _bare_mirror(tmp_path, {"regression/cadata": (SHARED / "regression" / "cadata").read_bytes(),
                                     "MANIFEST.tsv": f"file\tsha256\trows\n{row}\n".encode()})
    one_line_error(rbrepro("fetch", "cadata", "--mirror", mirror, "-q", env={"RBREPRO_DATA": str(tmp_path / "d")}),
                   f"{mirror / 'MANIFEST.tsv'}:2:", "64-hex-digit sha256")


@pytest.mark.slow
@needs_mirror
def test_every_file_of_the_real_mirror_passes_the_first_use_checks():
    import csv

    from rbrepro.data.content import check_content
    for row in csv.DictReader(open(SHARED / "MANIFEST.tsv"), delimiter="\t"):
        assert check_content(SHARED / row["file"], row["file"], "libsvm", int(row["rows"])) == int(row["rows"])


# --- CSV input: headers, line numbers, float32 ---------------------------------------------------------

@pytest.mark.parametrize("text, needle", [
    ("1,,0.5\n0,0.2,0.3\n1,0.9,0.1\n", "c.csv:1: column 2 is not a finite number: ''"),
    ("1,0.5x,0.5\n0,0.2,0.3\n", "c.csv:1: column 2 is not a finite number: '0.5x'"),
    ("y,a,b\n# note\n\n1,0.5,0.5 # fine\n# more\n0,0.2,0.3\n\n1,0.9,oops\n", "c.csv:8: column 3"),
    ("y,a,b\n1,0.5,0.5\n0,0.2\n", "c.csv:3: 2 columns, but line 2 has 3"),
    ("1,1e39,0.5\n0,0.2,0.3\n", "c.csv:1: column 2 is beyond float32's range"),
    ("y,a,b\n", "c.csv: no data rows"),
])
def test_csv_errors_name_the_files_own_line(tmp_path, text, needle):
    from rbrepro.data.delimited import parse_csv
    path = tmp_path / "c.csv"
    path.write_text(text)
    with pytest.raises(ParseError) as err:
        parse_csv(path)
    assert str(err.value).endswith(needle) or needle in str(err.value), str(err.value)


def test_a_csv_header_is_dropped_and_comments_skipped(tmp_path):
    from rbrepro.data.delimited import parse_csv
    path = tmp_path / "c.csv"
    path.write_text("# data\nlabel,x1,x2\n1,0.5,0.25\n\n0,-2,3e3 # trailing\n")
    parsed = parse_csv(path)
    assert parsed.y.tolist() == [1, 0] and parsed.X.tolist() == [[0.5, 0.25], [-2, 3000]]


@pytest.mark.slow
def test_an_overflowing_csv_value_is_one_line_from_the_cli(tmp_path):
    path = tmp_path / "o.csv"
    path.write_text("".join(f"{i % 2},{i / 7},{1e39 if i == 5 else 0.5}\n" for i in range(40)))
    one_line_error(rbrepro("train", path, "--R", "8", env={"RBREPRO_DATA": str(tmp_path / "d")}),
                   "o.csv:6: column 3 is beyond float32's range")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.one_of(st.floats(-1e6, 1e6, allow_nan=False), st.none()), min_size=3, max_size=3),
                min_size=1, max_size=12),
       st.lists(st.sampled_from(["", "# note", "   "]), max_size=12), st.booleans())
def test_property_csv_with_random_holes_parses_or_names_the_first_hole(tmp_path, rows, fillers, header):
    """Random CSVs with holes (empty fields), blank and comment lines between rows and an optional
    header: parsed exactly when there is no hole, else refused naming the line and column of the first."""
    from rbrepro.data.delimited import parse_csv
    lines, first_hole = (["label,a,b"] if header else []), None
    for i, row in enumerate(rows):
        if i < len(fillers):
            lines.append(fillers[i])
        lines.append(",".join("" if v is None else f"{v:.6g}" for v in row))
        if first_hole is None and None in row:
            first_hole = (len(lines), row.index(None) + 1)
    path = tmp_path / "h.csv"
    path.write_text("\n".join(lines) + "\n")
    try:
        parsed = parse_csv(path)
    except ParseError as exc:
        assert first_hole is not None, str(exc)
        assert f"h.csv:{first_hole[0]}: column {first_hole[1]} " in str(exc), (str(exc), first_hole, lines)
        return
    assert first_hole is None
    expected = np.array([[float(f"{v:.6g}") for v in row] for row in rows])
    np.testing.assert_array_equal(parsed.y, expected[:, 0])
    np.testing.assert_array_equal(parsed.X, expected[:, 1:].astype(np.float32))


def _crafted(src: Path, dest: Path, edit) -> Path:
    """Like _rewrite, but a careful forger: every checksum recomputed, so only the content checks stand."""
    from rbrepro.models import persist

    def forge(arrays, header):
        edit(arrays, header)
        header["checksums"] = {name: persist._checksum(np.asarray(a)) for name, a in arrays.items()}
        header["header_sha256"] = persist._header_checksum(header)

    return _rewrite(src, dest, forge)


def _out_of_range_ids(a, h):
    ids = a["features._table_ids"].copy()
    ids[np.flatnonzero(ids >= 0)[0]] = 10**6  # a bin id far past every column
    a["features._table_ids"] = ids


@pytest.mark.parametrize("what, edit, needle", [
    ("out-of-range bin id", _out_of_range_ids, "outside its grid's columns"),
    ("bin id of -7", lambda a, h: a.update({"features._table_ids": np.where(a["features._table_ids"] >= 0, -7,
                                                                            a["features._table_ids"])}),
     "outside its grid's columns"),
    ("n_grids changed", lambda a, h: h["params"].update(n_grids=h["params"]["n_grids"] * 2), "grids are not"),
    ("the feature map's n_grids changed", lambda a, h: h["scalars"]["features"]["params"].update(n_grids=64),
     "grids are not"),
    ("NaN weights", lambda a, h: a.update({"model.coef_": np.full_like(a["model.coef_"], np.nan)}), "not finite"),
    ("negative sigma", lambda a, h: h["params"].update(sigma=-2.0), "sigma must be"),
    ("a bin width of zero", lambda a, h: a.update({"features.deltas_": np.zeros_like(a["features.deltas_"])}),
     "bin width is not positive"),
])
def test_crafted_model_files_with_valid_checksums_are_refused_before_any_kernel_reads_them(model_file, what, edit,
                                                                                          needle):
    path = _crafted(model_file / "m.npz", model_file / f"crafted-{what.replace(' ', '_')}.npz", edit)
    with pytest.raises(ModelFileError, match=needle):
        load_model(path)
    one_line_error(rbrepro("predict", path, model_file / "test.txt"), str(path))


@pytest.mark.parametrize("command", [("train", "digits", "--R", "8"), ("sweep", "configs/quick.yaml")])
@pytest.mark.parametrize("value", ["0", "nan", "-1", "inf"])
def test_an_impossible_memory_limit_is_refused_naming_the_option(command, value):
    """--memory-limit is checked where it is read, before any data loads, in the guard's own words."""
    proc = run_cli(*command, "--memory-limit", value, cwd=Path(__file__).resolve().parents[1])
    one_line_error(proc, "'--memory-limit'", "memory limit must be a positive number of GB")
