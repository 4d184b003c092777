"""The Typer application; each command module registers its commands on it."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(
    add_completion=False,
    rich_markup_mode=None,  # plain click help: "[default: ...]" in help texts is text, not Rich markup
    no_args_is_help=True,
)


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
    verbose: int = typer.Option(0, "--verbose", "-v", count=True,
                                help="Say what is being done on stderr: fetches, cache use, fits, sweep phases "
                                     "and cells (-vv: more detail)."),
    log_file: Optional[Path] = typer.Option(None, "--log-file", help="Append a timestamped log of the same (and "
                                                                     "the detail) to this file."),
):
    """Reproduce 'Revisiting Random Binning Features' (Wu et al., KDD'16): fetch the LIBSVM datasets,
    build random features, train kernel models, run sweeps from YAML configs and plot the paper's
    figures. sigma is an inverse kernel width: k(x, y) = exp(-sigma d(x, y)), d the L1 distance
    unless --kernel euclidean says otherwise (baselines only)."""
    from rbrepro.logs import configure

    try:
        configure(verbose, log_file)
    except OSError as exc:
        from rbrepro.cli.common import _fail

        _fail(f"--log-file {log_file}: cannot open it: {exc.strerror or exc}")
