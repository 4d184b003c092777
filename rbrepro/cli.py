"""The rbrepro command line: a thin layer over the library.

    rbrepro fetch ijcnn1
    rbrepro featurize ijcnn1 --method rb --R 256 --sigma 1.58
    rbrepro train ijcnn1 --method rb --R 256 --sigma 1.58 --json
    rbrepro sweep configs/fig3.yaml --dataset ijcnn1
    rbrepro plot fig3 results/fig3
"""

from __future__ import annotations

import json
import math
import sys
import time
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console

app = typer.Typer(
    add_completion=False,
    rich_markup_mode=None,  # plain click help: "[default: ...]" in help texts is text, not Rich markup
    no_args_is_help=True,
)
err = Console(stderr=True)

DATA_HELP = "Dataset cache folder [default: $RBREPRO_DATA or ./datasets]."
DATASETS_HELP = "A YAML file registering your own datasets [default: $RBREPRO_DATASETS]."
MIRROR_HELP = ("Base of a LIBSVM mirror in the site's layout: a directory or an http(s) URL "
               "[default: $RBREPRO_MIRROR, else the LIBSVM site].")


class Method(str, Enum):
    rb = "rb"
    rf = "rf"
    nystrom = "nystrom"
    block = "block"
    exact = "exact"


class FeatureMethod(str, Enum):
    rb = "rb"
    rf = "rf"
    nystrom = "nystrom"


class Kernel(str, Enum):
    l1 = "l1"
    euclidean = "euclidean"


KERNEL_HELP = ("Distance of the Laplacian kernel exp(-sigma d(x, y)): l1 (what RB approximates; RB takes no other) "
               "or euclidean (the authors' baselines: rf, nystrom, block, exact).")


class Scaling(str, Enum):
    default = "default"
    minmax = "minmax"
    maxabs = "maxabs"
    maxabs_all = "maxabs-all"
    published = "published"


SCALING_HELP = ("Feature scaling, fitted on the training split: default (the registry's: min-max, or as published "
                "for files the site ships scaled), minmax ([0, 1] per column), maxabs (divide by max |x|), maxabs-all "
                "(max |x| over training and test rows: the authors' cadata) or published (as the file has it).")


class Solver(str, Enum):
    default = "default"
    cg = "cg"
    pcg = "pcg"
    direct = "direct"
    rcd = "rcd"


class Loss(str, Enum):
    squared_hinge = "squared_hinge"
    logistic = "logistic"
    square = "square"


class Variant(str, Enum):
    async_ = "async"
    sync = "sync"


class Figure(str, Enum):
    fig3 = "fig3"
    fig4 = "fig4"
    fig5 = "fig5"
    fig6 = "fig6"


def _version(value: bool):
    if value:
        from rbrepro import __version__
        from rbrepro.provenance import provenance

        prov = provenance()
        dirty = " (dirty)" if prov.get("git_dirty") else ""
        commit = f", git {prov['git_commit']}{dirty}" if prov.get("git_commit") else ""
        typer.echo(f"rbrepro {__version__}{commit}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version (and the git commit of a checkout) and exit."),
):
    """Reproduce 'Revisiting Random Binning Features' (Wu et al., KDD'16): fetch the LIBSVM datasets,
    build random features, train kernel models, run sweeps from YAML configs and plot the paper's
    figures. sigma is an inverse kernel width: k(x, y) = exp(-sigma d(x, y)), d the L1 distance
    unless --kernel euclidean says otherwise (baselines only)."""


