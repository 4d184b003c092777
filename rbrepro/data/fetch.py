"""Verified downloads of registry files from the LIBSVM site, a mirror, or a user's URL/path.

A source is the site (default), or a mirror given as a local directory or an http(s)
base URL in the same layout. Expected sha256, in order: the mirror's own MANIFEST.tsv
(a mirror's re-derived files differ from the site's bytes), a hash pinned in the
registry for the site's bytes, else the hash recorded in the cache's lock file at the
first verified download (trust on first use, enforced afterwards).

A transfer streams into `<file>.part`, hashed on the way; a broken transfer is retried
with backoff and resumed with an HTTP Range request where the server allows it (a
clean restart otherwise, and also when a later run finds a stale `.part`). The file is
moved into place only once its hash is verified, so a partial or wrong download is
never taken for data. An HTML page served instead of the file is refused. Concurrent
fetches of one file (threads or processes) serialize on a lock file; the second finds
the first's verified copy and does no work.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import hashlib
import io
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import requests
import urllib3

from rbrepro.data.atomic import write_text_atomic
from rbrepro.data.content import ContentCheckError, check_content
from rbrepro.data.registry import SITE_BASE, DataFile, DatasetSpec

CHUNK = 1 << 20
RETRIES = 4
BACKOFF_S = 0.5
CONNECT_TIMEOUT_S = 15.0
DEFAULT_READ_TIMEOUT_S = 60.0
_SHA256 = re.compile(r"[0-9a-f]{64}")


def read_timeout_s() -> float:
    """Seconds a stalled transfer waits: $RBREPRO_FETCH_TIMEOUT (checked, named in any error) or 60."""
    from rbrepro.memory import env_number

    return env_number("RBREPRO_FETCH_TIMEOUT", DEFAULT_READ_TIMEOUT_S)


class FetchError(RuntimeError):
    """A file could not be fetched or verified; the message names file and source."""


class _Broken(Exception):
    """A transfer that broke off and may be resumed."""


@dataclass(frozen=True)
class Source:
    """Where files come from: a base URL or a local directory in the site layout."""

    base: str
    is_mirror: bool

    @classmethod
    def resolve(cls, mirror: str | os.PathLike | None) -> "Source":
        if mirror is None or str(mirror) == "":
            return cls(SITE_BASE, is_mirror=False)
        text = str(mirror)
        if text.startswith("file://"):
            text = urlparse(text).path
        if "://" not in text:
            path = Path(text).expanduser()
            if not path.is_dir():
                raise FetchError(f"mirror {text!r} is neither an http(s) URL nor an existing directory")
            return cls(str(path.resolve()), is_mirror=True)
        if not text.startswith(("http://", "https://")):
            raise FetchError(f"mirror {text!r}: only http://, https:// and local directories are supported")
        return cls(text.rstrip("/"), is_mirror=True)

    @property
    def is_local(self) -> bool:
        return "://" not in self.base

    def locate(self, rel: str) -> str:
        return str(Path(self.base) / rel) if self.is_local else f"{self.base}/{rel}"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def read_manifest(source: Source) -> dict[str, dict]:
    """The mirror's MANIFEST.tsv as {path: row}, or {} when it has none."""
    if not source.is_mirror:
        return {}
    where = source.locate("MANIFEST.tsv")
    try:
        if source.is_local:
            if not Path(where).exists():
                return {}
            text = Path(where).read_text()
        else:
            resp = _request_with_retries(where)
            if resp is None:
                return {}
            text = resp.text
    except OSError as exc:
        raise FetchError(f"cannot read {where}: {exc}") from exc
    rows = csv.DictReader(io.StringIO(text), delimiter="\t")
    if rows.fieldnames is None or "file" not in rows.fieldnames or "sha256" not in rows.fieldnames:
        raise FetchError(f"{where}: expected a tab-separated header with 'file' and 'sha256'")
    manifest = {}
    for row in rows:
        digest = (row.get("sha256") or "").strip().lower()
        if not row.get("file") or not _SHA256.fullmatch(digest):
            # an empty or missing hash must not turn verification off for that file
            raise FetchError(f"{where}:{rows.line_num}: expected a file name and a 64-hex-digit sha256, got "
                             f"file={row.get('file')!r} sha256={row.get('sha256')!r}")
        manifest[row["file"]] = {**row, "sha256": digest}
    return manifest


def _request(url: str, headers: dict, stream: bool):
    """One GET; None on 404; _Broken on network trouble; FetchError on other HTTP errors."""
    try:
        resp = requests.get(url, headers=headers, stream=stream, timeout=(CONNECT_TIMEOUT_S, read_timeout_s()))
    except requests.RequestException as exc:
        raise _Broken(f"{type(exc).__name__}: {exc}") from exc
    if resp.status_code == 404:
        return None
    if resp.status_code == 416:  # our partial file is not a prefix the server recognizes
        return resp
    if resp.status_code >= 500:
        raise _Broken(f"HTTP {resp.status_code}")
    if resp.status_code >= 400:
        raise FetchError(f"{url} answered HTTP {resp.status_code} {resp.reason}")
    return resp


