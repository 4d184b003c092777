"""LIBSVM text -> a binary cache that loads in well under a second.

The text is decompressed (.bz2, .xz, .gz or plain) and parsed in blocks of whole lines
by a numba kernel (`_libsvm_kernels`), so the text is never held in memory at once and
every error names the file and line. A compressed file that expands past a limit tied to
the memory limit is refused while it streams (a decompression bomb is never read to the
end), and only regular files are opened (inputs.open_regular). The parsed
matrix is cached as an uncompressed .npz beside a record of the source's sha256, so a
changed source is re-parsed. Dense float32 is stored when at least half the entries
are non-zero, CSR float32 otherwise.
"""

from __future__ import annotations

import json
import lzma
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from rbrepro.data import _libsvm_kernels as _k
from rbrepro.data.atomic import atomic_path
from rbrepro.data.files import (
    ParseError,
    open_text,
    sha256_file,
)

CACHE_FORMAT = 1
DENSE_IF_DENSITY_AT_LEAST = 0.5
BLOCK_BYTES = 16 << 20
MAX_LINE_BYTES = 64 << 20


@dataclass
class Parsed:
    X: np.ndarray | sp.csr_matrix
    y: np.ndarray
    repairs: tuple[str, ...] = ()   # the known defects of the source found and repaired (provenance)
    classes: tuple[str, ...] = ()   # class names (a CSV's text labels): y holds each row's index into them


class _Repairing:
    """A binary reader that replaces exact byte strings (a source's known defects) in the stream,
    also across block boundaries, and counts each replacement. Nothing else is touched."""

    def __init__(self, fh, repairs: tuple[tuple[bytes, bytes], ...]):
        self._fh, self._repairs = fh, repairs
        self._keep = max((len(bad) for bad, _ in repairs), default=1) - 1
        self._held = b""
        self.counts = [0] * len(repairs)

    def read(self, size: int) -> bytes:
        chunk = self._fh.read(size)
        data = self._held + chunk
        for i, (bad, good) in enumerate(self._repairs):
            self.counts[i] += data.count(bad)
            data = data.replace(bad, good)
        if chunk and len(data) > self._keep:  # hold back a tail that may begin a defect the next block ends
            data, self._held = data[: len(data) - self._keep], data[len(data) - self._keep:]
        else:
            self._held = b""
        return data


#: bytes the parsed arrays hold per row (label, pair count) and per index:value pair (int32 + float32)
BYTES_PER_ROW, BYTES_PER_PAIR = 16, 8


def _check_parse_memory(name: str, line: int, rows: int, pairs: int, memory_limit_gb: float | None = None) -> None:
    """Refuse, as soon as the arrays parsed so far show it, a file whose arrays (held in parts, then
    joined: twice their size at the end) would pass the memory limit: a decompression bomb of valid
    lines stops here in seconds, naming the file and the line reached, instead of running out of memory."""
    from rbrepro.memory import check_memory

    check_memory(f"{name}: parsing ({rows:,} rows and {pairs:,} values by line {line:,}, and counting)",
                 2.0 * (BYTES_PER_ROW * rows + BYTES_PER_PAIR * pairs), memory_limit_gb)


def _parse_stream(fh, n_features: int, name: str, block_bytes: int,
                  memory_limit_gb: float | None = None) -> tuple[sp.csr_matrix, np.ndarray]:
    """Parse a binary LIBSVM stream block by block (never the whole text in memory)."""
    labels_parts, counts_parts, index_parts, value_parts = [], [], [], []
    lines_before = held_rows = held_pairs = 0
    tail = b""
    while True:
        chunk = fh.read(block_bytes)
        at_eof = not chunk
        data = tail + chunk
        if at_eof:
            if not data:
                break
            block, tail = data + b"\n", b""
        else:
            cut = data.rfind(b"\n")
            if cut < 0:
                tail = data
                if len(tail) > MAX_LINE_BYTES:
                    raise ParseError(f"{name}:{lines_before + 1}: a line longer than {MAX_LINE_BYTES} bytes")
                continue
            block, tail = data[: cut + 1], data[cut + 1:]
        buf = np.frombuffer(block, dtype=np.uint8)
        max_rows, max_pairs = _k.count_separators(buf)
        labels = np.empty(max_rows, np.float64)
        counts = np.empty(max_rows, np.int64)
        indices = np.empty(max_pairs, np.int32)
        values = np.empty(max_pairs, np.float32)
        rows, nnz, code, where = _k.parse_block(buf, n_features, labels, counts, indices, values)
        if code != _k.OK:
            line = lines_before + block.count(b"\n", 0, where) + 1
            start = block.rfind(b"\n", 0, where) + 1
            stop = block.find(b"\n", where)
            text = block[start: stop if stop >= 0 else len(block)].decode("utf-8", "replace").strip()
            snippet = text if len(text) <= 60 else text[:57] + "..."
            raise ParseError(f"{name}:{line}: {_k.MESSAGES[code]}"
                             + (f" ({n_features})" if code == _k.INDEX_TOO_LARGE else "") + f": {snippet!r}")
        lines_before += block.count(b"\n")
        held_rows, held_pairs = held_rows + rows, held_pairs + nnz
        _check_parse_memory(name, lines_before, held_rows, held_pairs, memory_limit_gb)
        labels_parts.append(labels[:rows].copy())
        counts_parts.append(counts[:rows].copy())
        index_parts.append(indices[:nnz].copy())
        value_parts.append(values[:nnz].copy())
        if at_eof:
            break
    y = np.concatenate(labels_parts) if labels_parts else np.empty(0)
    indptr = np.zeros(len(y) + 1, dtype=np.int64)
    if len(y):
        np.cumsum(np.concatenate(counts_parts), out=indptr[1:])
    indices = np.concatenate(index_parts) if index_parts else np.empty(0, np.int32)
    values = np.concatenate(value_parts) if value_parts else np.empty(0, np.float32)
    width = n_features if n_features > 0 else (int(indices.max()) + 1 if len(indices) else 0)
    X = sp.csr_matrix((values, indices, indptr), shape=(len(y), width))
    return X, y


