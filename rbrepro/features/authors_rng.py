"""Bit-exact replay of the random grids of the authors' C++ Random Binning code.

The authors' code (teddylfwu/RandomBinning, ``codes_KRR_randbin/randFeature.hpp`` and
``KRR_OneVsAll_RandBin.cpp``) draws, for every sigma::

    srandom(0);                                  // glibc; seed 0 is treated as 1
    Gamma gamma_dist(sigma);                     // fresh std::default_random_engine and
                                                 // std::gamma_distribution<double>(2.0, 1.0/sigma)
    for (i = 0; i < R; i++)                      // grid
      for (j = 0; j < d+1; j++) {                // j = 0 is a dummy: LIBSVM features are 1-based
        delta[i][j] = gamma_dist.generate();
        u[i][j] = ((double)rand()/RAND_MAX)*delta[i][j];
      }

Two independent streams are involved: the gamma widths come from libstdc++'s
``std::default_random_engine`` (``minstd_rand0``) through ``generate_canonical``, the polar
normal method and Marsaglia-Tsang; the offsets come from glibc's ``rand()``.  Everything below
is written from the published definitions of those algorithms, with every double rounding
done in the same order as the C++ (Python floats are IEEE doubles and ``math.log``/``math.sqrt``
call the same libm), so the results agree bit for bit with a g++/glibc build on x86-64.

This module is the readable reference.  ``authors_grids`` runs the same algorithm compiled
with numba (``_authors_rng_kernels``); tests check that both agree with each other and with
the real C++ (``tests/data/authors_rng/draws.cpp``).

Useful consequences: grid i's draws do not depend on the number of grids (the loop is nested
over grids), and the sequence of engine calls does not depend on sigma (it only scales the
final gamma value, ``a1 * v * (1/sigma)``).
"""

import math

import numpy as np

from rbrepro.constraints import check_sigma
from rbrepro.errors import InvalidParameter
from rbrepro.features import _authors_rng_kernels as _k

MINSTD_MODULUS = 2147483647  # 2^31 - 1, shared by minstd_rand0 and glibc's seeding
MINSTD_MULTIPLIER = 16807
RAND_MAX = 2147483647
# generate_canonical<double, 53> on minstd_rand0: range r = max - min + 1 = (2^31 - 2) - 1 + 1
CANONICAL_RANGE = 2147483646
CANONICAL_CALLS = 2  # max(1, (53 + floor(log2 r) - 1) // floor(log2 r)) with floor(log2 r) = 30
GAMMA_ALPHA = 2.0  # the authors' shape parameter


class MinStd0:
    """libstdc++ ``std::minstd_rand0`` (= ``std::default_random_engine``): x <- 16807 x mod (2^31 - 1).

    Default seed 1; outputs lie in [1, 2^31 - 2].
    """

    min = 1
    max = MINSTD_MODULUS - 1

    def __init__(self, seed: int = 1):
        seed %= MINSTD_MODULUS
        self.x = 1 if seed == 0 else seed  # libstdc++ maps a zero state to 1

    def __call__(self) -> int:
        self.x = (MINSTD_MULTIPLIER * self.x) % MINSTD_MODULUS
        return self.x


