"""Large factorizations run on one BLAS thread: OpenBLAS's threaded Cholesky dies of SIGSEGV at the
size of a9a's 32,561 training rows on this kind of machine (solvers.direct.THREADED_FACTOR_MAX_N)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.linalg
from threadpoolctl import threadpool_info, threadpool_limits

from rbrepro.models.kernel_ridge import ExactKernelRegressor
from rbrepro.solvers import direct


def _blas_threads() -> int:
    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


@pytest.fixture
def seen_threads(monkeypatch):
    """The BLAS thread count each cho_factor / cho_solve call ran under."""
    seen = []
    factor, solve = scipy.linalg.cho_factor, scipy.linalg.cho_solve

    def spy_factor(*a, **k):
        seen.append(("factor", _blas_threads()))
        return factor(*a, **k)

    def spy_solve(*a, **k):
        seen.append(("solve", _blas_threads()))
        return solve(*a, **k)

    monkeypatch.setattr(scipy.linalg, "cho_factor", spy_factor)
    monkeypatch.setattr(scipy.linalg, "cho_solve", spy_solve)
    return seen


@pytest.mark.parametrize("limit, expected", [(10, 1), (10_000, 2)])
def test_exact_kernel_factors_on_one_blas_thread_above_the_size(monkeypatch, seen_threads, limit, expected):
    monkeypatch.setattr(direct, "THREADED_FACTOR_MAX_N", limit)
    rng = np.random.default_rng(0)
    X, y = rng.random((60, 3)), rng.random(60)
    with threadpool_limits(limits=2):
        model = ExactKernelRegressor(sigma=1.0).fit(X, y)
        assert _blas_threads() == 2  # restored after the fit
    assert seen_threads and {t for _, t in seen_threads} == {expected}
    ref = np.linalg.solve(np.exp(-np.abs(X[:, None] - X[None]).sum(-1)) + 0.01 * np.eye(60), y - y.mean())
    np.testing.assert_allclose(model.dual_coef_.ravel(), ref, rtol=1e-4, atol=1e-4)  # K is stored in float32


def test_dense_gram_solve_is_limited_too(monkeypatch, seen_threads):
    monkeypatch.setattr(direct, "THREADED_FACTOR_MAX_N", 4)
    G = np.eye(8) * 2.0
    with threadpool_limits(limits=2):
        W = direct.solve_gram(G, np.ones((8, 1)), 0.0)
    assert {t for _, t in seen_threads} == {1}
    np.testing.assert_allclose(W, 0.5)


@pytest.mark.slow
def test_the_size_that_crashed_factors_to_the_end():
    """32,561 rows in float32 at 2 BLAS threads (a9a's training set; SIGSEGV before the limit). Minutes
    and about 9 GB: run alone."""
    code = textwrap.dedent("""
        import numpy as np
        from threadpoolctl import threadpool_limits
        from rbrepro.solvers.direct import refined_cholesky_solve
        n = 32_561
        K = np.full((n, n), 0.01, dtype=np.float32)
        K[np.diag_indices_from(K)] = 1.0
        with threadpool_limits(limits=2):
            C, it, res = refined_cholesky_solve(K, 0.01, np.ones(n))
        assert res < 1e-8, res
    """)
    done = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.slow
def test_a_fatal_signal_in_the_cli_names_where_it_happened(tmp_path):
    """A native crash under `rbrepro` is not silent: the Python frame it hit is printed."""
    code = ("import ctypes, sys; import rbrepro.cli as cli; from rbrepro.cli.app import app\n"
            "@app.command('crash-here')\n"
            "def crash_here():\n    ctypes.string_at(0)\n"
            "sys.exit(cli.main(['crash-here']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode < 0
    assert "Segmentation fault" in done.stderr and "crash_here" in done.stderr
