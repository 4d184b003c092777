"""Leaf helpers for files on disk: hashing, and opening a (possibly compressed) text file with a
cap on what it may expand to. The other data modules build on these; this one imports no sibling
but `inputs` (regular-file checks), and nothing above the data layer but `memory` (the limit)."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
from pathlib import Path

from rbrepro.data.inputs import open_regular
from rbrepro.errors import RbreproError

CHUNK = 1 << 20
DECOMPRESSED_PER_MEMORY = 4  # default cap on a compressed file's text: this many times the memory limit
_DECOMPRESSORS = {".bz2": lambda fh: bz2.BZ2File(fh, "rb"), ".xz": lambda fh: lzma.LZMAFile(fh, "rb"),
                  ".gz": lambda fh: gzip.GzipFile(fileobj=fh, mode="rb")}


class ParseError(RbreproError, ValueError):
    """A data file that cannot be read as its format; the message names the file."""


class DecompressionLimitError(ParseError):
    """A compressed file that expands past the limit (max_decompressed_bytes); names the file and the limit."""


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open_regular(path) as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def max_decompressed_bytes() -> tuple[int, str]:
    """The most text a compressed file may expand to, and where that limit comes from:
    $RBREPRO_MAX_DECOMPRESSED_GB, else DECOMPRESSED_PER_MEMORY times the memory limit (the parsed
    arrays of a LIBSVM text are smaller than the text, so a larger one could not be loaded anyway)."""
    from rbrepro.memory import GB, env_number, memory_limit_bytes

    gb = env_number("RBREPRO_MAX_DECOMPRESSED_GB")
    if gb is not None:
        return int(gb * GB), "RBREPRO_MAX_DECOMPRESSED_GB"
    return DECOMPRESSED_PER_MEMORY * memory_limit_bytes(), \
        f"{DECOMPRESSED_PER_MEMORY} x the memory limit; set RBREPRO_MAX_DECOMPRESSED_GB or RBREPRO_MEMORY_LIMIT_GB"


class _Capped(io.RawIOBase):
    """A decompressed stream that stops with DecompressionLimitError once more than `limit` bytes
    came out of it; closing it closes the file under it too."""

    def __init__(self, stream, source, name: str, limit: tuple[int, str]):
        self._stream, self._source, self._name = stream, source, name
        self._limit, self._why = limit
        self._seen = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._stream.read(len(buffer))
        self._seen += len(data)
        if self._seen > self._limit:
            raise DecompressionLimitError(
                f"{self._name}: decompresses to more than {self._limit / 1024**3:.3g} GB, the limit ({self._why}); "
                "refused as a possible decompression bomb")
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            try:
                self._stream.close()
            finally:
                self._source.close()
        super().close()


def open_text(path: Path, suffix: str | None = None):
    """A binary file object that decompresses by suffix (path's own, or `suffix` for a file
    still named `.part`), capped at max_decompressed_bytes(). Only a regular file is opened."""
    suffix = (suffix or Path(path).suffix).lower()
    source = open_regular(path)
    if suffix not in _DECOMPRESSORS:
        return source
    try:
        limit = max_decompressed_bytes()
        return io.BufferedReader(_Capped(_DECOMPRESSORS[suffix](source), source, str(path), limit))
    except BaseException:
        source.close()
        raise