def _c_div(a: int, b: int) -> int:
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _to_int32(v: int) -> int:
    """Wrap to a signed 32-bit integer, as a store into int32_t does."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


class GlibcRandom:
    """glibc ``random()`` / ``rand()`` after ``srandom(seed)``, default TYPE_3 state (degree 31, separation 3).

    Seeding: r[0] = seed (0 becomes 1); r[i] = 16807 r[i-1] mod (2^31 - 1) for i = 1..30, done with
    glibc's Schrage split (hi = r / 127773, lo = r % 127773, 16807 lo - 2836 hi, + 2^31 - 1 if
    negative) in signed 32-bit arithmetic.  Then r[i] = r[i-31] + r[i-3] (mod 2^32) for i >= 34
    (r[31..33] = r[0..2]) and the k-th output is r[k + 344] >> 1: glibc discards 310 outputs.

    The state is a ring of the last 31 values; ``pos`` is i mod 31 for the next i.
    """

    DEGREE = 31
    SEPARATION = 3
    DISCARD = 310

    def __init__(self, seed: int = 0):
        word = _to_int32(seed)
        if word == 0:
            word = 1
        ring = [word]
        for _ in range(1, self.DEGREE):
            hi = _c_div(word, 127773)
            lo = word - hi * 127773  # C remainder
            word = _to_int32(16807 * lo - 2836 * hi)
            if word < 0:
                word += MINSTD_MODULUS
            ring.append(word & 0xFFFFFFFF)
        self.ring = ring
        # r[31..33] = r[0..2] leave ring slots 0..2 unchanged; the first sum is r[34] (slot 3).
        self.pos = 34 % self.DEGREE
        for _ in range(self.DISCARD):
            self()

    def __call__(self) -> int:
        """Next ``rand()``: r[i] = r[i-31] + r[i-3] mod 2^32, returned >> 1."""
        p = self.pos
        val = (self.ring[p] + self.ring[(p - self.SEPARATION) % self.DEGREE]) & 0xFFFFFFFF
        self.ring[p] = val
        self.pos = (p + 1) % self.DEGREE
        return val >> 1


def generate_canonical(engine: MinStd0) -> float:
    """libstdc++'s classic ``std::generate_canonical<double, 53>`` (GCC <= 13) on minstd_rand0.

    Two engine calls, low part first: sum = (x1 - 1) + (x2 - 1) * r and the result is sum / r^2,
    each operation rounded to double.  ``tmp *= r`` multiplies in long double; r^2 < 2^62 is exact
    there, so tmp is r^2 rounded once to double.  A result that rounds up to 1 becomes the largest
    double below 1.
    """
    total = 0.0
    tmp = 1.0
    for _ in range(CANONICAL_CALLS):
        total += float(engine() - engine.min) * tmp
        tmp = float(int(tmp) * CANONICAL_RANGE)  # exact product in long double, one rounding to double
    result = total / tmp
    if result >= 1.0:
        result = math.nextafter(1.0, 0.0)
    return result


class NormalDistribution:
    """libstdc++ ``std::normal_distribution<double>`` (mean 0, stddev 1): Marsaglia's polar method.

    Each accepted pair yields two values: y * mult is returned and x * mult is kept in ``saved``
    for the next call, so the object carries state between calls.
    """

    def __init__(self):
        self.saved = 0.0
        self.saved_available = False

    def __call__(self, engine: MinStd0) -> float:
        if self.saved_available:
            self.saved_available = False
            ret = self.saved
        else:
            while True:
                x = 2.0 * generate_canonical(engine) - 1.0
                y = 2.0 * generate_canonical(engine) - 1.0
                r2 = x * x + y * y
                if not (r2 > 1.0 or r2 == 0.0):
                    break
            mult = math.sqrt(-2.0 * math.log(r2) / r2)
            self.saved = x * mult
            self.saved_available = True
            ret = y * mult
        return ret * 1.0 + 0.0  # ret * stddev + mean


class GammaDistribution:
    """libstdc++ ``std::gamma_distribution<double>(alpha, beta)`` for alpha >= 1: Marsaglia-Tsang.

    a1 = alpha - 1/3 and a2 = 1 / sqrt(9 a1).  Repeat: n = normal() until v = 1 + a2 n > 0;
    v = v^3; u = canonical(); accept when u <= 1 - 0.0331 n^4 (squeeze) or
    log u <= n^2/2 + a1 (1 - v + log v).  Return a1 v beta.  The normal distribution is a member,
    so its saved second value carries over from one gamma draw to the next.
    """

    def __init__(self, alpha: float = GAMMA_ALPHA, beta: float = 1.0):
        if not alpha >= 1.0:
            raise InvalidParameter("only alpha >= 1 is implemented (the authors use alpha = 2)")
        self.alpha = float(alpha)
        self.beta = float(beta)
        self.a1 = self.alpha - 1.0 / 3.0
        self.a2 = 1.0 / math.sqrt(9.0 * self.a1)
        self.normal = NormalDistribution()

    def __call__(self, engine: MinStd0) -> float:
        a1, a2 = self.a1, self.a2
        while True:
            while True:
                n = self.normal(engine)
                v = 1.0 + a2 * n
                if not v <= 0.0:
                    break
            v = v * v * v
            u = generate_canonical(engine)
            # libstdc++ evaluates these left to right: 0.0331*n*n*n*n and 0.5*n*n.
            if not (u > 1.0 - 0.0331 * n * n * n * n and math.log(u) > 0.5 * n * n + a1 * (1.0 - v + math.log(v))):
                break
        return a1 * v * self.beta


def _check_count(name: str, n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise InvalidParameter(f"{name} must be a non-negative integer, got {n!r}")
    return int(n)


def _check_sigma(sigma: float) -> float:
    """sigma as a float, once constraints.check_sigma (the one rule) accepts it."""
    check_sigma(sigma)
    return float(sigma)


# ---- streams of the low-level pieces (plain Python), for tests against the C++ ---------------


def minstd0_stream(n: int) -> np.ndarray:
    """First n outputs of a default-seeded minstd_rand0."""
    e = MinStd0()
    return np.array([e() for _ in range(_check_count("n", n))], dtype=np.int64)


def glibc_random_stream(n: int, seed: int = 0) -> np.ndarray:
    """First n outputs of glibc rand() after srandom(seed)."""
    g = GlibcRandom(seed)
    return np.array([g() for _ in range(_check_count("n", n))], dtype=np.int64)


def canonical_stream(n: int) -> np.ndarray:
    """First n generate_canonical<double, 53> values on a default-seeded minstd_rand0."""
    e = MinStd0()
    return np.array([generate_canonical(e) for _ in range(_check_count("n", n))], dtype=np.float64)


def normal_stream(n: int) -> np.ndarray:
    """First n normal_distribution<double> values on a default-seeded minstd_rand0."""
    e, nd = MinStd0(), NormalDistribution()
    return np.array([nd(e) for _ in range(_check_count("n", n))], dtype=np.float64)


def gamma_stream(n: int, beta: float = 1.0) -> np.ndarray:
    """First n gamma_distribution<double>(2, beta) values on a default-seeded minstd_rand0."""
    e, gd = MinStd0(), GammaDistribution(GAMMA_ALPHA, beta)
    return np.array([gd(e) for _ in range(_check_count("n", n))], dtype=np.float64)


# ---- the authors' grids -----------------------------------------------------------------------


def _grid_arrays(n_grids: int, n_features: int, sigma: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Validated arguments, and the (n_grids, n_features + 1) arrays the draws fill (column 0: the dummy)."""
    n_grids = _check_count("n_grids", n_grids)
    n_features = _check_count("n_features", n_features)
    shape = (n_grids, n_features + 1)
    return np.empty(shape, dtype=np.float64), np.empty(shape, dtype=np.float64), _check_sigma(sigma)


