"""The data layer against hostile inputs and sources: special files, slow or endless HTTP sources,
sources cut or changed mid-copy, decompression bombs, credentials in URLs, a damaged hash lock file,
the forms of RBREPRO_DATA, and the user's own files. A hang shows as a call that does not return
within its time."""

import bz2
import gzip
import http.server
import json
import lzma
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from rbrepro.data import transfer as transfer_mod
from rbrepro.data.content import check_content
from rbrepro.data.delimited import parse_csv
from rbrepro.data.fetch import FetchError, HashLock, fetch_dataset
from rbrepro.data.files import ParseError
from rbrepro.data.folders import data_dir
from rbrepro.data.libsvm import parse_libsvm
from rbrepro.data.load import load_dataset
from rbrepro.data.registry import get_spec
from rbrepro.data.user import spec_from_files, spec_from_path
from tests.cli_runner import one_line_error, run_cli
from tests.conftest import make_binary_problem, write_libsvm
from tests.loopback import Behaviour, serve


def rbrepro(*args, env=None, cwd=None, max_file_bytes=None, timeout=120):
    return run_cli(*args, env=env, cwd=cwd, max_file_bytes=max_file_bytes, timeout=timeout)


def within(seconds, fn):
    """fn's result, or the exception it raised, once it returns; a failure if it takes longer (a hang)."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    start = time.monotonic()
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s (hangs)"
    return box.get("error", box.get("value")), time.monotonic() - start


def small_libsvm(path: Path, n=60, seed=0) -> Path:
    X, y = make_binary_problem(n, 4, seed=seed)
    return write_libsvm(path, X, y)


def every_byte_under(root: Path) -> bytes:
    """The names and contents of every file under root, run together (for grepping)."""
    return b"\n".join(p.as_posix().encode() + b"\n" + (p.read_bytes() if p.is_file() else b"")
                      for p in sorted(root.rglob("*")))


# --- 1. special files as inputs -------------------------------------------------------------------------

@pytest.fixture
def special(tmp_path, request):
    """A FIFO, a socket or a character device (/dev/null) at a path; a reader left blocked on the FIFO
    (should a read ever block) is released at teardown."""
    kind = request.param
    path = tmp_path / f"special-{kind}.libsvm"
    sock = None
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
    else:
        path.symlink_to("/dev/null")
    yield path
    if sock:
        sock.close()
    if kind == "fifo":
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass


@pytest.mark.parametrize("special", ["fifo", "socket", "chardev"], indirect=True)
def test_a_special_file_as_a_user_datasets_source_is_refused_at_once(special, tmp_path):
    error, took = within(5, lambda: load_dataset(spec_from_files("s", str(special)), tmp_path / "d", progress=False))
    assert isinstance(error, Exception) and str(special) in str(error) and "not a regular file" in str(error), error
    assert took < 3 and not list((tmp_path / "d").rglob("*.part"))


@pytest.mark.parametrize("special", ["fifo", "socket"], indirect=True)
def test_a_special_file_named_as_a_data_file_is_refused_at_once(special, tmp_path):
    error, _ = within(5, lambda: load_dataset(str(special), tmp_path / "d", progress=False))
    assert isinstance(error, Exception) and str(special) in str(error) and "not a regular file" in str(error), error


@pytest.mark.parametrize("special", ["fifo"], indirect=True)
def test_a_fifo_as_a_mirrors_manifest_is_refused_at_once(special, small_ijcnn1_mirror, tmp_path):
    (small_ijcnn1_mirror / "MANIFEST.tsv").unlink()
    os.rename(special, small_ijcnn1_mirror / "MANIFEST.tsv")
    error, _ = within(5, lambda: fetch_dataset(get_spec("ijcnn1"), tmp_path / "d", small_ijcnn1_mirror,
                                               progress=False))
    special.symlink_to(small_ijcnn1_mirror / "MANIFEST.tsv")  # so the fixture can release a blocked reader
    assert isinstance(error, FetchError), error
    assert "MANIFEST.tsv" in str(error) and "not a regular file" in str(error)


@pytest.mark.slow
@pytest.mark.parametrize("special", ["fifo"], indirect=True)
def test_a_fifo_named_on_the_command_line_is_one_line(special, tmp_path):
    one_line_error(rbrepro("train", special, "--R", "8", env={"RBREPRO_DATA": str(tmp_path / "d")}, timeout=30),
                   str(special), "not a regular file")


@pytest.mark.parametrize("special", ["fifo"], indirect=True)
def test_a_fifo_as_the_datasets_file_is_refused_at_once(special):
    from rbrepro.data.user import load_datasets_file
    from rbrepro.yamlconf import ConfigError

    error, _ = within(5, lambda: load_datasets_file(special))
    assert isinstance(error, ConfigError) and str(special) in str(error) and "not a regular file" in str(error)


@pytest.mark.slow
def test_dev_zero_as_a_source_is_refused_without_filling_the_disk(tmp_path):
    (tmp_path / "sets.yaml").write_text("datasets:\n  zero:\n    train: /dev/zero\n")
    proc = rbrepro("train", "zero", "--datasets", tmp_path / "sets.yaml", "--R", "8", timeout=60,
                   env={"RBREPRO_DATA": str(tmp_path / "d")}, max_file_bytes=50 << 20)
    one_line_error(proc, "/dev/zero", "not a regular file")


def test_symlinks_to_regular_files_work_and_symlink_loops_are_named(tmp_path):
    real = small_libsvm(tmp_path / "real.libsvm")
    (tmp_path / "link.libsvm").symlink_to(real)
    assert load_dataset(str(tmp_path / "link.libsvm"), tmp_path / "d", progress=False).X_train.shape == (48, 4)
    loop = tmp_path / "loop.libsvm"
    loop.symlink_to(tmp_path / "loop2.libsvm")
    (tmp_path / "loop2.libsvm").symlink_to(loop)
    for call in (lambda: load_dataset(str(loop), tmp_path / "d", progress=False),
                 lambda: load_dataset(spec_from_files("loop", str(loop)), tmp_path / "d", progress=False)):
        error, _ = within(5, call)
        assert isinstance(error, ValueError | FetchError), repr(error)
        assert str(loop) in str(error) and "symbolic link loop" in str(error), error


# --- 2. slow or endless HTTP sources --------------------------------------------------------------------

class _Dribble(http.server.BaseHTTPRequestHandler):
    """Announces `size` bytes, then sends `piece` bytes every `every_s` seconds (for at most 20 s)."""

    protocol_version = "HTTP/1.1"
    size, piece, every_s = 10**9, 1, 0.2

    def log_message(self, *args):
        pass

    def do_GET(self):  # noqa: N802 - http.server's naming
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(self.size))
        self.end_headers()
        stop = time.monotonic() + 20
        try:
            while time.monotonic() < stop:
                self.wfile.write(b"1" * self.piece)
                self.wfile.flush()
                time.sleep(self.every_s)
        except OSError:
            pass


@pytest.fixture
def dribble(monkeypatch):
    def start(piece, every_s):
        handler = type("Handler", (_Dribble,), {"piece": piece, "every_s": every_s})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    servers = []
    monkeypatch.setattr(transfer_mod, "BACKOFF_S", 0.01)
    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_a_server_trickling_bytes_is_aborted_by_the_minimum_rate(dribble, tmp_path, monkeypatch):
    url = dribble(piece=1, every_s=0.2)
    monkeypatch.setenv("RBREPRO_FETCH_GRACE", "1")
    monkeypatch.setenv("RBREPRO_FETCH_MIN_RATE", "1000")
    spec = spec_from_files("slow", f"{url}/slow.libsvm")
    error, took = within(10, lambda: fetch_dataset(spec, tmp_path / "d", progress=False))
    assert isinstance(error, FetchError), error
    assert f"{url}/slow.libsvm" in str(error) and "B/s" in str(error) and "RBREPRO_FETCH_MIN_RATE" in str(error)
    assert took < 5 and not [p for p in (tmp_path / "d" / "raw").rglob("*") if p.is_file()]


@pytest.mark.slow
def test_an_endless_fast_source_is_aborted_by_the_deadline(dribble, tmp_path, monkeypatch):
    url = dribble(piece=1 << 16, every_s=0.01)
    monkeypatch.setenv("RBREPRO_FETCH_DEADLINE", "1.5")
    spec = spec_from_files("endless", f"{url}/endless.libsvm")
    error, took = within(10, lambda: fetch_dataset(spec, tmp_path / "d", progress=False))
    assert isinstance(error, FetchError), error
    assert f"{url}/endless.libsvm" in str(error) and "RBREPRO_FETCH_DEADLINE" in str(error)
    assert took < 5 and not [p for p in (tmp_path / "d" / "raw").rglob("*") if p.is_file()]


@pytest.mark.parametrize("name", ["RBREPRO_FETCH_TIMEOUT", "RBREPRO_FETCH_DEADLINE", "RBREPRO_FETCH_MIN_RATE",
                                  "RBREPRO_FETCH_GRACE"])
@pytest.mark.parametrize("value", ["1e308", "nan", "-1", "abc", "inf"])
def test_bad_fetch_settings_name_the_variable_and_the_range(name, value, tmp_path, monkeypatch):
    monkeypatch.setenv(name, value)
    monkeypatch.setattr(transfer_mod, "BACKOFF_S", 0.001)
    with pytest.raises(ValueError, match=rf"{name}={value!r}: expected .* from \S+ to \S+"):
        fetch_dataset(get_spec("cadata"), tmp_path / "d", "http://127.0.0.1:9", progress=False)


@pytest.mark.slow
def test_a_bad_fetch_timeout_is_one_line_from_the_cli(tmp_path):
    one_line_error(rbrepro("fetch", "cadata", "--mirror", "http://127.0.0.1:9", "-q",
                           env={"RBREPRO_FETCH_TIMEOUT": "1e308", "RBREPRO_DATA": str(tmp_path / "d")}),
                   "RBREPRO_FETCH_TIMEOUT='1e308'", "seconds from")


# --- 3. a source cut short or changed while it is copied -------------------------------------------------

class _EditingBar:
    """A stand-in progress bar that edits the source after the first block is copied."""

    def __init__(self, edit):
        self.edit, self.done = edit, False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def add_task(self, *args, **kwargs):
        return 0

    def update(self, *args, **kwargs):
        if not self.done:
            self.done = True
            self.edit()


@pytest.mark.parametrize("how", ["truncated", "grown"])
def test_a_local_source_that_changes_mid_copy_is_not_kept(how, tmp_path, monkeypatch):
    src = small_libsvm(tmp_path / "own.libsvm", n=400)
    size = src.stat().st_size

    def edit():
        if how == "truncated":
            os.truncate(src, src.read_bytes().rfind(b"\n", 0, size // 2) + 1)  # cut at a line end: still LIBSVM
        else:
            with open(src, "ab") as fh:
                fh.write(b"1 1:0.5\n" * 50)

    monkeypatch.setattr(transfer_mod, "CHUNK", 1024)
    monkeypatch.setattr(transfer_mod, "_progress", lambda enabled: _EditingBar(edit))
    with pytest.raises(FetchError, match=r"own\.libsvm.*changed while it was copied"):
        fetch_dataset(spec_from_files("own", str(src)), tmp_path / "d", progress=False)
    assert [p for p in (tmp_path / "d" / "raw").rglob("*") if p.is_file()] == []
    lock = tmp_path / "d" / "hashes.lock.json"
    assert not lock.exists() or json.loads(lock.read_text()) == {}


def test_a_partial_download_is_not_resumed_against_a_file_that_changed_size(tmp_path, monkeypatch):
    root = tmp_path / "site"
    first = small_libsvm(root / "f.libsvm", n=300, seed=1)
    behaviour = Behaviour()
    srv, url = serve(root, behaviour)
    try:
        monkeypatch.setattr(transfer_mod, "BACKOFF_S", 0.01)
        monkeypatch.setattr(transfer_mod, "RETRIES", 1)
        behaviour.cut_after["f.libsvm"], behaviour.cuts_left["f.libsvm"] = 2000, 1
        spec = spec_from_files("f", f"{url}/f.libsvm")
        with pytest.raises(FetchError, match="partial file"):
            fetch_dataset(spec, tmp_path / "d", progress=False)
        small_libsvm(first, n=500, seed=2)  # the file changed on the server meanwhile
        fetch_dataset(spec, tmp_path / "d", progress=False)
        (raw,) = [p for p in (tmp_path / "d" / "raw").rglob("*.libsvm")]
        assert raw.read_bytes() == first.read_bytes()
    finally:
        srv.shutdown()
        srv.server_close()


# --- 4. decompression bombs -----------------------------------------------------------------------------

@pytest.mark.parametrize("suffix, pack", [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)])
def test_a_decompression_bomb_is_refused_while_streaming(suffix, pack, tmp_path, monkeypatch):
    bomb = tmp_path / f"bomb.libsvm{suffix}"
    bomb.write_bytes(pack(b"1 1:0.5 2:0.25\n" * 400_000))  # 6 MB of valid lines
    monkeypatch.setenv("RBREPRO_MAX_DECOMPRESSED_GB", "0.001")  # about 1 MB
    with pytest.raises(ParseError, match=rf"{bomb.name}: decompresses to more than .*RBREPRO_MAX_DECOMPRESSED_GB"):
        parse_libsvm(bomb, 0)
    with pytest.raises(FetchError, match=r"decompresses to more than.*no hash was recorded"):
        fetch_dataset(spec_from_files("bomb", str(bomb)), tmp_path / "d", progress=False)
    assert not [p for p in (tmp_path / "d" / "raw").rglob("*") if p.is_file()]


def test_the_default_decompression_limit_follows_the_memory_limit(tmp_path, monkeypatch):
    from rbrepro.data.files import max_decompressed_bytes

    monkeypatch.setenv("RBREPRO_MEMORY_LIMIT_GB", "0.0005")  # 4 x this is about 2 MB
    assert max_decompressed_bytes()[0] == 4 * int(0.0005 * 1024**3)
    bomb = tmp_path / "b.gz"
    bomb.write_bytes(gzip.compress(b"1 1:0.5\n" * 400_000))
    with pytest.raises(ParseError, match="RBREPRO_MEMORY_LIMIT_GB"):
        parse_libsvm(bomb, 0)


# --- 5. credentials in URLs --------------------------------------------------------------------------

def test_a_password_in_a_mirror_or_user_url_is_never_stored_or_shown(small_ijcnn1_mirror, tmp_path, monkeypatch):
    secret = "s3cret-pw"
    srv, url = serve(small_ijcnn1_mirror, Behaviour())
    try:
        monkeypatch.setattr(transfer_mod, "BACKOFF_S", 0.001)
        with_creds = url.replace("http://", f"http://alice:{secret}@")
        fetch_dataset(get_spec("ijcnn1"), tmp_path / "d", with_creds, progress=False)  # manifest-verified
        write_libsvm(small_ijcnn1_mirror / "own.libsvm", *make_binary_problem(50, 3, seed=0))
        fetch_dataset(spec_from_files("own", f"{with_creds}/own.libsvm"), tmp_path / "d", progress=False)  # TOFU
        errors = []
        for bad in (lambda: fetch_dataset(spec_from_files("gone", f"{with_creds}/gone.libsvm"), tmp_path / "d",
                                          progress=False),
                    lambda: fetch_dataset(get_spec("ijcnn1"), tmp_path / "x", with_creds.replace(
                        str(srv.server_address[1]), "9"), progress=False)):
            with pytest.raises(FetchError) as err:
                bad()
            errors.append(str(err.value))
    finally:
        srv.shutdown()
        srv.server_close()
    assert secret.encode() not in every_byte_under(tmp_path / "d")
    assert all(secret not in e and "alice:***@" in e for e in errors), errors
    record = json.loads(next((tmp_path / "d" / "raw").rglob("ijcnn1.t.bz2.meta.json")).read_text())
    assert record["origin"].startswith("mirror:http://alice:***@127.0.0.1")


def test_a_census_file_supplied_from_a_url_with_a_password_is_recorded_without_it(tmp_path):
    from dataclasses import replace

    from rbrepro.data.registry import REGISTRY
    from rbrepro.data.user import remember_supplied, supplied_record, user_file

    url = "https://bob:hunter2-pw@example.org/census.libsvm"
    remember_supplied(tmp_path, replace(REGISTRY["census"], train=user_file("census", url)))
    text = supplied_record(tmp_path, "census").read_text()
    assert "hunter2-pw" not in text and "bob:***@example.org" in text


# --- 6. a damaged hashes.lock.json ---------------------------------------------------------------------

@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"k": 5}', '{"k": "abc"}', "\x00\x01"])
def test_a_damaged_hash_lock_file_is_named_with_how_to_reset_it(text, small_ijcnn1_mirror, tmp_path):
    (small_ijcnn1_mirror / "MANIFEST.tsv").unlink()  # no manifest: the lock file is consulted
    lock = tmp_path / "d" / "hashes.lock.json"
    lock.parent.mkdir()
    lock.write_text(text)
    with pytest.raises(FetchError, match=rf"{lock}: .*--forget-hashes"):
        fetch_dataset(get_spec("ijcnn1"), tmp_path / "d", small_ijcnn1_mirror, progress=False)
    assert HashLock(lock).forget(["k"]) == []  # the reset works on the damaged file: set aside, not read
    assert not lock.exists() and lock.with_name("hashes.lock.json.damaged").read_text() == text
    assert HashLock(lock).get("k") is None


@pytest.mark.slow
def test_a_damaged_hash_lock_file_is_one_line_from_the_cli_and_forget_hashes_resets_it(small_ijcnn1_mirror,
                                                                                       tmp_path):
    (small_ijcnn1_mirror / "MANIFEST.tsv").unlink()
    lock = tmp_path / "d" / "hashes.lock.json"
    lock.parent.mkdir()
    lock.write_text("[1, 2]")
    env = {"RBREPRO_DATA": str(tmp_path / "d")}
    one_line_error(rbrepro("fetch", "ijcnn1", "--mirror", small_ijcnn1_mirror, "-q", env=env),
                   str(lock), "rbrepro fetch NAME --forget-hashes")
    proc = rbrepro("fetch", "ijcnn1", "--mirror", small_ijcnn1_mirror, "-q", "--forget-hashes", env=env)
    assert "forgot 0 recorded hash(es)" in proc.stdout and "Traceback" not in proc.stderr, proc.stderr
    assert "hashes.lock.json" not in proc.stderr  # past the lock file: now the rows are what is wrong


# --- 7. RBREPRO_DATA --------------------------------------------------------------------------------------

def test_a_tilde_in_rbrepro_data_is_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("RBREPRO_DATA", "~/x")
    assert data_dir() == tmp_path / "x"
    assert data_dir("~/y") == tmp_path / "y"


def test_without_rbrepro_data_the_cache_is_the_platforms_user_cache_folder(tmp_path, monkeypatch):
    """As pooch does: one cache whatever the working folder (XDG_CACHE_HOME on Linux)."""
    monkeypatch.delenv("RBREPRO_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path / "..")
    assert data_dir() == tmp_path / "cache" / "rbrepro"
    assert data_dir(tmp_path / "mine") == tmp_path / "mine"  # an explicit folder still wins


def test_a_relative_rbrepro_data_is_resolved_once_against_the_starting_folder(tmp_path):
    script = ("import os\nfrom rbrepro.data.folders import data_dir\nos.chdir('/')\nprint(data_dir())\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          env={**os.environ, "RBREPRO_DATA": "rel/d", "PYTHONPATH": str(Path.cwd())})
    assert proc.stdout.strip() == str(tmp_path / "rel" / "d"), proc.stderr


# --- 8. the user's own data --------------------------------------------------------------------------

def test_an_edited_user_file_is_copied_and_parsed_again(tmp_path):
    src = small_libsvm(tmp_path / "own.libsvm", n=100, seed=1)
    first = load_dataset(str(src), tmp_path / "d", progress=False)
    assert first.X_train.shape[0] + first.X_test.shape[0] == 100
    small_libsvm(src, n=150, seed=2)
    os.utime(src, ns=(src.stat().st_atime_ns, src.stat().st_mtime_ns + 10**9))
    again = load_dataset(str(src), tmp_path / "d", progress=False)
    assert again.X_train.shape[0] + again.X_test.shape[0] == 150
    os.utime(src, ns=(src.stat().st_atime_ns, src.stat().st_mtime_ns + 10**9))  # touched only: same data
    assert load_dataset(str(src), tmp_path / "d", progress=False).X_train.shape == again.X_train.shape


def test_user_files_with_one_name_in_two_folders_do_not_collide(tmp_path):
    a = small_libsvm(tmp_path / "a" / "train.libsvm", n=100, seed=1)
    b = small_libsvm(tmp_path / "b" / "train.libsvm", n=200, seed=2)
    assert spec_from_path(str(a)).train.path != spec_from_path(str(b)).train.path
    for src, rows in ((a, 100), (b, 200), (a, 100)):
        data = load_dataset(str(src), tmp_path / "d", progress=False)
        assert data.X_train.shape[0] + data.X_test.shape[0] == rows


def test_a_libsvm_file_with_a_first_line_over_64_kb_passes_the_content_check(tmp_path):
    first = "1 " + " ".join(f"{j}:0.{j % 97:02d}5" for j in range(1, 12000))
    assert len(first) > 65536
    path = tmp_path / "wide.libsvm"
    path.write_text(first + "\n-1 1:0.5\n1 2:0.25\n")
    assert check_content(path, "wide.libsvm", "libsvm", 3) == 3
    for junk in ("1 abc:1 " + "9" * 70000, "9" * 70000):  # judged on what shows in the first 64 kB
        path.write_text(junk + "\n")
        with pytest.raises(ValueError, match="not LIBSVM"):
            check_content(path, "junk.libsvm", "libsvm")


def test_a_quoted_csv_without_a_header_keeps_its_first_row(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('"1","0.5","0.25"\n"0","0.1","0.2"\n"1","0.7","0.3"\n')
    parsed = parse_csv(path)
    assert parsed.y.tolist() == [1, 0, 1] and parsed.X[0].tolist() == [0.5, 0.25]
    path.write_text('"label","a","b"\n"1","0.5","0.25"\n')  # a quoted header is still a header
    assert parse_csv(path).y.tolist() == [1]
    np.testing.assert_allclose(parse_csv(path).X, [[0.5, 0.25]])
