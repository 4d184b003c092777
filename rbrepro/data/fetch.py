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

import csv
import io
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from rbrepro.data.content import ContentCheckError, check_content
from rbrepro.data.files import sha256_file
from rbrepro.data.inputs import InputFileError, open_regular, redact, regular_stat
from rbrepro.data.records import _SHA256, HashLock, _int_or_none, file_lock, read_record, write_record
from rbrepro.data.registry import SITE_BASE, DataFile, DatasetSpec
from rbrepro.data.transfer import FetchError, Limits, _copy, _download, _read_remote_text

log = logging.getLogger(__name__)

__all__ = ["FetchError", "HashLock", "Source", "fetch_dataset", "fetch_file", "file_lock", "is_own_local_file",
           "lock_key", "read_manifest", "read_record", "sha256_file", "write_record"]



MANIFEST_MAX_BYTES = 64 << 20


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
        log.info("%s: copying the user's file %s", file.path, src)
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
            log.debug("%s: verified copy in %s reused", file.path, raw_dir)
            return dest  # verified before, unchanged since
        if dest.exists() and expected and sha256_file(dest) == expected:
            write_record(dest, expected, key, expected_rows)
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + ".part")
        log.info("%s: fetching from %s", file.path, redact(str(where)))
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
        log.info("%s: fetched, sha256 %s (%s)", file.path, digest[:16],
                 f"checked against {pinned_by}" if expected else "first copy, recorded")
    return dest

def is_own_local_file(file: DataFile) -> bool:
    """A user's file given as a local path (copied again whenever it changes)."""
    return bool(file.url) and ("://" not in file.url or file.url.startswith("file://"))

def fetch_dataset(spec: DatasetSpec, data_dir: Path, mirror=None, progress: bool = True) -> list[Path]:
    """Fetch and verify every file of a dataset into data_dir/raw (the time limits checked first)."""
    if spec.generated:
        return []
    if spec.source == "user" and not spec.files:
        raise FetchError(f"{spec.name}: {spec.note}")
    limits = Limits.from_env()
    needs_source = any(not f.url for f in spec.files)  # a user's files come from their own locations
    source = Source.resolve(mirror) if needs_source else Source(SITE_BASE, is_mirror=False)
    manifest = read_manifest(source, limits) if needs_source else {}
    lock = HashLock(Path(data_dir) / "hashes.lock.json")
    return [fetch_file(f, source, Path(data_dir) / "raw", manifest, lock, progress, limits) for f in spec.files]