def _request_with_retries(url: str):
    last = None
    for attempt in range(RETRIES):
        try:
            return _request(url, {}, stream=False)
        except _Broken as exc:
            last = exc
            if attempt + 1 < RETRIES:
                time.sleep(BACKOFF_S * 2**attempt)
    raise FetchError(f"cannot reach {url} after {RETRIES} attempts: {last}")


class HashLock:
    """sha256 of files first fetched without a known hash, enforced from then on."""

    def __init__(self, path: Path):
        self.path = path

    def _read(self) -> dict[str, str]:
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def get(self, key: str) -> str | None:
        return self._read().get(key)

    def _update(self, change) -> None:
        """Apply change(hashes) under the lock file's lock; write the file atomically if it says it changed."""
        with file_lock(self.path.with_name(self.path.name + ".lock")):
            hashes = self._read()
            if change(hashes):
                write_text_atomic(self.path, json.dumps(hashes, indent=1, sort_keys=True) + "\n")

    def forget(self, keys) -> list[str]:
        """Drop the recorded hashes of `keys`; returns those that were there."""
        dropped: list[str] = []

        def drop(hashes):
            dropped.extend(k for k in keys if hashes.pop(k, None) is not None)
            return dropped

        self._update(drop)
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


def _progress(enabled: bool):
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                    TimeRemainingColumn(), console=Console(stderr=True), disable=not enabled, transient=False)


def _looks_like_html(first: bytes, content_type: str) -> bool:
    head = first[:512].lstrip().lower()
    return content_type.lower().startswith("text/html") or head.startswith((b"<!doctype html", b"<html"))


def _blocks(resp):
    """The body as it arrives, one socket read at a time (so a broken transfer keeps every byte
    received), without content decoding."""
    raw = resp.raw
    while True:
        block = raw.read1(CHUNK, decode_content=False)
        if not block:
            return
        yield block


def _download(url: str, part: Path, label: str, progress: bool) -> str:
    """Fill `part` with the file at url (resuming it when possible); returns its sha256."""
    last = None
    for attempt in range(RETRIES):
        have = part.stat().st_size if part.exists() else 0
        try:
            headers = {"Accept-Encoding": "identity"}  # byte offsets must be those of the file itself
            resp = _request(url, {**headers, "Range": f"bytes={have}-"} if have else headers, stream=True)
            if resp is None:
                raise FetchError(f"{label}: {url} answered 404 Not Found")
            if resp.status_code == 416 or (have and resp.status_code != 206):
                have = 0  # the server ignores ranges (or ours is wrong): restart cleanly
                resp.close()
                resp = _request(url, headers, stream=True)
                if resp is None:
                    raise FetchError(f"{label}: {url} answered 404 Not Found")
            h = hashlib.sha256()
            if have:
                with open(part, "rb") as fh:
                    for block in iter(lambda: fh.read(CHUNK), b""):
                        h.update(block)
            length = resp.headers.get("Content-Length")
            total = have + int(length) if length and length.isdigit() else None
            received = have
            first = True
            with _progress(progress) as bar, open(part, "ab" if have else "wb") as out:
                task = bar.add_task(label, total=total, completed=have)
                try:
                    for block in _blocks(resp):
                        if first and not have and _looks_like_html(block, resp.headers.get("Content-Type", "")):
                            raise FetchError(f"{label}: {url} sent an HTML page (HTTP {resp.status_code}) instead "
                                             "of the data file; check the mirror URL")
                        first = False
                        out.write(block)
                        h.update(block)
                        received += len(block)
                        bar.update(task, completed=received)
                except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
                    raise _Broken(f"transfer broke off after {received} bytes: {exc}") from exc
            if total is not None and received < total:
                raise _Broken(f"transfer ended after {received} of {total} bytes")
            return h.hexdigest()
        except _Broken as exc:
            last = exc
            if attempt + 1 < RETRIES:
                time.sleep(BACKOFF_S * 2**attempt)
        except FetchError:
            part.unlink(missing_ok=True)
            raise
    raise FetchError(f"{label}: download of {url} failed after {RETRIES} attempts: {last} "
                     f"(the partial file {part} is kept and will be resumed)")


def _copy(src: Path, part: Path, label: str, progress: bool) -> str:
    h = hashlib.sha256()
    with _progress(progress) as bar, open(src, "rb") as fh, open(part, "wb") as out:
        task = bar.add_task(label, total=src.stat().st_size)
        for block in iter(lambda: fh.read(CHUNK), b""):
            out.write(block)
            h.update(block)
            bar.update(task, advance=len(block))
    return h.hexdigest()


