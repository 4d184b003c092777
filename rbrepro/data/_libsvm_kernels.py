"""numba kernel that parses a block of LIBSVM text (whole lines) into arrays.

Accepted, as LIBSVM / svmlight readers accept it: `label idx:val idx:val ...` with
one-based, strictly increasing indices; spaces or tabs; Windows line endings; blank
lines and `#` comments (skipped). Rejected with an error code and the byte offset of
the fault: a missing or non-numeric label, a non-numeric value (NaN and inf included),
index 0 or negative, duplicate or unsorted indices, an index above n_features or above
the int32 range (when the width is inferred), a value that overflows float32.
The reference the tests compare against is scikit-learn's `load_svmlight_file`.
"""

import numba as nb
import numpy as np

OK = 0
BAD_LABEL = 1
MISSING_LABEL = 2
BAD_INDEX = 3
INDEX_NOT_POSITIVE = 4
INDEX_NOT_INCREASING = 5
INDEX_TOO_LARGE = 6
BAD_VALUE = 7
MISSING_COLON = 8
INDEX_OUT_OF_RANGE = 9
VALUE_OVERFLOWS = 10

MAX_INDEX = 2**31 - 1  # one-based indices are stored as int32 (idx - 1)
FLOAT32_MAX = 3.4028234663852886e38

MESSAGES = {
    BAD_LABEL: "the label is not a number",
    MISSING_LABEL: "the line has no label (it starts with index:value)",
    BAD_INDEX: "a feature index is not an integer",
    INDEX_NOT_POSITIVE: "feature indices are one-based: found index 0 or a negative index",
    INDEX_NOT_INCREASING: "feature indices must be strictly increasing (duplicate or unsorted index)",
    INDEX_TOO_LARGE: "a feature index exceeds the dataset's number of features",
    BAD_VALUE: "a feature value is not a finite number",
    MISSING_COLON: "expected index:value",
    INDEX_OUT_OF_RANGE: f"a feature index above {MAX_INDEX} (indices are stored as 32-bit integers)",
    VALUE_OVERFLOWS: "a feature value overflows float32 (|value| > 3.4e38)",
}

_NL = 10
_CR = 13
_SP = 32
_TAB = 9
_HASH = 35
_COLON = 58
_POW10 = np.array([10.0 ** k for k in range(23)])


@nb.njit(cache=True)
def count_separators(buf):
    """Upper bounds for one block: (lines, index:value pairs)."""
    lines = 1
    colons = 0
    for b in buf:
        if b == _NL:
            lines += 1
        elif b == _COLON:
            colons += 1
    return lines, colons


@nb.njit(cache=True, inline="always")
def _is_end(b):
    return b == _SP or b == _TAB or b == _NL or b == _CR or b == _HASH


@nb.njit(cache=True)
def _parse_float(buf, pos, end):
    """Parse a decimal number at buf[pos:]; returns (value, new position, ok)."""
    neg = False
    if pos < end and (buf[pos] == 45 or buf[pos] == 43):  # '-' '+'
        neg = buf[pos] == 45
        pos += 1
    mant = np.int64(0)
    n_digits = 0
    exp10 = 0
    seen = False
    while pos < end and 48 <= buf[pos] <= 57:
        seen = True
        if n_digits < 18:
            mant = mant * 10 + (buf[pos] - 48)
            if mant:
                n_digits += 1
        else:
            exp10 += 1
        pos += 1
    if pos < end and buf[pos] == 46:  # '.'
        pos += 1
        while pos < end and 48 <= buf[pos] <= 57:
            seen = True
            if n_digits < 18:
                mant = mant * 10 + (buf[pos] - 48)
                exp10 -= 1
                if mant:
                    n_digits += 1
            pos += 1
    if not seen:
        return 0.0, pos, False
    if pos < end and (buf[pos] == 101 or buf[pos] == 69):  # 'e' 'E'
        pos += 1
        eneg = False
        if pos < end and (buf[pos] == 45 or buf[pos] == 43):
            eneg = buf[pos] == 45
            pos += 1
        e = 0
        eseen = False
        while pos < end and 48 <= buf[pos] <= 57:
            eseen = True
            if e < 10000:
                e = e * 10 + (buf[pos] - 48)
            pos += 1
        if not eseen:
            return 0.0, pos, False
        exp10 += -e if eneg else e
    if pos < end and not _is_end(buf[pos]):
        return 0.0, pos, False
    value = np.float64(mant)
    if exp10 == 0 or mant == 0:
        pass
    elif 0 < exp10 <= 22:
        value = value * _POW10[exp10]
    elif -22 <= exp10 < 0:
        value = value / _POW10[-exp10]
    else:
        value = value * 10.0 ** exp10
    if not np.isfinite(value):
        return 0.0, pos, False
    return (-value if neg else value), pos, True


