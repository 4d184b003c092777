"""Downloads that survive the real world, tried against a real HTTP server on 127.0.0.1."""

import bz2
import lzma
import os
import subprocess

import numpy as np
import pytest

from rbrepro.data import transfer as transfer_mod
from rbrepro.data.checks import ContentError
from rbrepro.data.fetch import FetchError, fetch_dataset
from rbrepro.data.files import ParseError
from rbrepro.data.load import load_dataset
from rbrepro.data.registry import get_spec
from tests.cli_runner import CLI
from tests.conftest import make_binary_problem, write_libsvm, write_manifest
from tests.loopback import Behaviour, serve


@pytest.fixture
def server(small_ijcnn1_mirror, monkeypatch):
    monkeypatch.setattr(transfer_mod, "BACKOFF_S", 0.01)
    behaviour = Behaviour()
    srv, url = serve(small_ijcnn1_mirror, behaviour)
    yield url, small_ijcnn1_mirror, behaviour
    srv.shutdown()
    srv.server_close()


def _raw(tmp_path, name="ijcnn1.t.bz2"):
    return tmp_path / "data" / "raw" / "binary" / name


def test_a_transfer_cut_midway_is_resumed_with_a_range_request(server, tmp_path):
    url, root, b = server
    rel = "binary/ijcnn1.t.bz2"
    b.cut_after[rel], b.cuts_left[rel] = 5000, 1
    fetch_dataset(get_spec("ijcnn1"), tmp_path / "data", url, progress=False)
    assert b.ranges_seen == ["bytes=5000-"]
    assert _raw(tmp_path).read_bytes() == (root / rel).read_bytes()
    assert not list(_raw(tmp_path).parent.glob("*.part"))


def test_without_range_support_the_transfer_restarts_cleanly(server, tmp_path):
    url, root, b = server
    rel = "binary/ijcnn1.t.bz2"
    b.ranges = False
    b.cut_after[rel], b.cuts_left[rel] = 3000, 2
    fetch_dataset(get_spec("ijcnn1"), tmp_path / "data", url, progress=False)
    assert b.requests[rel] == 3 and _raw(tmp_path).read_bytes() == (root / rel).read_bytes()


def test_an_interrupted_run_leaves_a_part_file_that_the_next_run_resumes(server, tmp_path, monkeypatch):
    url, root, b = server
    rel = "binary/ijcnn1.t.bz2"
    monkeypatch.setattr(transfer_mod, "RETRIES", 1)
    b.cut_after[rel], b.cuts_left[rel] = 4096, 1
    with pytest.raises(FetchError, match="partial file .* is kept"):
        fetch_dataset(get_spec("ijcnn1"), tmp_path / "data", url, progress=False)
    part = _raw(tmp_path).with_name("ijcnn1.t.bz2.part")
    assert part.stat().st_size == 4096 and not _raw(tmp_path).exists()  # never mistaken for data
    with pytest.raises(FileNotFoundError):
        load_dataset("ijcnn1", tmp_path / "data", fetch=False)
    fetch_dataset(get_spec("ijcnn1"), tmp_path / "data", url, progress=False)
    assert b.ranges_seen == ["bytes=4096-"] and not part.exists()
    assert _raw(tmp_path).read_bytes() == (root / rel).read_bytes()


def test_a_stale_part_of_unknown_origin_is_not_resumed_but_fetched_afresh(server, tmp_path):
    url, root, b = server
    part = _raw(tmp_path).with_name("ijcnn1.t.bz2.part")
    part.parent.mkdir(parents=True)
    part.write_bytes(b"garbage" * 100)  # no record of where it came from: nothing vouches for its bytes
    fetch_dataset(get_spec("ijcnn1"), tmp_path / "data", url, progress=False)
    assert b.ranges_seen == [] and not part.exists()
    assert _raw(tmp_path).read_bytes() == (root / "binary/ijcnn1.t.bz2").read_bytes()


def test_a_partial_file_that_is_not_a_prefix_fails_the_hash_and_is_dropped(server, tmp_path, monkeypatch):
    url, root, b = server
    rel = "binary/ijcnn1.t.bz2"
    monkeypatch.setattr(transfer_mod, "RETRIES", 1)
    b.cut_after[rel], b.cuts_left[rel] = 4096, 1
    with pytest.raises(FetchError, match="is kept"):
        fetch_dataset(get_spec("ijcnn1"), tmp_path / "data", url, progress=False)
    part = _raw(tmp_path).with_name("ijcnn1.t.bz2.part")
    part.write_bytes(b"x" * 4096)  # same size and source, other bytes: resumed, then caught by the hash
    with pytest.raises(FetchError, match="sha256 mismatch"):
        fetch_dataset(get_spec("ijcnn1"), tmp_path / "data", url, progress=False)
    assert not part.exists() and not _raw(tmp_path).exists()
    fetch_dataset(get_spec("ijcnn1"), tmp_path / "data", url, progress=False)  # then a clean fetch works
    assert _raw(tmp_path).read_bytes() == (root / rel).read_bytes()


def test_an_html_page_with_status_200_is_refused(server, tmp_path):
    url, root, b = server
    (root / "MANIFEST.tsv").unlink()  # no hash to catch it: the HTML check must
    b.html.add("binary/ijcnn1.tr.bz2")
    with pytest.raises(FetchError, match="HTML page"):
        fetch_dataset(get_spec("ijcnn1"), tmp_path / "data", url, progress=False)
    assert not _raw(tmp_path, "ijcnn1.tr.bz2").exists()
    assert not (tmp_path / "data" / "hashes.lock.json").exists()  # nothing recorded as trusted


