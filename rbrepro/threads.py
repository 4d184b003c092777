"""One thread budget for the numba kernels and BLAS: the command line's `--threads` and the
estimators' `n_jobs` both set it here."""

from __future__ import annotations

from contextlib import contextmanager

import numba
from threadpoolctl import threadpool_limits


def thread_count(threads: int | None) -> int:
    """The threads a budget of `threads` gives (0 or -1: all the cores numba sees), at most those cores."""
    most = numba.config.NUMBA_NUM_THREADS
    return most if threads in (None, 0, -1) else min(int(threads), most)


@contextmanager
def thread_budget(threads: int | None):
    """Run the block with numba and BLAS both on thread_count(threads) threads, then restore both; None
    leaves them as they are."""
    if threads is None:
        yield numba.get_num_threads()
        return
    count, previous = thread_count(threads), numba.get_num_threads()
    numba.set_num_threads(count)
    try:
        with threadpool_limits(limits=count):
            yield count
    finally:
        numba.set_num_threads(previous)
