"""Cell tasks for backend tests (imported by name in spawned worker processes)."""

import os
from pathlib import Path

from rbrepro.sweep.worker import run_cell_task


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


def overlap_probe(key, log_dir, partners):
    """Record, by files rather than clocks, which jobs ran together: at its start a job notes the
    jobs already running (started, not ended); then it waits (60 s at most) until each of
    `partners` has started. Both sides of a pair meeting proves they overlapped, whatever the
    machine's load: each saw the other start while it was itself still running."""
    import json
    import time

    d = Path(log_dir)
    (d / f"{key}.start").touch()
    running = sorted(p.name[:-6] for p in d.glob("*.start")
                     if p.name[:-6] != key and not (d / f"{p.name[:-6]}.end").exists())
    met, deadline = True, time.monotonic() + 60
    while not all((d / f"{w}.start").exists() for w in partners):
        if time.monotonic() > deadline:
            met = False
            break
        time.sleep(0.01)
    (d / key).write_text(json.dumps({"running_at_start": running, "met": met}))
    (d / f"{key}.end").touch()
    return {"status": "ok"}


def sleep_cell(params, dataset_ref, data_path=None, mirror=None, memory_limit_gb=None):
    """A cell that only sleeps (for signal and orphan tests): its pid is written to data_path."""
    import time

    Path(data_path).mkdir(parents=True, exist_ok=True)
    Path(data_path, f"worker-{os.getpid()}").write_text(str(os.getpid()))
    time.sleep(600)
    return {"status": "ok"}


def sleep_long(seconds):
    """A job that outlives any test: only stopping its pool ends it."""
    import time

    time.sleep(seconds)
    return {}


def under_scripted_load(params, dataset_ref, data_path=None, mirror=None, memory_limit_gb=None):
    """run_cell_task with the other cores' load taken from a script, not the machine: the first load
    of data_path/loads.json (then dropped from it) is what this attempt measures."""
    import json
    import time

    from rbrepro.sweep import worker

    script = Path(data_path) / "loads.json"
    loads = json.loads(script.read_text())
    load, since = loads.pop(0), []
    script.write_text(json.dumps(loads))

    def busy_cpu_seconds():
        if not since:
            since.append(time.time())
            return 0.0, 0.0
        return load * (time.time() - since[0]), 0.0

    worker._busy_cpu_seconds = busy_cpu_seconds
    return run_cell_task(params, dataset_ref, None, mirror, memory_limit_gb)
