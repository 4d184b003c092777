"""`rbrepro featurize`, `train` and `predict`: one model at a time."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Optional

import typer

from rbrepro.cli.app import app
from rbrepro.cli.common import (
    FEATURE_METHOD_HELP,
    KERNEL_HELP,
    METHOD_HELP,
    R_HELP,
    SCALING_HELP,
    SOLVER_HELP,
    SPLITTABLE,
    DataDir,
    DatasetsFile,
    FeatureMethod,
    Kernel,
    Loss,
    Method,
    Mirror,
    Quiet,
    Scaling,
    Solver,
    Stopping,
    Task,
    Variant,
    _check_lam,
    _check_memory_limit,
    _check_sigma,
    _fail,
    _guard,
    _sigma_or_auto,
    _validated,
    say,
    status,
)
from rbrepro.metrics import stated, undefined_because
from rbrepro.models.registry import DEFAULT_L1, METHODS, SUBJECT
from rbrepro.models.sigma_search import SUBSAMPLE_ROWS
from rbrepro.settings import CLUSTER_DEADLINES
from rbrepro.solver_registry import is_cg

#: --cluster's help: the two kinds of address and every network wait's deadline
CLUSTER_HELP = ("Fit and predict across a dask cluster: local:N (N worker processes on 127.0.0.1, started and "
                f"stopped here) or tcp://HOST:PORT (a running scheduler); {SPLITTABLE} only. Deadlines: "
                f"{CLUSTER_DEADLINES}, a first worker as long.")


@app.command()
def featurize(
    name: str = typer.Argument(..., help="Dataset name, or a path to a LIBSVM/CSV file."),
    method: FeatureMethod = typer.Option(FeatureMethod(SUBJECT), "--method", help=FEATURE_METHOD_HELP),
    R: int = typer.Option(256, "--R", "-R", min=1, help=R_HELP),
    sigma: float = typer.Option(1.0, "--sigma", callback=_validated(_check_sigma), help="Inverse kernel width sigma (> 0)."),
    kernel: Kernel = typer.Option(Kernel.l1, "--kernel", help=KERNEL_HELP),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the grid / frequency / landmark draw."),
    threads: int = typer.Option(0, "--threads", min=0, help="numba threads (0 = all cores)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
    mirror: Mirror = None,
    data_dir: DataDir = None,
    datasets: DatasetsFile = None,
):
    """Build a feature map of a dataset and report D, nnz, kappa (rb) and times (without compilation)."""
    import numba
    from threadpoolctl import threadpool_limits

    from rbrepro.data.load import load_dataset
    from rbrepro.models.registry import method_spec

    spec = method_spec(method.value)
    if kernel.value not in spec.kernels:
        others = " or ".join(m for m in FeatureMethod.__members__.values() if kernel.value in method_spec(m.value).kernels)
        _fail(f"--kernel {kernel.value}: {spec.title} approximates the {' or '.join(spec.kernels)} kernel only; "
              f"use --method {others}")
    if threads:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    data = _guard(lambda: load_dataset(name, data_dir, mirror, progress=not as_json, datasets_file=datasets))

    def work():
        with threadpool_limits(limits=numba.get_num_threads()):
            figures = _featurize_timed(spec, data, R, sigma, kernel.value, seed)
        return {"dataset": data.name, "method": method.value, "kernel": kernel.value, "R": R, "sigma": sigma,
                "seed": seed, **figures, "threads": numba.get_num_threads()}

    out = _guard(work)
    if as_json:
        typer.echo(json.dumps(out))
    elif out["kappa"] is not None:
        typer.echo(f"{name}: {spec.style[0]} R={R} sigma={sigma:g}: D={out['D']} nnz={out['nnz']} "
                   f"kappa={out['kappa']:.2f} featurize {out['featurize_s']:.3f} s ({out['threads']} threads), test "
                   f"transform {out['transform_test_s']:.3f} s, {100 * out['test_unseen_share']:.1f}% test entries in "
                   f"unseen bins")
    else:
        typer.echo(f"{name}: {method.value} R={R} sigma={sigma:g} kernel {kernel.value}: D={out['D']} "
                   f"featurize {out['featurize_s']:.3f} s ({out['threads']} threads), test transform "
                   f"{out['transform_test_s']:.3f} s")


def _featurize_timed(spec, data, R: int, sigma: float, kernel: str, seed: int) -> dict:
    """The method's feature map of the training and test rows, timed without compilation: D, nnz,
    kappa (maps that have one) and the share of test entries in bins unseen in training."""
    from rbrepro.models.feature_ridge import features_of, fit_features

    if hasattr(spec.feature_class(), "warm_up"):
        spec.feature_map(R, sigma=sigma, kernel=kernel, random_state=seed).warm_up(data.X_train)
    else:  # compile the kernels outside the timed region
        spec.feature_map(2, sigma=sigma, kernel=kernel, random_state=0).fit(data.X_train[:4]).transform(data.X_train[:4])
    feats = spec.feature_map(R, sigma=sigma, kernel=kernel, random_state=seed)
    t0 = time.perf_counter()
    Z = fit_features(feats, data.X_train)
    t1 = time.perf_counter()
    Zt = features_of(feats, data.X_test)
    t2 = time.perf_counter()
    ids = getattr(Zt, "ids", None)
    kappa = getattr(feats, "kappa_", None)
    return {"n_train": Z.shape[0], "D": Z.shape[1], "nnz": int(Z.nnz if hasattr(Z, "nnz") else Z.size),
            "kappa": kappa, "test_unseen_share": 0.0 if ids is None else float((ids < 0).mean()),
            "featurize_s": t1 - t0, "transform_test_s": t2 - t1}


@app.command()
def train(
    name: str = typer.Argument(..., help="Dataset name, or a path to a LIBSVM/CSV file."),
    method: Method = typer.Option(Method(SUBJECT), "--method", help=METHOD_HELP),
    R: int = typer.Option(256, "--R", "-R", min=1, help=R_HELP),
    sigma: str = typer.Option("scale", "--sigma", callback=_sigma_or_auto,
                              help="Inverse kernel width sigma (> 0); scale: 3 / the median L1 distance between "
                                   "training rows; or auto: a pattern search over 0.01 ... 100 scored on held-out "
                                   f"training rows (at most {SUBSAMPLE_ROWS:,}; a direct solve: the validation split)."),
    kernel: Kernel = typer.Option(Kernel.l1, "--kernel", help=KERNEL_HELP),
    task: Task = typer.Option(Task.auto, "--task", help="Your own data's task: regression, binary, multiclass, or "
                                                        "auto (inferred from the labels; whole numbers with many "
                                                        "distinct values are refused until you say)."),
    scaling: Scaling = typer.Option(Scaling.default, "--scaling", help=SCALING_HELP),
    lam: Optional[float] = typer.Option(None, "--lam", callback=_validated(_check_lam), help="Ridge lambda [default: the dataset's, usually 0.01]."),
    solver: Solver = typer.Option(Solver.default, "--solver", help=SOLVER_HELP),
    l1: Optional[float] = typer.Option(None, "--l1", help=f"rcd: the L1 weight lambda of F(w) [default: {DEFAULT_L1:g}]."),
    loss: Loss = typer.Option(Loss.squared_hinge, "--loss", help="rcd loss for classification (regression: square)."),
    epochs: int = typer.Option(20, "--epochs", min=0, help="rcd: passes over all coordinates."),
    variant: Variant = typer.Option(Variant.async_, "--variant",
                                    help="rcd with several threads: async (the authors' atomic updates) or sync "
                                         "(damped, eq. 29)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the random features / landmarks / tree."),
    maxit: int = typer.Option(50, "--maxit", min=0, help="CG iteration cap (authors: 50)."),
    stopping: Stopping = typer.Option(Stopping.auto, "--stopping",
                                      help="When CG stops: validation (the best iterate on a held-out tenth of "
                                           "the training rows, 8 steps of patience, then CG goes on from it on "
                                           "every row for 8 more steps; no test data), residual (--tol or "
                                           "--maxit: the authors' rule), or auto: validation with pcg where the "
                                           "method solves by CG and --solver is default, else residual."),
    tol: float = typer.Option(1e-3, "--tol", help="CG relative-residual target (authors: 1e-3)."),
    center: Optional[bool] = typer.Option(None, "--center/--no-center",
                                          help="Subtract the training mean of y [default: no for rb (the authors' "
                                               "RB driver), yes for the others]."),
    threads: int = typer.Option(0, "--threads", min=0, help="numba threads (0 = all cores)."),
    memory_limit: Optional[float] = typer.Option(None, "--memory-limit", callback=_validated(_check_memory_limit),
                                                 help="GB a fit may use [default: $RBREPRO_MEMORY_LIMIT_GB or "
                                                      "60% of RAM]; larger estimates are refused up front."),
    save_model: Optional[Path] = typer.Option(None, "--save-model", help="Write the fitted model here (.npz, no "
                                              "pickle) for `rbrepro predict`."),
    cluster: Optional[str] = typer.Option(None, "--cluster", help=CLUSTER_HELP),
    partitions: Optional[int] = typer.Option(None, "--partitions", min=1, help="--cluster: row partitions "
                                             "[default: one per worker]."),
    as_json: bool = typer.Option(False, "--json", help="Print exactly one JSON object: the result row."),
    quiet: Quiet = False,
    test: Optional[Path] = typer.Option(None, "--test", help="Score on this LIBSVM/CSV file instead of a split of "
                                                             "NAME (then a training file too)."),
    label_column: Optional[int] = typer.Option(None, "--label-column", help="A CSV file's label column (0 the "
                                                                            "first, the default; -1 the last)."),
    mirror: Mirror = None,
    data_dir: DataDir = None,
    datasets: DatasetsFile = None,
):
    """Train a model and report train/test performance, cost figures and times.

    train_s = featurize_s + solve_s: wall time after loading, without numba compilation.
    The metric is accuracy in % (classification) or relative error ||y - y_hat|| / ||y||.
    """
    from rbrepro.models.cell import CellParams
    from rbrepro.models.train import resolve_stopping

    auto = sigma == "auto"
    params = CellParams(dataset=name, method=method.value, sigma=1.0 if sigma in ("auto", "scale") else float(sigma),
                        kernel=kernel.value, R=R, lam=0.0, solver=solver.value, maxit=maxit, tol=tol, center=center,
                        seed=seed, threads=threads, loss=loss.value, epochs=epochs, variant=variant.value,
                        memory_limit_gb=memory_limit, scaling=scaling.value)
    options = dict(lam=lam, l1=l1, data_dir=data_dir, mirror=mirror, datasets_file=datasets, test_file=test,
                   label_column=label_column, save_model=save_model, progress=not (as_json or quiet),
                   task=task.value, auto_sigma=auto, scale_sigma=sigma == "scale")
    params = _guard(lambda: resolve_stopping(params, stopping.value))
    _refuse_before_loading(cluster, partitions, params)
    if not (as_json or quiet):
        status(f"{name}: loading the data" + (", then choosing sigma without the test rows (the widths scored "
                                              "are printed after)" if auto else "") + f", then fitting {method.value} ...")
    row = _train_here_or_on(cluster, partitions, params, options)
    if as_json:
        typer.echo(_json_row(row))
        return
    typer.echo(_train_summary(row, method.value, kernel, auto, save_model is not None, cluster is not None))


def _refuse_before_loading(cluster: str | None, partitions: int | None, params) -> None:
    """What the cluster would refuse, refused before the cluster starts or a row loads."""
    if partitions and not cluster:
        _fail("--partitions splits the rows over a dask cluster; add --cluster local:N or tcp://HOST:PORT")
    if cluster:
        from rbrepro.distributed.train import refuse_early

        _guard(lambda: refuse_early(params))


def _train_here_or_on(cluster: str | None, partitions: int | None, params, options: dict) -> dict:
    """models.train.train in this process, or across the dask cluster `cluster` names."""
    from rbrepro.models.train import train as train_model

    if cluster:
        from rbrepro.distributed.train import train_on_cluster

        if options.get("progress"):
            status(f"starting the dask cluster {cluster} (workers take some seconds to come up) ...")
        return _guard(lambda: train_on_cluster(params, cluster, partitions=partitions, **options))
    return _guard(lambda: train_model(params, **options))


def _json_row(row: dict) -> str:
    """The result row as JSON: a metric that could not be computed is null with its reason beside it."""
    undefined = {k: None for k in ("train_metric", "test_metric") if row[k] != row[k]}
    notes = {f"{k}_undefined": undefined_because(row["metric"]) for k in undefined}
    return json.dumps({**row, **undefined, **notes}, default=lambda v: v.item() if hasattr(v, "item") else str(v))


def _train_summary(row: dict, method: str, kernel, auto: bool, saved: bool, clustered: bool) -> str:
    """`train`'s text output: the chosen sigma (with --sigma auto), then the result row in one line."""
    rcd = row["solver"] == "rcd"
    unit = "%" if row["metric"] == "accuracy" else ""
    solver_text = (f"RCD {row['rcd_variant']} {row['rcd_epochs']} epochs, F={row['rcd_objective']:.5g}, "
                   f"nnz(w)={row['nnz_w']}" if rcd else
                   f"{row['solver']}" + (f" {row['cg_iterations']} it" if is_cg(row["solver"]) else ""))
    kappa = f" kappa={row['kappa']:.2f}" if row["kappa"] == row["kappa"] else ""
    kernel_text = f" kernel {kernel.value}" if kernel is not Kernel.l1 else ""
    chosen = f"sigma {row['sigma']:g} ({row['sigma_selection']})\n" if row.get("sigma_selection", "").startswith(
        "scale") else ""
    if auto:
        edge = f" (the grid's {row['sigma_edge']} end: the best may lie beyond)" if row["sigma_edge"] else ""
        points = "".join(f"  sigma {point.split(':')[0]:<6} held-out {row['metric']} {float(point.split(':')[1]):.4g}\n"
                         for point in row["sigma_curve"].split(";"))
        chosen = f"{points}sigma {row['sigma']:g} chosen on the {row['sigma_selection']}{edge}\n"
    r_text = f" R={row['R']}" if METHODS[method].has_R else ""
    return (chosen + f"{row['dataset']}: {method}{r_text} sigma={row['sigma']:g}{kernel_text} "
            f"{'l1' if rcd else 'lam'}={row['lam']:g}: test "
            f"{row['metric']} {stated(row['metric'], row['test_metric'], unit)} "
            f"(train {stated(row['metric'], row['train_metric'], unit)}); "
            f"D={row['D']}{kappa}; {solver_text}; tested on {row['split']} ({row['n_test']:,} rows); "
            f"featurize {row['featurize_s']:.3f} s + solve "
            f"{row['solve_s']:.3f} s = train {row['train_s']:.3f} s; predict {row['predict_s']:.3f} s; peak "
            f"{row['peak_fit_mb']:.0f} MB ({row['threads']} threads)"
            + (f"; model saved to {row['model_path']}" if saved else "")
            + (f"; {row['workers']} dask workers, {row['partitions']} partitions, "
               f"{row['bytes_per_cg_step']:,} bytes per CG step" if clustered else ""))


