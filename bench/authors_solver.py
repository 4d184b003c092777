"""Diagnostic: what the authors' PCG driver does differently from rbrepro's CG, measured on
their own draws (where the replay still misses on letter and cadata).

Their `PCG::Solve` (codes_KRR_randbin/include/Solvers/PCG.tpp) counts the initial residual as
iteration 1, so MAXIT = 50 makes at most 49 updates; and `KRR_OneVsAll_RandBin.cpp` passes the
previous one-vs-all class's solution as the next class's initial guess (w is reused across
classes). rbrepro's CG makes up to `maxit` updates from zero for every column. This prints the
test metric of RB with `rng: authors`, as `configs/fig3-as-published.yaml` runs it (R = 128,
lambda 0.01, tolerance 1e-15), three ways, beside the published value:

- rbrepro: `ridge_cg` (what the committed rows hold);
- 49 updates from zero;
- 49 updates, each class warm-started from the previous one (their driver).

A plain-numpy transcription of their PCG (`authors_pcg`) runs the last two. Binary and
regression targets have one column, so only the 49-update cap can matter there.

    python -m bench.authors_solver [DATASET [SIGMA ...]]    (default: letter at six sigmas)
"""

from __future__ import annotations

import sys

import numpy as np

from rbrepro import metrics
from rbrepro.data.load import load_dataset
from rbrepro.features import RandomBinningFeatures
from rbrepro.models import targets
from rbrepro.published import published_table
from rbrepro.solvers.cg import ridge_cg

R, LAM, MAXIT, TOL = 128, 0.01, 50, 1e-15
SCALING = {"cadata": "maxabs-all"}  # as configs/fig3-as-published.yaml scales them
DEFAULT_SIGMAS = (0.03, 0.1, 0.28, 0.79, 3.16, 8.91)


def authors_pcg(Z, b: np.ndarray, x0: np.ndarray, lam: float, maxit: int, rtol: float) -> np.ndarray:
    """Their PCG on (Z^T Z + lam I) x = b with the identity preconditioner, as PCG.tpp runs it:
    the residual history's first entry is the initial residual, and the loop runs while fewer
    than maxit entries are recorded (so at most maxit - 1 updates); stop when ||r|| < rtol ||b||."""
    tol = rtol * np.linalg.norm(b)

    def normal(v):
        return Z.rmatvec(Z.matvec(v.reshape(-1, 1)))[:, 0] + lam * v

    x = x0.copy()
    r = b - normal(x)
    recorded = 1
    if np.linalg.norm(r) < tol:
        return x
    p, rz = r.copy(), r @ r
    while recorded < maxit:
        Ap = normal(p)
        alpha = rz / (Ap @ p)
        x += alpha * p
        r -= alpha * Ap
        recorded += 1
        if np.linalg.norm(r) < tol:
            break
        rz_new = r @ r
        p = r + (rz_new / rz) * p
        rz = rz_new
    return x


def metric(data, scores, classes) -> float:
    if data.task == "regression":
        return metrics.relative_error(data.y_test, scores[:, 0])
    return targets.authors_accuracy(data.y_test, scores[:, 0] if scores.shape[1] == 1 else scores, classes)


def main(argv=None) -> None:
    args = sys.argv[1:] if argv is None else argv
    name = args[0] if args else "letter"
    sigmas = [float(s) for s in args[1:]] or list(DEFAULT_SIGMAS)
    data = load_dataset(name, scaling=SCALING.get(name, "default"), progress=False)
    if data.task == "regression":
        Y, classes = data.y_train.reshape(-1, 1).astype(np.float64), None
    else:
        Y, classes = targets.encode(data.y_train, data.task, "authors")
    published = published_table()
    ref = published[(published["panel"] == "fig3") & (published["split"] == "test") & (published["method"] == "rb")
                    & (published["dataset"] == name) & (published["R"] == R)]
    print(f"{name}: RB R={R}, lambda {LAM}, their draws; test metric three ways (published beside)")
    print(f"{'sigma':>7} {'published':>10} {'rbrepro':>10} {'49 cold':>10} {'49 warm':>10}")
    for sigma in sigmas:
        features = RandomBinningFeatures(n_grids=R, sigma=sigma, draws="authors")
        Z = features.fit_transform_binned(data.X_train)
        Zt = features.transform_binned(data.X_test)
        ours = ridge_cg(Z, Y, LAM, MAXIT, TOL).coef
        cold, warm = np.zeros_like(ours), np.zeros_like(ours)
        previous = np.zeros(ours.shape[0])
        for c in range(Y.shape[1]):
            b = Z.rmatvec(Y[:, [c]])[:, 0]
            cold[:, c] = authors_pcg(Z, b, np.zeros_like(previous), LAM, MAXIT, TOL)
            previous = warm[:, c] = authors_pcg(Z, b, previous, LAM, MAXIT, TOL)
        at = ref[np.isclose(ref["sigma"], sigma, rtol=1e-3)]
        pub = float(at["perf"].iloc[0]) if len(at) else float("nan")
        values = [metric(data, Zt.matvec(W), classes) for W in (ours, cold, warm)]
        print(f"{sigma:7.3g} {pub:10.4f} " + " ".join(f"{v:10.4f}" for v in values))


if __name__ == "__main__":
    main()
