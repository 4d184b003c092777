"""Memory: refuse what cannot fit before allocating, and measure a fit's peak.

Estimates are in bytes of the large arrays a method allocates. The limit defaults to
60 % of the memory this process may use: the least of the machine's physical memory, the
control group's limit (cgroup v2 memory.max, or v1 memory.limit_in_bytes) and the address-space
limit (`ulimit -v`, RLIMIT_AS, less what the process has mapped already); it can be set with
$RBREPRO_MEMORY_LIMIT_GB or a `memory_limit_gb` argument. Peak resident memory above the level at the start of a
block is read from Linux's VmHWM after resetting it (/proc/self/clear_refs), falling
back to sampling VmRSS where that is not allowed. Memory that earlier work freed is handed
back to the system first (glibc's malloc_trim): glibc keeps freed blocks below its mmap
threshold (up to 32 MB) resident, and a fit that reused them read as using nothing (the same
RF fit measured 1.4, 0.0 and 0.0 MB in three cells of one worker).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import mmap
import os
import threading
import time
from pathlib import Path

import numpy as np

from rbrepro.errors import InvalidParameter, RbreproError
from rbrepro.settings import env_setting

DEFAULT_SHARE = 0.6
GB = 1024**3


class MemoryLimitError(RbreproError, MemoryError):
    """A method's memory estimate exceeds the limit; nothing was allocated."""


def physical_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * GB


#: a cgroup's "no limit" reads as a number this large or larger (v1 writes the largest page-aligned int)
_NO_CGROUP_LIMIT = 2**60


