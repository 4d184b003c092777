"""OpenBLAS's idle threads must sleep at once, not spin on the cores numba's kernels need
(rbrepro.BLAS_THREAD_TIMEOUT): importing rbrepro, as the command line and the benchmarks do first,
sets the timeout before OpenBLAS loads, and keeps a value the user set."""

import os
import subprocess
import sys

import pytest

import rbrepro

PROBE = ("import {first}, os, numpy, threadpoolctl; "
         "apis = {{m['internal_api'] for m in threadpoolctl.threadpool_info()}}; "
         "print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'), 'openblas' in apis)")


def _run(first: str, env_value: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if env_value is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = env_value
    out = subprocess.run([sys.executable, "-c", PROBE.format(first=first)], env=env, capture_output=True, text=True,
                         check=True)
    return out.stdout.split()


@pytest.mark.parametrize("first", ["rbrepro", "bench", "rbrepro.cli"])
def test_importing_rbrepro_first_sets_the_timeout_before_openblas_loads(first):
    assert _run(first, None) == [rbrepro.BLAS_THREAD_TIMEOUT, "True"]  # set, and the BLAS that read it is OpenBLAS


def test_a_timeout_the_user_set_is_kept():
    assert _run("rbrepro", "12") == ["12", "True"]
