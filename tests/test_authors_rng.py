"""The replay of the authors' C++ random draws (rbrepro.features.authors_rng), bit for bit.

Compared against the committed output of tests/data/authors_rng/draws.cpp (always) and against
that program compiled here with g++ (when g++ exists).
"""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rbrepro.features import _authors_rng_kernels as kern
from rbrepro.features import authors_rng as arng

DATA = Path(__file__).parent / "data" / "authors_rng"
STREAMS = ("minstd0", "rand", "rand_seed1", "canonical", "normal", "gamma")


def _parse(lines):
    """draws.cpp output -> ({stream name: values}, [((R, d, sigma, first), deltas, offsets)]).

    Grid rows keep all d+1 columns (column 0 is the authors' dummy dimension).
    """
    streams, cases = {}, []
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        head, *rest = line.split()
        if head in STREAMS:
            streams[head] = [int(v) for v in rest] if head.startswith(("minstd", "rand")) else [float(v) for v in rest]
        elif head == "grids":
            key = (int(rest[0]), int(rest[1]), float(rest[2]), int(rest[3]))
            cases.append((key, [], []))
        elif head in ("delta", "u"):
            rows = cases[-1][1] if head == "delta" else cases[-1][2]
            assert int(rest[0]) == key[3] + len(rows)
            rows.append([float(v) for v in rest[1:]])
        else:
            raise AssertionError(f"unexpected line {line[:40]!r}")
    return streams, [(key, np.array(d, dtype=np.float64), np.array(u, dtype=np.float64)) for key, d, u in cases]


def _check_streams(streams):
    n = 20
    assert list(arng.minstd0_stream(n)) == streams["minstd0"]
    assert list(arng.glibc_random_stream(n, 0)) == streams["rand"]
    assert list(arng.glibc_random_stream(n, 1)) == streams["rand_seed1"]
    assert list(kern.minstd0_stream(n)) == streams["minstd0"]
    assert list(kern.glibc_random_stream(n, 0)) == streams["rand"]
    assert list(kern.glibc_random_stream(n, 1)) == streams["rand_seed1"]
    for name, ref_fn, kern_fn in [
        ("canonical", arng.canonical_stream, kern.canonical_stream),
        ("normal", arng.normal_stream, kern.normal_stream),
        ("gamma", arng.gamma_stream, lambda k: kern.gamma_stream(k, 2.0, 1.0)),
    ]:
        want = np.array(streams[name], dtype=np.float64)
        assert np.array_equal(ref_fn(n), want), name
        assert np.array_equal(kern_fn(n), want), name


def _check_case(key, deltas, offsets, reference=True):
    """Both implementations give the C++ rows (dummy column 0 dropped)."""
    R, d, sigma, first = key
    got = [arng.authors_grids(R, d, sigma)]
    if reference:
        got.append(arng.authors_grids_reference(R, d, sigma))
    for D, U in got:
        assert D.shape == U.shape == (R, d) and D.dtype == U.dtype == np.float64
        assert np.array_equal(D[first:], deltas[:, 1:]), key
        assert np.array_equal(U[first:], offsets[:, 1:]), key


# ---- the committed reference.txt ---------------------------------------------------------------

REFERENCE_STREAMS, REFERENCE_CASES = _parse((DATA / "reference.txt").read_text().splitlines())


def test_reference_file_has_the_expected_cases():
    assert set(REFERENCE_STREAMS) == set(STREAMS)
    assert [c[0] for c in REFERENCE_CASES] == [(4, 3, 1.0, 0), (3, 22, 1.58, 0), (2, 16, 0.01, 0), (79, 780, 1.0, 78)]


def test_streams_match_reference_file():
    _check_streams(REFERENCE_STREAMS)


@pytest.mark.parametrize("case", REFERENCE_CASES, ids=lambda c: "R{}-d{}-s{}-from{}".format(*c[0]))
def test_grids_match_reference_file(case):
    # the last case (grid 78 of R=79, d=780) goes through the rare v <= 0 retry of Marsaglia-Tsang
    _check_case(*case)


# ---- the C++ program, compiled here --------------------------------------------------------------


@pytest.fixture(scope="module")
def draws_exe(tmp_path_factory):
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not found")
    exe = tmp_path_factory.mktemp("authors_rng") / "draws"
    subprocess.run([gxx, "-O0", "-std=c++11", "-o", str(exe), str(DATA / "draws.cpp")], check=True)
    return exe


def _run(exe, *args):
    out = subprocess.run([str(exe), *map(str, args)], check=True, capture_output=True, text=True)
    return _parse(out.stdout.splitlines())


def test_streams_match_cpp(draws_exe):
    streams, _ = _run(draws_exe, "streams")
    assert streams == REFERENCE_STREAMS
    _check_streams(streams)