@nb.njit(cache=True)
def parse_block(buf, n_features, labels, counts, indices, values):  # noqa: C901 (a byte-level state machine)
    """Parse whole lines of buf. Returns (rows, nnz, error code, byte offset of the error).

    One function on purpose: a byte-level state machine over the whole block, which numba compiles
    to one loop over the bytes; split into helpers, the state (position, row, pair) would cross a
    call for every token of the hot loop."""
    end = buf.shape[0]
    pos = 0
    row = 0
    nnz = 0
    while pos < end:
        # start of a line: skip blanks, blank lines and comment lines
        while pos < end and (buf[pos] == _SP or buf[pos] == _TAB or buf[pos] == _CR):
            pos += 1
        if pos >= end:
            break
        if buf[pos] == _NL:
            pos += 1
            continue
        if buf[pos] == _HASH:
            while pos < end and buf[pos] != _NL:
                pos += 1
            continue
        start = pos
        probe = pos
        while probe < end and not _is_end(buf[probe]):
            if buf[probe] == _COLON:
                return row, nnz, MISSING_LABEL, start
            probe += 1
        label, pos, ok = _parse_float(buf, pos, end)
        if not ok:
            return row, nnz, BAD_LABEL, start
        row_nnz = 0
        prev = 0
        while True:
            while pos < end and (buf[pos] == _SP or buf[pos] == _TAB or buf[pos] == _CR):
                pos += 1
            if pos >= end or buf[pos] == _NL:
                pos += 1
                break
            if buf[pos] == _HASH:
                while pos < end and buf[pos] != _NL:
                    pos += 1
                continue
            tok = pos
            neg = False
            if buf[pos] == 45:
                neg = True
                pos += 1
            idx = np.int64(0)
            digits = 0
            while pos < end and 48 <= buf[pos] <= 57:
                if idx < 10 ** 15:
                    idx = idx * 10 + (buf[pos] - 48)
                digits += 1
                pos += 1
            if digits == 0:
                return row, nnz, BAD_INDEX, tok
            if pos >= end or buf[pos] != _COLON:
                if pos < end and _is_end(buf[pos]):
                    return row, nnz, MISSING_COLON, tok
                return row, nnz, BAD_INDEX, tok
            if neg or idx == 0:
                return row, nnz, INDEX_NOT_POSITIVE, tok
            if idx <= prev:
                return row, nnz, INDEX_NOT_INCREASING, tok
            if n_features > 0 and idx > n_features:
                return row, nnz, INDEX_TOO_LARGE, tok
            if idx > MAX_INDEX:
                return row, nnz, INDEX_OUT_OF_RANGE, tok
            pos += 1
            value, pos, ok = _parse_float(buf, pos, end)
            if not ok:
                return row, nnz, BAD_VALUE, tok
            if abs(value) > FLOAT32_MAX:
                return row, nnz, VALUE_OVERFLOWS, tok
            prev = idx
            indices[nnz] = idx - 1
            values[nnz] = value
            nnz += 1
            row_nnz += 1
        labels[row] = label
        counts[row] = row_nnz
        row += 1
    return row, nnz, OK, 0
