"""The rbrepro command line: a thin layer over the library, one module per kind of work.

    rbrepro fetch ijcnn1
    rbrepro featurize ijcnn1 --method rb --R 256 --sigma 1.58
    rbrepro train ijcnn1 --method rb --R 256 --sigma 1.58 --json
    rbrepro sweep configs/fig3.yaml --dataset ijcnn1
    rbrepro plot fig3 results/fig3
    rbrepro report
"""

from __future__ import annotations

import faulthandler
import importlib
import sys
import warnings

import typer

from rbrepro.cli.app import app
from rbrepro.cli.common import err

__all__ = ["app", "main"]

for _commands in ("data", "models", "sweeps", "results"):  # each registers its commands on app, in --help's order
    importlib.import_module(f"rbrepro.cli.{_commands}")


def _one_line_warning(message, category, filename, lineno, line=None) -> str:
    """A warning as the command line says it: one line, without the library's file and line."""
    return f"rbrepro: warning: {message}\n"


def main(argv: list[str] | None = None) -> int:
    """Console entry (`rbrepro`, `python -m rbrepro`): click's usage errors become one line,
    `rbrepro: error: Invalid value for '--R': ...`, like every other error (exit status 2)."""
    try:
        from typer._click import exceptions as click  # typer >= 0.22 carries its own click
    except ImportError:  # pragma: no cover - older typer uses click itself
        from click import exceptions as click

    warnings.formatwarning = _one_line_warning
    if not faulthandler.is_enabled():  # a fatal signal in native code (BLAS, numba) names the Python line it hit
        faulthandler.enable()
    command = typer.main.get_command(app)
    try:
        result = command.main(args=argv, prog_name="rbrepro", standalone_mode=False)
    except click.NoArgsIsHelpError as exc:
        exc.show()
        return exc.exit_code
    except click.UsageError as exc:
        where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
        message = exc.format_message().replace("Value error, ", "")  # pydantic's prefix, which typer passes on
        err.print(f"rbrepro: error: {message}{where}", style="bold red", highlight=False,
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
