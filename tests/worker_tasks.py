"""Cell tasks for backend tests (imported by name in spawned worker processes)."""

import os
from pathlib import Path

from rbrepro.sweep.runner import run_cell_task


def die_on_first_attempt(params, dataset_ref, data_path=None, mirror=None, memory_limit_gb=None):
    """Kill this worker process the first time the cell with sigma 0.3 runs (marker file in data_path)."""
    marker = Path(data_path) / f"died-{params.sigma}-{params.seed}"
    if params.sigma == 0.3 and not marker.exists():
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("x")
        os._exit(9)
    return run_cell_task(params, dataset_ref, None, mirror, memory_limit_gb)


def always_die(params, dataset_ref, data_path=None, mirror=None, memory_limit_gb=None):
    if params.sigma == 0.3:
        os._exit(9)
    return run_cell_task(params, dataset_ref, None, mirror, memory_limit_gb)


def record_interval(key, log_dir, seconds):
    """Sleep, then write this job's start and end times to log_dir/key."""
    import time

    start = time.time()
    time.sleep(seconds)
    Path(log_dir, key).write_text(f"{start} {time.time()}")
    return {"status": "ok"}


def sleep_cell(params, dataset_ref, data_path=None, mirror=None, memory_limit_gb=None):
    """A cell that only sleeps (for signal and orphan tests): its pid is written to data_path."""
    import time

    Path(data_path).mkdir(parents=True, exist_ok=True)
    Path(data_path, f"worker-{os.getpid()}").write_text(str(os.getpid()))
    time.sleep(600)
    return {"status": "ok"}
