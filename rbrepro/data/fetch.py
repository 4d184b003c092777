"""Verified downloads of registry files from the LIBSVM site, a mirror, or a user's URL/path.

A source is the site (default), or a mirror given as a local directory or an http(s)
base URL in the same layout. Expected sha256, in order: the mirror's own MANIFEST.tsv
(a mirror's re-derived files differ from the site's bytes), a hash pinned in the
registry for the site's bytes, else the hash recorded in the cache's lock file at the
first verified download (trust on first use, enforced afterwards).

A transfer streams into `<file>.part`, hashed on the way; a broken transfer is retried
with backoff and resumed with an HTTP Range request where the server allows it and the
file is still the one the partial file came from (same source and size, and an If-Range
validator where the server gave one; a clean restart otherwise, and also for a `.part` of
unknown origin). The file is moved into place only once its hash is verified, so a partial
or wrong download is never taken for data. An HTML page served instead of the file is
refused. A transfer is stopped, and its partial file removed, when it runs past an overall
deadline or, after a grace period, averages less than a minimum rate (Limits: settings from
the environment, each checked against its range). A local file that changes while it is
copied is not kept. Only regular files are read (inputs.open_regular). A URL's password is
never stored or shown (inputs.redact). Concurrent fetches of one file (threads or processes)
serialize on a lock file; the second finds the first's verified copy and does no work.

A user's own local file is copied into the cache and copied again whenever it changes (its
size and mtime, then its sha256, against those recorded at the copy): it is its own authority,
so editing it is allowed, and no first-use hash is enforced for it.
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
from rbrepro.data.files import CHUNK, sha256_file  # noqa: F401  (sha256_file: part of fetch's API)
from rbrepro.data.inputs import InputFileError, env_setting, open_regular, redact, regular_stat
from rbrepro.data.registry import SITE_BASE, DataFile, DatasetSpec

RETRIES = 4
BACKOFF_S = 0.5
CONNECT_TIMEOUT_S = 15.0
MANIFEST_MAX_BYTES = 64 << 20
_SHA256 = re.compile(r"[0-9a-f]{64}")
_CONTENT_RANGE = re.compile(r"bytes (\d+)-\d+/(\d+|\*)")


@dataclass(frozen=True)
class Limits:
    """How long a transfer may take, from the environment (each value checked against its range):
    a stalled read waits timeout_s ($RBREPRO_FETCH_TIMEOUT), a whole file (all attempts) takes at most
    deadline_s ($RBREPRO_FETCH_DEADLINE), and once grace_s ($RBREPRO_FETCH_GRACE) has passed, an
    attempt averaging below min_rate bytes/s ($RBREPRO_FETCH_MIN_RATE, 0 for none) is stopped."""

    timeout_s: float = 60.0
    deadline_s: float = 6 * 3600.0
    min_rate: float = 1000.0
    grace_s: float = 30.0

    @classmethod
    def from_env(cls) -> "Limits":
        d = cls()
        return cls(env_setting("RBREPRO_FETCH_TIMEOUT", d.timeout_s, 0.001, 86400, "seconds"),
                   env_setting("RBREPRO_FETCH_DEADLINE", d.deadline_s, 0.001, 7 * 86400, "seconds"),
                   env_setting("RBREPRO_FETCH_MIN_RATE", d.min_rate, 0, 1e12, "bytes per second"),
                   env_setting("RBREPRO_FETCH_GRACE", d.grace_s, 0, 86400, "seconds"))


def read_timeout_s() -> float:
    """Seconds a stalled transfer waits: $RBREPRO_FETCH_TIMEOUT (checked, named in any error) or 60."""
    return Limits.from_env().timeout_s


class FetchError(RuntimeError):
    """A file could not be fetched or verified; the message names file and source (any URL's
    password shown as ***)."""

    def __init__(self, message: str):
        super().__init__(redact(message))


class _Broken(Exception):
    """A transfer that broke off and may be resumed."""


class _TooSlow(Exception):
    """A transfer past its deadline or below the minimum rate: stopped, not retried."""


class _Pace:
    """The time limits of one file's transfer: a deadline over all its attempts, and a minimum
    average rate over each attempt once its grace period is over."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.started = self.attempt_started = time.monotonic()
        self.got = 0

    def new_attempt(self) -> None:
        self._check_deadline()
        self.attempt_started, self.got = time.monotonic(), 0

    def timeout(self) -> tuple[float, float]:
        """(connect, read) timeouts for a request, never reaching past the deadline."""
        left = max(self.limits.deadline_s - (time.monotonic() - self.started), 0.001)
        return min(CONNECT_TIMEOUT_S, left), min(self.limits.timeout_s, left)

    def count(self, n: int) -> None:
        """Note n more bytes received; _TooSlow if the transfer must stop."""
        self.got += n
        self._check_deadline()
        elapsed = time.monotonic() - self.attempt_started
        if elapsed > self.limits.grace_s and self.got < self.limits.min_rate * elapsed:
            raise _TooSlow(f"{self.got / elapsed:.0f} B/s on average over {elapsed:.1f} s, below the minimum of "
                           f"RBREPRO_FETCH_MIN_RATE={self.limits.min_rate:g} B/s")

    def _check_deadline(self) -> None:
        elapsed = time.monotonic() - self.started
        if elapsed > self.limits.deadline_s:
            rate = self.got / max(time.monotonic() - self.attempt_started, 1e-9)
            raise _TooSlow(f"not done after {elapsed:.1f} s ({rate:.0f} B/s in the last attempt), past "
                           f"RBREPRO_FETCH_DEADLINE={self.limits.deadline_s:g} s")


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


