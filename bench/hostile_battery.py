"""The hostile-input battery: bad inputs and injected faults, through the real CLI.

Each case runs `rbrepro` in a subprocess and is classified:
  clean error  exit status 2 and one line naming the file / line / key / variable at fault
  correct      exit status 0 and the right result (where the input is valid after all)
  BAD          anything else: a traceback, a crash, a hang (60 s), an error that names nothing,
               or a wrong result accepted silently
Faults (SIGKILL of a sweep at random moments, of its coordinator alone or of one worker, a
raw file damaged after its verified fetch, bad first downloads) count as survived when the
rerun gives exactly the uninterrupted run's rows, or the damaged data is refused.

    python -m bench.hostile_battery [--kills N] [--seed S]

prints one line per case and the counts for the reliability page's table; exit status 1
if any case is BAD.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.battery_cases import (
    ESCAPE,
    SHARED,
    TIMEOUT_S,
    Case,
    csv_cases,
    fetch_cases,
    libsvm_cases,
    model_cases,
    run_cli,
    settings_cases,
    sweep_config_cases,
    write,
)
from bench.battery_neighbours import cluster_cases, degenerate_cases, report_cases, results_folder_cases
from bench.battery_own import cli_option_cases, memory_cases, own_answer_cases, own_data_cases
from bench.battery_plugins import plugin_cases


def classify(case: Case, proc) -> tuple[str, str]:
    if proc is None:
        return "BAD", f"hang (> {TIMEOUT_S} s)"
    lines = [line for line in proc.stderr.strip().splitlines() if "━" not in line and line.strip()]
    if "Traceback" in proc.stderr or proc.returncode < 0 or proc.returncode > 2:
        return "BAD", f"exit {proc.returncode}: {(lines or [''])[-1][:120]}"
    if ESCAPE in "".join(lines):  # a crafted name's terminal escape codes reached the terminal raw
        return "BAD", f"raw terminal escape on stderr: {ascii(lines[0])[:120]}"
    if case.check_err is not None and not case.check_err(proc.stderr):
        return "BAD", f"stderr lacks what it must say: {' '.join(lines)[:120]}"
    if case.expect == "ok":
        if proc.returncode == 0 and (case.check_ok is None or case.check_ok(proc.stdout)):
            return "correct", " ".join(proc.stdout.split())[:120]
        return "BAD", f"exit {proc.returncode}: {(lines or [proc.stdout])[-1][:120]}"
    if proc.returncode != 2 or len(lines) != 1:
        return "BAD", f"exit {proc.returncode}, {len(lines)} lines: {(lines or [' '.join(proc.stdout.split())])[0][:120]}"
    missing = [n for n in case.needles if n not in lines[0]]
    if missing:
        return "BAD", f"names none of {missing}: {lines[0][:120]}"
    return "clean error", lines[0][:140]


def damaged_raw_fault(tmp: Path) -> tuple[str, str]:
    """Fetch cadata (verified), truncate the raw file, then train and fetch: both must refuse it."""
    env = {"RBREPRO_DATA": str(tmp / "raw-fault")}
    proc, _ = run_cli(["fetch", "cadata", "--mirror", SHARED, "-q"], env, tmp)
    raw = tmp / "raw-fault" / "raw" / "regression" / "cadata"
    os.truncate(raw, 700_000)
    for args in (["train", "cadata", "--mirror", SHARED, "--R", "16"], ["fetch", "cadata", "--mirror", SHARED]):
        proc, _ = run_cli(args, env, tmp)
        verdict, line = classify(Case("fault", "raw", args, (str(raw), "changed after it was fetched")), proc)
        if verdict != "clean error":
            return "BAD", line
    return "survived", "truncated raw file refused by train and fetch"


def sigkill_faults(tmp: Path, kills: int, seed: int) -> list[tuple[str, str, str]]:
    """SIGKILL a digits sweep at random moments (group, coordinator alone, one worker), then resume."""
    import pandas as pd
    import psutil

    config = write(tmp / "kill.yaml", "name: k\nseeds: [0, 1, 2, 3]\ndatasets:\n"
                                      "  digits: {sigma: [0.1, 0.3, 1, 3, 10], R: [32, 128]}\n")
    sweep = [sys.executable, "-m", "rbrepro", "sweep", str(config), "-q", "--out"]
    start = time.monotonic()
    subprocess.run([*sweep, str(tmp / "clean")], check=True, capture_output=True, timeout=600)
    clean_s = time.monotonic() - start
    rng = np.random.default_rng(seed)
    out, results = tmp / "killed", []
    for i in range(kills):
        target = ("group", "coordinator", "worker")[i % 3]
        proc = subprocess.Popen([*sweep, str(out)], start_new_session=True, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        moment = rng.uniform(0.05, 0.9) * clean_s
        time.sleep(moment)
        if proc.poll() is None:
            if target == "group":
                os.killpg(proc.pid, signal.SIGKILL)
            elif target == "worker" and (children := psutil.Process(proc.pid).children(recursive=True)):
                children[int(rng.integers(len(children)))].send_signal(signal.SIGKILL)
            else:
                proc.send_signal(signal.SIGKILL)
        try:
            proc.wait(timeout=300)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        results.append((f"SIGKILL {target} at {moment:.1f} s", ))
    subprocess.run([*sweep, str(out)], check=True, capture_output=True, timeout=600)
    cols = ["cell_key", "test_metric", "D", "cg_iterations"]
    a = pd.read_csv(tmp / "clean" / "results.csv")[cols].sort_values("cell_key").reset_index(drop=True)
    b = pd.read_csv(out / "results.csv")[cols].sort_values("cell_key").reset_index(drop=True)
    same = len(a) == len(b) == 40 and a.equals(b) and not list((out / "cells").glob(".*.part"))
    verdict = "survived" if same else "BAD"
    note = "resume gave the uninterrupted CSV" if same else "resumed CSV differs from the uninterrupted run"
    return [("fault", name, verdict, note) for (name,) in results]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=6, help="SIGKILLs of a sweep at random moments")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill moments")
    parser.add_argument("--group", action="append", default=[], help="run only the cases of this group (repeatable; "
                                                                        "no faults then)")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="rbrepro-battery-"))
    try:
        cases = [*libsvm_cases(tmp), *csv_cases(tmp), *model_cases(tmp), *settings_cases(tmp), *fetch_cases(tmp),
                 *sweep_config_cases(tmp), *own_data_cases(tmp), *cli_option_cases(tmp), *own_answer_cases(tmp),
                 *memory_cases(tmp), *plugin_cases(tmp), *degenerate_cases(tmp), *results_folder_cases(tmp),
                 *report_cases(tmp), *cluster_cases(tmp)]
        if args.group:
            cases = [c for c in cases if c.group in args.group]
        counts = {"clean error": 0, "correct": 0, "BAD": 0}
        for case in cases:
            proc, _ = run_cli(case.args, {"RBREPRO_DATA": str(tmp / "d"), **case.env}, tmp, case.address_space)
            verdict, line = classify(case, proc)
            counts[verdict] += 1
            print(f"{verdict:12s} {case.group:12s} {case.name:42s} {line}", flush=True)
        faults = []
        if (SHARED / "MANIFEST.tsv").exists() and not args.group:
            verdict, note = damaged_raw_fault(tmp)
            faults.append(("fault", "raw file truncated after its verified fetch", verdict, note))
        faults += sigkill_faults(tmp, args.kills, args.seed) if not args.group else []
        for group, name, verdict, note in faults:
            print(f"{verdict:12s} {group:12s} {name:42s} {note}", flush=True)
        survived = sum(v == "survived" for *_, v, _ in faults)
        print()
        print("| inputs tried | clean one-line errors | correct results | BAD (traceback, crash, hang, silent) "
              "| faults injected | survived |")
        print("|---|---|---|---|---|---|")
        print(f"| {len(cases)} | {counts['clean error']} | {counts['correct']} | {counts['BAD']} | {len(faults)} "
              f"| {survived} |")
        return 1 if counts["BAD"] or survived < len(faults) else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
