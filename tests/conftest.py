"""Shared fixtures: small LIBSVM files, a loopback HTTP server, the real mirror's location."""

from __future__ import annotations

import bz2
import functools
import hashlib
import http.server
import inspect
import lzma
import os
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

# `make soak` sets RBREPRO_SOAK: property tests then try many more examples
settings.register_profile("soak", max_examples=5000, deadline=None)
if os.environ.get("RBREPRO_SOAK"):
    settings.load_profile("soak")

REPO = Path(__file__).resolve().parents[1]
MIRROR = Path(os.environ.get("RBREPRO_TEST_MIRROR", REPO.parent / "shared" / "data" / "libsvm"))


@pytest.fixture(autouse=True)
def _own_data_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own data cache (tests that need another name it): neither the user's
    cache folder nor their $RBREPRO_DATA is touched, and no test sees another's downloads or hash
    records."""
    monkeypatch.setenv("RBREPRO_DATA", str(tmp_path_factory.mktemp("rbrepro-data")))


def write_libsvm(path: Path, X: np.ndarray, y: np.ndarray, compress: bool = False) -> Path:
    """Write X (dense) and y in one-based LIBSVM text, zeros omitted."""
    lines = []
    for row, label in zip(X, y):
        feats = " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row) if v != 0)
        lines.append(f"{label:g} {feats}".rstrip())
    data = ("\n".join(lines) + "\n").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bz2.compress(data) if compress else data)
    return path


def make_binary_problem(n: int, d: int, seed: int):
    """A nonlinear binary problem: label = inside a ball in the first 3 features (in [-1, 1]);
    the other features are small noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    X[:, 3:] *= 0.05
    y = np.where(np.linalg.norm(X[:, :3], axis=1) < 0.9, 1, -1)
    return np.round(X, 4), y


def write_manifest(root: Path) -> None:
    """A MANIFEST.tsv like the real mirror's: each file's sha256, size and data rows."""
    rows = ["file\tsha256\tbytes\trows\tfeatures\tlabels\torigin\tnotes"]
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name != "MANIFEST.tsv":
            data = p.read_bytes()
            try:
                text = {".bz2": bz2.decompress, ".xz": lzma.decompress}.get(p.suffix, bytes)(data)
                n = sum(1 for line in text.splitlines() if line.strip() and not line.startswith(b"#"))
            except (OSError, ValueError, EOFError, lzma.LZMAError):
                n = ""  # a damaged archive: rows unknown, as a manifest built from it would say
            rows.append(f"{p.relative_to(root).as_posix()}\t{hashlib.sha256(data).hexdigest()}"
                        f"\t{p.stat().st_size}\t{n}\t\t\ttest\t")
    (root / "MANIFEST.tsv").write_text("\n".join(rows) + "\n")


@pytest.fixture
def small_ijcnn1_mirror(tmp_path) -> Path:
    """A mirror folder holding small synthetic files under ijcnn1's site paths, with a manifest."""
    root = tmp_path / "mirror"
    X, y = make_binary_problem(1600, 22, seed=0)
    write_libsvm(root / "binary" / "ijcnn1.tr.bz2", X[:1000], y[:1000], compress=True)
    write_libsvm(root / "binary" / "ijcnn1.val.bz2", X[1000:1200], y[1000:1200], compress=True)
    write_libsvm(root / "binary" / "ijcnn1.t.bz2", X[1200:], y[1200:], compress=True)
    write_manifest(root)
    return root


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def http_mirror(small_ijcnn1_mirror):
    """Serve the small mirror over HTTP on 127.0.0.1 (a real server on loopback)."""
    handler = functools.partial(_QuietHandler, directory=str(small_ijcnn1_mirror))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", small_ijcnn1_mirror
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def real_mirror() -> Path:
    if not (MIRROR / "MANIFEST.tsv").exists():
        pytest.skip(f"the real LIBSVM mirror is not at {MIRROR} (set RBREPRO_TEST_MIRROR to point at it)")
    return MIRROR


#: what a test's source calls when it runs the CLI in a child process (tests/cli_runner.py and the
#: thin wrappers over it that test files define)
_CHILD_PROCESS_CALLS = ("rbrepro(", "run_cli(", "_cli(", "CLI,", "*CLI", "PY,", "*PY", "subprocess.")


def pytest_collection_modifyitems(config, items):
    """Mark `subprocess` every test whose body runs the command line in a child process."""
    for item in items:
        function = getattr(item, "function", None)
        try:
            source = inspect.getsource(function) if function is not None else ""
        except (OSError, TypeError):
            continue
        if any(call in source for call in _CHILD_PROCESS_CALLS):
            item.add_marker(pytest.mark.subprocess)
