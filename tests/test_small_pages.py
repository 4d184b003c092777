"""small_pages: a fresh array's whole pages advised off transparent huge pages, nothing written.

The Linux settings it reads are faked in a temporary folder, so each mode is tested on any machine; where
the machine is Linux, the advice is read back from the kernel's own account of the mapping."""

from pathlib import Path

import numpy as np
import pytest

from rbrepro import memory


@pytest.fixture
def thp(tmp_path, monkeypatch):
    """Point small_pages at a fake /sys/kernel/mm/transparent_hugepage with the given huge page size."""
    def set_mode(mode: str, page: int = 1 << 21):
        (tmp_path / "enabled").write_text(mode + "\n")
        (tmp_path / "hpage_pmd_size").write_text(f"{page}\n")
        memory._thp_settings.cache_clear()  # read once per process: forget the last fake's
    monkeypatch.setattr(memory, "_THP", tmp_path)
    return set_mode


@pytest.fixture
def advised(monkeypatch):
    """The (start, length) ranges small_pages advises, recorded instead of passed to the kernel."""
    calls = []
    monkeypatch.setattr(memory, "_advise_no_huge_pages", lambda start, length: calls.append((start, length)))
    return calls


def test_advises_exactly_the_whole_pages_inside_the_array(thp, advised):
    thp("[always] madvise never")
    a = np.full(3 << 20, -1, np.int64)  # 24 MB
    assert memory.small_pages(a) is a
    (start, length), = advised
    page = memory.SMALL_PAGE_BYTES
    assert start % page == 0 and length % page == 0
    assert a.ctypes.data <= start < a.ctypes.data + page
    assert a.ctypes.data + a.nbytes - page < start + length <= a.ctypes.data + a.nbytes
    assert (a == -1).all()  # nothing written


def test_madvise_mode_only_from_numpys_threshold(thp, advised):
    thp("always [madvise] never")
    memory.small_pages(np.empty(memory.NUMPY_HUGEPAGE_BYTES // 8 - 1))
    assert advised == []  # numpy asks for no huge pages below its threshold
    memory.small_pages(np.empty(memory.NUMPY_HUGEPAGE_BYTES // 8))
    from numpy._core.multiarray import _get_madvise_hugepage
    assert len(advised) == (1 if _get_madvise_hugepage() else 0)


@pytest.mark.parametrize("mode", ["always madvise [never]", None])
def test_nothing_without_huge_pages(thp, advised, monkeypatch, tmp_path, mode):
    if mode is None:  # no THP folder at all (not Linux, or no THP support)
        monkeypatch.setattr(memory, "_THP", tmp_path / "absent")
    else:
        thp(mode)
    memory.small_pages(np.empty(1 << 22))
    assert advised == []


def test_arrays_smaller_than_a_huge_page_or_not_in_c_order_are_left_alone(thp, advised):
    thp("[always] madvise never")
    memory.small_pages(np.empty((1 << 21) // 8 - 1))
    memory.small_pages(np.empty((1 << 20, 20))[:, ::2])
    assert advised == []


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
    memory._thp_settings.cache_clear()
    if memory._huge_page_bytes(a.nbytes):  # this machine would give it huge pages: small_pages says no
        assert "nh" not in _vm_flags(middle)
        memory.small_pages(a)
    else:  # it would not: the advice itself, as small_pages gives it
        assert memory._advise_no_huge_pages(middle // memory.SMALL_PAGE_BYTES * memory.SMALL_PAGE_BYTES,
                                            memory.SMALL_PAGE_BYTES)
    assert "nh" in _vm_flags(middle)  # MADV_NOHUGEPAGE shows as "nh"
    assert (a == np.arange(a.size)).all()
