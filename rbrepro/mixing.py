"""SplitMix64's finalizer, written once: a bijective mix of 64-bit integers, the uniform bits that
Random Binning's fixed feature multipliers and early stopping's held-out rows are drawn from."""

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def splitmix64(z) -> np.ndarray:
    """The finalizer on uint64 values (wrapping arithmetic, so no overflow warning)."""
    with np.errstate(over="ignore"):
        z = np.asarray(z, dtype=np.uint64) + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))