def _read_local_text(where: str, cap: int) -> str | None:
    """A small local text file (a MANIFEST.tsv), None when absent; refused when it is not a regular
    file or holds more than `cap` bytes."""
    if not os.path.lexists(where):
        return None
    try:
        with open_regular(where) as fh:
            data = fh.read(cap + 1)
    except InputFileError as exc:
        raise FetchError(str(exc)) from None
    except OSError as exc:
        raise FetchError(f"cannot read {where}: {exc}") from exc
    if len(data) > cap:
        raise FetchError(f"{where}: larger than {cap:,} bytes, which a MANIFEST.tsv never is")
    return data.decode("utf-8", errors="replace")


def _read_remote_text(url: str, cap: int, limits: Limits) -> str | None:
    """A small text file at url (a MANIFEST.tsv), None on 404: at most `cap` bytes, within the fetch
    time limits, retried with backoff."""
    pace, last = _Pace(limits), None
    for attempt in range(RETRIES):
        try:
            pace.new_attempt()
            resp = _request(url, {}, stream=True, timeout=pace.timeout())
            if resp is None:
                return None
            with resp:
                body = bytearray()
                for block in _blocks(resp, decode=True):
                    body += block
                    if len(body) > cap:
                        raise FetchError(f"{url}: larger than {cap:,} bytes, which a MANIFEST.tsv never is")
                    pace.count(len(block))
            return body.decode("utf-8", errors="replace")
        except _TooSlow as exc:
            raise FetchError(f"{url}: {exc}") from None
        except _Broken as exc:
            last = exc
            if attempt + 1 < RETRIES:
                time.sleep(BACKOFF_S * 2**attempt)
    raise FetchError(f"cannot reach {url} after {RETRIES} attempts: {last}")


def read_manifest(source: Source, limits: Limits | None = None) -> dict[str, dict]:
    """The mirror's MANIFEST.tsv as {path: row}, or {} when it has none."""
    if not source.is_mirror:
        return {}
    where = source.locate("MANIFEST.tsv")
    if source.is_local:
        text = _read_local_text(where, MANIFEST_MAX_BYTES)
    else:
        text = _read_remote_text(where, MANIFEST_MAX_BYTES, limits or Limits.from_env())
    if text is None:
        return {}
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


def _request(url: str, headers: dict, stream: bool, timeout: tuple[float, float] | None = None):
    """One GET; None on 404; _Broken on network trouble; FetchError on other HTTP errors."""
    try:
        resp = requests.get(url, headers=headers, stream=stream,
                            timeout=timeout or (CONNECT_TIMEOUT_S, read_timeout_s()))
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


def _progress(enabled: bool):
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                    TimeRemainingColumn(), console=Console(stderr=True), disable=not enabled, transient=False)


def _looks_like_html(first: bytes, content_type: str) -> bool:
    head = first[:512].lstrip().lower()
    return content_type.lower().startswith("text/html") or head.startswith((b"<!doctype html", b"<html"))


def _blocks(resp, decode: bool = False):
    """The body as it arrives, one socket read at a time (so a broken transfer keeps every byte
    received, and the time limits are checked as bytes trickle in); content decoding only when
    asked (a download's byte offsets must be those of the file itself)."""
    raw = resp.raw
    try:
        while True:
            block = raw.read1(CHUNK, decode_content=decode)
            if not block:
                return
            yield block
    except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
        raise _Broken(str(exc)) from exc


