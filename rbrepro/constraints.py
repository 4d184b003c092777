"""Parameters validated declaratively, as scikit-learn's `_parameter_constraints` do: an estimator
(or feature map) lists, per parameter, the values it takes, and one function checks them all at the
boundary (fit), naming the parameter, what it takes and what it got.

    _parameter_constraints = {"lam": [Interval(float, 0, None)], "solver": [Options("cg", "direct")],
                              "random_state": ["random_state"], "memory_limit_gb": [None, Interval(float, 0, None,
                              closed="neither")]}

A constraint is an Interval, Options, a type, None (the value None), "boolean" (True / False) or
"random_state" (None, an int >= 0, or a numpy RandomState / Generator); a parameter passes when it
meets any of its constraints.

The rules every feature map, estimator, the cell, the stopping rule and the CLI share are named here once (COUNT, SIGMA,
NONNEGATIVE, ITERATIONS, TOLERANCE, FRACTION) and read through `check` (one parameter) or the helpers check_count, check_sigma and
check_nonnegative; `seed_of` turns a checked random_state into what numpy.random.default_rng takes.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from rbrepro.errors import InvalidParameter


@dataclass(frozen=True)
class Interval:
    """A real (float) or an integer (int) in [low, high]; `closed` says which ends belong ("both",
    "left", "right", "neither"); None is an open end. Booleans are never numbers here."""

    kind: type
    low: float | None
    high: float | None
    closed: str = "both"
    #: how messages name the range ("a positive integer"); by default it is spelled from the bounds
    text: str | None = None

    def accepts(self, value) -> bool:
        if _is_bool(value) or not isinstance(value, numbers.Real):
            return False
        if self.kind is int and not isinstance(value, numbers.Integral):
            return False
        if self.kind is not int and not math.isfinite(float(value)):
            return False
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and (value < self.low or (value == self.low and not left)):
            return False
        return not (self.high is not None and (value > self.high or (value == self.high and not right)))

    def __str__(self) -> str:
        if self.text:
            return self.text
        what = "an integer" if self.kind is int else "a number"
        lo = "" if self.low is None else f"{'>=' if self.closed in ('both', 'left') else '>'} {self.low:g}"
        hi = "" if self.high is None else f"{'<=' if self.closed in ('both', 'right') else '<'} {self.high:g}"
        return " ".join([what, " and ".join(filter(None, (lo, hi)))]).strip()


class Options:
    """One of these values."""

    def __init__(self, *values):
        self.values = tuple(values)

    def accepts(self, value) -> bool:
        """Equal to one of the values, and of its kind: True is not 1, "1" is not 1."""
        for option in self.values:
            if isinstance(option, bool) or _is_bool(value):
                if isinstance(option, bool) and _is_bool(value) and bool(value) == option:
                    return True
            elif isinstance(value, type(option)) and value == option:
                return True
        return False

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


def _is_bool(value) -> bool:
    import numpy as np

    return isinstance(value, (bool, np.bool_))  # numpy's bool too


def _accepts(constraint, value) -> bool:
    if constraint is None:
        return value is None
    if constraint == "boolean":
        return _is_bool(value)
    if constraint == "random_state":
        import numpy as np

        return value is None or isinstance(value, (np.random.RandomState, np.random.Generator)) or \
            (isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0)
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    return constraint.accepts(value)


def _describe(constraint) -> str:
    return {None: "None", "boolean": "True or False",
            "random_state": "None, an integer >= 0 or a numpy random generator"}.get(
        constraint if not isinstance(constraint, (Interval, Options, type)) else "", None) or (
        constraint.__name__ if isinstance(constraint, type) else str(constraint))


def validate_params(params: dict, constraints: dict) -> None:
    """Refuse, naming it, the first parameter of `params` that meets none of its constraints."""
    for name, allowed in constraints.items():
        if name not in params:
            continue
        value = params[name]
        if not any(_accepts(c, value) for c in allowed):
            raise InvalidParameter(f"{name} must be {' or '.join(_describe(c) for c in allowed)}, got {value!r}")


#: a count of features, bins, draws, rows: an integer >= 1
COUNT = Interval(int, 1, None, text="a positive integer")
#: the kernel width sigma: a real number > 0 that is finite
SIGMA = Interval(float, 0, None, closed="neither", text="a positive finite number")
#: a finite real number >= 0 (ridge lambda, the L1 weight)
NONNEGATIVE = Interval(float, 0, None, text="a finite number >= 0")
#: an iteration cap (maxit): 0 or more
ITERATIONS = Interval(int, 0, None)
#: a stopping tolerance: a real number > 0
TOLERANCE = Interval(float, 0, None, closed="neither")
#: a share of the rows (validation_fraction): strictly between 0 and 1
FRACTION = Interval(float, 0, 1, closed="neither", text="a number in (0, 1)")


def check(name: str, value, *allowed) -> None:
    """One parameter against its constraints (validate_params for a single value)."""
    validate_params({name: value}, {name: list(allowed)})


def check_count(name: str, value) -> None:
    check(name, value, COUNT)


def check_sigma(value) -> None:
    check("sigma", value, SIGMA)


def check_nonnegative(name: str, value) -> None:
    """A finite real number >= 0 (ridge lambda, the L1 weight)."""
    check(name, value, NONNEGATIVE)


def seed_of(random_state, name: str = "random_state"):
    """What numpy.random.default_rng takes: the seed as given, or one drawn from a legacy RandomState
    instance (scikit-learn passes those). A negative or non-integer seed is refused by name (numpy's
    own error names nothing)."""
    import numpy as np

    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31))
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    if not isinstance(random_state, numbers.Integral) or _is_bool(random_state) or random_state < 0:
        raise InvalidParameter(f"{name} must be None, an integer >= 0 or a RandomState, got {random_state!r}")
    return int(random_state)
