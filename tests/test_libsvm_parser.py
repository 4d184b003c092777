"""The streaming LIBSVM parser: agreement with scikit-learn, and what it accepts or rejects."""

import bz2
import lzma

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from rbrepro.data.files import ParseError
from rbrepro.data.libsvm import parse_libsvm


def _dense(parsed):
    return parsed.X.toarray() if sp.issparse(parsed.X) else parsed.X


def _random_libsvm(rng, n, d, density):
    lines = []
    for _ in range(n):
        cols = np.flatnonzero(rng.random(d) < density)
        vals = rng.standard_normal(len(cols)) * 10.0 ** rng.integers(-6, 6, len(cols))
        label = rng.integers(1, 4)
        lines.append(f"{label} " + " ".join(f"{c + 1}:{v:.9g}" for c, v in zip(cols, vals)))
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("block_bytes", [64, 1000, 16 << 20])
def test_agrees_with_scikit_learn_across_block_boundaries(tmp_path, block_bytes):
    rng = np.random.default_rng(0)
    path = tmp_path / "r.txt"
    path.write_bytes(_random_libsvm(rng, 300, 40, 0.3))
    ref_X, ref_y = load_svmlight_file(str(path), n_features=40, zero_based=False, dtype=np.float64)
    parsed = parse_libsvm(path, 40, block_bytes=block_bytes)
    np.testing.assert_array_equal(parsed.y, ref_y)
    np.testing.assert_allclose(_dense(parsed), ref_X.toarray().astype(np.float32), rtol=1e-7)


def test_compressed_variants_parse_the_same(tmp_path):
    text = _random_libsvm(np.random.default_rng(1), 100, 10, 0.9)
    (tmp_path / "a").write_bytes(text)
    (tmp_path / "a.bz2").write_bytes(bz2.compress(text))
    (tmp_path / "a.xz").write_bytes(lzma.compress(text))
    ref = _dense(parse_libsvm(tmp_path / "a", 10))
    for name in ("a.bz2", "a.xz"):
        np.testing.assert_array_equal(_dense(parse_libsvm(tmp_path / name, 10)), ref)


@pytest.mark.parametrize("text, X, y", [
    (b"1 1:0.5 3:2\n-1 2:1e-3\n", [[0.5, 0, 2], [0, 1e-3, 0]], [1, -1]),
    (b"1 1:0.5\r\n-1 2:1\r\n", [[0.5, 0, 0], [0, 1, 0]], [1, -1]),          # Windows line endings
    (b"\n1 1:0.5\n\n   \n-1 2:1\n\n", [[0.5, 0, 0], [0, 1, 0]], [1, -1]),  # blank lines
    (b"# header\n1 1:0.5 # note\n-1\t2:1\n", [[0.5, 0, 0], [0, 1, 0]], [1, -1]),  # comments, tabs
    (b"+1 1:+.5 3:-2.E1\n2.5\n", [[0.5, 0, -20], [0, 0, 0]], [1, 2.5]),     # signs, no features
    (b"1 1:0.5", [[0.5, 0, 0]], [1]),                                     # no final newline
])
def test_accepts_what_libsvm_accepts(tmp_path, text, X, y):
    path = tmp_path / "ok.txt"
    path.write_bytes(text)
    parsed = parse_libsvm(path, 3)
    np.testing.assert_allclose(_dense(parsed), np.array(X, dtype=np.float32))
    np.testing.assert_array_equal(parsed.y, y)


