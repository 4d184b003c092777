"""bench.page_faults: its touch kernel against plain numpy, and one small run through its main."""

import numpy as np

from bench import page_faults
from bench.floor_kernels import touch_pages


def test_touch_pages_writes_a_zero_at_each_page_start_and_nothing_else():
    buffer = np.full(10 * 4096 + 123, 7, np.uint8)
    touch_pages(buffer, 4096)
    expected = np.full_like(buffer, 7)
    expected[:10 * 4096:4096] = 0
    np.testing.assert_array_equal(buffer, expected)


def test_main_prints_a_rate_per_chunk_for_each_kind(capsys):
    assert page_faults.main(["--mb", "4", "--chunks", "2"]) == 0
    out = capsys.readouterr().out
    for kind in ("huge pages, one thread", "base pages, both threads", "map_new_pages"):
        line, = (x for x in out.splitlines() if kind in x)
        rates = [float(v) for v in line.split(kind)[1].replace("median", "").split()]
        assert len(rates) == 3 and all(r > 0 for r in rates)
