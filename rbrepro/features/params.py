"""Validation of the parameters every feature map shares (at fit time, as scikit-learn does)."""

import numbers

import numpy as np

from rbrepro.errors import InvalidParameter


def check_count(name: str, value) -> None:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise InvalidParameter(f"{name} must be a positive integer, got {value!r}")


def check_sigma(value) -> None:
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not np.isfinite(value) or value <= 0:
        raise InvalidParameter(f"sigma must be a positive finite number, got {value!r}")


def check_nonnegative(name: str, value) -> None:
    """A finite real number >= 0 (ridge lambda, the L1 weight)."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not np.isfinite(value) or value < 0:
        raise InvalidParameter(f"{name} must be a finite number >= 0, got {value!r}")


def seed_of(random_state, name: str = "random_state"):
    """What numpy.random.default_rng takes: the seed as given, or one drawn from a legacy RandomState
    instance (scikit-learn passes those). A negative or non-integer seed is refused by name (numpy's
    own error names nothing)."""
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31))
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    if not isinstance(random_state, numbers.Integral) or isinstance(random_state, bool) or random_state < 0:
        raise InvalidParameter(f"{name} must be None, an integer >= 0 or a RandomState, got {random_state!r}")
    return int(random_state)
