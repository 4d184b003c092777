"""Methods from other packages, kept at arm's length: their entry points are loaded in isolation (one
that fails in any way, SystemExit included, is one warning naming its distribution and entry point,
and every other command and method keeps working), what their feature maps return is checked at the
boundary (rows, 2-D, float, finite; a memory model finite and positive), and a method registered in
one process only is named as such where another process looks for it.

A leaf beside the registry (models.registry reads it): it imports only the error kinds.
"""

from __future__ import annotations

import logging
import math
import os

from rbrepro.errors import InvalidParameter

log = logging.getLogger("rbrepro.models.registry")

#: names of the methods `register_method` added in this process (and so in no other): spawned worker
#: processes inherit it, so a cell of one of them there says why the method is missing
PARENT_ONLY = "RBREPRO_METHODS_OF_PARENT"
#: warnings already given in this process tree (a sweep's workers load the plug-ins again)
_WARNED = "RBREPRO_PLUGIN_WARNED"


class PluginError(InvalidParameter):
    """A plug-in's method broke its contract (its feature map's output or memory model)."""


def _warn_once(key: str, message: str) -> None:
    seen = os.environ.get(_WARNED, "").split("\x1f")
    if key in seen:
        return
    os.environ[_WARNED] = "\x1f".join([*filter(None, seen), key])
    log.warning("rbrepro: %s", message)


def dist_name(entry) -> str:
    """The distribution (package) that declares an entry point, or its module where none is known."""
    dist = getattr(entry, "dist", None)
    return getattr(dist, "name", None) or entry.value.partition(":")[0]


def load_entries(group: str) -> list[tuple[str, object]]:
    """(distribution, loaded value) of each entry point in `group` that loads; an entry that fails in any
    way (an import error, an exception in its code, SystemExit) is one warning naming its distribution
    and entry point, and is left out. KeyboardInterrupt still stops the program."""
    from importlib.metadata import entry_points

    loaded = []
    for entry in entry_points(group=group):
        dist = dist_name(entry)
        try:
            value = entry.load()
            loaded.append((dist, value() if callable(value) else value))
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - another package may fail in any way
            cause = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            _warn_once(f"{dist}:{entry.name}", f"the method plug-in {entry.name!r} of the package {dist!r} "
                       f"({entry.value}) did not load and is left out ({cause}); every other method works")
    return loaded


def warn_unusable(dist: str, message: str) -> None:
    _warn_once(f"{dist}:{message}", f"the method plug-in of the package {dist!r} is left out: {message}")


def check_output(who: str, Z, n_rows: int, stage: str):
    """`Z`, what a plug-in's feature map's `stage` gave for n_rows rows, once it is a 2-D float matrix of
    n_rows finite rows; else PluginError naming `who` (the plug-in and method) and the fault."""
    import numpy as np
    import scipy.sparse as sp

    def fail(fault: str):
        raise PluginError(f"{who}: its feature map's {stage} {fault}; the plug-in is at fault, not the data")

    shape = getattr(Z, "shape", None)
    if shape is None or len(shape) != 2:
        fail(f"returned {type(Z).__name__} of shape {shape}, not a 2-D matrix")
    if shape[0] != n_rows:
        fail(f"returned {shape[0]} rows for {n_rows}")
    values = Z.data if sp.issparse(Z) else Z
    dtype = getattr(values, "dtype", None)
    if dtype is None or dtype.kind != "f":
        fail(f"returned values of dtype {dtype}, not floats")
    if not np.isfinite(values).all():
        fail(f"returned {int((~np.isfinite(values)).sum())} NaN or infinite values")
    return Z


def check_memory_model(who: str, value, n: int, d: int, R: int) -> float:
    """A plug-in's fit_memory(n, d, R) once it is a finite number > 0; else PluginError naming `who`."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number <= 0:
        raise PluginError(f"{who}: its feature map's fit_memory({n}, {d}, {R}) gave {value!r}, not a finite "
                          f"number of bytes > 0; the plug-in is at fault")
    return number


def mark_parent_only(name: str, registered: bool) -> None:
    """Note (or forget) that `name` was registered at run time in this process only."""
    names = [n for n in os.environ.get(PARENT_ONLY, "").split(",") if n and n != name]
    os.environ[PARENT_ONLY] = ",".join([*names, name] if registered else names)


def parent_only(name: str) -> bool:
    """Whether `name` was registered at run time by a parent process and not here."""
    return name in os.environ.get(PARENT_ONLY, "").split(",")
