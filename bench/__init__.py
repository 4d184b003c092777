"""Benchmarks: `python -m bench.<name>`; results go to bench/results/ with their provenance."""

import rbrepro  # noqa: F401  (first, so that OpenBLAS loads with rbrepro.BLAS_THREAD_TIMEOUT, as the command line does)