def _read_part_info(info: Path) -> dict:
    """What a partial download came from ({url, total, validator}), {} when unknown."""
    try:
        found = json.loads(info.read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _continues(resp, have: int, total: int | None) -> bool:
    """Whether a Range answer carries on our partial file: 206, from our offset, of the same size."""
    found = _CONTENT_RANGE.fullmatch(resp.headers.get("Content-Range", "").strip())
    return (resp.status_code == 206 and found is not None and int(found[1]) == have
            and (total is None or found[2] == "*" or int(found[2]) == total))


def _validator(resp) -> str | None:
    """A strong ETag, else Last-Modified: what If-Range needs to resume only the same file."""
    etag = resp.headers.get("ETag")
    return etag if etag and not etag.startswith("W/") else resp.headers.get("Last-Modified")


def _total(resp, have: int) -> int | None:
    length = resp.headers.get("Content-Length")
    return have + int(length) if length and length.isdigit() else None


def _open_transfer(url: str, label: str, have: int, info: dict, pace: _Pace):
    """(response, offset): a Range request continuing our partial file of `have` bytes where the
    server allows it and the file is still the one it came from, otherwise the whole file."""
    headers = {"Accept-Encoding": "identity"}  # byte offsets must be those of the file itself
    if have:
        ranged = {**headers, "Range": f"bytes={have}-"}
        if info.get("validator"):
            ranged["If-Range"] = info["validator"]
        resp = _request(url, ranged, stream=True, timeout=pace.timeout())
        if resp is not None and _continues(resp, have, info.get("total")):
            return resp, have
        if resp is not None:
            resp.close()  # ranges ignored, our offset refused, or the file changed since: restart cleanly
    resp = _request(url, headers, stream=True, timeout=pace.timeout())
    if resp is None:
        raise FetchError(f"{label}: {url} answered 404 Not Found")
    return resp, 0


def _attempt(url: str, part: Path, info_path: Path, label: str, progress: bool, pace: _Pace) -> str:
    """One try at filling `part` (resuming it when possible); returns its sha256."""
    pace.new_attempt()
    info = _read_part_info(info_path)
    have = part.stat().st_size if part.exists() else 0
    if have and info.get("url") != redact(url):
        have = 0  # a partial file from another source, or of unknown origin: nothing vouches for its bytes
    resp, have = _open_transfer(url, label, have, info, pace)
    with resp:
        total = _total(resp, have)
        if not have:
            write_text_atomic(info_path, json.dumps({"url": redact(url), "total": total,
                                                     "validator": _validator(resp)}))
        h = hashlib.sha256()
        if have:
            with open_regular(part) as fh:
                for block in iter(lambda: fh.read(CHUNK), b""):
                    h.update(block)
        received = have
        with _progress(progress) as bar, open(part, "ab" if have else "wb") as out:
            task = bar.add_task(label, total=total, completed=have)
            try:
                for block in _blocks(resp):
                    if not received and _looks_like_html(block, resp.headers.get("Content-Type", "")):
                        raise FetchError(f"{label}: {url} sent an HTML page (HTTP {resp.status_code}) instead "
                                         "of the data file; check the mirror URL")
                    out.write(block)
                    h.update(block)
                    received += len(block)
                    bar.update(task, completed=received)
                    pace.count(len(block))
            except (_Broken, OSError) as exc:
                raise _Broken(f"transfer broke off after {received} bytes: {exc}") from exc
    if total is not None and received < total:
        raise _Broken(f"transfer ended after {received} of {total} bytes")
    info_path.unlink(missing_ok=True)
    return h.hexdigest()


def _drop_partial(part: Path) -> None:
    part.unlink(missing_ok=True)
    part.with_name(part.name + ".json").unlink(missing_ok=True)


def _download(url: str, part: Path, label: str, progress: bool, limits: Limits | None = None) -> str:
    """Fill `part` with the file at url (resuming it when possible); returns its sha256. A transfer
    past the deadline or below the minimum rate is stopped and its partial file removed."""
    pace, last = _Pace(limits or Limits.from_env()), None
    info_path = part.with_name(part.name + ".json")
    for attempt in range(RETRIES):
        try:
            return _attempt(url, part, info_path, label, progress, pace)
        except _Broken as exc:
            last = exc
            if attempt + 1 < RETRIES:
                time.sleep(BACKOFF_S * 2**attempt)
        except _TooSlow as exc:
            _drop_partial(part)
            raise FetchError(f"{label}: {url}: {exc}; the transfer was stopped and its partial file removed") from None
        except FetchError:
            _drop_partial(part)
            raise
    raise FetchError(f"{label}: download of {url} failed after {RETRIES} attempts: {last} "
                     f"(the partial file {part} is kept and will be resumed)")


def _change_while_copied(before: os.stat_result, after: os.stat_result, copied: int) -> str | None:
    """How a file changed while it was copied, or None if it did not."""
    if copied != before.st_size:
        return f"{copied:,} bytes read of the {before.st_size:,} it had when the copy began"
    if after.st_size != before.st_size:
        return f"its size went from {before.st_size:,} to {after.st_size:,} bytes"
    if after.st_mtime_ns != before.st_mtime_ns:
        return "it was modified"
    return None


def _copy(src: Path, part: Path, label: str, progress: bool) -> tuple[str, os.stat_result]:
    """Copy a local file into `part`, hashing on the way; returns the sha256 and the file's stat
    when the copy began. Refused at once unless it is a regular file; a file that changes while
    it is copied (cut short, grown, rewritten) leaves no copy."""
    try:
        fh = open_regular(src)
    except FileNotFoundError:
        raise FetchError(f"{label}: not found at {src}") from None
    except InputFileError as exc:
        raise FetchError(str(exc)) from None
    h, copied = hashlib.sha256(), 0
    with fh, _progress(progress) as bar, open(part, "wb") as out:
        before = os.fstat(fh.fileno())
        task = bar.add_task(label, total=before.st_size)
        for block in iter(lambda: fh.read(CHUNK), b""):
            out.write(block)
            h.update(block)
            copied += len(block)
            bar.update(task, advance=len(block))
        after = os.fstat(fh.fileno())
    change = _change_while_copied(before, after, copied)
    if change:
        part.unlink(missing_ok=True)
        raise FetchError(f"{label}: {src} changed while it was copied ({change}); the copy was not kept and no "
                         "hash was recorded: fetch again once it is complete")
    return h.hexdigest(), before


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


def lock_key(file: DataFile, source: Source) -> str:
    """The key under which a file's first-use hash is kept in hashes.lock.json (a URL's password as ***)."""
    if file.url:
        return f"user:{redact(file.url)}"
    return f"{'mirror' if source.is_mirror else 'site'}:{redact(source.base)}/{file.path}"


def _where(file: DataFile, source: Source) -> tuple[str, bool]:
    """(location, is_local) of a file: a user's own path or URL, else its place in the source."""
    if not file.url:
        return source.locate(file.path), source.is_local
    if file.url.startswith("file://"):
        return urlparse(file.url).path, True
    return file.url, "://" not in file.url


def _expected(file: DataFile, source: Source, manifest: dict[str, dict], lock: HashLock,
              key: str) -> tuple[str | None, str | None, int | None]:
    """(sha256, who pins it, rows) expected of a file: from the mirror's manifest, the registry's pin,
    or the lock file (trust on first use); no sha256 for a file fetched for the first time."""
    expected, pinned_by, expected_rows = None, None, file.rows
    if not file.url and source.is_mirror and manifest:
        if file.path not in manifest:
            raise FetchError(f"{file.path}: not in this mirror (its manifest "
                             f"{source.locate('MANIFEST.tsv')} does not list it)")
        expected, pinned_by = manifest[file.path]["sha256"], f"the manifest {source.locate('MANIFEST.tsv')}"
        expected_rows = _int_or_none(manifest[file.path].get("rows")) or file.rows
    elif not file.url and not source.is_mirror and file.site_sha256:
        expected, pinned_by = file.site_sha256, "the registry's pin of the site's bytes"
    if expected is None:
        expected = lock.get(key)
        if expected:
            pinned_by = (f"{lock.path}, recorded when the file was first fetched (if the new file is right, "
                         f"forget that hash with `rbrepro fetch NAME --forget-hashes` or delete the key {key!r} "
                         "from that file, and fetch again)")
    return expected, pinned_by, expected_rows


def _check_first_copy(part: Path, name: str, fmt: str, rows: int | None, origin: str = "") -> None:
    """Trust on first use: only a copy that looks right and has the expected rows; else it is removed."""
    try:
        check_content(part, name, fmt, rows)
    except ContentCheckError as exc:
        part.unlink(missing_ok=True)
        raise FetchError(f"{exc}{origin}; the file was not kept and no hash was recorded") from None


def _file_lock_path(raw_dir: Path, file: DataFile) -> Path:
    return raw_dir.parent / "locks" / (file.path.replace("/", "__") + ".lock")


def _fetch_own_file(file: DataFile, src: Path, dest: Path, raw_dir: Path, key: str, progress: bool) -> Path:
    """A user's local file, copied into raw/ and copied again whenever it changed: its size and mtime
    are compared with those recorded at the last copy, then (when they differ) its sha256, so an
    edited file is never trained on from a stale copy and a merely touched one keeps its parse.
    A user's file that is gone leaves its last copy in use."""
    with file_lock(_file_lock_path(raw_dir, file)):
        rec = read_record(dest)
        try:
            st = regular_stat(src)
        except FileNotFoundError:
            if rec:
                return dest
            raise FetchError(f"{src}: no such file") from None
        except InputFileError as exc:
            raise FetchError(str(exc)) from None
        if rec and (rec.get("source_size"), rec.get("source_mtime_ns")) == (st.st_size, st.st_mtime_ns):
            return dest  # unchanged since it was copied
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + ".part")
        digest, st = _copy(src, part, src.name, progress)
        if rec and rec.get("sha256") == digest:
            part.unlink()  # touched, not changed: the copy (and its parse) stay
        else:
            _check_first_copy(part, str(src), file.format, file.rows)
            os.replace(part, dest)
        write_record(dest, digest, key, file.rows, source=st)
    return dest


