"""Verified downloads of registry files from the LIBSVM site or a mirror.

A source is the site (default), or a mirror given as a local directory or an
http(s) base URL in the same layout. Expected sha256, in order: the mirror's own
MANIFEST.tsv (a mirror's re-derived files differ from the site's bytes), a hash
pinned in the registry for the site's bytes, else the hash recorded in the cache's
lock file at the first verified download (trust on first use, enforced afterwards).
A file is streamed to a temporary name, hashed on the way, and moved into place only
once its hash is verified, so a partial or wrong download is never taken for data.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import requests

from rbrepro.data.atomic import atomic_path, write_text_atomic
from rbrepro.data.registry import SITE_BASE, DataFile, DatasetSpec

CHUNK = 1 << 20
RETRIES = 3
TIMEOUT_S = 60


class FetchError(RuntimeError):
    """A file could not be fetched or verified; the message names file and source."""


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
    try:
        if source.is_local:
            path = Path(source.locate("MANIFEST.tsv"))
            if not path.exists():
                return {}
            text = path.read_text()
        else:
            resp = _get(source.locate("MANIFEST.tsv"), stream=False)
            if resp is None:
                return {}
            text = resp.text
    except (OSError, requests.RequestException) as exc:
        raise FetchError(f"cannot read {source.locate('MANIFEST.tsv')}: {exc}") from exc
    rows = csv.DictReader(io.StringIO(text), delimiter="\t")
    if rows.fieldnames is None or "file" not in rows.fieldnames or "sha256" not in rows.fieldnames:
        raise FetchError(f"{source.locate('MANIFEST.tsv')}: expected a tab-separated header with 'file' and 'sha256'")
    return {row["file"]: row for row in rows}


def _get(url: str, stream: bool):
    """GET with retries and backoff; None on 404; raises FetchError otherwise."""
    last = None
    for attempt in range(RETRIES):
        try:
            resp = requests.get(url, stream=stream, timeout=TIMEOUT_S)
            if resp.status_code == 404:
                return None
            resp.raise_for_status()
            return resp
        except requests.RequestException as exc:
            last = exc
            if attempt + 1 < RETRIES:
                time.sleep(0.5 * 2**attempt)
    raise FetchError(f"download of {url} failed after {RETRIES} attempts: {last}")


class HashLock:
    """sha256 of files first fetched without a known hash, enforced from then on."""

    def __init__(self, path: Path):
        self.path = path
        self.hashes: dict[str, str] = json.loads(path.read_text()) if path.exists() else {}

    def get(self, key: str) -> str | None:
        return self.hashes.get(key)

    def record(self, key: str, digest: str) -> None:
        self.hashes[key] = digest
        write_text_atomic(self.path, json.dumps(self.hashes, indent=1, sort_keys=True) + "\n")


def _progress(enabled: bool):
    from rich.console import Console
    from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                               TransferSpeedColumn)

    return Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                    TimeRemainingColumn(), console=Console(stderr=True), disable=not enabled, transient=False)


def _copy_stream(read_block, dest: Path, total: int | None, label: str, progress: bool) -> str:
    h = hashlib.sha256()
    with _progress(progress) as bar, open(dest, "wb") as out:
        task = bar.add_task(label, total=total)
        for block in read_block():
            out.write(block)
            h.update(block)
            bar.update(task, advance=len(block))
    return h.hexdigest()


def fetch_file(file: DataFile, source: Source, raw_dir: Path, manifest: dict[str, dict],
               lock: HashLock, progress: bool = True) -> Path:
    """Fetch one file into raw_dir/<site path>, verified; reuse a verified copy."""
    dest = raw_dir / file.path
    where = source.locate(file.path)
    lock_key = f"{'mirror' if source.is_mirror else 'site'}:{source.base}/{file.path}"
    if source.is_mirror and manifest:
        if file.path not in manifest:
            raise FetchError(f"{file.path}: not in the mirror's manifest {source.locate('MANIFEST.tsv')}")
        expected = manifest[file.path]["sha256"].strip().lower()
    elif not source.is_mirror and file.site_sha256:
        expected = file.site_sha256
    else:
        expected = lock.get(lock_key)

    if dest.exists() and expected and sha256_file(dest) == expected:
        return dest

    with atomic_path(dest) as tmp:
        if source.is_local:
            src = Path(where)
            if not src.exists():
                raise FetchError(f"{file.path}: not found in mirror directory {source.base}")
            with open(src, "rb") as fh:
                digest = _copy_stream(lambda: iter(lambda: fh.read(CHUNK), b""), tmp, src.stat().st_size,
                                      file.path, progress)
        else:
            resp = _get(where, stream=True)
            if resp is None:
                raise FetchError(f"{file.path}: {where} answered 404 Not Found")
            total = int(resp.headers.get("Content-Length", 0)) or None
            try:
                digest = _copy_stream(lambda: resp.iter_content(CHUNK), tmp, total, file.path, progress)
            except requests.RequestException as exc:
                raise FetchError(f"{file.path}: transfer from {where} broke off: {exc}") from exc
        if expected and digest != expected:
            raise FetchError(f"{file.path}: sha256 mismatch for {where}: expected {expected}, got {digest}; "
                             "the file was not kept")
    if not expected:
        lock.record(lock_key, digest)
    return dest


def fetch_dataset(spec: DatasetSpec, data_dir: Path, mirror=None, progress: bool = True) -> list[Path]:
    """Fetch and verify every file of a registry dataset into data_dir/raw."""
    if spec.source.startswith("sklearn:"):
        return []
    if spec.source == "user":
        raise FetchError(f"{spec.name}: {spec.note}")
    source = Source.resolve(mirror)
    manifest = read_manifest(source)
    lock = HashLock(data_dir / "hashes.lock.json")
    return [fetch_file(f, source, data_dir / "raw", manifest, lock, progress) for f in spec.files]