@pytest.mark.parametrize(
    "R, d, sigma",
    [
        (4, 3, 1.0),
        (3, 22, 1.58),
        (2, 16, 0.01),
        (8, 780, 1.0),
        (8, 780, 0.3),
        (8, 780, 7.25),
        (5, 54, 1e-3),
        (1, 0, 2.0),
    ],
)
def test_grids_match_cpp(draws_exe, R, d, sigma):
    _, [(key, deltas, offsets)] = _run(draws_exe, "grids", R, d, repr(sigma))
    assert key == (R, d, sigma, 0)
    _check_case(key, deltas, offsets, reference=R * d <= 200)


def test_rare_branch_matches_cpp(draws_exe):
    # draw 61231 (grid 78, dimension 313) is the first whose normal gives v = 1 + a2 n <= 0
    _, [(key, deltas, offsets)] = _run(draws_exe, "grids", 80, 780, "0.5", 77)
    _check_case(key, deltas, offsets, reference=False)


# ---- properties ------------------------------------------------------------------------------------


def test_glibc_known_values():
    # the classic first outputs of glibc rand() after srandom(1); srandom(0) means srandom(1)
    assert list(arng.glibc_random_stream(3, 1)) == [1804289383, 846930886, 1681692777]
    assert np.array_equal(arng.glibc_random_stream(50, 0), arng.glibc_random_stream(50, 1))
    assert np.array_equal(kern.glibc_random_stream(50, 0), arng.glibc_random_stream(50, 0))
    assert not np.array_equal(arng.glibc_random_stream(5, 2), arng.glibc_random_stream(5, 1))


def test_minstd0_known_value():
    # the 10000th output of minstd_rand0 seeded with 1 (C++ standard, [rand.predef])
    assert arng.minstd0_stream(10000)[-1] == 1043618065
    assert kern.minstd0_stream(10000)[-1] == 1043618065


def test_nested_across_grids():
    D8, U8 = arng.authors_grids(8, 30, 0.7)
    for k in range(9):
        Dk, Uk = arng.authors_grids(k, 30, 0.7)
        assert np.array_equal(Dk, D8[:k]) and np.array_equal(Uk, U8[:k])


@pytest.mark.parametrize("sigma", [0.01, 0.3, 1.58, 7.25, 1e3])
def test_sigma_only_scales_the_same_draws(sigma):
    # delta = (a1 * v) * (1 / sigma) with the same a1 * v for every sigma (beta = 1 gives a1 * v itself),
    # and u = (rand() / RAND_MAX) * delta with the same rand() stream
    D1, _ = arng.authors_grids(6, 40, 1.0)
    D, U = arng.authors_grids(6, 40, sigma)
    assert np.array_equal(D, D1 * (1.0 / sigma))
    w = (arng.glibc_random_stream(6 * 41, 0).astype(np.float64) / 2147483647.0).reshape(6, 41)[:, 1:]
    assert np.array_equal(U, w * D)


@pytest.mark.parametrize("R, d, sigma", [(6, 40, 0.7), (3, 5, 2.0), (20, 2, 0.05), (0, 7, 1.0), (4, 0, 1.0)])
def test_numba_matches_reference(R, d, sigma):
    D, U = arng.authors_grids(R, d, sigma)
    Dr, Ur = arng.authors_grids_reference(R, d, sigma)
    assert D.shape == Dr.shape == (R, d)
    assert np.array_equal(D, Dr) and np.array_equal(U, Ur)


def test_numba_streams_match_reference_long():
    n = 3000
    assert np.array_equal(kern.minstd0_stream(n), arng.minstd0_stream(n))
    assert np.array_equal(kern.glibc_random_stream(n, 0), arng.glibc_random_stream(n, 0))
    assert np.array_equal(kern.canonical_stream(n), arng.canonical_stream(n))
    assert np.array_equal(kern.normal_stream(n), arng.normal_stream(n))
    assert np.array_equal(kern.gamma_stream(n, 2.0, 0.37), arng.gamma_stream(n, 0.37))


def test_draws_look_like_the_intended_distributions():
    D, U = arng.authors_grids(200, 50, 2.0)
    assert np.all(D > 0) and np.all(U >= 0) and np.all(U < D)
    assert abs(D.mean() - 2.0 / 2.0) < 0.02  # Gamma(2, 1/sigma) has mean 2 / sigma


@pytest.mark.parametrize(
    "args", [(-1, 3, 1.0), (2, -1, 1.0), (2, 3, 0.0), (2, 3, -1.0), (2, 3, float("nan")), (2.5, 3, 1.0)]
)
def test_rejects_bad_arguments(args):
    with pytest.raises(ValueError):
        arng.authors_grids(*args)
    with pytest.raises(ValueError):
        arng.authors_grids_reference(*args)
