"""Provenance recorded in every result row: versions, commit, BLAS, CPU, threads."""

from __future__ import annotations

import functools
import platform
import subprocess
from pathlib import Path

import numba
import numpy as np
import scipy

import rbrepro


def _git(*args: str) -> str | None:
    root = Path(rbrepro.__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _blas() -> str:
    try:
        from threadpoolctl import threadpool_info

        libs = [f"{i.get('internal_api')} {i.get('version')}" for i in threadpool_info() if i.get("user_api") == "blas"]
        return "; ".join(sorted(set(libs))) or "unknown"
    except Exception:  # threadpoolctl is best effort; provenance must never fail a cell
        return "unknown"


@functools.lru_cache(maxsize=1)
def provenance() -> dict:
    """Static facts about this process's software and machine (computed once)."""
    commit = _git("rev-parse", "HEAD")
    # the code's state: results, figures and runs that sweeps write (in the same tree) are not code,
    # so publishing from a clean commit stays git_dirty = False while its own results land
    status = _git("status", "--porcelain", "--", ".", ":(exclude)results", ":(exclude)figures", ":(exclude)runs")
    return {
        "rbrepro_version": rbrepro.__version__,
        "git_commit": commit or "",
        "git_dirty": bool(status) if status is not None else "",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "blas": _blas(),
        "cpu": _cpu_model(),
        "host": platform.node(),
    }
