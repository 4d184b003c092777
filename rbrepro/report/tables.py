"""The numbers behind Figures 3-6 as markdown tables (the evidence quoted in REPRODUCTION.md).

    python -m rbrepro.report.tables results/fig3 results/fig4 results/fig5 results/fig6

Each folder's figure is read from its resolved config; tables use the same rows and rules
as the figures and the claims (ok rows on test data, the median over seeds with its band
[min, max], the sigma the protocol chose, Fig. 5 targets from the config, Fig. 6 speedups
from the objective traces).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rbrepro.analysis.chosen import chosen_exact, chosen_numpy_rows, chosen_sigma_rows, draws_of
from rbrepro.analysis.rows import higher_is_better, test_rows
from rbrepro.analysis.speedups import speedups
from rbrepro.analysis.targets import rows_reaching
from rbrepro.dotted import resolve
from rbrepro.figure_registry import FIGURE_SPECS
from rbrepro.models.registry import REFERENCE, SUBJECT
from rbrepro.report.markdown import band, table
from rbrepro.sweep.results_folder import load_results


def _fmt(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "–"
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"


def _table(header: list[str], rows: list[list]) -> str:
    return table(header, rows, lambda r: r if isinstance(r, str) else _fmt(r))


def fig3_tables(results: pd.DataFrame, config: dict | None = None) -> str:
    """Per dataset: train/test metric, D and train time vs sigma (the median over our seeds with its
    band; the authors' replayed draws apart), the sigma the protocol chose, the exact kernel at its
    chosen sigma."""
    ok = test_rows(results)
    out = []
    for name, part in ok.groupby("dataset", sort=False):
        all_rb = part[part["method"] == SUBJECT]
        rb = all_rb[draws_of(all_rb) == "numpy"] if (draws_of(all_rb) == "numpy").any() else all_rb
        rows = [[s, band(g["train_metric"]), band(g["test_metric"]), int(g["D"].median()), band(g["train_s"]),
                 len(g)] for s, g in rb.groupby("sigma")]
        chosen = chosen_sigma_rows(all_rb)
        note = "no sigma chosen" if chosen.empty else (
            f"RB at the chosen sigma {_fmt(float(chosen['sigma'].iloc[0]), 4)}: test "
            f"{band(rb[np.isclose(rb['sigma'], chosen['sigma'].iloc[0])]['test_metric'])}")
        note += _exact_note(part)
        out.append(f"**{name}** (R = {int(all_rb['R'].iloc[0])}, {note})\n\n"
                   + _table(["sigma", "train", "test", "D", "train s", "seeds"], rows))
    return "\n\n".join(out)


def fig4_tables(results: pd.DataFrame, config: dict | None = None) -> str:
    """Per dataset: train/test metric, D and train time vs R (the median over seeds with its band)."""
    ok = test_rows(results)
    out = []
    for name, part in ok.groupby("dataset", sort=False):
        rows = [[int(R), int(g["D"].median()), band(g["train_metric"]), band(g["test_metric"]), band(g["train_s"]),
                 len(g)] for R, g in part.groupby("R")]
        out.append(f"**{name}** (sigma {part['sigma'].iloc[0]})\n\n"
                   + _table(["R", "D", "train", "test", "train s", "seeds"], rows))
    return "\n\n".join(out)


def _fig5_cell(at: pd.DataFrame, replayed: float | None) -> str:
    """One (R, method) of Fig. 5: the median over our seeds at the chosen sigma, that sigma, the median
    train time, and the authors' draw replayed at that sigma where it ran."""
    if at.empty:
        return "–"
    text = (f"{_fmt(at['test_metric'].median(), 4)} at sigma {_fmt(float(at['sigma'].iloc[0]), 4)} "
            f"({_fmt(at['train_s'].median(), 2)} s)")
    return text if replayed is None else f"{text}; their draw {_fmt(replayed, 4)}"


def _exact_note(part: pd.DataFrame) -> str:
    """The exact kernel's value at its chosen sigma (as its published point is compared), or nothing."""
    exact = part[part["method"] == REFERENCE]
    if exact.empty:
        return ""
    pick = chosen_exact(exact)
    return (f"; exact kernel {_fmt(pick['test_metric'].median(), 4)} at sigma {_fmt(float(pick['sigma'].iloc[0]), 4)} "
            f"({_fmt(pick['train_s'].median())} s)")


def _targets_table(approx: pd.DataFrame, methods: list[str], targets: list[float], better_high: bool) -> str:
    """Train time and memory to reach each target, from the rows and rule claim 5 reads (`rows_reaching`:
    the least median train time over the R whose median reaches the target, and the memory at that same R:
    one R per cell)."""
    trows = []
    for target in targets:
        cells = []
        for m in methods:
            reached = rows_reaching(approx[approx["method"] == m], target, better_high)
            fastest = reached["train_s"].idxmin() if len(reached) else None
            cells.append("not reached" if fastest is None else
                         f"{_fmt(reached.loc[fastest, 'train_s'], 2)} s, "
                         f"{_fmt(reached.loc[fastest, 'memory_model_entries'])} entries (R {int(fastest)})")
        trows.append([str(target)] + cells)
    return _table(["target"] + methods, trows)


def fig5_tables(results: pd.DataFrame, config: dict | None) -> str:
    """Per dataset: test metric per method and R at the chosen sigma (median over seeds, and the
    authors' draw where replayed); time and memory to reach each target, as claim 5 reads them."""
    ok = test_rows(results)
    seeded = chosen_numpy_rows(results)
    chosen = chosen_sigma_rows(ok[ok["method"] != REFERENCE])
    replayed = chosen[draws_of(chosen) == "authors"].groupby(["dataset", "method", "R"])["test_metric"].median()
    cfg_sets = (config or {}).get("datasets", {}) or {}
    out = []
    for name, part in ok.groupby("dataset", sort=False):
        approx = seeded[seeded["dataset"] == name]
        if approx.empty:
            continue
        better_high = higher_is_better(part)
        methods = list(dict.fromkeys(approx["method"]))
        rows = [[int(R)] + [_fig5_cell(approx[(approx["method"] == m) & (approx["R"] == R)],
                                       replayed.get((name, m, R))) for m in methods]
                for R in sorted(set(approx["R"]))]
        text = (f"**{name}**: test performance per R at the chosen sigma, the median over our seeds (median "
                f"train s){_exact_note(part)}\n\n" + _table(["R"] + methods, rows))
        targets = (cfg_sets.get(name) or {}).get("targets") or []
        if targets:
            text += ("\n\nTrain time and memory (entries per training point) to reach each target (claim 5's rows "
                     "and rule):\n\n" + _targets_table(approx, methods, targets, better_high))
        out.append(text)
    return "\n\n".join(out)


def fig6_tables(results: pd.DataFrame, config: dict | None = None) -> str:
    """Per dataset: time to target objective and speedup per method, variant and threads (medians over
    the seeds, the speedup with its band), and D's median per method: test rows only (`test_rows`)."""
    ok = test_rows(results)
    out = []
    for name, part in ok.groupby("dataset", sort=False):
        sp = speedups(part)
        D = part.groupby("method")["D"].median()
        rows = [[r.method, r.variant, int(r.threads), r.time_to_target,
                 band([r.speedup_min, r.speedup, r.speedup_max]) if r.reached else "not reached",
                 f"{r.reached} of {r.runs}"] for r in sp.itertuples()]
        out.append(f"**{name}** (D, median: " + ", ".join(f"{m} {int(d):,}" for m, d in D.items()) + ")\n\n"
                   + _table(["method", "variant", "threads", "time to target s (median)", "speedup (median [band])",
                             "seeds reaching the target"], rows))
    return "\n\n".join(out)


def tables(folder: str | Path, figure: str | None = None) -> str:
    """Markdown tables of one results folder, for `figure` (default: its config's figure)."""
    results, config = load_results(folder)
    figure = figure or (config or {}).get("figure", "")
    spec = FIGURE_SPECS.get(figure)
    if spec is None or spec.tables is None:
        return f"## {folder}\n\n(no tables for figure {figure!r})"
    return f"## {folder} ({figure})\n\n{resolve(spec.tables)(results, config)}"


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m rbrepro.report.tables",
                                     description="The numbers behind Figures 3-6 as Markdown tables, from results "
                                                 "folders (each with results.csv and config.resolved.yaml).")
    parser.add_argument("folders", nargs="*", default=[f"results/{spec.runs[0]}" for spec in FIGURE_SPECS.values()
                                                       if spec.tables and spec.runs],
                        help="results folders [default: the four published fair runs]")
    args = parser.parse_args(argv)
    missing = [f for f in args.folders if not (Path(f) / "results.csv").exists()]
    if missing:
        parser.error(f"no results.csv in {', '.join(missing)}")
    print("\n\n".join(tables(f) for f in args.folders))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
