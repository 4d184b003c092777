"""`rbrepro diagnose DATASET`: Theorem 1 checked on a subsample of a dataset's training split.

Default cost (ijcnn1, n = 2000, 3 sigmas x 3 methods x 11 R x 5 seeds = 495 rows, each a Z Z^T,
one Cholesky and one Lanczos norm): measured 73 s for 2 seeds (198 rows) on 2 busy cores, so about
3 minutes, dominated by the R >= 256 cells.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from rbrepro.data.load import load_dataset
from rbrepro.errors import InvalidParameter
from rbrepro.models.registry import SUBJECT, monte_carlo_baseline
from rbrepro.theory.diagnostics import diagnostics, ridge_targets, subsample, theorem1_methods
from rbrepro.theory.rates import CONFIDENCE, fit_rates, verdicts

#: R = 1, 2, 4, ..., 1024 (Fig. 4's range)
DEFAULT_RS = tuple(2 ** k for k in range(11))
DEFAULT_SEEDS = (0, 1, 2, 3, 4)
#: inverse widths spanning few to many bins per grid on [0, 1]- or [-1, 1]-scaled data (ijcnn1's Fig. 3 range)
DEFAULT_SIGMAS = (0.3, 1.58, 10.0)
#: seed of the subsample of the training split
SAMPLE_SEED = 0


def diagnose(dataset: str, n: int = 2000, sigmas: Sequence[float] = DEFAULT_SIGMAS, Rs: Sequence[int] = DEFAULT_RS,
             seeds: Sequence[int] = DEFAULT_SEEDS, methods: Sequence[str] | None = None, lam: float | None = None,
             data_path=None, mirror=None, progress: Callable[[int, int], None] | None = None,
             sample_seed: int = SAMPLE_SEED) -> pd.DataFrame:
    """Diagnostics rows (rbrepro.theory.diagnostics) on n training rows of `dataset` drawn with
    `sample_seed`; lam None means N lam = 0.01 (the design's lam)."""
    from rbrepro.constraints import check_count, check_sigma
    from rbrepro.errors import InvalidParameter

    methods = theorem1_methods() if methods is None else methods
    for sigma in sigmas:  # validated before any kernel matrix is built
        check_sigma(sigma)
    for R in Rs:
        check_count("R", R)
    if not seeds or not methods:
        raise InvalidParameter("diagnose needs at least one seed and one method")
    if not (isinstance(n, int) and n >= 10):
        raise InvalidParameter(f"n must be an integer >= 10 (the subsample's rows), got {n!r}")
    data = load_dataset(dataset, data_path=data_path, mirror=mirror, progress=False)
    X, y = subsample(data.X_train, data.y_train, n, sample_seed)
    return diagnostics(X, ridge_targets(y, data.task), dataset=data.name, sigmas=sigmas, Rs=Rs, seeds=seeds,
                       methods=methods, lam=lam, progress=progress)


def _slope(rates: pd.DataFrame, method: str, quantity: str, against: str = "R") -> str:
    rows = rates[(rates["method"] == method) & (rates["quantity"] == quantity) & (rates["against"] == against)]
    if rows.empty or not np.isfinite(rows["slope"].iloc[0]):
        return "no fit"
    r = rows.iloc[0]
    dropped = f", {r['n_dropped']} R dropped" if r["n_dropped"] else ""
    return f"{r['slope']:+.2f} [{r['lo']:+.2f}, {r['hi']:+.2f}]{dropped}"


def _Rs(values) -> str:
    return ",".join(str(v) for v in values) if values else "none"


def summary_lines(frame: pd.DataFrame, rates: pd.DataFrame | None = None) -> list[str]:
    """Per dataset and sigma: fitted slopes with their bootstrap intervals, and the verdicts."""
    rates = fit_rates(frame) if rates is None else rates
    checks = verdicts(frame, rates)
    methods = [m for m in theorem1_methods() if m in set(frame["method"])]
    rb, rf = SUBJECT, monte_carlo_baseline()
    lines = [f"log-log slopes, {100 * CONFIDENCE:.0f} % bootstrap intervals over seeds; claimed: gap -1 "
             "(RB against kappa R, RF against R), kernel errors -0.5; only positive per-R mean values are fitted"]
    for _, v in checks.iterrows():
        rows = frame[(frame["dataset"] == v["dataset"]) & (frame["sigma"] == v["sigma"])]
        r = rates[(rates["dataset"] == v["dataset"]) & (rates["sigma"] == v["sigma"])]
        lines.append(f"{v['dataset']} sigma={v['sigma']:g}: n={rows['n'].iloc[0]}, lam={rows['lam'].iloc[0]:.3g}, "
                     f"seeds={rows['seed'].nunique()}, R={int(rows['R'].min())}..{int(rows['R'].max())}, "
                     f"kappa={v['kappa']:.3g}, D/(kappa R)={v['D_over_kappa_R']:.3g}")
        lines.append(f"  fitted on R >= {int(r['R_from'].min())}" if len(r) else "  no fits")
        lines.append("  gap vs R: " + "; ".join(f"{m} {_slope(r, m, 'gap')}" for m in methods))
        if rb in methods:
            lines.append(f"  RB gap vs kappa R: {_slope(r, rb, 'gap', 'kappa_R')} -> {v['rb_gap']}; "
                         f"eq. 13 bound held: {v['rb_bound_held']}")
        if rf in methods:
            lines.append(f"  RF gap vs R -> {v['rf_gap']}; eq. 13 bound (kappa = 1) held: {v['rf_bound_held']}")
        for err in ("fro_rel", "spec_rel", "max_abs"):
            lines.append(f"  {err} vs R: " + "; ".join(f"{m} {_slope(r, m, err)} -> {v[f'{m}_{err}']}"
                                                         for m in methods))
        if {rb, rf} <= set(methods):
            lines.append(f"  RB vs RF at equal R: ahead at R={_Rs(v['rb_ahead_at'])}, behind at "
                         f"R={_Rs(v['rb_behind_at'])}; RF/RB gap ratio {v['rf_over_rb_gap']:.3g} "
                         f"(kappa {v['kappa']:.3g}) -> {v['kappa_speedup']}")
        negative = rows.groupby("method")["gap"].apply(lambda g: int((g <= 0).sum()))
        if negative.any():
            lines.append("  rows with gap <= 0 (not fitted): "
                         + ", ".join(f"{m} {k}" for m, k in negative.items() if k))
    return lines


def run_diagnose(dataset: str, out_dir, *, n: int = 2000, sigmas: Sequence[float] = DEFAULT_SIGMAS,
                 max_R: int = 1024, seeds: Sequence[int] = DEFAULT_SEEDS, methods: Sequence[str] | None = None,
                 data_path=None, mirror=None, progress: Callable[[int, int], None] | None = None) -> list[str]:
    """What `rbrepro diagnose` does: the diagnostics of `dataset` at R = 1, 2, 4, ... max_R, written to
    out_dir/diagnostics.csv (atomically) and drawn as out_dir/theory.{png,pdf}; returns the summary."""
    from pathlib import Path

    from rbrepro.data.atomic import atomic_path
    from rbrepro.theory.figure import plot_theory

    if max_R < 1:
        raise InvalidParameter(f"the largest R must be >= 1, got {max_R}")
    Rs = tuple(2 ** k for k in range(int(np.log2(max_R)) + 1))
    frame = diagnose(dataset, n=n, sigmas=sigmas, Rs=Rs, seeds=seeds, methods=methods, data_path=data_path,
                     mirror=mirror, progress=progress)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with atomic_path(out_dir / "diagnostics.csv") as tmp:
        frame.to_csv(tmp, index=False)
    rates = fit_rates(frame)
    paths = plot_theory(frame, out_dir / "theory", rates)
    return [*summary_lines(frame, rates), f"rows: {out_dir / 'diagnostics.csv'}; figure: {', '.join(map(str, paths))}"]


def run_theory(config_path, out_dir, *, figure_base=None, data_path=None, mirror=None,
               progress: Callable[[int, int], None] | None = None) -> list[str]:
    """`rbrepro diagnose CONFIG.yaml`: every dataset of a theory config, one diagnostics.csv (with the
    resolved config beside it) and one figure (figure_base, default out_dir/theory)."""
    from pathlib import Path

    import yaml

    from rbrepro.data.atomic import atomic_path, write_text_atomic
    from rbrepro.provenance import provenance
    from rbrepro.theory.config import load_theory_config
    from rbrepro.theory.figure import plot_theory

    config = load_theory_config(config_path)
    frames = [diagnose(d.name, n=d.n, sigmas=d.sigmas, Rs=tuple(2 ** k for k in range(int(np.log2(d.max_R)) + 1)),
                       seeds=d.seeds, data_path=data_path, mirror=mirror, progress=progress)
              for d in config.datasets]
    frame = pd.concat(frames, ignore_index=True)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out_dir / "config.resolved.yaml",
                      yaml.safe_dump({**config.to_dict(), "provenance": provenance()}, sort_keys=False))
    with atomic_path(out_dir / "diagnostics.csv") as tmp:
        frame.to_csv(tmp, index=False)
    rates = fit_rates(frame)
    paths = plot_theory(frame, Path(figure_base) if figure_base else out_dir / "theory", rates)
    return [*summary_lines(frame, rates), f"rows: {out_dir / 'diagnostics.csv'}; figure: {', '.join(map(str, paths))}"]


#: the columns the figure reads from a diagnostics.csv
DRAWN_COLUMNS = ("dataset", "method", "sigma", "R", "seed", "n", "kappa", "gap", "fro_rel", "spec_rel", "max_abs")


def redraw_theory(results, out_base) -> list:
    """`rbrepro plot theory RESULTS`: the figure drawn again from a diagnostics.csv already written (a
    folder holding one, or the file itself), no row recomputed; the published figures/theory is
    redrawn from results/theory like every other figure. Returns the PNG's and the PDF's paths."""
    from pathlib import Path

    from rbrepro.errors import MissingData
    from rbrepro.theory.figure import plot_theory

    path = Path(results)
    csv = path / "diagnostics.csv" if path.is_dir() else path
    if not csv.exists():
        raise MissingData(f"{csv}: no diagnostics here; run `rbrepro diagnose CONFIG --out {path}` first")
    frame = pd.read_csv(csv)
    lacking = sorted(set(DRAWN_COLUMNS) - set(frame.columns))
    if frame.empty or lacking:
        raise InvalidParameter(f"{csv}: not an rbrepro diagnostics CSV ("
                               + (f"missing columns {', '.join(lacking)})" if lacking else "no rows)"))
    return plot_theory(frame, Path(out_base))