def parse_libsvm(path: Path, n_features: int, block_bytes: int = BLOCK_BYTES,
                 repairs: tuple[tuple[bytes, bytes], ...] = (), memory_limit_gb: float | None = None) -> Parsed:
    """Parse a one-based LIBSVM file (plain, .bz2, .xz or .gz) into float32 features and labels.

    Streams the decompressed text in blocks, so memory holds the arrays, never the text.
    A file with fewer columns than n_features is padded; an index above it is an error.
    `repairs`: (defect, fix) byte strings of a source's known defects (the registry's), replaced
    exactly where found and listed in the result's `repairs`.
    """
    path = Path(path)
    try:
        with open_text(path) as raw:
            fh = _Repairing(raw, repairs) if repairs else raw
            X, y = _parse_stream(fh, n_features, str(path), block_bytes, memory_limit_gb)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise ParseError(f"{path}: cannot read the file ({type(exc).__name__}: {exc}); "
                         "is it truncated or not in the format its suffix says?") from exc
    if X.shape[0] == 0:
        raise ParseError(f"{path}: no data rows")
    density = X.nnz / max(1, X.shape[0] * X.shape[1])
    found = tuple(f"{n} x {bad.decode(errors='replace')!r} -> {good.decode(errors='replace')!r}"
                  for (bad, good), n in zip(repairs, fh.counts if repairs else ()) if n)
    return Parsed(X.toarray() if density >= DENSE_IF_DENSITY_AT_LEAST else X, y, found)


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def save_cache(parsed: Parsed, dest: Path, source_sha256: str) -> None:
    """Write the parsed arrays atomically, then the cache file's own sha256 beside it."""
    meta = json.dumps({"format": CACHE_FORMAT, "source_sha256": source_sha256, "repairs": list(parsed.repairs),
                       "classes": list(parsed.classes)})
    arrays = {"y": parsed.y, "meta": np.array(meta)}
    if sp.issparse(parsed.X):
        arrays.update(data=parsed.X.data, indices=parsed.X.indices, indptr=parsed.X.indptr,
                      shape=np.array(parsed.X.shape))
    else:
        arrays["X"] = parsed.X
    with atomic_path(dest) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
        digest = sha256_file(tmp)
    with atomic_path(_sidecar(dest)) as tmp:
        tmp.write_text(digest + "\n")


def load_cache(path: Path, source_sha256: str) -> Parsed | None:
    """The cached parse, or None if absent, damaged (its sha256 differs), stale or of another format."""
    if not path.exists() or not _sidecar(path).exists():
        return None
    try:
        if sha256_file(path) != _sidecar(path).read_text().strip():
            return None
        with np.load(path, allow_pickle=False) as npz:
            meta = json.loads(str(npz["meta"]))
            if meta.get("format") != CACHE_FORMAT or meta.get("source_sha256") != source_sha256:
                return None
            if "X" in npz.files:
                X = npz["X"]
            else:
                X = sp.csr_matrix((npz["data"], npz["indices"], npz["indptr"]), shape=tuple(npz["shape"]))
            return Parsed(X, npz["y"], tuple(meta.get("repairs", ())), tuple(meta.get("classes", ())))
    except (OSError, ValueError, KeyError, json.JSONDecodeError):
        return None
