"""CSV / delimited text for the user's own data: label in the first column, optional header.

Labels are numbers, or class names: when any label is text that is not a number, every label
is a name (so "1" and "cat" are two names), y holds each row's index into the sorted names,
and `Parsed.classes` holds the names.

Blank lines and `#` comments (whole-line or trailing) are skipped, and every error names
the file's own line number, counting the skipped lines. The first data line is a header
only when every field is a name (non-empty, not a number, quotes removed as a CSV reader removes
them), so a first row with a typo or a missing value is an error on line 1 rather than silently
dropped as a header, and a quoted first row of numbers is data.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from rbrepro.data.files import ParseError, open_text
from rbrepro.data.inputs import InputFileError
from rbrepro.data.libsvm import Parsed

FLOAT32_MAX = float(np.finfo(np.float32).max)


#: header names that say "this column is the label" (a CSV whose label sits elsewhere is refused)
LABEL_NAMES = ("label", "labels", "target", "class")

def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


#: bytes a CSV text costs in memory per byte of text while it is read (the bytes, the decoded text,
#: its lines, pandas' string frame and the float64 values)
CSV_BYTES_PER_TEXT_BYTE = 12


def _read_checked(fh, path: Path, memory_limit_gb: float | None = None) -> bytes:
    """The whole text, read in blocks; refused by the memory model once what has come so far shows
    that parsing it would pass the memory limit (a CSV bomb stops early, naming the file)."""
    from rbrepro.memory import check_memory

    parts, seen = [], 0
    for block in iter(lambda: fh.read(1 << 24), b""):
        seen += len(block)
        check_memory(f"{path}: reading its CSV text ({seen:,} bytes so far, and counting)",
                     CSV_BYTES_PER_TEXT_BYTE * seen, memory_limit_gb)
        parts.append(block)
    return b"".join(parts)


def _data_lines(path: Path, memory_limit_gb: float | None = None) -> tuple[list[str], list[int]]:
    """The lines that hold data (comments and blanks removed) and their 1-based line numbers."""
    try:
        with open_text(path) as fh:
            raw = _read_checked(fh, path, memory_limit_gb)
    except (ParseError, InputFileError):  # they name the file and what is wrong already
        raise
    except (OSError, EOFError, ValueError) as exc:  # truncated archives raise EOFError / lzma errors
        raise ParseError(f"{path}: not a readable CSV file: {exc}".replace("\n", " ")) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ParseError(f"{path}:{line}: not UTF-8 text (byte {exc.start}); is this a CSV file?") from None
    lines, numbers = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        body = line.split("#", 1)[0].strip()
        if body:
            lines.append(body)
            numbers.append(number)
    return lines, numbers


def _fields(line: str) -> list[str]:
    """The fields of one CSV line as a CSV reader sees them (quotes removed), stripped."""
    return [field.strip() for field in next(csv.reader([line]), [])]


def parse_csv(path: Path, n_features: int = 0, label_column: int | None = 0,
              memory_limit_gb: float | None = None) -> Parsed:
    """Parse a CSV file; n_features 0 = as many as the file has. `label_column`: the label's column
    (0, the first, by default; -1 the last), or None for rows without a label (y is then NaN)."""
    path = Path(path)
    lines, numbers = _data_lines(path, memory_limit_gb)
    fields = _fields(lines[0]) if lines else []
    header = bool(fields) and all(fields) and not any(map(_is_number, fields))
    header_line = numbers[0] if header else 0
    if header:
        lines, numbers = lines[1:], numbers[1:]  # a header: names in every column, no numbers
    if not lines:
        raise ParseError(f"{path}: no data rows")
    width = lines[0].count(",") + 1
    if width < (1 if label_column is None else 2):
        raise ParseError(f"{path}:{numbers[0]}: one column only; expected the label then at least one feature, "
                         "separated by commas")
    for body, number in zip(lines, numbers):
        if body.count(",") + 1 != width:
            raise ParseError(f"{path}:{number}: {body.count(',') + 1} columns, but line {numbers[0]} has {width}")
    if label_column is not None and not -width <= label_column < width:
        raise ParseError(f"{path}: label column {label_column} does not exist; the file has {width} columns")
    named = [i for i, name in enumerate(fields) if name.strip().strip('"').lower() in LABEL_NAMES] if header else []
    if label_column is not None and named and label_column % width not in named:
        raise ParseError(f"{path}:{header_line}: the header names column {named[0] + 1} "
                         f"{fields[named[0]].strip()!r}, but the label is read from column {label_column % width + 1}; "
                         f"give --label-column {named[0]} (or label_column: {named[0]} in a datasets file)")
    import pandas as pd  # here, not at import: a LIBSVM-only run never pays pandas' 0.2 s import

    frame = pd.read_csv(io.StringIO("\n".join(lines)), header=None, dtype=str, keep_default_na=False)
    values = frame.apply(lambda col: pd.to_numeric(col.str.strip(), errors="coerce")).to_numpy(dtype=np.float64)
    if label_column is None:  # no label: a NaN label column in front, so the checks below stay as they are
        values, in_file = np.hstack([np.full((len(values), 1), np.nan), values]), [-1, *range(width)]
    else:  # the label to the front, the features in their order
        in_file = [label_column % width] + [c for c in range(width) if c != label_column % width]
        values = values[:, in_file]
    classes: tuple[str, ...] = ()
    if label_column is not None:
        names = frame.iloc[:, label_column % width].str.strip().str.strip('"').to_numpy(dtype=str)
        if any(name and not _is_number(name) for name in names):  # text labels: class names, none empty
            if not all(names):
                row = int(np.flatnonzero(names == "")[0])
                raise ParseError(f"{path}:{numbers[row]}: column {label_column % width + 1} (the label) is empty; "
                                 "in a file of class names every row needs one")
            classes = tuple(sorted(set(names.tolist())))
            values[:, 0] = np.searchsorted(np.array(classes), names)
    bad = ~np.isfinite(values)
    bad[:, 0] &= label_column is not None
    bad[:, 1:] |= np.abs(values[:, 1:]) > FLOAT32_MAX  # features are stored as float32
    if bad.any():
        row, col = np.argwhere(bad)[0]
        if col == 0:  # the label
            raise ParseError(f"{path}:{numbers[row]}: column {in_file[0] + 1} (the label) is "
                             f"{frame.iat[row, in_file[0]]!r}, not a finite number (labels are numbers, or class "
                             "names in every row)")
        what = "beyond float32's range (±3.4e38)" if np.isfinite(values[row, col]) else "not a finite number"
        raise ParseError(f"{path}:{numbers[row]}: column {in_file[col] + 1} is {what}: "
                         f"{frame.iat[row, in_file[col]]!r}")
    X = np.ascontiguousarray(values[:, 1:], dtype=np.float32)
    if n_features and X.shape[1] > n_features:
        raise ParseError(f"{path}: {X.shape[1]} feature columns, more than the dataset's {n_features}")
    if n_features and X.shape[1] < n_features:
        X = np.hstack([X, np.zeros((len(X), n_features - X.shape[1]), np.float32)])
    return Parsed(X, values[:, 0].copy(), classes=classes)
