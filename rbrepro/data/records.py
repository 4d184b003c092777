"""What the cache records about its files: the sidecar record beside each file (its hash, origin
and expected rows), the lock file of first-use hashes, and the per-file locks that serialize fetches."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from pathlib import Path

from rbrepro.data.atomic import write_text_atomic
from rbrepro.data.inputs import open_regular, redact
from rbrepro.data.transfer import FetchError

_SHA256 = re.compile(r"[0-9a-f]{64}")


class HashLock:
    """sha256 of files first fetched without a known hash, enforced from then on."""

    def __init__(self, path: Path):
        self.path = path

    def _damaged(self, what: str) -> FetchError:
        return FetchError(f"{self.path}: a damaged hash lock file ({what}); reset it with `rbrepro fetch NAME "
                          f"--forget-hashes` (which sets it aside as {self.path.name}.damaged) or delete it")

    def _read(self) -> dict[str, str]:
        """The recorded hashes; a file that is not a JSON object of keys to sha256 strings is a
        FetchError naming it and how to reset it."""
        if not os.path.lexists(self.path):
            return {}
        try:
            with open_regular(self.path) as fh:
                hashes = json.loads(fh.read().decode("utf-8"))
        except ValueError as exc:  # invalid JSON or UTF-8, not a regular file
            raise self._damaged(f"{type(exc).__name__}: {exc}") from None
        if not isinstance(hashes, dict) or not all(isinstance(v, str) and _SHA256.fullmatch(v)
                                                   for v in hashes.values()):
            raise self._damaged("expected a JSON object mapping each file's key to its 64-hex-digit sha256")
        return hashes

    def get(self, key: str) -> str | None:
        return self._read().get(key)

    def _update(self, change, reset_damaged: bool = False) -> None:
        """Apply change(hashes) under the lock file's lock; write the file atomically if it says it changed.
        `reset_damaged`: a damaged file is set aside (as .damaged) and the change applied to no hashes."""
        with file_lock(self.path.with_name(self.path.name + ".lock")):
            try:
                hashes = self._read()
            except FetchError:
                if not reset_damaged:
                    raise
                os.replace(self.path, self.path.with_name(self.path.name + ".damaged"))
                hashes = {}
            if change(hashes):
                write_text_atomic(self.path, json.dumps(hashes, indent=1, sort_keys=True) + "\n")

    def forget(self, keys) -> list[str]:
        """Drop the recorded hashes of `keys`; returns those that were there. A damaged lock file is
        set aside (its hashes cannot be read anyway), so this is also how to reset one."""
        dropped: list[str] = []

        def drop(hashes):
            dropped.extend(k for k in keys if hashes.pop(k, None) is not None)
            return dropped

        self._update(drop, reset_damaged=True)
        return dropped

    def record(self, key: str, digest: str) -> None:
        def put(hashes):
            hashes[key] = digest
            return True

        self._update(put)

@contextlib.contextmanager
def file_lock(path: Path):
    """An exclusive advisory lock (blocks until free) held for the duration of the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)

def write_record(dest: Path, digest: str, origin: str, expected_rows: int | None,
                 source: os.stat_result | None = None) -> None:
    """Sidecar of a verified raw file: its hash (keyed by size and mtime), origin and expected rows;
    for a user's local file also the size and mtime its source had when copied (to see it change)."""
    st = dest.stat()
    record = {"sha256": digest, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "origin": redact(origin),
              "expected_rows": expected_rows}
    if source is not None:
        record.update(source_size=source.st_size, source_mtime_ns=source.st_mtime_ns)
    write_text_atomic(dest.with_name(dest.name + ".meta.json"), json.dumps(record))

def read_record(dest: Path) -> dict | None:
    """The sidecar of a raw file if it still describes the file on disk."""
    side = dest.with_name(dest.name + ".meta.json")
    try:
        rec = json.loads(side.read_text())
        st = dest.stat()
        if rec.get("size") == st.st_size and rec.get("mtime_ns") == st.st_mtime_ns:
            return rec
    except (OSError, ValueError, AttributeError):
        pass
    return None

def _int_or_none(text) -> int | None:
    try:
        return int(str(text).replace(",", "").strip())
    except (TypeError, ValueError):
        return None
