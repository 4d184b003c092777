"""Cold start: `rbrepro train` imports only what training needs.

pandas is loaded on this path by scikit-learn itself (sklearn.utils.fixes tries `import pandas`
when it is installed, and the estimators' base classes need sklearn), so the check is that
rbrepro never needs it: the command runs with pandas made unimportable (scikit-learn then goes
on without it), and matplotlib, requests (only a download needs it) and dask are never loaded."""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import sys
sys.modules["pandas"] = None  # `import pandas` now raises ImportError: any use of it by rbrepro fails
import rbrepro.cli.app  # noqa: F401
from rbrepro.cli import main
code = main(["train", "digits", "-R", "16", "--json"])
assert not code, code
loaded = sorted(m for m in ("matplotlib", "requests", "urllib3", "dask", "distributed")
                if any(k == m or k.startswith(m + ".") for k in sys.modules))
print("LOADED", loaded, file=sys.stderr)
"""


def test_train_on_digits_needs_no_pandas_and_loads_no_matplotlib(tmp_path):
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "LOADED []" in proc.stderr, proc.stderr[-1000:]
    row = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert row["status"] == "ok" and row["dataset"] == "digits"
