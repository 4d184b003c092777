"""Numbers read from environment variables, checked against their range: one parser for every
RBREPRO_* setting, so a bad value is always one error naming the variable, its value and the range."""

from __future__ import annotations

import math
import os

from rbrepro.errors import InvalidParameter


def env_setting(name: str, default: float | None, low: float, high: float, unit: str,
                low_open: bool = False) -> float | None:
    """The number in environment variable `name` (default when unset or empty), which must lie in
    [low, high] ((low, high] with low_open); anything else is a ValueError naming the variable,
    its value and the range (nan and inf included)."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    above_low = value > low if low_open else value >= low
    if not (above_low and value <= high):  # also refuses nan
        bound = f"above {low:g}" if low_open else f"from {low:g}"
        raise InvalidParameter(f"environment variable {name}={text!r}: expected {unit} {bound} to {high:g}")
    return value


#: seconds each network wait of reaching a dask scheduler may take (connecting, its handshake, its first
#: reply, a first worker joining a distributed fit); RBREPRO_CLUSTER_TIMEOUT sets it
CLUSTER_TIMEOUT_S = 10.0
#: those deadlines in words, for --help (one text: what each wait may take, and what sets it)
CLUSTER_DEADLINES = ("connecting to a scheduler, its handshake and its first reply each wait at most "
                     f"{CLUSTER_TIMEOUT_S:g} s ($RBREPRO_CLUSTER_TIMEOUT)")


def cluster_timeout() -> float:
    """Seconds each wait of reaching a dask scheduler may take: $RBREPRO_CLUSTER_TIMEOUT, else CLUSTER_TIMEOUT_S."""
    return env_setting("RBREPRO_CLUSTER_TIMEOUT", CLUSTER_TIMEOUT_S, 0, 3600, "seconds", low_open=True)
