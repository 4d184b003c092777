"""Run every command the README shows, in order, then require `git status` to be clean.

A newcomer copies the README's commands on a fresh clone; none of them may change a
committed file or leave an untracked one behind. Commands are read from the README's
```bash blocks (plus the `make` targets its prose names); the few that cannot run here are
skipped with the reason printed. Run from the repository root after `make install`:

    .venv/bin/python .ci/readme_commands.py
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: (pattern, why it is not run here)
SKIP = [
    (r"^make test\b", "CI's own first step"),
    (r"^make (figures|fig[3-6])$", "the full reproduction (hours); it publishes results/ and figures/ on purpose"),
    (r"^make (bench|soak)", "benchmarks and soak runs (minutes to hours); they write only ignored files"),
    (r"python -m bench\.", "a benchmark (minutes); it writes only results/bench.csv, which git ignores"),
    (r"^dask (scheduler|worker)|--scheduler tcp://HEAD", "needs a cluster; tests/test_sweep.py runs a real one on "
                                                          "127.0.0.1"),
    (r"path/to/|mydata|my-datasets\.yaml|my-fig5", "a placeholder for the reader's own data"),
    (r"^source \.venv/bin/activate", "the runner puts .venv/bin on PATH instead"),
]
#: make targets the README names in its prose, run after the code blocks
PROSE_TARGETS = ["make plots", "make compare", "make report", "make figures-mini"]


def commands(readme: Path = ROOT / "README.md") -> list[str]:
    out = []
    for block in re.findall(r"```bash\n(.*?)```", readme.read_text(), re.S):
        joined = re.sub(r"\\\n\s*", " ", block)  # continuation lines
        for line in joined.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out + PROSE_TARGETS


def skip_reason(command: str) -> str | None:
    for pattern, why in SKIP:
        if re.search(pattern, command):
            return why
    return None


#: commands that need a Table 1 dataset (or the output of one that does): without a mirror beside the
#: checkout and without RBREPRO_MIRROR they would go to the LIBSVM site, which this machine cannot reach
NEEDS_DATA = [r"^rbrepro (fetch|featurize|train|sweep|diagnose) (ijcnn1|cadata|letter|mnist|configs/fig)",
              r"^rbrepro (plot fig3|summary) runs/fig3$", r"^rbrepro predict runs/ijcnn1", r"RBREPRO_MIRROR\"?/",
              r"^make figures-mini$"]


def main() -> int:
    env = {**os.environ, "PATH": f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    mirror = ROOT.parent / "shared" / "data" / "libsvm"
    no_data = not (mirror / "MANIFEST.tsv").exists() and not os.environ.get("RBREPRO_MIRROR")
    failed = 0
    for command in commands():
        why = skip_reason(command)
        if not why and no_data and any(re.search(p, command) for p in NEEDS_DATA):
            why = f"needs a Table 1 dataset: no mirror at {mirror} and no RBREPRO_MIRROR (CI has the mirror beside it)"
        if why:
            print(f"skip  {command}\n      ({why})", flush=True)
            continue
        if command.startswith("export "):
            name, _, value = command[len("export "):].partition("=")
            value = os.path.expandvars(shlex.split(value)[0]) if value else ""
            if name == "RBREPRO_MIRROR" and not Path(ROOT, value).exists() and not mirror.exists():
                print(f"skip  {command}\n      (no mirror here: downloads go to the LIBSVM site)")
                continue
            env[name] = value
            print(f"env   {name}={value}", flush=True)
            continue
        start = time.time()
        proc = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=1800)
        status = "ok" if proc.returncode == 0 else f"FAILED ({proc.returncode})"
        print(f"run   {command}\n      {status} in {time.time() - start:.0f} s", flush=True)
        if proc.returncode != 0:
            failed += 1
            print(proc.stdout[-2000:] + proc.stderr[-2000:])
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    if dirty.strip():
        print(f"git status is not clean after the README's commands:\n{dirty}")
        return 1
    print(f"README commands: {failed} failed; git status clean")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
