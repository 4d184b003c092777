"""Every network wait of reaching a dask cluster has a deadline, stated in --help: a port that accepts the
connection and never answers (a real socket server on 127.0.0.1) fails within it in one line, for a
fit and for a sweep; a sweep whose cells failed says the first one's cause on stderr. The deadline is
made short here by RBREPRO_CLUSTER_TIMEOUT (the subprocess timeout only guards against a hang)."""

from __future__ import annotations

import socket
import threading

import pytest

from tests.cli_runner import one_line_error, run_cli


@pytest.fixture
def silent_port():
    """A server on 127.0.0.1 that accepts every connection and never sends a byte."""
    yield from _server(b"")


@pytest.fixture
def mute_after_one_byte():
    """A server that sends one byte of a handshake, then nothing."""
    yield from _server(b"\x00")


def _server(greeting: bytes):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            if greeting:
                conn.sendall(greeting)

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()
    for conn in held:
        conn.close()


QUICK = {"RBREPRO_CLUSTER_TIMEOUT": "1"}


def test_a_port_that_accepts_and_never_answers_fails_a_fit_in_one_line(silent_port):
    proc = run_cli("train", "digits", "--R", 8, "--cluster", f"tcp://127.0.0.1:{silent_port}", env=QUICK,
                   timeout=120)
    one_line_error(proc, f"127.0.0.1:{silent_port}", "sent no dask handshake within 1 s")


def test_a_server_that_stops_after_its_first_byte_fails_within_the_first_reply_deadline(mute_after_one_byte):
    proc = run_cli("train", "digits", "--R", 8, "--cluster", f"tcp://127.0.0.1:{mute_after_one_byte}", env=QUICK,
                   timeout=120)
    one_line_error(proc, f"127.0.0.1:{mute_after_one_byte}", "no reply within")


def test_a_sweep_on_a_silent_scheduler_fails_in_one_line(silent_port, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("name: c\ndatasets:\n  digits: {sigma: [1], R: [8]}\n")
    proc = run_cli("sweep", config, "--out", tmp_path / "out", "--scheduler", f"tcp://127.0.0.1:{silent_port}",
                   "-q", env=QUICK, timeout=120)
    one_line_error(proc, f"127.0.0.1:{silent_port}", "no dask handshake")


def test_a_sweep_says_its_first_failed_cells_cause_on_stderr(tmp_path):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now: the connection is refused
    config = tmp_path / "c.yaml"
    config.write_text(f"name: c\ncluster: tcp://127.0.0.1:{port}\ndatasets:\n  digits: {{sigma: [1], R: [8]}}\n")
    proc = run_cli("sweep", config, "--out", tmp_path / "out", "-q", env=QUICK, timeout=300)
    assert proc.returncode == 1
    assert "first failed cell (dataset=digits method=rb" in proc.stderr and f"127.0.0.1:{port}" in proc.stderr


def test_the_deadlines_are_stated_in_help_and_their_setting_is_checked():
    for command in ("train", "sweep"):
        text = " ".join(run_cli(command, "--help", check=True).stdout.split())
        assert "each wait at most 10 s" in text and "RBREPRO_CLUSTER_TIMEOUT" in text, command
    proc = run_cli("train", "digits", "--cluster", "tcp://127.0.0.1:9", env={"RBREPRO_CLUSTER_TIMEOUT": "abc"})
    one_line_error(proc, "RBREPRO_CLUSTER_TIMEOUT")


def test_an_address_whose_port_is_not_a_number_is_one_line():
    one_line_error(run_cli("train", "digits", "--cluster", "tcp://127.0.0.1:port"), "tcp://HOST:PORT")
