"""The one way tests run the real command line: `python -m rbrepro` in a child process.

Tests that call `run_cli` (or a file's thin wrapper around it) are marked `subprocess`
automatically (conftest.py), so `pytest -m "not subprocess"` leaves every child process out.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

#: the command line that runs rbrepro's CLI in a child process
CLI = [sys.executable, "-m", "rbrepro"]


def run_cli(*args, env: dict | None = None, cwd=None, check: bool = False, timeout: float = 300,
            max_file_bytes: int | None = None, drop: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """`rbrepro ARGS...` in a child process with `env` added to this one's environment (and the
    variables in `drop` removed); `check` raises with its stderr on a non-zero exit;
    `max_file_bytes` caps any file it writes (RLIMIT_FSIZE)."""
    full_env = {k: v for k, v in {**os.environ, **(env or {})}.items() if k not in drop}

    def cap():
        if max_file_bytes:
            resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    proc = subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, env=full_env, cwd=cwd,
                          timeout=timeout, preexec_fn=cap if max_file_bytes else None)
    if check and proc.returncode != 0:
        raise AssertionError(f"rbrepro {' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit status 2 and exactly one error line (a fetch's progress bars may come before it), no
    traceback, holding every needle; returns the line."""
    lines = [line for line in proc.stderr.strip().splitlines() if "━" not in line]
    assert proc.returncode == 2 and len(lines) == 1, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]
