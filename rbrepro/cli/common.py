"""What every command shares: option vocabularies, help texts, and how errors reach the user."""

from __future__ import annotations

import math
import re
from enum import Enum
from pathlib import Path
from typing import Annotated, List, Optional

import typer
from rich.console import Console

from rbrepro.figure_registry import FIGURE_SPECS
from rbrepro.models.registry import METHODS, feature_methods, method_names, splittable_methods
from rbrepro.solver_registry import SOLVER_SPECS, solver_names
from rbrepro.vocabulary import KERNELS, LOSSES, SCALINGS, STOPPINGS, TASKS, VARIANTS

err = Console(stderr=True)


DATA_HELP = "Dataset cache folder [default: $RBREPRO_DATA, else the platform's cache folder, ~/.cache/rbrepro on Linux]."


DATASETS_HELP = "A YAML file registering your own datasets [default: $RBREPRO_DATASETS]."


MIRROR_HELP = ("Base of a LIBSVM mirror in the site's layout: a directory or an http(s) URL "
               "[default: $RBREPRO_MIRROR, else the LIBSVM site].")

# The options several commands share, each declared once (`data_dir: DataDir = None`).
DataDir = Annotated[Optional[Path], typer.Option("--data-dir", help=DATA_HELP)]
Mirror = Annotated[Optional[str], typer.Option("--mirror", help=MIRROR_HELP)]
DatasetsFile = Annotated[Optional[Path], typer.Option("--datasets", help=DATASETS_HELP)]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")]


def _choices(name: str, values) -> type[Enum]:
    """A click choice from one of the library's vocabularies (defined once, there): members named
    after their values, '-' as '_' and a keyword with a trailing '_' (Variant.async_)."""
    import keyword

    def member(v):
        m = v.replace("-", "_")
        return m + "_" if keyword.iskeyword(m) else m
    return Enum(name, [(member(v), v) for v in values], type=str)


# read when the command line is built: the paper's methods, those registered and those installed as plug-ins
Method = _choices("Method", method_names())
FeatureMethod = _choices("FeatureMethod", feature_methods())
Kernel = _choices("Kernel", KERNELS)


def _taking(kernel: str) -> str:
    return ", ".join(name for name, spec in METHODS.items() if kernel in spec.kernels)


METHOD_HELP = "The method: " + "; ".join(f"{name} ({spec.title})" for name, spec in METHODS.items()) + "."
FEATURE_METHOD_HELP = "Feature map: " + ", ".join(feature_methods()) + "."
R_HELP = "; ".join(f"{name}: {spec.r_meaning or 'unused'}" for name, spec in METHODS.items()) + "."
SOLVER_HELP = ("default (" + "; ".join(f"{name}: {'pcg with --stopping auto, else cg' if spec.default_solver == 'cg' else spec.default_solver}"
                                      for name, spec in METHODS.items()) + "), "
               + ", ".join(f"{name} ({solver.help}" + ("" if solver.ridge else "; " + ", ".join(
                   method for method, spec in METHODS.items() if name in spec.solvers)) + ")"
                           for name, solver in SOLVER_SPECS.items()) + ".")
SPLITTABLE = ", ".join(splittable_methods())


KERNEL_HELP = (f"Distance of the Laplacian kernel exp(-sigma d(x, y)): l1 ({_taking('l1')}; what RB approximates) or "
               f"euclidean ({_taking('euclidean')}; the authors' baselines used it).")


Scaling = _choices("Scaling", SCALINGS)
Task = _choices("Task", ("auto", *TASKS))


SCALING_HELP = ("Feature scaling, fitted on the training split: default (the registry's: min-max, or as published "
                "for files the site ships scaled), minmax ([0, 1] per column), maxabs (divide by max |x|), maxabs-all "
                "(max |x| over training and test rows: the authors' cadata) or published (as the file has it).")


Solver = _choices("Solver", solver_names())
Stopping = _choices("Stopping", STOPPINGS)
Loss = _choices("Loss", LOSSES)
Variant = _choices("Variant", VARIANTS)
Figure = _choices("Figure", tuple(FIGURE_SPECS))
#: what `rbrepro plot` draws: a sweep's figures, and Theorem 1's from `rbrepro diagnose`'s rows
Plotted = _choices("Plotted", (*FIGURE_SPECS, "theory"))
PLOT_HELP = ("; ".join(f"{name}: {spec.help}" for name, spec in FIGURE_SPECS.items())
             + "; theory: Theorem 1 from `rbrepro diagnose`'s rows.")


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` with control characters (terminal escape codes from a crafted file's names) written as
    \\xNN, so nothing read from a file can drive the user's terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def say(message: str) -> None:
    """One line on stderr, prefixed `rbrepro:`, control characters escaped."""
    err.print(f"rbrepro: {printable(message)}", highlight=False, markup=False, soft_wrap=True)


def status(message: str) -> None:
    """Say on a terminal what a wait of some seconds is for (loading, a cluster starting, choosing
    sigma), as the progress bars do; off a terminal (a log, a pipe, CI) nothing, so an error stays
    the one line on stderr."""
    if err.is_terminal:
        say(message)


def _fail(message: str, code: int = 2):
    from rich.markup import escape

    err.print(f"[bold red]rbrepro: error:[/] {escape(printable(message))}", highlight=False, markup=True,
              soft_wrap=True)
    raise typer.Exit(code)


def _validated(check):
    """An option callback running one of the library's validators (rbrepro.constraints), so the
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
    from rbrepro.constraints import check_sigma
    check_sigma(value)


def _sigma_or_auto(value: str) -> str:
    """--sigma: "auto", "scale", or a number the estimators accept."""
    if value in ("auto", "scale"):
        return value
    try:
        number = float(value)
    except ValueError:
        raise typer.BadParameter(f"{value!r} is neither a number nor auto nor scale") from None
    _validated(_check_sigma)(number)
    return value


def _check_lam(value):
    from rbrepro.constraints import check_nonnegative
    check_nonnegative("lam", value)


def _check_memory_limit(value):
    """The memory guard's own check (a positive, finite number of GB), before any data loads."""
    from rbrepro.memory import memory_limit_bytes
    memory_limit_bytes(value)


def _expected_message(exc: BaseException) -> str | None:
    """The one-line message of an error about the user's input, files, settings or machine
    (rbrepro.errors.RbreproError, or an OSError naming a file: a full disk, a read-only folder),
    or None for anything else: a bug, which keeps its traceback."""
    from rbrepro.errors import RbreproError

    if isinstance(exc, RbreproError):
        return str(exc)
    if isinstance(exc, MemoryError):  # one the guard did not foresee: still one line, never a traceback
        from rbrepro.memory import out_of_memory

        return out_of_memory("rbrepro", "in the middle of the work", None)
    if isinstance(exc, OSError) and getattr(exc, "filename", None):
        return f"{exc.filename}: {exc.strerror or exc} (nothing written so far was lost: every write is atomic)"
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
