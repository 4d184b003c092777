"""New memory's first writes, the ways a fit could take them: transparent huge pages faulted in by one
thread, base (4 KB) pages faulted in by both threads, and `rbrepro.memory.map_new_pages`, which times its
first huge page and then takes the faster of the two.

Chunks of new memory are taken in turn, one of each way, and kept until the end, so all draw on the same
free memory as it runs out. On a VM whose host takes freed memory back (virtio free page reporting),
what a chunk costs depends on whether the host still held its pages: --idle waits first, so that it has
taken them back; running right after another program that freed much memory shows the other case.

    python -m bench.page_faults [--mb 64] [--chunks 8] [--idle 0]
"""

from __future__ import annotations

import argparse
import sys
import time

import numba as nb
import numpy as np

from bench.floor_kernels import touch_pages
from rbrepro.memory import (
    NUMPY_HUGEPAGE_BYTES,
    SMALL_PAGE_BYTES,
    _huge_page_bytes,
    advise_no_huge_pages_within,
    map_new_pages,
)


def huge_one_thread(n_bytes: int) -> tuple[np.ndarray, float]:
    """A new array of n_bytes on huge pages (numpy's default where THP allows), faulted in from this thread,
    then written by a parallel kernel's threads (as every way here is)."""
    page = _huge_page_bytes(n_bytes) or SMALL_PAGE_BYTES
    t = time.perf_counter()
    a = np.empty(n_bytes, np.uint8)
    a[::page] = 0
    touch_pages(a, SMALL_PAGE_BYTES)
    return a, time.perf_counter() - t


def small_both_threads(n_bytes: int) -> tuple[np.ndarray, float]:
    """A new array of n_bytes advised off huge pages, its base pages faulted in by a parallel kernel's threads."""
    t = time.perf_counter()
    a = np.empty(n_bytes, np.uint8)
    advise_no_huge_pages_within(a.ctypes.data, a.ctypes.data + n_bytes)
    touch_pages(a, SMALL_PAGE_BYTES)
    return a, time.perf_counter() - t


def as_a_fit_does(n_bytes: int) -> tuple[np.ndarray, float]:
    """A new array of n_bytes mapped by map_new_pages, then written by a parallel kernel's threads."""
    t = time.perf_counter()
    a = map_new_pages(np.empty(n_bytes, np.uint8))
    touch_pages(a, SMALL_PAGE_BYTES)
    return a, time.perf_counter() - t


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=64, help="size of each chunk, MB")
    parser.add_argument("--chunks", type=int, default=8, help="chunks of each kind")
    parser.add_argument("--idle", type=float, default=0.0, help="seconds to wait before the first chunk")
    args = parser.parse_args(argv)
    n_bytes = max(args.mb << 20, NUMPY_HUGEPAGE_BYTES)
    touch_pages(np.zeros(1 << 16, np.uint8), SMALL_PAGE_BYTES)  # compiled outside the timings
    if not _huge_page_bytes(n_bytes):
        print("bench.page_faults: this system gives numpy's arrays no transparent huge pages; every row is base pages")
    time.sleep(args.idle)
    kept, rates = [], {"huge pages, one thread": [], "base pages, both threads": [], "map_new_pages": []}
    for _ in range(args.chunks):
        for name, take in zip(rates, (huge_one_thread, small_both_threads, as_a_fit_does)):
            a, seconds = take(n_bytes)
            kept.append(a)
            rates[name].append(n_bytes / seconds / 1e9)
    print(f"GB/s of each {n_bytes >> 20} MB chunk of new memory, in the order taken ({nb.get_num_threads()} threads):")
    for name, values in rates.items():
        print(f"  {name:26s} " + " ".join(f"{v:5.1f}" for v in values) + f"   median {np.median(values):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
