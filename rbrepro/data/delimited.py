"""CSV / delimited text for the user's own data: label in the first column, optional header."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rbrepro.data.libsvm import Parsed, ParseError, open_text


def parse_csv(path: Path, n_features: int = 0) -> Parsed:
    """Parse a CSV file (first column the label); n_features 0 = as many as the file has."""
    path = Path(path)
    try:
        with open_text(path) as fh:
            head = fh.readline().decode("utf-8", "replace")
        first = head.strip().split(",")
        try:
            [float(v) for v in first]
            header = None
        except ValueError:
            header = 0
        with open_text(path) as fh:
            frame = pd.read_csv(fh, header=header, comment="#", skip_blank_lines=True)
    except (OSError, EOFError, ValueError, pd.errors.ParserError) as exc:
        raise ParseError(f"{path}: not a readable CSV file: {exc}".replace("\n", " ")) from exc
    if frame.empty:
        raise ParseError(f"{path}: no data rows")
    values = frame.apply(pd.to_numeric, errors="coerce")
    bad = values.isna() | ~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))
    if bad.to_numpy().any():
        row, col = np.argwhere(bad.to_numpy())[0]
        line = row + 1 + (1 if header == 0 else 0)
        raise ParseError(f"{path}:{line}: column {col + 1} is not a finite number: {frame.iat[row, col]!r}")
    data = values.to_numpy(dtype=np.float64)
    X = np.ascontiguousarray(data[:, 1:], dtype=np.float32)
    if n_features and X.shape[1] > n_features:
        raise ParseError(f"{path}: {X.shape[1]} feature columns, more than the dataset's {n_features}")
    if n_features and X.shape[1] < n_features:
        X = np.hstack([X, np.zeros((len(X), n_features - X.shape[1]), np.float32)])
    return Parsed(X, data[:, 0].copy())