def cgroup_limit_bytes(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """The memory limit of this process's control group (v2 memory.max, v1 memory.limit_in_bytes),
    or None where there is none."""
    for name in ("memory.max", "memory/memory.limit_in_bytes", "memory.limit_in_bytes"):
        try:
            text = (root / name).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < _NO_CGROUP_LIMIT:
            return int(text)
    return None


def address_space_left_bytes() -> int | None:
    """What the address-space limit (`ulimit -v`, RLIMIT_AS) leaves this process to map, or None
    where there is none."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return None
    try:
        mapped = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        mapped = 0
    return max(0, soft - mapped)


def available_memory_bytes() -> int:
    """The most memory this process may use: the least of physical memory, the cgroup's limit and the
    address space left under RLIMIT_AS."""
    limits = [physical_memory_bytes(), cgroup_limit_bytes(), address_space_left_bytes()]
    return int(min(v for v in limits if v is not None))


def env_number(name: str, default: float | None = None) -> float | None:
    """A positive finite number from the environment variable `name` (default when unset); anything
    else is a ValueError that names the variable and its value."""
    return env_setting(name, default, 0.0, 1e300, "a positive number", low_open=True)


def memory_limit_bytes(limit_gb: float | None = None) -> int:
    if limit_gb is None:
        limit_gb = env_number("RBREPRO_MEMORY_LIMIT_GB")
    if limit_gb is not None:
        if not (limit_gb > 0 and limit_gb != float("inf")):
            raise InvalidParameter(f"memory limit must be a positive number of GB, got {limit_gb}")
        return int(limit_gb * GB)
    return int(DEFAULT_SHARE * available_memory_bytes())


def out_of_memory(what: str, doing: str, limit_gb: float | None = None) -> str:
    """The one line for a MemoryError the guard did not foresee: what ran out, doing what, and what
    this process may use (the guard's limit and the machine's, control group's and ulimit's least)."""
    return (f"{what}: ran out of memory {doing}: it needs more than this process may use (the memory limit "
            f"{_size(memory_limit_bytes(limit_gb))}, of {_size(available_memory_bytes())} available under the "
            f"machine's RAM, its control group and ulimit -v); give it more memory, or less data")


def _size(n_bytes: float) -> str:
    """GB to one decimal, or MB below 0.1 GB (so a small limit never reads "0.0 GB")."""
    return f"{n_bytes / GB:.1f} GB" if n_bytes >= 0.1 * GB else f"{n_bytes / 2**20:.3g} MB"


def check_memory(what: str, estimate_bytes: float, limit_gb: float | None = None, *,
                 limit_bytes: int | None = None) -> None:
    """Raise MemoryLimitError (one line: estimate and limit) if the estimate exceeds the limit: `limit_bytes`
    where a caller that checks many times has read `memory_limit_bytes` once, else read now."""
    limit = memory_limit_bytes(limit_gb) if limit_bytes is None else limit_bytes
    if estimate_bytes > limit:
        raise MemoryLimitError(f"{what} needs about {_size(estimate_bytes)}, more than the memory limit of "
                               f"{_size(limit)} (raise it with memory_limit_gb in Python, --memory-limit on the command line or "
                               f"RBREPRO_MEMORY_LIMIT_GB in the environment)")


@functools.cache
def _libc():
    """The C library, or None where it cannot be loaded (looked up once: find_library runs ldconfig)."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


def _malloc_trim():
    """glibc's malloc_trim, or None where the C library has none."""
    return getattr(_libc(), "malloc_trim", None)


def release_free_memory() -> bool:
    """Return the freed heap memory glibc keeps resident to the system (malloc_trim(0)), so that
    reusing it shows in RSS again; False where the C library has no malloc_trim (not glibc)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def _status_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


class PeakMemory:
    """Context manager: .peak_mb = peak resident memory above the level at entry (MB)."""

    def __init__(self, interval_s: float = 0.005):
        self.interval_s = interval_s
        self.peak_mb = float("nan")

    def __enter__(self):
        release_free_memory()
        self._start_kb = _status_kb("VmRSS") or 0
        self._hwm = False
        try:
            Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
            self._hwm = _status_kb("VmHWM") is not None
        except OSError:
            pass
        self._max_kb = self._start_kb
        self._stop = threading.Event()
        if not self._hwm:
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()
        return self

    def _sample(self):
        while not self._stop.is_set():
            self._max_kb = max(self._max_kb, _status_kb("VmRSS") or 0)
            time.sleep(self.interval_s)

    def __exit__(self, *exc):
        if self._hwm:
            peak_kb = _status_kb("VmHWM") or self._start_kb
        else:
            self._stop.set()
            self._thread.join()
            peak_kb = max(self._max_kb, _status_kb("VmRSS") or 0)
        self.peak_mb = max(0.0, (peak_kb - self._start_kb) / 1024.0)
        return False


#: numpy asks for transparent huge pages (madvise) on arrays of at least this many bytes (numpy's alloc.c)
NUMPY_HUGEPAGE_BYTES = 1 << 22
#: the base page size madvise's ranges are aligned to
SMALL_PAGE_BYTES = mmap.PAGESIZE
_THP = Path("/sys/kernel/mm/transparent_hugepage")


@functools.cache
def _thp_settings(folder: Path) -> tuple[str, int]:
    """(mode line, huge page bytes) of Linux's THP settings in folder, or ("", 0) where it has none: read
    once per process, since map_new_pages runs on every mat-vec's output."""
    try:
        return (folder / "enabled").read_text(), int((folder / "hpage_pmd_size").read_text())
    except (OSError, ValueError):
        return "", 0


def _huge_page_bytes(n_bytes: int) -> int:
    """The size of the transparent huge pages a fresh array of n_bytes would be given, or 0: Linux's THP
    mode "always", or "madvise" where numpy asks for them (arrays of NUMPY_HUGEPAGE_BYTES or more)."""
    mode, page = _thp_settings(_THP)
    if "[always]" in mode:
        return page
    if "[madvise]" in mode and n_bytes >= NUMPY_HUGEPAGE_BYTES:
        try:
            from numpy._core.multiarray import _get_madvise_hugepage
        except ImportError:
            return 0
        return page if _get_madvise_hugepage() else 0
    return 0


#: Linux's madvise advice that a range get no transparent huge pages (include/uapi/asm-generic/mman-common.h)
MADV_NOHUGEPAGE = 15


@functools.cache
def _madvise():
    """The C library's madvise(addr, length, advice), or None where there is none (looked up once)."""
    madvise = getattr(_libc(), "madvise", None)
    if madvise is not None:
        madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        madvise.restype = ctypes.c_int
    return madvise


def _clock() -> float:
    """Seconds from a monotonic clock (time.perf_counter): map_new_pages's probe, faked in tests."""
    return time.perf_counter()


def _advise_no_huge_pages(start: int, length: int) -> bool:
    """madvise(start, length, MADV_NOHUGEPAGE); False where it is missing or refused (nothing changes)."""
    madvise = _madvise()
    return madvise is not None and madvise(start, length, MADV_NOHUGEPAGE) == 0


def advise_no_huge_pages_within(start: int, end: int) -> None:
    """Advise the whole base pages between the addresses start and end off huge pages (MADV_NOHUGEPAGE):
    madvise takes page-aligned ranges, so a partial page at either end is left as it is."""
    lo = -(-start // SMALL_PAGE_BYTES) * SMALL_PAGE_BYTES
    hi = end // SMALL_PAGE_BYTES * SMALL_PAGE_BYTES
    if hi > lo:
        _advise_no_huge_pages(lo, hi - lo)


#: a huge page faulted in slower than this (bytes a second) is memory a VM's host took back: the rest of
#: the array goes to base pages, which both threads fault in at about this rate (bench/page_faults.py)
HUGE_PAGE_SLOW_BELOW = 4e9


def map_new_pages(array):
    """Map a fresh array's pages the faster of two ways before the parallel kernel that writes it first, and
    return it. Where it gets transparent huge pages, this thread faults in its first whole one, timed: a VM
    whose host takes freed memory back (virtio free page reporting) gives memory whose huge pages fault in
    at a small fraction of the rate of base pages faulted by both threads, while memory the host still holds
    faults in at several times that rate, and a fit cannot otherwise tell which it got. Fast: this thread
    faults in the other huge pages too, one write each (both threads faulting huge pages at once was
    erratic); slow (under HUGE_PAGE_SLOW_BELOW): the rest is advised off huge pages (MADV_NOHUGEPAGE), so
    the kernel's threads each fault in their own base pages. `python -m bench.page_faults` measures all
    three. Nothing where the array gets no huge pages (THP off, under numpy's threshold, not Linux), holds
    no whole huge page, or is not in C order. Only for arrays still uninitialized or zero: it writes zero
    bytes."""
    page = _huge_page_bytes(array.nbytes)
    if not (page and array.flags.c_contiguous):
        return array
    start = array.ctypes.data
    first, end = -(-start // page) * page, start + array.nbytes
    if first + page > end:
        return array
    # each write lands at the array's own offset within a huge page: writing at a huge page's first byte
    # faulted it in at less than half the rate (64 MB, memory the host held: 5.3 against 2.3 ms)
    probe = first - start + start % page
    flat = array.reshape(-1).view(np.uint8)
    t = _clock()
    flat[probe] = 0
    if page / max(_clock() - t, 1e-9) < HUGE_PAGE_SLOW_BELOW:
        advise_no_huge_pages_within(first + page, end)
    else:
        flat[probe + page::page] = 0
    return array
