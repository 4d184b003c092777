"""scikit-learn-intelex's exact Gaussian kernel, fitted in a process of its own (bench.peers runs this
file in the interpreter $RBREPRO_SKLEARNEX_PYTHON names, whose environment has numpy and
scikit-learn-intelex, not rbrepro): C and gamma chosen on a validation slice, then timed fits.

    python bench/sklearnex_worker.py ROWS.npz RESULT.json

A leaf: numpy, the standard library and sklearnex; bench.peers reads its validation slice and gamma
scale from here, so both sides choose on the same rows.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np


def validation_slice(n: int, seed: int = 0, cap: int = 10_000) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (fit, validate) of the training rows: a seeded 20 % to validate, at most `cap` of the rest to fit."""
    order = np.random.default_rng(seed).permutation(n)
    n_val = max(1, n // 5)
    return order[n_val:][:cap], order[:n_val]


def scale_gamma(X: np.ndarray) -> float:
    """scikit-learn's gamma="scale": 1 / (d var(X))."""
    var = float(np.var(X))
    return 1.0 / (X.shape[1] * var) if var > 0 else 1.0


def _rel_error(y, p) -> float:
    return float(np.linalg.norm(y - p) / np.linalg.norm(y))


def sklearnex_fit(X, y, X_test, y_test, regression: bool, repeats: int, seed: int = 0) -> dict:
    """C and gamma on the validation slice, then `repeats` timed fits on all training rows."""
    from sklearnex.svm import SVC, SVR

    def make(C, gamma):
        return SVR(C=C, gamma=gamma) if regression else SVC(C=C, gamma=gamma)

    mu, sd = (float(np.mean(y)), float(np.std(y)) or 1.0) if regression else (0.0, 1.0)

    def score(model, Xs, ys):
        p = model.predict(Xs)
        return -_rel_error(ys, p * sd + mu) if regression else float(100.0 * np.mean(p == ys))

    fit_rows, val_rows = validation_slice(len(y), seed)
    g0 = scale_gamma(X)
    best = None
    for C in (1.0, 10.0, 100.0):
        for gamma in (g0 / 3, g0, g0 * 3):
            m = make(C, gamma).fit(X[fit_rows], (y[fit_rows] - mu) / sd)
            s = score(m, X[val_rows], y[val_rows])
            if best is None or s > best[0]:
                best = (s, C, gamma)
    _, C, gamma = best
    times = []
    for _ in range(repeats):
        m = make(C, gamma)
        t0 = time.perf_counter()
        m.fit(X, (y - mu) / sd)
        times.append(time.perf_counter() - t0)
    test = score(m, X_test, y_test)
    return {"times": times, "metric": -test if regression else test, "C": C, "gamma": gamma,
            "estimator": type(m).__module__ + "." + type(m).__name__}


def main(npz: str, out: str) -> None:
    """Fit on the rows saved in `npz`, write the result to `out` (JSON)."""
    d = np.load(npz)
    res = sklearnex_fit(d["X"], d["y"], d["X_test"], d["y_test"], bool(d["regression"]), int(d["repeats"]))
    Path(out).write_text(json.dumps(res))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