@pytest.mark.parametrize("text, line, fragment", [
    (b"1 1:0.5\n1 1:abc\n", 2, "value is not a finite number"),
    (b"1 1:0.5\n1 1:nan\n", 2, "value is not a finite number"),
    (b"1 1:inf\n", 1, "value is not a finite number"),
    (b"1 1:1e999\n", 1, "value is not a finite number"),
    (b"1 0:1\n", 1, "one-based"),
    (b"1 1:1\n\n1 -2:1\n", 3, "one-based"),
    (b"1 2:1 2:3\n", 1, "strictly increasing"),
    (b"1 3:1 2:3\n", 1, "strictly increasing"),
    (b"1 1:1\n1:0.5 2:1\n", 2, "no label"),
    (b"abc 1:1\n", 1, "label is not a number"),
    (b"1 1:1 5:1\n", 1, "exceeds the dataset's number of features (4)"),
    (b"1 x:1\n", 1, "not an integer"),
    (b"1 1 2\n", 1, "expected index:value"),
    (b"1 99999999999999999999:1\n", 1, "exceeds"),
    (b"\x00\xff\xfe junk\n", 1, "label is not a number"),
])
def test_rejects_with_file_and_line(tmp_path, text, line, fragment):
    path = tmp_path / "bad.txt"
    path.write_bytes(text)
    with pytest.raises(ParseError) as info:
        parse_libsvm(path, 4)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: ") and fragment in message and "\n" not in message


def test_empty_file_and_truncated_archives(tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    with pytest.raises(ParseError, match="no data rows"):
        parse_libsvm(tmp_path / "empty.txt", 3)
    (tmp_path / "only-comments.txt").write_bytes(b"# nothing\n\n")
    with pytest.raises(ParseError, match="no data rows"):
        parse_libsvm(tmp_path / "only-comments.txt", 3)
    text = _random_libsvm(np.random.default_rng(2), 2000, 10, 0.5)
    for name, packed in (("t.bz2", bz2.compress(text)), ("t.xz", lzma.compress(text))):
        (tmp_path / name).write_bytes(packed[: len(packed) // 2])
        with pytest.raises(ParseError, match="truncated"):
            parse_libsvm(tmp_path / name, 10)
    (tmp_path / "fake.bz2").write_bytes(b"1 1:0.5\n")  # not what the suffix says
    with pytest.raises(ParseError, match=str(tmp_path / "fake.bz2")):
        parse_libsvm(tmp_path / "fake.bz2", 10)


def test_a_line_error_deep_in_a_large_file_reports_the_right_line(tmp_path):
    lines = [b"1 1:0.5 2:0.25"] * 50000
    lines[41234] = b"1 1:0.5 2:oops"
    path = tmp_path / "big.txt"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(ParseError, match=r"big.txt:41235: "):
        parse_libsvm(path, 2, block_bytes=4096)


def test_the_susy_missing_space_is_repaired_exactly_and_named(tmp_path):
    """The site's SUSY.xz runs feature 13's value into '14:' on one line (libsvmdata#33): that exact
    defect, and only it, is repaired, also when a block boundary cuts it, and the parse says so."""
    import lzma

    from rbrepro.data.files import ParseError
    from rbrepro.data.libsvm import parse_libsvm
    from rbrepro.data.registry import REGISTRY, SUSY_MISSING_SPACE

    good = "1 1:0.5 13:0.25 14:0.75\n"
    bad = "0 1:0.1 13:6.646450757980346680e-0114:8.746069669723510742e-01 18:1\n"
    path = tmp_path / "SUSY.xz"
    path.write_bytes(lzma.compress((good * 7 + bad + good * 3).encode()))
    with pytest.raises(ParseError, match=r"SUSY.xz:8:"):
        parse_libsvm(path, 18)
    repairs = REGISTRY["SUSY"].train.repairs
    assert repairs == (SUSY_MISSING_SPACE,)
    for block in (1 << 20, 64, 97, 211):  # whole, and cut inside the defect at several places
        parsed = parse_libsvm(path, 18, block_bytes=block, repairs=repairs)
        assert parsed.X.shape == (11, 18) and len(parsed.repairs) == 1 and parsed.repairs[0].startswith("1 x ")
        row = parsed.X[7].toarray().ravel()
        assert row[12] == np.float32(0.6646450757980347) and row[13] == np.float32(0.8746069669723511)
    clean = tmp_path / "clean.xz"
    clean.write_bytes(lzma.compress((good * 4).encode()))
    assert parse_libsvm(clean, 18, repairs=repairs).repairs == ()
    another = tmp_path / "other.xz"  # a similar but different defect is not "repaired"
    another.write_bytes(lzma.compress("0 13:6.6e-0114:8.7e-01\n".encode()))
    with pytest.raises(ParseError):
        parse_libsvm(another, 18, repairs=repairs)