def _fail(message: str, code: int = 2):
    from rich.markup import escape

    err.print(f"[bold red]rbrepro: error:[/] {escape(message)}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(code)


def _validated(check):
    """An option callback running one of the library's validators (features.params), so the
    CLI refuses exactly what the estimators refuse, with the option named by click."""
    def callback(value):
        if value is not None:
            try:
                check(value)
            except ValueError as exc:
                raise typer.BadParameter(str(exc)) from None
        return value
    return callback


def _check_sigma(value):
    from rbrepro.features.params import check_sigma
    check_sigma(value)


def _check_lam(value):
    from rbrepro.features.params import check_nonnegative
    check_nonnegative("lam", value)


def _expected_message(exc: BaseException) -> str | None:
    """The one-line message of an error the library raises on purpose, or None for a bug."""
    from rbrepro.data.fetch import FetchError
    from rbrepro.data.libsvm import ParseError
    from rbrepro.data.load import ContentError
    from rbrepro.models.persist import ModelFileError
    from rbrepro.sweep.backends import NoWorkers
    from rbrepro.sweep.config import ConfigError
    from rbrepro.sweep.store import SweepLocked

    if isinstance(exc, (ModelFileError, ConfigError, ContentError, FetchError, ParseError, SweepLocked, NoWorkers,
                        FileNotFoundError, ValueError, MemoryError)):
        return str(exc)
    if isinstance(exc, KeyError):
        return exc.args[0] if exc.args else str(exc)
    if isinstance(exc, OSError):  # full disk, read-only folder, permissions: say which file and why
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return f"{where}{exc.strerror or exc} (nothing written so far was lost: every write is atomic)"
    return None


def _guard(fn):
    """Run fn; turn the library's expected errors into one-line messages (exit status 2)."""
    try:
        return fn()
    except Exception as exc:
        message = _expected_message(exc)
        if message is None:
            raise
        _fail(message)


def _human(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return str(n)


@app.command()
def fetch(
    name: Optional[str] = typer.Argument(None, help="Dataset name (see --list)."),
    all_: bool = typer.Option(False, "--all", help="Fetch every dataset; say in one line why any is unavailable."),
    list_: bool = typer.Option(False, "--list", help="List the datasets: task, size, splits, cached or not."),
    from_: List[str] = typer.Option([], "--from", help="Your own file (path or URL) for a dataset the site lacks "
                                    "(census): once for one file to split, twice for train then test."),
    mirror: Optional[str] = typer.Option(None, "--mirror", help=MIRROR_HELP),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help=DATA_HELP),
    datasets: Optional[Path] = typer.Option(None, "--datasets", help=DATASETS_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
    forget_hashes: bool = typer.Option(False, "--forget-hashes", help="First forget the sha256 recorded in "
                                       "DATA_DIR/hashes.lock.json when this dataset's files were first fetched "
                                       "without a known hash (after replacing a bad first copy)."),
):
    """Download a dataset, verify its sha256, parse it and cache it in a fast binary form.

    Files come from the LIBSVM site or a mirror (--mirror / $RBREPRO_MIRROR), are checked
    against the mirror's MANIFEST.tsv or the recorded hashes, land atomically under
    DATA_DIR/raw (interrupted downloads resume), and are parsed into DATA_DIR/cache; the
    parsed rows, features and classes are checked against the registry.
    """
    from dataclasses import replace

    from rbrepro.data import user
    from rbrepro.data.load import data_dir as resolve_dir
    from rbrepro.data.load import default_mirror, load_dataset, user_datasets
    from rbrepro.data.registry import REGISTRY

    root = resolve_dir(data_dir)
    extra = _guard(lambda: user_datasets(datasets))
    if list_:
        specs = [*REGISTRY.values(), *extra.values()]
        w = max(len("name"), *(len(spec.name) for spec in specs))  # columns fit the longest name
        typer.echo(f"{'name':{w}s} {'task':10s} {'d':>4s} {'train/test (paper)':>20s} {'split':13s} {'state':14s} "
                   "size")
        for spec in specs:
            size = 0
            if spec.source.startswith("sklearn:"):
                state = "embedded"
            elif spec.source == "user" and spec.train is None:
                state = "supplied" if user.supplied_record(root, spec.name).exists() else "needs --from"
            else:
                have = [(root / "raw" / f.path).exists() for f in spec.files]
                size = sum((root / "raw" / f.path).stat().st_size for f, h in zip(spec.files, have) if h)
                state = "cached" if all(have) else ("partial" if any(have) else "not fetched")
            split = "test file" if spec.test else ("seeded split" if spec.train or spec.source == "user" else "seeded")
            counts = f"{spec.n_train}/{spec.n_test}" if spec.n_train else "-"
            typer.echo(f"{spec.name:{w}s} {spec.task:10s} {spec.n_features or '?':>4} {counts:>20s} {split:13s} "
                       f"{state:14s} {_human(size) if size else ''}".rstrip())
        return
    if from_:
        if not name or all_:
            _fail("--from needs one dataset name, e.g. `rbrepro fetch census --from census.libsvm`")
        if len(from_) > 2:
            _fail("--from takes one file (split with the paper's counts) or two (train, then test)")
        spec = REGISTRY.get(name)
        if spec is None or spec.source != "user":
            _fail(f"{name} comes from the LIBSVM site; --from is for datasets it lacks (census)")
        locations = [f if "://" in f else str(Path(f).expanduser().resolve()) for f in from_]
        spec = replace(spec, train=user.user_file(name, locations[0]),
                       test=user.user_file(name, locations[1]) if len(locations) > 1 else None)
        _guard(lambda: load_dataset(spec, data_dir, progress=not quiet))
        user.remember_supplied(root, spec)
        names = [name]
    else:
        names = [s.name for s in REGISTRY.values() if not s.source.startswith("sklearn:")] if all_ else \
            [name] if name else []
    if not names:
        _fail("name a dataset, or use --all or --list")
    if forget_hashes:
        _forget_hashes(names, root, mirror, datasets)
    failed = 0
    for n in names:
        start = time.perf_counter()
        try:
            ds = load_dataset(n, data_dir, default_mirror(mirror), progress=not quiet, datasets_file=datasets)
        except Exception as exc:
            message = _expected_message(exc)
            if message is None:
                raise
            if not all_:
                _fail(message)
            failed += 1
            typer.echo(f"{n}: unavailable: {message}")
            continue
        paper = ds.info["paper_n_train"], ds.info["paper_n_test"]
        differs = paper[0] and (paper[0], paper[1]) != (ds.info["n_train"], ds.info["n_test"])
        typer.echo(f"{n}: {ds.info['n_train']} train / {ds.info['n_test']} test rows"
                   + (f" (paper: {paper[0]}/{paper[1]})" if differs else "")
                   + f", {ds.info['n_features']} features, {ds.split}, scaling {ds.scaling} "
                   f"({time.perf_counter() - start:.1f} s)")
    if all_:
        typer.echo(f"{len(names) - failed} of {len(names)} datasets ready, {failed} unavailable")
        if failed:
            raise typer.Exit(1)


def _forget_hashes(names, root: Path, mirror, datasets) -> None:
    """Drop the first-use hashes of the named datasets' files (from this source) from the lock file."""
    from rbrepro.data.fetch import HashLock, Source, lock_key
    from rbrepro.data.load import default_mirror, resolve_spec, user_datasets

    source = _guard(lambda: Source.resolve(default_mirror(mirror)))
    extra = _guard(lambda: user_datasets(datasets))
    lock = HashLock(root / "hashes.lock.json")
    for n in names:
        spec = _guard(lambda: resolve_spec(n, root, extra))
        dropped = lock.forget([lock_key(f, source) for f in spec.files])
        typer.echo(f"{n}: forgot {len(dropped)} recorded hash(es) in {lock.path}")


@app.command()
def featurize(
    name: str = typer.Argument(..., help="Dataset name, or a path to a LIBSVM/CSV file."),
    method: FeatureMethod = typer.Option(FeatureMethod.rb, "--method", help="Feature map: rb, rf or nystrom."),
    R: int = typer.Option(256, "--R", "-R", min=1, help="rb: random grids (non-zeros per row); rf: features; "
                                                         "nystrom: landmarks."),
    sigma: float = typer.Option(1.0, "--sigma", callback=_validated(_check_sigma), help="Inverse kernel width sigma (> 0)."),
    kernel: Kernel = typer.Option(Kernel.l1, "--kernel", help=KERNEL_HELP),
    seed: int = typer.Option(0, "--seed", help="Seed of the grid / frequency / landmark draw."),
    threads: int = typer.Option(0, "--threads", min=0, help="numba threads (0 = all cores)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
    mirror: Optional[str] = typer.Option(None, "--mirror", help=MIRROR_HELP),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help=DATA_HELP),
    datasets: Optional[Path] = typer.Option(None, "--datasets", help=DATASETS_HELP),
):
    """Build a feature map of a dataset and report D, nnz, kappa (rb) and times (without compilation)."""
    import numba
    from threadpoolctl import threadpool_limits

    from rbrepro.data.load import load_dataset
    from rbrepro.features import NystromFeatures, RandomBinningFeatures, RandomFourierFeatures

    if method is FeatureMethod.rb and kernel is not Kernel.l1:
        _fail(f"--kernel {kernel.value}: Random Binning approximates the l1 kernel only; use --method rf or nystrom")
    if threads:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    data = _guard(lambda: load_dataset(name, data_dir, mirror, progress=not as_json, datasets_file=datasets))

    def rb_work():
        rb = RandomBinningFeatures(n_grids=R, sigma=sigma, random_state=seed)
        rb.warm_up(data.X_train)
        t0 = time.perf_counter()
        Z = rb.fit_transform_binned(data.X_train)
        t1 = time.perf_counter()
        Zt = rb.transform_binned(data.X_test)
        t2 = time.perf_counter()
        return {"n_train": Z.n_rows, "D": rb.n_bins_, "nnz": rb.nnz_, "kappa": rb.kappa_,
                "test_unseen_share": float((Zt.ids < 0).mean()), "featurize_s": t1 - t0, "transform_test_s": t2 - t1}

    def dense_work():
        cls = RandomFourierFeatures if method is FeatureMethod.rf else NystromFeatures
        cls(n_components=2, sigma=sigma, kernel=kernel.value, random_state=0).fit(data.X_train[:4]) \
            .transform(data.X_train[:4])  # compile the kernels outside the timed region
        feats = cls(n_components=R, sigma=sigma, kernel=kernel.value, random_state=seed)
        t0 = time.perf_counter()
        Z = feats.fit(data.X_train).transform(data.X_train)
        t1 = time.perf_counter()
        feats.transform(data.X_test)
        t2 = time.perf_counter()
        return {"n_train": Z.shape[0], "D": Z.shape[1], "nnz": int(Z.size), "kappa": None,
                "test_unseen_share": 0.0, "featurize_s": t1 - t0, "transform_test_s": t2 - t1}

    def work():
        with threadpool_limits(limits=numba.get_num_threads()):
            figures = rb_work() if method is FeatureMethod.rb else dense_work()
        return {"dataset": data.name, "method": method.value, "kernel": kernel.value, "R": R, "sigma": sigma,
                "seed": seed, **figures, "threads": numba.get_num_threads()}

    out = _guard(work)
    if as_json:
        typer.echo(json.dumps(out))
    elif method is FeatureMethod.rb:
        typer.echo(f"{name}: RB R={R} sigma={sigma:g}: D={out['D']} nnz={out['nnz']} kappa={out['kappa']:.2f} "
                   f"featurize {out['featurize_s']:.3f} s ({out['threads']} threads), test transform "
                   f"{out['transform_test_s']:.3f} s, {100 * out['test_unseen_share']:.1f}% test entries in unseen bins")
    else:
        typer.echo(f"{name}: {method.value} R={R} sigma={sigma:g} kernel {kernel.value}: D={out['D']} "
                   f"featurize {out['featurize_s']:.3f} s ({out['threads']} threads), test transform "
                   f"{out['transform_test_s']:.3f} s")


@app.command()
def train(
    name: str = typer.Argument(..., help="Dataset name, or a path to a LIBSVM/CSV file."),
    method: Method = typer.Option(Method.rb, "--method",
                                  help="rb (Random Binning), rf (Random Fourier), nystrom, block (independent "
                                       "block-diagonal kernel), exact (exact kernel)."),
    R: int = typer.Option(256, "--R", "-R", min=1,
                          help="rb: grids; rf: features; nystrom: landmarks; block: leaf size; exact: unused."),
    sigma: float = typer.Option(1.0, "--sigma", callback=_validated(_check_sigma), help="Inverse kernel width sigma (> 0)."),
    kernel: Kernel = typer.Option(Kernel.l1, "--kernel", help=KERNEL_HELP),
    scaling: Scaling = typer.Option(Scaling.default, "--scaling", help=SCALING_HELP),
    lam: Optional[float] = typer.Option(None, "--lam", callback=_validated(_check_lam), help="Ridge lambda [default: the dataset's, usually 0.01]."),
    solver: Solver = typer.Option(Solver.default, "--solver",
                                  help="default (rb: cg; rf, nystrom: direct; block, exact: Cholesky), cg, pcg "
                                       "(CG with a Jacobi preconditioner), direct, or rcd (L1-regularized "
                                       "coordinate descent; rb and rf)."),
    l1: Optional[float] = typer.Option(None, "--l1", help="rcd: the L1 weight lambda of F(w) [default: 1e-4]."),
    loss: Loss = typer.Option(Loss.squared_hinge, "--loss", help="rcd loss for classification (regression: square)."),
    epochs: int = typer.Option(20, "--epochs", min=0, help="rcd: passes over all coordinates."),
    variant: Variant = typer.Option(Variant.async_, "--variant",
                                    help="rcd with several threads: async (the authors' atomic updates) or sync "
                                         "(damped, eq. 29)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random features / landmarks / tree."),
    maxit: int = typer.Option(50, "--maxit", min=0, help="CG iteration cap (authors: 50)."),
    tol: float = typer.Option(1e-3, "--tol", help="CG relative-residual target (authors: 1e-3)."),
    center: Optional[bool] = typer.Option(None, "--center/--no-center",
                                          help="Subtract the training mean of y [default: no for rb (the authors' "
                                               "RB driver), yes for the others]."),
    threads: int = typer.Option(0, "--threads", min=0, help="numba threads (0 = all cores)."),
    memory_limit: Optional[float] = typer.Option(None, "--memory-limit",
                                                 help="GB a fit may use [default: $RBREPRO_MEMORY_LIMIT_GB or "
                                                      "60% of RAM]; larger estimates are refused up front."),
    save_model: Optional[Path] = typer.Option(None, "--save-model", help="Write the fitted model here (.npz, no "
                                              "pickle) for `rbrepro predict`."),
    as_json: bool = typer.Option(False, "--json", help="Print exactly one JSON object: the result row."),
    mirror: Optional[str] = typer.Option(None, "--mirror", help=MIRROR_HELP),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help=DATA_HELP),
    datasets: Optional[Path] = typer.Option(None, "--datasets", help=DATASETS_HELP),
):
    """Train a model and report train/test performance, cost figures and times.

    train_s = featurize_s + solve_s: wall time after loading, without numba compilation.
    The metric is accuracy in % (classification) or relative error ||y - y_hat|| / ||y||.
    """
    from dataclasses import replace

    from rbrepro.data.load import load_dataset
    from rbrepro.models.cell import CellParams, run_cell

    if solver is not Solver.rcd and l1 is not None:
        _fail("--l1 is the weight of the rcd solver's L1 term; add --solver rcd (ridge uses --lam)")
    rcd = solver is Solver.rcd
    params = CellParams(dataset=name, method=method.value, sigma=sigma, kernel=kernel.value, R=R, lam=0.0,
                        solver=solver.value,
                        maxit=maxit, tol=tol, center=center, seed=seed, threads=threads, loss=loss.value,
                        epochs=epochs, variant=variant.value, memory_limit_gb=memory_limit, scaling=scaling.value)
    _guard(params.validate)
    data = _guard(lambda: load_dataset(name, data_dir, mirror, progress=not as_json, datasets_file=datasets,
                                       scaling=scaling.value))
    weight = (1e-4 if l1 is None else l1) if rcd else (data.info["spec"].lam if lam is None else lam)
    params = replace(params, dataset=data.name, lam=weight)
    models: list = []
    row = _guard(lambda: run_cell(params, data, model_out=models))
    if save_model:
        from rbrepro.models.persist import data_fingerprint
        from rbrepro.models.persist import save_model as save

        path = _guard(lambda: save(models[0], save_model, data.name, data.n_features, data.task,
                                   data.info.get("scaler"), data_fingerprint(data.X_train, data.y_train),
                                   data.scaling))
        row["model_path"] = str(path)
    if as_json:
        typer.echo(json.dumps(row, default=lambda v: v.item() if hasattr(v, "item") else str(v)))
        return
    unit = "%" if row["metric"] == "accuracy" else ""
    solver_text = (f"RCD {row['rcd_variant']} {row['rcd_epochs']} epochs, F={row['rcd_objective']:.5g}, "
                   f"nnz(w)={row['nnz_w']}" if rcd else
                   f"{row['solver']}" + (f" {row['cg_iterations']} it" if row["solver"] in ("cg", "pcg") else ""))
    kappa = f" kappa={row['kappa']:.2f}" if row["kappa"] == row["kappa"] else ""
    kernel_text = f" kernel {kernel.value}" if kernel is not Kernel.l1 else ""
    typer.echo(f"{data.name}: {method.value} R={R} sigma={sigma:g}{kernel_text} {'l1' if rcd else 'lam'}={params.lam:g}: test "
               f"{row['metric']} {row['test_metric']:.4g}{unit} (train {row['train_metric']:.4g}{unit}); "
               f"D={row['D']}{kappa}; {solver_text}; featurize {row['featurize_s']:.3f} s + solve "
               f"{row['solve_s']:.3f} s = train {row['train_s']:.3f} s; predict {row['predict_s']:.3f} s; peak "
               f"{row['peak_fit_mb']:.0f} MB ({row['threads']} threads)"
               + (f"; model saved to {row['model_path']}" if save_model else ""))


@app.command()
def predict(
    model: Path = typer.Argument(..., help="A model written by `rbrepro train --save-model`."),
    file: Path = typer.Argument(..., help="A LIBSVM file (plain, .bz2, .xz or .gz) to predict."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write one prediction per line here (else stdout)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON summary (metric against the file's labels)."),
):
    """Apply a saved model to a new LIBSVM file (scaled as its training data was).

    A file with more features than the model was trained on is refused; fewer are padded.
    The file's labels are used to report the metric.
    """
    import numpy as np

    from rbrepro import metrics
    from rbrepro.data.libsvm import parse_libsvm
    from rbrepro.models.persist import load_model

    fitted, header, scaler = _guard(lambda: load_model(model))
    d = header["n_features"]
    parsed = _guard(lambda: parse_libsvm(file, d))
    X = scaler.transform(parsed.X) if scaler is not None else parsed.X
    task = header["task"]
    classes = getattr(fitted, "classes_", None)
    if classes is not None:
        foreign = np.setdiff1d(np.unique(parsed.y), classes)
        if len(foreign):
            _fail(f"{file}: labels {foreign[:5].tolist()} are not classes of the model in {model} (trained on "
                  f"{header['dataset']}, a {task} task with classes {classes[:10].tolist()})")
    elif task == "regression" and len(np.unique(parsed.y)) <= 2 and len(parsed.y) > 10:
        err.print(f"rbrepro: warning: {file} has only the labels {np.unique(parsed.y).tolist()}; the model in {model} "
                  "is a regression model", highlight=False, markup=False, soft_wrap=True)

    def apply():
        try:
            return fitted.predict(X)
        except (TypeError, ValueError, IndexError, KeyError, AttributeError) as exc:
            from rbrepro.models.persist import ModelFileError

            raise ModelFileError(f"{model}: the model cannot be applied to {file} ({type(exc).__name__}: {exc})") \
                from None

    pred = _guard(apply)
    score = metrics.score(task, parsed.y, pred)
    lines = "\n".join(f"{v:.10g}" if task == "regression" else f"{v:g}" for v in pred) + "\n"
    if out:
        from rbrepro.data.atomic import write_text_atomic

        write_text_atomic(out, lines)
    summary = {"model": str(model), "file": str(file), "rows": int(len(pred)), "dataset": header["dataset"],
               "method": getattr(fitted, "method", header["class"]), "metric": metrics.metric_name(task),
               "value": score, "out": str(out) if out else None}
    if as_json:
        typer.echo(json.dumps(summary))
    elif out:
        typer.echo(f"{len(pred)} predictions -> {out}; {summary['metric']} against the file's labels: {score:.4g}")
    else:
        typer.echo(lines, nl=False)


def _parse_floats(values: List[str], option: str) -> list[float]:
    out = []
    for v in values:
        for part in v.split(","):
            try:
                x = float(part)
            except ValueError:
                _fail(f"{option}: {part!r} is not a number")
            if not math.isfinite(x):
                _fail(f"{option}: {part!r} is not finite")
            out.append(x)
    return out


@app.command()
def sweep(
    config: Path = typer.Argument(..., help="Sweep config (YAML), e.g. configs/fig3.yaml."),
    out: Optional[Path] = typer.Option(None, "--out", help="Results folder [default: runs/<config name>; the "
                                                           "published results/<name> only when named here]."),
    dataset: List[str] = typer.Option([], "--dataset", "-d", help="Run only this dataset (repeatable)."),
    sigma: List[str] = typer.Option([], "--sigma", help="Run only these sigma values (repeatable or a,b,c)."),
    R: List[int] = typer.Option([], "--R", "-R", help="Run only these R values (repeatable)."),
    seed: List[int] = typer.Option([], "--seed", help="Run only these seeds (repeatable)."),
    method: List[str] = typer.Option([], "--method", "-m", help="Run only this method (repeatable)."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1,
                                          help="Cells run at once [default: cores / threads per cell; 1 if the "
                                               "config is exclusive]."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler",
                                            help="Run cells on dask.distributed: a scheduler address "
                                                 "(tcp://HOST:PORT) or 'local' for an embedded local cluster."),
    fresh_process: bool = typer.Option(False, "--fresh-process",
                                       help="Run every cell in a new worker process (slower to start)."),
    memory_limit: Optional[float] = typer.Option(None, "--memory-limit", min=0.0,
                                                 help="GB the running cells may use together and each cell may "
                                                      "use [default: $RBREPRO_MEMORY_LIMIT_GB or 60% of RAM]. Cells "
                                                      "skipped under a lower limit are retried."),
    reuse_stale: bool = typer.Option(False, "--reuse-stale",
                                     help="Take finished cells of older code or other data as done (never the "
                                          "default: their keys differ, so they are normally kept aside)."),
    reuse_from: List[Path] = typer.Option([], "--reuse-from",
                                          help="Another sweep's results folder (repeatable): its finished cells "
                                               "with the same key (same parameters, data and algorithms) are "
                                               "taken instead of run again, marked reused_from. An exclusive "
                                               "config takes only cells that were run exclusively."),
    worker_timeout: float = typer.Option(60.0, "--worker-timeout", min=1.0,
                                         help="With --scheduler: seconds to wait for a first dask worker."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List the cells and which are done; run nothing."),
    mirror: Optional[str] = typer.Option(None, "--mirror", help=MIRROR_HELP),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help=DATA_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
):
    """Run a config's grid (datasets x methods x sigma x R x seeds x threads) and write the results CSV.

    Cells run in parallel worker processes (or on a dask cluster with --scheduler), under
    the same rules either way: at most one cell per core budget, only while their memory
    estimates fit, one at a time for exclusive configs. Each finished cell is written
    atomically to OUT/cells/<key>.json and OUT/results.csv is rebuilt from them, so a killed
    or interrupted sweep resumes where it stopped; cells already done are skipped, failed
    cells are retried on the next run, cells the memory guard refuses are recorded as
    skipped and retried under a higher --memory-limit. results.csv holds exactly the
    config's cells; cells of other configs, data or code stay aside in OUT/cells. With
    sigma_selection on validation data, the selection cells run first; a dataset whose files
    cannot be had here gets no cells and is named once. Filters narrow the grid without editing
    the YAML. OUT defaults to runs/<name>, so the published results/ are never touched unless
    named with --out.
    """
    import signal

    from rbrepro.memory import memory_limit_bytes
    from rbrepro.sweep.backends import DaskBackend, LocalBackend, default_workers
    from rbrepro.sweep.config import load_config
    from rbrepro.sweep.runner import fingerprints_for, run_sweep, select
    from rbrepro.sweep.store import cell_states

    cfg = _guard(lambda: load_config(config))
    unknown = [d for d in dataset if d not in {g.name for g in cfg.datasets}]
    if unknown:
        _fail(f"--dataset {unknown[0]!r} is not in {config}; it has {', '.join(g.name for g in cfg.datasets)}")
    sigmas = _parse_floats(sigma, "--sigma")

    def narrow(cells):
        return select(cells, dataset, sigmas, R, seed, method)

    out_dir = out or Path("runs") / cfg.name
    grid_cells = narrow(cfg.selection_cells()) + narrow(cfg.cells())
    grid_cells += [c for c in narrow(cfg.band_cells()) if c not in set(grid_cells)]  # band at every sigma
    if not grid_cells:
        _fail(f"the filters select no cell of {config}")
    if memory_limit is not None and memory_limit <= 0:
        _fail(f"--memory-limit {memory_limit:g}: expected a positive number of GB")
    for source in reuse_from:
        if not source.is_dir():
            _fail(f"--reuse-from {source}: no such results folder")
    if dry_run:
        unavailable: dict = {}
        prints = _guard(lambda: fingerprints_for(cfg, grid_cells, data_dir, mirror, unavailable))
        for name, why in sorted(unavailable.items()):
            typer.echo(f"{name}: not available here, no cells: {why}")
        grid_cells = [c for c in grid_cells if c.dataset not in unavailable]
        states = cell_states(grid_cells, out_dir, prints, reuse_stale)
        n_selecting = len([c for c in narrow(cfg.selection_cells()) if c.dataset not in unavailable])  # listed first
        for i, s in enumerate(states):
            p = s.params
            typer.echo(f"{s.key} {s.status:7s} {p.dataset} {p.method} sigma={p.sigma:g} R={p.R} lam={p.lam:g} "
                       f"seed={p.seed} threads={p.threads}" + (f" variant={p.variant}" if p.solver == "rcd" else "")
                       + (f" [selects sigma on {p.evaluate_on} data]" if i < n_selecting else ""))
        n_done = sum(s.status in ("done", "skipped") for s in states)
        pending = " (plus the chosen-sigma cells once selection is done)" if cfg.selection_cells() else ""
        if cfg.band_seeds and cfg.band_at == "chosen":
            pending += f" (plus {len(cfg.band_seeds)} band seed(s) at each chosen sigma)"
        typer.echo(f"{len(states)} cells{pending}, {n_done} done, {sum(s.status == 'failed' for s in states)} "
                   f"failed, {len(states) - n_done} to run -> {out_dir}")
        return
    n_workers = workers or default_workers(grid_cells, cfg.exclusive)
    backend = (DaskBackend(None if scheduler == "local" else scheduler, n_workers, cfg.exclusive, worker_timeout)
               if scheduler else LocalBackend(n_workers, fresh_process, exclusive=cfg.exclusive,
                                              memory_budget=_guard(lambda: memory_limit_bytes(memory_limit))))
    backend.on_event = lambda message: err.print(f"rbrepro: {message}", highlight=False, markup=False,
                                                 soft_wrap=True)

    def on_signal(signum, frame):  # SIGTERM (kill, timeout) stops the sweep like SIGINT does
        raise KeyboardInterrupt(signum)

    signal.signal(signal.SIGTERM, on_signal)

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), TextColumn("{task.fields[failed]} failed"), console=err,
                  disable=quiet) as bar:
        task = bar.add_task(f"sweep {cfg.name} on {backend.description}", total=len(grid_cells), failed=0)

        def progress(done, failed, total):
            bar.update(task, completed=done + failed, total=max(total, len(grid_cells)), failed=failed)

        try:
            counts = _guard(lambda: run_sweep(cfg, out_dir, None, data_dir, mirror, backend=backend,
                                              on_progress=progress, narrow=narrow, reuse_stale=reuse_stale,
                                              memory_limit_gb=memory_limit, reuse_from=reuse_from))
        except KeyboardInterrupt as exc:
            signum = exc.args[0] if exc.args and isinstance(exc.args[0], int) else signal.SIGINT
            bar.stop()
            n_cells = len(list((out_dir / "cells").glob("*.json")))
            err.print(f"rbrepro: sweep {cfg.name} interrupted by {signal.Signals(signum).name}: its workers are "
                      f"stopped, {n_cells} finished cell(s) are kept in {out_dir}; run the same command to resume",
                      highlight=False, markup=False, soft_wrap=True)
            raise typer.Exit(128 + int(signum))
    aside = f"; {counts['aside']} cell(s) of other configs, data or code kept aside in {out_dir / 'cells'}" \
        if counts["aside"] else ""
    for name, why in sorted(counts.get("unavailable", {}).items()):
        typer.echo(f"{name}: not available here, no cells run: {why}")
    n_reused = counts.get("reused", 0)
    reused = f", {n_reused} taken from --reuse-from" if n_reused else ""
    typer.echo(f"{cfg.name}: {counts['done']}/{counts['total']} cells done ({counts['ran']} run now{reused}, "
               f"{counts['total'] - counts['ran'] - n_reused} already done), {counts['failed']} failed, {counts['skipped']} "
               f"skipped by the memory guard -> {out_dir / 'results.csv'}{aside}")
    if counts["failed"]:
        raise typer.Exit(1)


@app.command()
def plot(
    figure: Figure = typer.Argument(..., help="fig3: RB vs sigma; fig4: RB vs R and D; fig5: methods at equal R "
                                              "and cost to a target; fig6: parallel RCD speedup."),
    results: Path = typer.Argument(..., help="A results folder (with results.csv) or a results CSV, from a sweep "
                                             "of a config made for this figure."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output path without suffix [default: <results folder>/"
                                                           "<figure>; the published figures/ only when named here]."),
):
    """Draw a figure of the paper from result CSVs, as PNG and PDF.

    The results must come from a sweep of a config made for this figure (its `figure:` key);
    anything else is refused. The figure goes beside the results unless --out says where, so
    the published figures/ change only when asked for.
    """
    from rbrepro.plots import make_figure

    folder = results if results.is_dir() else results.parent
    paths = _guard(lambda: make_figure(figure.value, results, out or folder / figure.value))
    typer.echo(" ".join(str(p) for p in paths))


@app.command()
def compare(
    results: Path = typer.Argument(..., help="A results folder (with results.csv) or a results CSV of a fig3 or "
                                             "fig5 sweep."),
    summary_only: bool = typer.Option(False, "--summary", help="Print only the counts per dataset and method."),
    markdown: bool = typer.Option(False, "--markdown", help="Print the per-dataset-and-method counts as a "
                                                            "Markdown table (as in REPRODUCTION.md)."),
):
    """Put our points beside the authors' published ones (their figure data, shipped in
    rbrepro/published), each judged two-sided over the band of our seeds.

    A published point is reproduced when it lies within the band our seeds span (min to max)
    widened by 0.5 accuracy points or 3 % relative error; outside it, ours is better or worse.
    The old one-sided count (ours no worse than published minus the tolerance) is printed only
    under its own name. Where RB ran with the authors' draws (rng: authors), that value is
    compared directly (within 0.2 points or 1 %). Fig. 5: each (dataset, method, R) at the
    chosen sigma. Fig. 3: RB at each published (R, sigma), and the exact kernel's line.
    """
    from rbrepro.plots import load_results, swept_for
    from rbrepro.report.fidelity import compare_points, comparison_lines

    frame, config = _guard(lambda: load_results(results))
    figure = swept_for(frame, config)
    if figure not in ("fig3", "fig5"):
        _fail(f"{results}: these results are for {figure or 'no figure'}; the published data covers Fig. 3 and "
              f"Fig. 5 sweeps only")
    points = compare_points(frame, figure)
    if not points:
        _fail(f"{results}: none of its points has a published counterpart (datasets, R or sigma differ)")
    mode = "markdown" if markdown else "summary" if summary_only else "points"
    for line in comparison_lines(points, mode):
        typer.echo(line)
    typer.echo(f"[{figure}, {results}]")


@app.command()
def diagnose(
    dataset: str = typer.Argument(..., help="A registry name (ijcnn1, cadata, letter, mnist, digits, ...), a "
                                            "data file, or a theory config (configs/theory.yaml: several "
                                            "datasets, each with its sigmas, n, max_R and seeds)."),
    n: int = typer.Option(2000, "--n", min=10, help="Training rows subsampled (seeded): the exact kernel is n x n."),
    sigma: List[str] = typer.Option(["0.3,1.58,10"], "--sigma", help="Inverse kernel widths, comma-separated."),
    max_R: int = typer.Option(1024, "--max-R", min=1, help="R = 1, 2, 4, ... up to this."),
    seeds: int = typer.Option(5, "--seeds", min=1, help="Seeds 0 ... seeds-1 per (method, sigma, R)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for diagnostics.csv and theory.png "
                                                          "[default: runs/diagnose-DATASET]."),
    figure: Optional[Path] = typer.Option(None, "--figure", help="With a theory config: where to draw the figure "
                                                                "(PNG and PDF) [default: OUT/theory]."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Data cache [default: $RBREPRO_DATA]."),
    mirror: Optional[str] = typer.Option(None, "--mirror", help="A LIBSVM mirror (directory or URL)."),
):
    """Check the paper's Theorem 1 on your data: objective gap and kernel error against R.

    On n training rows, for RB, RF and Nystrom at R = 1 ... max-R and several seeds, measures the
    ridge objective's gap to the exact kernel's optimum (eq. 13), the kernel approximation error
    (relative Frobenius and spectral, largest entry), kappa and D; fits log-log slopes with
    bootstrap intervals over seeds and says whether RB's gap falls as 1/(kappa R), RF's as 1/R,
    and the kernel errors as 1/sqrt(R).
    """
    from rbrepro.theory.run import run_diagnose, run_theory

    folder = out or Path("runs") / f"diagnose-{Path(dataset).stem}"
    if dataset.endswith((".yaml", ".yml")):
        lines = _guard(lambda: run_theory(dataset, folder, figure_base=figure, data_path=data_dir, mirror=mirror))
    else:
        sigmas = _parse_floats(sigma, "--sigma")
        lines = _guard(lambda: run_diagnose(dataset, folder, n=n, sigmas=sigmas, max_R=max_R,
                                            seeds=tuple(range(seeds)), data_path=data_dir, mirror=mirror))
    for line in lines:
        typer.echo(line)


@app.command()
def report(
    root: Path = typer.Option(Path("."), "--root", help="The repository whose results/ the report is computed from."),
    check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 if REPRODUCTION.md or README.md's "
                                                      "counts differ from what the committed CSVs give."),
):
    """Write REPRODUCTION.md (and README.md's counts) from the committed result CSVs.

    Every number, table and verdict is computed: the two-sided fidelity of each published run
    against the authors' figure data, and each claim of the paper judged by its rule (the
    thresholds are printed with it). With --check, a stale report fails (CI runs this).
    """
    from rbrepro.report.render import check_report, write_report

    if check:
        stale = _guard(lambda: check_report(root))
        if stale:
            _fail(f"{', '.join(stale)} differ(s) from what the committed CSVs give; run `make report` and commit",
                  code=1)
        typer.echo("REPRODUCTION.md and README.md's counts match the committed CSVs")
        return
    for path in _guard(lambda: write_report(root)):
        typer.echo(str(path))


def main(argv: list[str] | None = None) -> int:
    """Console entry (`rbrepro`, `python -m rbrepro`): click's usage errors become one line,
    `rbrepro: error: Invalid value for '--R': ...`, like every other error (exit status 2)."""
    try:
        from typer._click import exceptions as click  # typer >= 0.22 carries its own click
    except ImportError:  # pragma: no cover - older typer uses click itself
        from click import exceptions as click

    command = typer.main.get_command(app)
    try:
        result = command.main(args=argv, prog_name="rbrepro", standalone_mode=False)
    except click.NoArgsIsHelpError as exc:
        exc.show()
        return exc.exit_code
    except click.UsageError as exc:
        where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
        err.print(f"rbrepro: error: {exc.format_message()}{where}", style="bold red", highlight=False,
                  markup=False, soft_wrap=True)
        return 2
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except typer.Abort:
        err.print("Aborted.", highlight=False, markup=False)
        return 1
    return result if isinstance(result, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
