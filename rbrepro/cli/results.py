"""`rbrepro plot`, `compare`, `summary`, `diagnose` and `report`: what the results show."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from rbrepro.cli.app import app
from rbrepro.cli.common import PLOT_HELP, DataDir, Mirror, Plotted, _fail, _guard, _parse_floats
from rbrepro.figure_registry import FIGURE_SPECS


@app.command()
def plot(
    figure: Plotted = typer.Argument(..., help=PLOT_HELP),
    results: Path = typer.Argument(..., help="A results folder (with results.csv) or a results CSV, from a sweep "
                                             "of a config made for this figure (theory: a folder with "
                                             "diagnostics.csv, or that CSV)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output path without suffix [default: <results folder>/"
                                                           "<figure>; the published figures/ only when named here]."),
):
    """Draw a figure of the paper from result CSVs, as PNG and PDF.

    The results must come from a sweep of a config made for this figure (its `figure:` key);
    anything else is refused. The figure goes beside the results unless --out says where, so
    the published figures/ change only when asked for. `theory` redraws Theorem 1's figure from
    the rows `rbrepro diagnose` wrote, computing none again.
    """
    folder = results if results.is_dir() else results.parent
    out_base = out or folder / figure.value
    if figure.value == "theory":
        from rbrepro.theory.run import redraw_theory

        paths = _guard(lambda: redraw_theory(results, out_base))
    else:
        from rbrepro.plots import make_figure

        paths = _guard(lambda: make_figure(figure.value, results, out_base))
    typer.echo(" ".join(str(p) for p in paths))


@app.command()
def compare(
    results: Path = typer.Argument(..., help="A results folder (with results.csv) or a results CSV of a " + " or ".join(
        name for name, spec in FIGURE_SPECS.items() if spec.published_points) + " sweep."),
    summary_only: bool = typer.Option(False, "--summary", help="Print only the counts per dataset and method."),
    markdown: bool = typer.Option(False, "--markdown", help="Print the per-dataset-and-method counts as a "
                                                            "Markdown table (as in REPRODUCTION.md)."),
):
    """Put our points beside the authors' published ones (their figure data, shipped in
    rbrepro/published), each judged two-sided over the band of our seeds.

    A published point is consistent with our seed band when it lies within the band our seeds span
    (min to max) widened by 0.5 accuracy points or 3 % relative error; outside it, ours is better
    or worse. Beside it: whether it matches the same experiment (the authors' draw replayed within
    0.2 points / 1 %, else our median within 0.5 points / 3 %). Every dataset the run's config
    names is counted, as in REPRODUCTION.md.
    The one-sided count (ours no worse than published minus the tolerance) is printed only
    under its own name. Where RB ran with the authors' draws (rng: authors), that value is
    compared directly (within 0.2 points or 1 %). Fig. 5: each (dataset, method, R) at the
    chosen sigma. Fig. 3: RB at each published (R, sigma), and the exact kernel's line.
    """
    from rbrepro.analysis.results import swept_for
    from rbrepro.report.counts import comparison_lines, run_points
    from rbrepro.sweep.results_folder import load_results

    frame, config = _guard(lambda: load_results(results))
    figure = swept_for(frame, config)
    covered = [spec for spec in FIGURE_SPECS.values() if spec.published_points]
    if figure not in {spec.name for spec in covered}:
        _fail(f"{results}: these results are for {figure or 'no figure'}; the published data covers "
              f"{' and '.join(spec.title for spec in covered)} sweeps only")
    points = run_points(frame, config, figure)
    if not points:
        _fail(f"{results}: none of its points has a published counterpart (datasets, R or sigma differ)")
    mode = "markdown" if markdown else "summary" if summary_only else "points"
    for line in comparison_lines(points, mode):
        typer.echo(line)
    typer.echo(f"[{figure}, {results}]")


@app.command()
def summary(
    results: List[Path] = typer.Argument(..., help="Results folders (each with results.csv) or results CSVs of "
                                                   "any sweep, yours included."),
    markdown: bool = typer.Option(False, "--markdown", help="Print the best settings as a Markdown table."),
):
    """What a sweep found: its cells by status (and why a dataset has none), then per dataset, method
    and R the sigma the protocol chose and the test metric there (the median over seeds, their band
    [min, max] and how many). Where the sweep chose no sigma (a grid), the best median on test is
    shown and said to be so: a look at the test rows, not a selection."""
    from rbrepro.analysis.best import best_settings
    from rbrepro.sweep.results_folder import load_results, results_csv
    from rbrepro.sweep.summary import summarize

    for folder in results:
        frame, config = _guard(lambda: load_results(folder))
        for line in summarize(results_csv(folder), frame, config):
            typer.echo(line)
        table = best_settings(frame)
        if table.empty:
            typer.echo("  no successful test rows")
            continue
        rows = [[r.dataset, r.method, r.R, f"{r.sigma:g}", r.chosen,
                 f"{r.median:.4g} [{r.min:.4g}, {r.max:.4g}]" if r.seeds > 1 else f"{r.median:.4g}", r.seeds]
                for r in table.itertuples()]
        header = ["dataset", "method", "R", "sigma", "chosen", f"test {table['metric'].iloc[0]} (median [band])",
                  "seeds"]
        typer.echo(_table(header, rows, markdown))


def _table(header: list[str], rows: list[list], markdown: bool) -> str:
    """Rows as a Markdown table, or as aligned plain columns."""
    cells = [header, *[[str(v) for v in row] for row in rows]]
    if markdown:
        return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
                          *["| " + " | ".join(r) + " |" for r in cells[1:]]])
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    return "\n".join("  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells)


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
    data_dir: DataDir = None,
    mirror: Mirror = None,
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
    check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 if REPRODUCTION.md or a generated "
                                                      "block of README.md or docs/ differs from what the committed "
                                                      "CSVs give."),
):
    """Write REPRODUCTION.md and the generated blocks of README.md and docs/ from the committed CSVs.

    Every number, table and verdict is computed: the two-sided fidelity of each published run
    against the authors' figure data, and each claim of the paper judged by its rule (the
    thresholds are printed with it), and the benchmark tables from bench/results/*.csv. With --check,
    a stale report or block fails (CI runs this).
    """
    from rbrepro.report.render import check_report, write_report

    if check:
        stale = _guard(lambda: check_report(root))
        if stale:
            _fail(f"{', '.join(stale)} differ(s) from what the committed CSVs give; run `make report` and commit",
                  code=1)
        typer.echo("REPRODUCTION.md, results/cost-profile.md and the generated blocks of README.md and docs/ match "
                   "the committed CSVs")
        return
    for path in _guard(lambda: write_report(root)):
        typer.echo(str(path))
