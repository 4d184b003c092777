"""fault_in: a fresh array's huge pages mapped from one thread before a parallel kernel writes it.

The Linux settings it reads are faked in a temporary folder, so each mode is tested on any machine."""

import numpy as np
import pytest

from rbrepro import memory


@pytest.fixture
def thp(tmp_path, monkeypatch):
    """Point fault_in at a fake /sys/kernel/mm/transparent_hugepage with 4 KB "huge" pages."""
    def set_mode(mode: str, page: int = 4096):
        (tmp_path / "enabled").write_text(mode + "\n")
        (tmp_path / "hpage_pmd_size").write_text(f"{page}\n")
        memory._thp_settings.cache_clear()  # read once per process: forget the last fake's
    monkeypatch.setattr(memory, "_THP", tmp_path)
    return set_mode


def _ones(n):
    """An array whose every byte is 0xFF, so that each byte fault_in writes shows."""
    return np.full(n, -1, np.int64)


def _written(array):
    """Positions of the bytes fault_in set to zero in an array of `_ones`."""
    return np.flatnonzero(array.reshape(-1).view(np.uint8) == 0)


def test_always_writes_one_zero_byte_per_huge_page(thp):
    thp("[always] madvise never")
    a = _ones(10_000)  # 80,000 bytes: pages at 0, 4096, ...
    assert memory.fault_in(a) is a
    assert _written(a).tolist() == list(range(0, a.nbytes, 4096))
    assert np.count_nonzero(a != -1) == len(range(0, a.nbytes, 4096))


def test_zeros_stay_zeros(thp):
    thp("[always] madvise never")
    a = memory.fault_in(np.zeros((300, 70), np.int32))
    assert not a.any()


def test_madvise_only_from_numpys_threshold(thp):
    thp("always [madvise] never")
    small = _ones(memory.NUMPY_HUGEPAGE_BYTES // 8 - 1)
    memory.fault_in(small)
    assert (small == -1).all()  # numpy asks for no huge pages below its threshold: nothing to fault in
    big = _ones(memory.NUMPY_HUGEPAGE_BYTES // 8)
    memory.fault_in(big)
    from numpy._core.multiarray import _get_madvise_hugepage
    assert len(_written(big)) == (memory.NUMPY_HUGEPAGE_BYTES // 4096 if _get_madvise_hugepage() else 0)


@pytest.mark.parametrize("mode", ["always madvise [never]", None])
def test_nothing_without_huge_pages(thp, monkeypatch, tmp_path, mode):
    if mode is None:  # no THP folder at all (not Linux, or no THP support)
        monkeypatch.setattr(memory, "_THP", tmp_path / "absent")
    else:
        thp(mode)
    a = _ones(100_000)
    memory.fault_in(a)
    assert (a == -1).all()


def test_arrays_smaller_than_a_page_or_not_in_c_order_are_left_alone(thp):
    thp("[always] madvise never", page=1 << 20)
    small = _ones(1000)
    memory.fault_in(small)
    assert (small == -1).all()
    thp("[always] madvise never")
    strided = _ones(40_000).reshape(2000, 20)[:, ::2]
    memory.fault_in(strided)
    assert (strided == -1).all()
