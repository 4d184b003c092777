"""Provenance recorded in every result row: versions (Python, numpy, scipy, numba, scikit-learn),
commit, BLAS, and the machine (CPU model, logical cores, RAM) a reader needs to rerun on."""

from __future__ import annotations

import functools
import os
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
    """The CPU's model name, with its family and model numbers where Linux gives them: a virtual machine may
    name very different chips alike ("AMD EPYC" for a Zen 1 and a Zen 4), and a benchmark's floors are
    only the machine's own on the same chip."""
    try:
        fields = {}
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key in ("model name", "cpu family", "model") and key not in fields:
                fields[key] = value.strip()
            if not line.strip() and fields:
                break  # the first processor's block
        if "model name" in fields:
            numbers = [f"{k} {fields[k]}" for k in ("cpu family", "model") if k in fields]
            return fields["model name"] + (f" ({', '.join(numbers)})" if numbers else "")
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


def _ram_bytes() -> int | str:
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except Exception:  # psutil is best effort here; provenance must never fail a cell
        return ""


def _sklearn() -> str:
    try:
        import sklearn

        return sklearn.__version__
    except ImportError:
        return ""


@functools.lru_cache(maxsize=1)
def provenance() -> dict:
    """Static facts about this process's software and machine (computed once)."""
    commit = _git("rev-parse", "HEAD")
    # the code's state: results, figures, runs and benchmark results written in the same tree are not
    # code, so publishing from a clean commit stays git_dirty = False while its own results land
    status = _git("status", "--porcelain", "--", ".", ":(exclude)results", ":(exclude)figures", ":(exclude)runs",
                  ":(exclude)bench/results")
    return {
        "rbrepro_version": rbrepro.__version__,
        "git_commit": commit or "",
        "git_dirty": bool(status) if status is not None else "",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "scikit_learn": _sklearn(),
        "blas": _blas(),
        "cpu": _cpu_model(),
        "cpu_cores": os.cpu_count() or "",
        "ram_bytes": _ram_bytes(),
        "host": platform.node(),
    }
