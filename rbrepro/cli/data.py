"""`rbrepro fetch`: datasets downloaded, verified and cached."""

from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from rbrepro.cli.app import app
from rbrepro.cli.common import DataDir, DatasetsFile, Mirror, Quiet, _expected_message, _fail, _guard, _human


@app.command()
def fetch(
    name: Optional[str] = typer.Argument(None, help="Dataset name (see --list)."),
    all_: bool = typer.Option(False, "--all", help="Fetch every dataset; say in one line why any is unavailable."),
    list_: bool = typer.Option(False, "--list", help="List the datasets: task, size, splits, cached or not."),
    from_: List[str] = typer.Option([], "--from", help="Your own file (path or URL) for a dataset the site lacks "
                                    "(census): once for one file to split, twice for train then test."),
    mirror: Mirror = None,
    data_dir: DataDir = None,
    datasets: DatasetsFile = None,
    quiet: Quiet = False,
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
    from rbrepro.data.folders import data_dir as resolve_dir
    from rbrepro.data.load import user_datasets
    from rbrepro.data.registry import REGISTRY

    root = resolve_dir(data_dir)
    extra = _guard(lambda: user_datasets(datasets))
    if list_:
        _list_datasets(root, [*REGISTRY.values(), *extra.values()])
        return
    if from_:
        _supply(name, from_, all_, root, data_dir, quiet)
        names = [name]
    else:
        names = [s.name for s in REGISTRY.values() if not s.generated] if all_ else \
            [name] if name else []
    if not names:
        _fail("name a dataset, or use --all or --list")
    if forget_hashes:
        _forget_hashes(names, root, mirror, datasets)
    failed = sum(not _fetch_one(n, all_, data_dir, mirror, quiet, datasets) for n in names)
    if all_:
        typer.echo(f"{len(names) - failed} of {len(names)} datasets ready, {failed} unavailable")
        if failed:
            raise typer.Exit(1)


def _list_datasets(root: Path, specs) -> None:
    """`fetch --list`: one line a dataset (task, size, splits, whether its files are here)."""
    from rbrepro.data import user

    w = max(len("name"), *(len(spec.name) for spec in specs))  # columns fit the longest name
    typer.echo(f"{'name':{w}s} {'task':10s} {'d':>4s} {'train/test (paper)':>20s} {'split':13s} {'state':14s} "
               "size")
    for spec in specs:
        size = 0
        if spec.source.startswith("sklearn:"):
            state = "embedded"
        elif spec.generated:
            state = "synthetic"
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


def _supply(name, from_: list[str], all_: bool, root: Path, data_dir, quiet: bool) -> None:
    """`fetch NAME --from FILE [--from TEST]`: the user's own files for a dataset the site lacks,
    loaded once (checked) and remembered."""
    from dataclasses import replace

    from rbrepro.data import user
    from rbrepro.data.load import load_dataset
    from rbrepro.data.registry import REGISTRY

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


def _fetch_one(n: str, all_: bool, data_dir, mirror, quiet: bool, datasets) -> bool:
    """Fetch, check and cache one dataset and say its sizes; False when it is unavailable under
    --all (said in one line), which alone stops the command."""
    from rbrepro.data.load import default_mirror, load_dataset

    start = time.perf_counter()
    try:
        ds = load_dataset(n, data_dir, default_mirror(mirror), progress=not quiet, datasets_file=datasets)
    except Exception as exc:
        message = _expected_message(exc)
        if message is None:
            raise
        if not all_:
            _fail(message)
        typer.echo(f"{n}: unavailable: {message}")
        return False
    paper = ds.info["paper_n_train"], ds.info["paper_n_test"]
    differs = paper[0] and (paper[0], paper[1]) != (ds.info["n_train"], ds.info["n_test"])
    typer.echo(f"{n}: {ds.info['n_train']} train / {ds.info['n_test']} test rows"
               + (f" (paper: {paper[0]}/{paper[1]})" if differs else "")
               + f", {ds.info['n_features']} features, {ds.split}, scaling {ds.scaling} "
               f"({time.perf_counter() - start:.1f} s)")
    return True


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
