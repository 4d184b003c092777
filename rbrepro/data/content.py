"""Is a freshly transferred file what it claims to be? Checks run before its hash is trusted.

A file fetched with no known hash (a mirror without a MANIFEST, a user's URL) has its
sha256 recorded on first use and enforced afterwards, so a bad first copy would be
trusted for good. Before that happens the bytes are sniffed: the compression suffix must
match the magic bytes, the text must look like LIBSVM (or CSV) data and not a web page,
and where the registry knows the file's row count, the data lines must number exactly that.
Lines are read in pieces of at most SNIFF_BYTES, so a file of one endless line is read in
bounded memory, and a long first line is judged on its first SNIFF_BYTES.
"""

from __future__ import annotations

import lzma
import re
from pathlib import Path

from rbrepro.data.files import DecompressionLimitError, open_text
from rbrepro.data.inputs import open_regular
from rbrepro.errors import RbreproError

SNIFF_BYTES = 1 << 16
MAGIC = {".bz2": b"BZh", ".xz": b"\xfd7zXZ\x00", ".gz": b"\x1f\x8b"}
_LIBSVM_LINE = re.compile(rb"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?(\s+(qid:\S+|\d+:\S+))*\s*(#.*)?$")
_MARKUP = (b"<!doctype", b"<html", b"<head", b"<body", b"<?xml", b"<!--", b"<script", b"{")


class ContentCheckError(RbreproError, ValueError):
    """The bytes are not the data file they should be; the message says what they look like."""


def check_content(path: Path, name: str, fmt: str = "libsvm", expected_rows: int | None = None) -> int:
    """Check the file at `path` (to be stored as `name`); returns its data-line count.

    Raises ContentCheckError naming what is wrong: compression that does not match the
    suffix, markup or binary junk, a first data line that is not LIBSVM, or a row count
    that differs from the registry's.
    """

    suffix = Path(name).suffix.lower()
    with open_regular(path) as fh:
        head = fh.read(8)
    magic = MAGIC.get(suffix)
    if magic and not head.startswith(magic):
        raise ContentCheckError(f"{name}: the bytes are not {suffix[1:]}-compressed (they start {head[:8]!r})")
    rows, first = 0, None
    try:
        with open_text(path, suffix) as fh:
            for body, whole in _line_heads(fh, SNIFF_BYTES):
                if not body or body.startswith(b"#"):
                    continue
                if first is None:
                    first = body
                    _check_first_line(first, whole, name, fmt)
                rows += 1
                if expected_rows is None:  # no count to check: the rest is only read through, in blocks
                    rows += _drain(fh)
                    break
    except DecompressionLimitError as exc:
        raise ContentCheckError(str(exc).replace(str(path), name)) from None
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise ContentCheckError(f"{name}: the compressed stream is damaged or cut short ({exc})") from None
    if first is None:
        raise ContentCheckError(f"{name}: the file holds no data lines")
    if expected_rows is not None and rows != expected_rows:
        raise ContentCheckError(f"{name}: {rows:,} data lines, but this file has {expected_rows:,} rows "
                                "(a truncated or different file)")
    return rows


def _drain(fh) -> int:
    """Read the rest of the stream in large blocks (the decompressor checks it to its end, under its
    cap) at the decompressor's speed, not line by line; returns the newlines seen (roughly the rows)."""
    return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 22), b""))


def _line_heads(fh, limit: int):
    """(head, whole) for each line: its first `limit` bytes, stripped, and whether that is the whole
    line. A longer line is read on in pieces of `limit` bytes and the rest dropped."""
    while True:
        piece = fh.readline(limit)
        if not piece:
            return
        head = piece.strip()
        whole = piece.endswith(b"\n") or len(piece) < limit  # a shorter piece ends at the end of the file
        while not (piece.endswith(b"\n") or len(piece) < limit):
            piece = fh.readline(limit)
            head = head or piece.strip()  # the first piece was all blanks
        yield head[:limit], whole


def _check_first_line(line: bytes, whole: bool, name: str, fmt: str) -> None:
    """`line`: the first data line, or its first SNIFF_BYTES when not `whole` (then judged up to its
    last blank, as the token the cut falls in is incomplete)."""
    lowered = line[:64].lower()
    if lowered.startswith(_MARKUP) or b"\x00" in line[:4096]:
        raise ContentCheckError(f"{name}: the bytes look like a web page or binary data, not {fmt} text "
                                f"(first line starts {line[:40]!r})")
    judged = line if whole else line[: max(line.rfind(b" "), line.rfind(b"\t"), 0)]
    if fmt == "libsvm" and not (judged and _LIBSVM_LINE.match(judged)):
        raise ContentCheckError(f"{name}: the first data line is not LIBSVM 'label index:value ...' "
                                f"(it starts {line[:40]!r})")
