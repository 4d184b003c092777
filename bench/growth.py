"""Benchmark: time and peak memory of RB (featurize + 50 CG iterations) as N grows in 10x
steps, on seeded synthetic Gaussian mixtures shaped like covtype (d = 54, up to 464,809
rows) and SUSY (d = 18, up to 4,000,000 rows). sigma is set per N (bisection) so that
D stays near N R / 20; the cost per N R entry should stay flat (linear growth).
Usage: python -m bench.growth [--max-rows N]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from bench.record import record
from rbrepro.features import RandomBinningFeatures
from rbrepro.memory import PeakMemory
from rbrepro.solvers.cg import ridge_cg

R = 16
TARGET_SHARE = 1 / 20


def mixture(n, d, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 1, (8, d))
    label = rng.integers(0, 8, n)
    X = (centers[label] + 0.6 * rng.standard_normal((n, d))).astype(np.float32)
    X -= X.min(axis=0)
    X /= X.max(axis=0)
    return X, np.where(label % 2 == 0, 1.0, -1.0)


def sigma_for_share(X, share=TARGET_SHARE, probe_R=4):
    lo, hi = 1e-3, 1e3
    n = X.shape[0]
    for _ in range(18):
        mid = np.sqrt(lo * hi)
        D = RandomBinningFeatures(n_grids=probe_R, sigma=mid, random_state=0).fit(X).n_bins_
        lo, hi = (mid, hi) if D < share * n * probe_R else (lo, mid)
    return np.sqrt(lo * hi)


def timed_fit(X, y, R_, sigma):
    """RB featurize + 50 CG iterations; returns (Z, featurize s, CG s, peak MB above start)."""
    with PeakMemory() as peak:
        t0 = time.perf_counter()
        Z = RandomBinningFeatures(n_grids=R_, sigma=sigma, random_state=0).fit_transform_binned(X)
        t1 = time.perf_counter()
        ridge_cg(Z, y, 0.01, 50, 1e-12)
        t2 = time.perf_counter()
    return Z, t1 - t0, t2 - t1, peak.peak_mb


def main(max_rows):
    shapes = [("covtype-like", 54, [4648, 46481, 464809]), ("SUSY-like", 18, [4000, 40000, 400000, 4000000])]
    RandomBinningFeatures(n_grids=2, sigma=1.0, random_state=0).warm_up(np.zeros((4, 3), np.float32))
    for label, d, sizes in shapes:
        base = None
        for n in [s for s in sizes if s <= max_rows]:
            X, y = mixture(n, d)
            sigma = sigma_for_share(X)
            Z, feat_s, cg_s, peak_mb = timed_fit(X, y, R, sigma)
            per = (feat_s + cg_s) / (n * R) * 1e9
            base = base or per
            record("growth", f"{label} N={n}: ns per N*R entry (featurize+50 CG it)", per, base,
                   "smallest N", unit="ns",
                   note=f"d={d}, R={R}, sigma={sigma:.3g}, D={Z.n_columns} (N R/D={n * R / Z.n_columns:.1f}), "
                        f"featurize {feat_s:.2f} s, CG {cg_s:.2f} s, peak {peak_mb:.0f} MB")
            del X, y, Z


def targets():
    """The scale targets: covtype-shaped N = 464,809 at R = 256 (<= 5 min) and SUSY-shaped
    N = 4,000,000 at R = 64 (<= 10 min, <= 12 GB peak): featurize + 50 CG iterations."""
    for label, d, n, R_, limit_s in (("covtype-like", 54, 464809, 256, 300.0), ("SUSY-like", 18, 4000000, 64, 600.0)):
        X, y = mixture(n, d)
        sigma = sigma_for_share(X)
        Z, feat_s, cg_s, peak_mb = timed_fit(X, y, R_, sigma)
        record("scale", f"{label} N={n} R={R_}: featurize + 50 CG it", feat_s + cg_s, limit_s, "target",
               note=f"featurize {feat_s:.1f} s, CG {cg_s:.1f} s, D={Z.n_columns}, peak {peak_mb / 1024:.2f} GB")
        del X, y, Z


if __name__ == "__main__":
    if "--targets" in sys.argv:
        targets()
    else:
        limit = int(sys.argv[sys.argv.index("--max-rows") + 1]) if "--max-rows" in sys.argv else 4_000_000
        main(limit)