def fetch_file(file: DataFile, source: Source, raw_dir: Path, manifest: dict[str, dict], lock: HashLock,
               progress: bool = True, limits: Limits | None = None) -> Path:
    """Fetch one file into raw_dir/<path>, verified; reuse a verified copy.

    The expected hash comes from the mirror's manifest, the registry's pin, or the lock
    file (trust on first use). A file with none of these is sniffed and its rows counted
    against the registry before its hash is recorded, so a bad first copy is not trusted.
    A user's local file is its own authority (_fetch_own_file).
    """
    dest = raw_dir / file.path
    key = lock_key(file, source)
    where, is_local = _where(file, source)
    if file.url and is_local:
        return _fetch_own_file(file, Path(where), dest, raw_dir, key, progress)
    expected, pinned_by, expected_rows = _expected(file, source, manifest, lock, key)
    with file_lock(_file_lock_path(raw_dir, file)):
        rec = read_record(dest)
        if dest.exists() and expected and rec and rec["sha256"] == expected:
            return dest  # verified before, unchanged since
        if dest.exists() and expected and sha256_file(dest) == expected:
            write_record(dest, expected, key, expected_rows)
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + ".part")
        if is_local:
            digest, _ = _copy(Path(where), part, file.path, progress)
        else:
            digest = _download(where, part, file.path, progress, limits)
        if expected and digest != expected:
            part.unlink(missing_ok=True)
            raise FetchError(f"{file.path}: sha256 mismatch for {where}: got {digest}, expected {expected} from "
                             f"{pinned_by}; the file was not kept")
        if not expected:
            _check_first_copy(part, where if file.url else file.path, file.format, expected_rows,
                              "" if file.url else f" (from {where})")
        os.replace(part, dest)
        if not expected:
            lock.record(key, digest)
        write_record(dest, digest, key, expected_rows)
    return dest


def is_own_local_file(file: DataFile) -> bool:
    """A user's file given as a local path (copied again whenever it changes)."""
    return bool(file.url) and ("://" not in file.url or file.url.startswith("file://"))


def fetch_dataset(spec: DatasetSpec, data_dir: Path, mirror=None, progress: bool = True) -> list[Path]:
    """Fetch and verify every file of a dataset into data_dir/raw (the time limits checked first)."""
    if spec.source.startswith("sklearn:"):
        return []
    if spec.source == "user" and not spec.files:
        raise FetchError(f"{spec.name}: {spec.note}")
    limits = Limits.from_env()
    needs_source = any(not f.url for f in spec.files)  # a user's files come from their own locations
    source = Source.resolve(mirror) if needs_source else Source(SITE_BASE, is_mirror=False)
    manifest = read_manifest(source, limits) if needs_source else {}
    lock = HashLock(Path(data_dir) / "hashes.lock.json")
    return [fetch_file(f, source, Path(data_dir) / "raw", manifest, lock, progress, limits) for f in spec.files]
