"""map_new_pages: a fresh array's first whole huge page faulted in and timed, then the rest faulted in the
same way (fast) or advised off huge pages for the kernel's threads (slow).

The Linux settings it reads are faked in a temporary folder and its clock is faked, so each mode and each
outcome of the probe is tested on any machine; the advice itself is read back from the kernel's own account
of the mapping where the machine is Linux."""

from pathlib import Path

import numpy as np
import pytest

from rbrepro import memory

PAGE = 1 << 16  # the fake huge page: small, so that a test's arrays hold many


@pytest.fixture
def thp(tmp_path, monkeypatch):
    """Point map_new_pages at a fake /sys/kernel/mm/transparent_hugepage."""
    def set_mode(mode: str, page: int = PAGE):
        (tmp_path / "enabled").write_text(mode + "\n")
        (tmp_path / "hpage_pmd_size").write_text(f"{page}\n")
        memory._thp_settings.cache_clear()  # read once per process: forget the last fake's
    monkeypatch.setattr(memory, "_THP", tmp_path)
    return set_mode


@pytest.fixture
def advised(monkeypatch):
    """The (start, length) ranges map_new_pages advises, recorded instead of passed to the kernel."""
    calls = []
    monkeypatch.setattr(memory, "_advise_no_huge_pages", lambda start, length: calls.append((start, length)))
    return calls


def probe_takes(monkeypatch, seconds: float):
    """Fake the clock so that the probe's fault takes `seconds`."""
    ticks = iter([0.0, seconds])
    monkeypatch.setattr(memory, "_clock", lambda: next(ticks))


def _ones(n):
    """An array whose every byte is 0xFF, so that each byte map_new_pages writes shows."""
    return np.full(n, -1, np.int64)


def _written(a):
    """Addresses of the bytes map_new_pages set to zero in an array of `_ones`."""
    return (a.ctypes.data + np.flatnonzero(a.reshape(-1).view(np.uint8) == 0)).tolist()


def _first_whole_page(a):
    return -(-a.ctypes.data // PAGE) * PAGE


def test_a_fast_probe_faults_in_every_whole_huge_page_from_this_thread(thp, advised, monkeypatch):
    thp("[always] madvise never")
    probe_takes(monkeypatch, PAGE / (10 * memory.HUGE_PAGE_SLOW_BELOW))
    a = _ones(40_000)  # 320,000 bytes: four or five whole fake huge pages
    assert memory.map_new_pages(a) is a
    probe = _first_whole_page(a) + a.ctypes.data % PAGE  # the array's own offset within a huge page
    assert _written(a) == list(range(probe, a.ctypes.data + a.nbytes, PAGE))
    assert advised == []


def test_a_slow_probe_leaves_the_rest_to_base_pages(thp, advised, monkeypatch):
    thp("[always] madvise never")
    probe_takes(monkeypatch, 10 * PAGE / memory.HUGE_PAGE_SLOW_BELOW)
    a = _ones(40_000)
    memory.map_new_pages(a)
    first = _first_whole_page(a)
    assert _written(a) == [first + a.ctypes.data % PAGE]  # the probe's write alone
    (start, length), = advised
    end = a.ctypes.data + a.nbytes
    assert start == first + PAGE and start + length == end // memory.SMALL_PAGE_BYTES * memory.SMALL_PAGE_BYTES


def test_zeros_stay_zeros(thp, monkeypatch):
    thp("[always] madvise never")
    probe_takes(monkeypatch, 0.0)
    a = memory.map_new_pages(np.zeros((300, 70), np.int32))
    assert not a.any()


def test_madvise_mode_only_from_numpys_threshold(thp, advised, monkeypatch):
    thp("always [madvise] never")
    small = _ones(memory.NUMPY_HUGEPAGE_BYTES // 8 - 1)
    memory.map_new_pages(small)
    assert _written(small) == [] and advised == []  # numpy asks for no huge pages below its threshold
    probe_takes(monkeypatch, 0.0)
    big = _ones(memory.NUMPY_HUGEPAGE_BYTES // 8)
    memory.map_new_pages(big)
    from numpy._core.multiarray import _get_madvise_hugepage
    assert (len(_written(big)) > 0) == bool(_get_madvise_hugepage())


@pytest.mark.parametrize("mode", ["always madvise [never]", None])
def test_nothing_without_huge_pages(thp, advised, monkeypatch, tmp_path, mode):
    if mode is None:  # no THP folder at all (not Linux, or no THP support)
        monkeypatch.setattr(memory, "_THP", tmp_path / "absent")
    else:
        thp(mode)
    a = _ones(100_000)
    memory.map_new_pages(a)
    assert _written(a) == [] and advised == []


def test_arrays_without_a_whole_huge_page_or_not_in_c_order_are_left_alone(thp, advised):
    thp("[always] madvise never", page=1 << 30)
    small = _ones(1000)
    memory.map_new_pages(small)
    thp("[always] madvise never")
    strided = _ones(40_000).reshape(2000, 20)[:, ::2]
    memory.map_new_pages(strided)
    assert _written(small) == [] and (strided == -1).all() and advised == []


def _vm_flags(address: int) -> list[str]:
    """VmFlags of the mapping holding `address`, from /proc/self/smaps."""
    flags, inside = None, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo <= address < hi
        elif inside and head == "VmFlags:":
            flags = line.split()[1:]
    assert flags is not None, f"no mapping holds {address:#x}"
    return flags


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux's /proc/self/smaps")
def test_the_kernel_records_the_advice_and_the_data_stays():
    if memory._madvise() is None:
        pytest.skip("no madvise in this C library")
    a = np.arange(5 << 20, dtype=np.float64)  # 40 MB: a mapping of its own (above glibc's mmap threshold)
    middle = a.ctypes.data + a.nbytes // 2
    page = middle // memory.SMALL_PAGE_BYTES * memory.SMALL_PAGE_BYTES
    assert memory._advise_no_huge_pages(page, memory.SMALL_PAGE_BYTES)
    assert "nh" in _vm_flags(middle)  # MADV_NOHUGEPAGE shows as "nh"
    assert (a == np.arange(a.size)).all()