def test_a_stalled_server_times_out_and_keeps_nothing(server, tmp_path, monkeypatch):
    url, _, b = server
    monkeypatch.setenv("RBREPRO_FETCH_TIMEOUT", "0.3")
    monkeypatch.setattr(transfer_mod, "RETRIES", 2)
    b.stall_s = 2.0
    with pytest.raises(FetchError, match="after 2 attempts.*(Timeout|timed out)"):
        fetch_dataset(get_spec("ijcnn1"), tmp_path / "data", url, progress=False)
    assert not _raw(tmp_path, "ijcnn1.tr.bz2").exists()


def test_two_processes_fetching_at_once_do_the_work_once(server, tmp_path):
    url, root, b = server
    b.delay_s = 0.02  # make the transfers overlap
    env = {**os.environ, "RBREPRO_DATA": str(tmp_path / "data")}
    procs = [subprocess.Popen([*CLI, "fetch", "ijcnn1", "--mirror", url, "-q"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    for rel in ("binary/ijcnn1.tr.bz2", "binary/ijcnn1.t.bz2", "binary/ijcnn1.val.bz2"):
        assert b.requests[rel] == 1
        assert (tmp_path / "data" / "raw" / rel).read_bytes() == (root / rel).read_bytes()


def test_truncated_archives_served_with_a_matching_manifest_fail_at_parse(tmp_path):
    root = tmp_path / "mirror"
    X, y = make_binary_problem(3000, 22, seed=3)
    for name, rows in (("ijcnn1.tr.bz2", slice(0, 2000)), ("ijcnn1.val.bz2", slice(2000, 2500)),
                       ("ijcnn1.t.bz2", slice(2500, 3000))):
        write_libsvm(root / "binary" / name, X[rows], y[rows], compress=True)
    t = root / "binary" / "ijcnn1.tr.bz2"
    t.write_bytes(t.read_bytes()[: t.stat().st_size // 2])
    write_manifest(root)
    with pytest.raises(ParseError, match=r"ijcnn1.tr.bz2: cannot read the file .*truncated"):
        load_dataset("ijcnn1", tmp_path / "data", root, progress=False)


def test_parsed_content_is_checked_against_manifest_rows_and_registry_classes(small_ijcnn1_mirror, tmp_path):
    manifest = small_ijcnn1_mirror / "MANIFEST.tsv"
    lines = manifest.read_text().splitlines()
    def with_rows(line, rows):
        cells = line.split("\t")
        return "\t".join(cells[:3] + [rows] + cells[4:])
    lines = [with_rows(line, "999") if line.startswith("binary/ijcnn1.t.bz2") else line for line in lines]
    manifest.write_text("\n".join(lines) + "\n")
    with pytest.raises(ContentError, match=r"parsed 400 rows, but .* promises 999"):
        load_dataset("ijcnn1", tmp_path / "a", small_ijcnn1_mirror, progress=False)
    # a binary dataset whose training file has three classes
    root = tmp_path / "m3"
    X, y = make_binary_problem(300, 22, seed=4)
    y = np.arange(300) % 3
    for name in ("ijcnn1.tr.bz2", "ijcnn1.val.bz2", "ijcnn1.t.bz2"):
        write_libsvm(root / "binary" / name, X, y, compress=True)
    write_manifest(root)
    with pytest.raises(ContentError, match="3 classes .* expects 2"):
        load_dataset("ijcnn1", tmp_path / "b", root, progress=False)


def _small_recipes_mirror(root):
    """Small files under the site paths of the datasets the real mirror lacks."""
    rng = np.random.default_rng(5)

    def put(rel, n, d, labels, packer):
        X = np.round(rng.random((n, d)) * (rng.random((n, d)) < 0.7), 4)
        y = rng.choice(labels, n)
        path = write_libsvm(root / rel, X, y)
        path.write_bytes(packer(path.read_bytes()))

    put("binary/covtype.libsvm.binary.scale.bz2", 500, 54, [1, 2], bz2.compress)
    put("binary/SUSY.xz", 400, 18, [0, 1], lzma.compress)
    put("multiclass/acoustic_scale.bz2", 300, 50, [1, 2, 3], bz2.compress)
    put("multiclass/acoustic_scale.t.bz2", 90, 50, [1, 2, 3], bz2.compress)
    put("binary/cod-rna", 250, 8, [-1, 1], lambda b: b)
    put("binary/cod-rna.t", 120, 8, [-1, 1], lambda b: b)
    write_manifest(root)


def test_recipes_of_datasets_missing_from_the_mirror_over_loopback(tmp_path):
    root = tmp_path / "mirror"
    _small_recipes_mirror(root)
    srv, url = serve(root, Behaviour())
    try:
        cov = load_dataset("covtype", tmp_path / "d", url, progress=False)
        assert (cov.X_train.shape, cov.X_test.shape) == ((400, 54), (100, 54))
        assert cov.scaling == "as published" and set(np.unique(cov.y_train)) == {1, 2}
        susy = load_dataset("SUSY", tmp_path / "d", url, progress=False)
        assert (susy.X_train.shape, susy.X_test.shape) == ((320, 18), (80, 18))
        assert susy.scaling.startswith("minmax") and susy.X_train.max() <= 1.0
        ac = load_dataset("acoustic", tmp_path / "d", url, progress=False)
        assert ac.X_train.shape == (300, 50) and ac.X_test.shape == (90, 50) and ac.task == "multiclass"
        cod = load_dataset("cod_rna", tmp_path / "d", url, progress=False)
        assert cod.X_train.shape == (250, 8) and cod.X_test.shape == (120, 8)
    finally:
        srv.shutdown()
        srv.server_close()
