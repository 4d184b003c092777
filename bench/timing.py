"""The one timing rule the benchmarks share: the fastest of a few runs of a call (the least disturbed by
the machine's neighbours), after an untimed first run where compiling and faulting in must be left out."""

from __future__ import annotations

import time


def fastest(fn, repeats: int, warm: bool = True) -> float:
    """Seconds of the fastest of `repeats` calls of fn(); with `warm`, one untimed call first."""
    if warm:
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)
