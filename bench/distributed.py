"""Benchmark: Random Binning ridge on SUSY-shaped rows fitted across a local dask cluster,
and a model of the time per CG step for 1 ... 1000 machines on a 10 Gb/s network.

Rows of the registered SUSY shape (rbrepro.data.synthetic, 18 features) are generated once into
.npy files; each of W worker processes (each under a memory limit) reads its partition from them,
bins it on the model's grids, and CG runs here with every step's Z^T (Z p) summed over the workers.
Prints D, the featurize / CG / predict times, the time per CG step, the bytes moved per step and
the test accuracy (the synthetic set's); with --single also the single-process fit, whose D must be
equal. The model of a CG step on M machines, from this run's per-row compute time:

    t(M) = t_row N / M + o M + M 2 D C 8 / B   (star: every share through the client, as implemented)
    t(M) = t_row N / M + o M + 2 D C 8 ceil(log2 M) / B   (a tree reduction and broadcast)

t_row is one row's share of a CG step on one process (from --single, else this run's step time
spread over its rows), o dask's overhead per task (--task-overhead-ms, default 1 ms, the figure
dask's documentation gives; a step has M tasks), B = 10 Gb/s. D defaults to this run's (--model-D: another's, e.g. 276,141,
the SUSY shape's at R = 1024 and sigma 0.56).

    python -m bench.distributed [--rows N] [--R R] [--sigma S] [--workers W] [--worker-memory GB]
                                [--single] [--model-rows N]
    (defaults: 4,000,000 rows, R = 1024, sigma 0.56, 4 workers of 12 GB each; the model at 4 M rows)
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.record import record
from rbrepro.data.synthetic import SHAPES, generate
from rbrepro.distributed import DistributedRidge, npy_partitions, open_cluster
from rbrepro.models import RandomBinningClassifier

BANDWIDTH = 10e9 / 8  # bytes per second on 10 Gb/s
MACHINES = (1, 10, 100, 1000)


def rows_files(folder: Path, n_train: int, n_test: int) -> tuple[Path, Path, np.ndarray, np.ndarray]:
    """(X.npy, y.npy) of the training rows, and the test rows, generated once per size."""
    X_path, y_path = folder / f"susy_{n_train}_X.npy", folder / f"susy_{n_train}_y.npy"
    X, y = generate(SHAPES["susy"], seed=0, n_rows=n_train + n_test)
    if not X_path.exists():
        np.save(X_path, X[:n_train])
        np.save(y_path, y[:n_train])
    return X_path, y_path, X[n_train:], y[n_train:]


def step_model(t_row: float, task_s: float, n_rows: int, D: int, C: int) -> list[tuple[int, float, float]]:
    """(machines, star seconds, tree seconds) per CG step."""
    share = 2 * D * C * 8
    return [(m, t_row * n_rows / m + task_s * m + m * share / BANDWIDTH,
             t_row * n_rows / m + task_s * m + share * math.ceil(math.log2(m)) / BANDWIDTH) for m in MACHINES]


def _peak_rss() -> int:
    """On a worker: its process's peak resident memory in bytes (Linux reports KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--R", type=int, default=1024)
    parser.add_argument("--sigma", type=float, default=0.56)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--worker-memory", type=float, default=12.0, help="GB per worker")
    parser.add_argument("--single", action="store_true", help="also fit on one process (equal D expected)")
    parser.add_argument("--model-rows", type=int, default=4_000_000)
    parser.add_argument("--task-overhead-ms", type=float, default=1.0)
    parser.add_argument("--model-D", type=int, default=None, help="D of the modelled run [default: this run's]")
    parser.add_argument("--folder", type=Path, default=Path(os.environ.get("RBREPRO_DATA", tempfile.gettempdir())))
    args = parser.parse_args(argv)
    X_path, y_path, X_test, y_test = rows_files(args.folder, args.rows, args.rows // 4)
    est = RandomBinningClassifier(n_grids=args.R, sigma=args.sigma, lam=0.01, maxit=50, tol=1e-12, random_state=0,
                                  memory_limit_gb=None)
    with open_cluster(f"local:{args.workers}", memory_limit=f"{args.worker_memory}GB") as client:
        model = DistributedRidge(est, client=client, n_partitions=args.workers)
        model.warm_up(X_test[:8])
        model.fit_partitions(npy_partitions(X_path, y_path, args.workers))
        t0 = time.perf_counter()
        accuracy = 100.0 * float(np.mean(model.predict(X_test) == y_test))
        predict_s = time.perf_counter() - t0
        peaks = sorted(client.run(_peak_rss).values())
    from rbrepro.models.ridge_memory import featurize_memory

    one_process = featurize_memory("rb", args.rows, X_test.shape[1], args.R)
    print(f"memory: each worker's limit {args.worker_memory:g} GB, peaks {', '.join(f'{p / 1e9:.2f}' for p in peaks)} "
          f"GB; one process would need {one_process / 1e9:.2f} GB by the memory model"
          + (" (more than a worker's limit: it could not fit within it)" if one_process > args.worker_memory * 1e9
             else ""), flush=True)
    step_s = model.solve_s_ / max(model.cg_iterations_, 1)
    D, C = model.n_columns_, model.coef_.shape[1]
    note = (f"susy-shaped N={args.rows}, R={args.R}, sigma={args.sigma:g}, local:{args.workers} of "
            f"{args.worker_memory:g} GB, D={D}, featurize {model.featurize_s_:.2f} s, CG {model.solve_s_:.2f} s "
            f"({model.cg_iterations_} it, {step_s * 1e3:.1f} ms a step, {model.bytes_per_cg_step_:,} bytes a step), "
            f"predict {predict_s:.2f} s, test accuracy {accuracy:.2f} % (synthetic)")
    single_s, t_row = None, step_s * args.workers / args.rows
    if args.single:
        X, y = np.load(X_path), np.load(y_path)
        est.warm_up(X[:8])
        single = est.fit(X, y)
        single_s = single.train_s_
        t_row = single.solve_s_ / max(single.cg_iterations_, 1) / args.rows
        note += f"; one process: D={single.n_columns_} (equal: {single.n_columns_ == D}), train {single_s:.2f} s"
    record("distributed", f"SUSY-shaped R={args.R} on local:{args.workers}: train (featurize + CG)",
           model.train_s_, single_s, "one process" if single_s else "", note=note)
    task_s = args.task_overhead_ms / 1e3
    D_model = args.model_D or D
    print(f"time per CG step at N = {args.model_rows:,}, D = {D_model:,}, C = {C} on 10 Gb/s "
          f"(t_row = {t_row * 1e9:.2f} ns from this run, o = {task_s * 1e3:.2f} ms a task):")
    for m, star, tree in step_model(t_row, task_s, args.model_rows, D_model, C):
        print(f"  {m:5d} machines: star {star * 1e3:9.2f} ms   tree {tree * 1e3:9.2f} ms")


if __name__ == "__main__":
    main()
