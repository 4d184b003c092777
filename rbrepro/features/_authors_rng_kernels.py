"""numba kernels replaying the authors' C++ random draws bit for bit (see `authors_rng`).

The readable plain-Python reference is in `authors_rng.py`; these kernels do the same floating
point operations in the same order (numba, without fastmath, neither reorders nor fuses them
into FMAs), and tests check both against each other and against the real C++.

State is passed explicitly as small arrays, never held in globals:

- minstd_rand0 engine: int64[1], the current x (seed 1 gives ``[1]``);
- glibc random(): int64[32], slots 0..30 the ring of the last 31 values r[i] (mod 2^32) and slot 31
  the position i mod 31 of the next value (see `glibc_seed`);
- normal distribution: float64[2], ``[saved, saved_available]`` (``[0, 0]`` when fresh).
"""

import math

import numba as nb
import numpy as np

_M = 2147483647  # 2^31 - 1
_RAND_MAX = 2147483647.0
_CANON_R = 2147483646  # minstd_rand0: max - min + 1
_CANON_R2 = float(2147483646 * 2147483646)  # r^2, exact in long double, rounded once to double
_MASK32 = 0xFFFFFFFF


@nb.njit(cache=True)
def minstd0_next(engine):
    """Advance minstd_rand0 (x <- 16807 x mod 2^31 - 1) and return the new x."""
    x = (engine[0] * 16807) % _M
    engine[0] = x
    return x


@nb.njit(cache=True)
def glibc_seed(seed):
    """State of glibc random() after srandom(seed) (TYPE_3), with the 310 discarded outputs drawn."""
    state = np.zeros(32, np.int64)
    word = np.int64(seed) & _MASK32
    if word >= 2147483648:
        word -= 4294967296  # the seed is stored as int32_t
    if word == 0:
        word = 1
    state[0] = word & _MASK32
    for i in range(1, 31):
        # glibc's Schrage split, with C's truncating division
        hi = abs(word) // 127773
        if word < 0:
            hi = -hi
        lo = word - hi * 127773
        word = (16807 * lo - 2836 * hi) & _MASK32
        if word >= 2147483648:
            word -= 4294967296
        if word < 0:
            word += _M
        state[i] = word & _MASK32
    state[31] = 34 % 31  # r[31..33] = r[0..2] leave slots 0..2 as they are
    for _ in range(310):
        glibc_next(state)
    return state


@nb.njit(cache=True)
def glibc_next(state):
    """Next rand(): r[i] = r[i-31] + r[i-3] (mod 2^32), returned >> 1."""
    p = state[31]
    q = p - 3
    if q < 0:
        q += 31
    val = (state[p] + state[q]) & _MASK32
    state[p] = val
    state[31] = p + 1 if p < 30 else 0
    return val >> 1


@nb.njit(cache=True)
def canonical(engine):
    """libstdc++'s classic generate_canonical<double, 53>: ((x1 - 1) + (x2 - 1) r) / r^2 in doubles."""
    total = 0.0
    total += float(minstd0_next(engine) - 1) * 1.0
    total += float(minstd0_next(engine) - 1) * float(_CANON_R)
    result = total / _CANON_R2
    if result >= 1.0:
        result = np.nextafter(1.0, 0.0)
    return result


@nb.njit(cache=True)
def normal(engine, nstate):
    """normal_distribution<double>(0, 1): Marsaglia polar method, second value saved in nstate."""
    if nstate[1] != 0.0:
        nstate[1] = 0.0
        ret = nstate[0]
    else:
        while True:
            x = 2.0 * canonical(engine) - 1.0
            y = 2.0 * canonical(engine) - 1.0
            r2 = x * x + y * y
            if not (r2 > 1.0 or r2 == 0.0):
                break
        mult = math.sqrt(-2.0 * math.log(r2) / r2)
        nstate[0] = x * mult
        nstate[1] = 1.0
        ret = y * mult
    return ret * 1.0 + 0.0


@nb.njit(cache=True)
def gamma(engine, nstate, alpha, beta):
    """gamma_distribution<double>(alpha >= 1, beta): Marsaglia-Tsang as libstdc++ evaluates it."""
    a1 = alpha - 1.0 / 3.0
    a2 = 1.0 / math.sqrt(9.0 * a1)
    while True:
        while True:
            n = normal(engine, nstate)
            v = 1.0 + a2 * n
            if not v <= 0.0:
                break
        v = v * v * v
        u = canonical(engine)
        if not (u > 1.0 - 0.0331 * n * n * n * n and math.log(u) > 0.5 * n * n + a1 * (1.0 - v + math.log(v))):
            break
    return a1 * v * beta


@nb.njit(cache=True)
def draw_grids(alpha, beta, deltas, offsets):
    """The authors' loop: fresh engine, gamma distribution and srandom(0); grid-major, dimension-minor.

    deltas[i, j] = gamma draw, offsets[i, j] = (rand() / RAND_MAX) * deltas[i, j].
    """
    engine = np.ones(1, np.int64)
    nstate = np.zeros(2, np.float64)
    rstate = glibc_seed(0)
    n_grids, dim = deltas.shape
    for i in range(n_grids):
        for j in range(dim):
            delta = gamma(engine, nstate, alpha, beta)
            deltas[i, j] = delta
            offsets[i, j] = (float(glibc_next(rstate)) / _RAND_MAX) * delta


# ---- streams, for tests -----------------------------------------------------------------------


@nb.njit(cache=True)
def minstd0_stream(n):
    engine = np.ones(1, np.int64)
    out = np.empty(n, np.int64)
    for k in range(n):
        out[k] = minstd0_next(engine)
    return out


@nb.njit(cache=True)
def glibc_random_stream(n, seed):
    state = glibc_seed(seed)
    out = np.empty(n, np.int64)
    for k in range(n):
        out[k] = glibc_next(state)
    return out


@nb.njit(cache=True)
def canonical_stream(n):
    engine = np.ones(1, np.int64)
    out = np.empty(n, np.float64)
    for k in range(n):
        out[k] = canonical(engine)
    return out


@nb.njit(cache=True)
def normal_stream(n):
    engine = np.ones(1, np.int64)
    nstate = np.zeros(2, np.float64)
    out = np.empty(n, np.float64)
    for k in range(n):
        out[k] = normal(engine, nstate)
    return out


@nb.njit(cache=True)
def gamma_stream(n, alpha, beta):
    engine = np.ones(1, np.int64)
    nstate = np.zeros(2, np.float64)
    out = np.empty(n, np.float64)
    for k in range(n):
        out[k] = gamma(engine, nstate, alpha, beta)
    return out