def write_record(dest: Path, digest: str, origin: str, expected_rows: int | None) -> None:
    """Sidecar of a verified raw file: its hash (keyed by size and mtime), origin and expected rows."""
    st = dest.stat()
    write_text_atomic(dest.with_name(dest.name + ".meta.json"), json.dumps(
        {"sha256": digest, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "origin": origin,
         "expected_rows": expected_rows}))


def read_record(dest: Path) -> dict | None:
    """The sidecar of a raw file if it still describes the file on disk."""
    side = dest.with_name(dest.name + ".meta.json")
    try:
        rec = json.loads(side.read_text())
        st = dest.stat()
        if rec.get("size") == st.st_size and rec.get("mtime_ns") == st.st_mtime_ns:
            return rec
    except (OSError, ValueError):
        pass
    return None


def _int_or_none(text) -> int | None:
    try:
        return int(str(text).replace(",", "").strip())
    except (TypeError, ValueError):
        return None


def lock_key(file: DataFile, source: Source) -> str:
    """The key under which a file's first-use hash is kept in hashes.lock.json."""
    if file.url:
        return f"user:{file.url}"
    return f"{'mirror' if source.is_mirror else 'site'}:{source.base}/{file.path}"


def fetch_file(file: DataFile, source: Source, raw_dir: Path, manifest: dict[str, dict], lock: HashLock,
               progress: bool = True) -> Path:
    """Fetch one file into raw_dir/<path>, verified; reuse a verified copy.

    The expected hash comes from the mirror's manifest, the registry's pin, or the lock
    file (trust on first use). A file with none of these is sniffed and its rows counted
    against the registry before its hash is recorded, so a bad first copy is not trusted.
    """
    dest = raw_dir / file.path
    key = lock_key(file, source)
    pinned_by = None
    if file.url:  # a user's own file: its own location, hash recorded on first use
        where, is_local = file.url, "://" not in file.url
        if where.startswith("file://"):
            where, is_local = urlparse(where).path, True
        expected, expected_rows = None, file.rows
    else:
        where, is_local = source.locate(file.path), source.is_local
        if source.is_mirror and manifest:
            if file.path not in manifest:
                raise FetchError(f"{file.path}: not in this mirror (its manifest "
                                 f"{source.locate('MANIFEST.tsv')} does not list it)")
            expected, pinned_by = manifest[file.path]["sha256"], f"the manifest {source.locate('MANIFEST.tsv')}"
            expected_rows = _int_or_none(manifest[file.path].get("rows")) or file.rows
        else:
            expected = file.site_sha256 if not source.is_mirror else None
            pinned_by = "the registry's pin of the site's bytes" if expected else None
            expected_rows = file.rows
    if expected is None:
        expected = lock.get(key)
        if expected:
            pinned_by = (f"{lock.path}, recorded when the file was first fetched (if the new file is right, "
                         f"forget that hash with `rbrepro fetch NAME --forget-hashes` or delete the key {key!r} "
                         "from that file, and fetch again)")

    with file_lock(raw_dir.parent / "locks" / (file.path.replace("/", "__") + ".lock")):
        rec = read_record(dest)
        if dest.exists() and expected and rec and rec["sha256"] == expected:
            return dest  # verified before, unchanged since
        if dest.exists() and expected and sha256_file(dest) == expected:
            write_record(dest, expected, key, expected_rows)
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + ".part")
        if is_local:
            src = Path(where)
            if not src.exists():
                raise FetchError(f"{file.path}: not found at {src}")
            digest = _copy(src, part, file.path, progress)
        else:
            digest = _download(where, part, file.path, progress)
        if expected and digest != expected:
            part.unlink(missing_ok=True)
            raise FetchError(f"{file.path}: sha256 mismatch for {where}: got {digest}, expected {expected} from "
                             f"{pinned_by}; the file was not kept")
        if not expected:
            try:  # trust on first use: only what looks right and has the registry's rows
                check_content(part, where if file.url else file.path, file.format, expected_rows)
            except ContentCheckError as exc:
                part.unlink(missing_ok=True)
                origin = "" if file.url else f" (from {where})"
                raise FetchError(f"{exc}{origin}; the file was not kept and no hash was recorded") from None
        os.replace(part, dest)
        if not expected:
            lock.record(key, digest)
        write_record(dest, digest, key, expected_rows)
    return dest


def fetch_dataset(spec: DatasetSpec, data_dir: Path, mirror=None, progress: bool = True) -> list[Path]:
    """Fetch and verify every file of a dataset into data_dir/raw."""
    if spec.source.startswith("sklearn:"):
        return []
    if spec.source == "user" and not spec.files:
        raise FetchError(f"{spec.name}: {spec.note}")
    source = Source.resolve(mirror)
    needs_source = any(not f.url for f in spec.files)
    manifest = read_manifest(source) if needs_source else {}
    lock = HashLock(Path(data_dir) / "hashes.lock.json")
    return [fetch_file(f, source, Path(data_dir) / "raw", manifest, lock, progress) for f in spec.files]