@app.command()
def predict(
    model: Path = typer.Argument(..., help="A model written by `rbrepro train --save-model` or model.save(path)."),
    file: Path = typer.Argument(..., help="Rows to predict: LIBSVM (plain, .bz2, .xz or .gz; with or without "
                                          "labels) or CSV (with a label column or without one)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write one prediction per line here (else stdout)."),
    scores: bool = typer.Option(False, "--scores", help="After each prediction, its decision values: one per "
                                                        "class (one for two classes), comma-separated."),
    label_column: Optional[int] = typer.Option(None, "--label-column",
                                               help="A CSV's label column (0 the first, -1 the last) [default: the "
                                                    "training file's]; a CSV with as many columns as features has "
                                                    "none."),
    pad: bool = typer.Option(False, "--pad", help="Take features missing from narrower rows as zeros (a sparse "
                                                  "LIBSVM file that omits trailing features is padded anyway)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON summary (with the metric where the file's "
                                                       "labels allow one)."),
    quiet: Quiet = False,
):
    """Apply a saved model to new rows (scaled as its training data was), labelled or not.

    Rows wider than the model's are refused; narrower ones too (naming both widths) unless --pad
    is given or a sparse LIBSVM file omits trailing zero features (said once). Where the file has
    labels the model knows, the metric is reported too.
    """
    from rbrepro.models.apply import apply_model, prediction_lines

    result = _guard(lambda: apply_model(model, file, label_column, pad))
    for note in [] if quiet else result.notes:
        say(note)
    task = "regression" if result.classes is None else "classification"
    lines = prediction_lines(result, task, scores)
    if out:
        from rbrepro.data.atomic import write_text_atomic

        _guard(lambda: write_text_atomic(out, lines))
    metric = f"{result.metric} against the file's labels: {result.value:.4g}" if result.value is not None else \
        f"no {result.metric}: {result.why_no_metric}"
    if as_json:
        typer.echo(json.dumps({"model": str(model), "file": str(file), "rows": int(len(result.predicted)),
                               "metric": result.metric, "value": result.value, "why_no_metric": result.why_no_metric,
                               "out": str(out) if out else None}))
    elif out and not quiet:
        typer.echo(f"{len(result.predicted)} predictions -> {out}; {metric}")
    else:
        typer.echo(lines, nl=False)
        if not quiet:
            say(metric)


