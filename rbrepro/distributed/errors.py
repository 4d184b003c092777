"""What can go wrong across machines, as the project's error kinds (one line each, exit status 2)."""

from __future__ import annotations

from rbrepro.errors import InvalidParameter, RbreproError


class ClusterUnavailable(RbreproError, ConnectionError):
    """No dask scheduler answers at the address given (or no worker joined it in time)."""


class WorkerLost(RbreproError, RuntimeError):
    """A dask worker died while it held or ran part of a fit, more often than the scheduler retries."""


class ClusterTimeout(RbreproError, TimeoutError):
    """A step of a distributed fit did not finish in time (a worker hangs, or the cluster is too small)."""


class NotDistributable(InvalidParameter):
    """A method or solver that needs all rows on one machine."""