def authors_grids_reference(n_grids: int, n_features: int, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Plain-Python replay of the authors' loop; slow (a few microseconds a draw), for tests.

    Returns (deltas, offsets), each (n_grids, n_features) float64, for LIBSVM features
    1..n_features; the dummy dimension 0 is drawn (it consumes random numbers) and dropped.
    """
    deltas, offsets, sigma = _grid_arrays(n_grids, n_features, sigma)
    rand = GlibcRandom(0)
    engine = MinStd0()
    gamma = GammaDistribution(GAMMA_ALPHA, 1.0 / sigma)
    for i in range(deltas.shape[0]):
        for j in range(deltas.shape[1]):
            delta = gamma(engine)
            deltas[i, j] = delta
            offsets[i, j] = (float(rand()) / float(RAND_MAX)) * delta
    return deltas[:, 1:].copy(), offsets[:, 1:].copy()


def authors_grids(n_grids: int, n_features: int, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """The authors' grid widths and offsets for one sigma, bit for bit (numba; ~40 ns a draw).

    Returns (deltas, offsets), each (n_grids, n_features) float64: row i is grid i, column j is
    LIBSVM feature j + 1.  The authors' dummy dimension 0 is drawn and dropped.  Grid i does not
    depend on n_grids, so the first k rows are the authors' grids for R = k.
    """
    deltas, offsets, sigma = _grid_arrays(n_grids, n_features, sigma)
    _k.draw_grids(GAMMA_ALPHA, 1.0 / sigma, deltas, offsets)
    return deltas[:, 1:].copy(), offsets[:, 1:].copy()
