"""Moving bytes: an HTTP(S) transfer streamed into a `.part` file, hashed on the way, retried with
backoff, resumed with a Range request where the file is still the same one, and stopped past an
overall deadline or under a minimum rate; and a local copy that refuses a file changing under it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from rbrepro.data.atomic import write_text_atomic
from rbrepro.data.files import CHUNK
from rbrepro.data.inputs import InputFileError, open_regular, redact
from rbrepro.errors import RbreproError
from rbrepro.settings import env_setting

RETRIES = 4

BACKOFF_S = 0.5

CONNECT_TIMEOUT_S = 15.0

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

class FetchError(RbreproError, RuntimeError):
    """A file could not be fetched or verified; the message names file and source (any URL's
    password shown as ***)."""

    def __init__(self, message: str):
        super().__init__(redact(message))

#: the longest reason a network failure is given in (urllib3's nested reprs run to 500 characters)
REASON_CHARS = 160


def _is_timeout(exc: BaseException) -> bool:
    import requests  # here, not at the top: loading data offline (digits, a mirror) never needs it

    return isinstance(exc, requests.Timeout)


def network_reason(exc: BaseException) -> str:
    """A short, plain reason for a failed request: the host that could not be resolved or reached
    (an offline machine), a timeout, else the error's first clause, never urllib3's nested reprs."""
    text = str(exc)
    host = re.search(r"host='([^']+)'", text)
    where = f" {host.group(1)}" if host else ""
    if "NameResolutionError" in text or "Name or service not known" in text or "Temporary failure in name" in text:
        return f"cannot resolve{where} (no network, or no DNS here?)"
    if "Connection refused" in text:
        return f"connection refused by{where or ' the server'}"
    if _is_timeout(exc) or "timed out" in text:
        return f"timed out: no answer from{where or ' the server'} in time"
    first = re.sub(r"\s*\(Caused by .*", "", text)
    first = f"{type(exc).__name__}: {first}"
    return first if len(first) <= REASON_CHARS else first[: REASON_CHARS - 3] + "..."


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

def _request(url: str, headers: dict, stream: bool, timeout: tuple[float, float] | None = None):
    """One GET; None on 404; _Broken on network trouble; FetchError on other HTTP errors."""
    import requests

    try:
        resp = requests.get(url, headers=headers, stream=stream,
                            timeout=timeout or (CONNECT_TIMEOUT_S, read_timeout_s()))
    except requests.RequestException as exc:
        raise _Broken(network_reason(exc)) from exc
    if resp.status_code == 404:
        return None
    if resp.status_code == 416:  # our partial file is not a prefix the server recognizes
        return resp
    if resp.status_code >= 500:
        raise _Broken(f"HTTP {resp.status_code}")
    if resp.status_code >= 400:
        raise FetchError(f"{url} answered HTTP {resp.status_code} {resp.reason}")
    return resp

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
    import requests
    import urllib3

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
    kept = f" (the partial file {part} is kept and will be resumed)" if part.exists() and part.stat().st_size else ""
    raise FetchError(f"{label}: download of {url} failed after {RETRIES} attempts: {last}{kept}")

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
