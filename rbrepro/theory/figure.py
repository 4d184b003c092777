"""The Theorem 1 figure: objective gap and kernel error against R, with the claimed rates drawn in."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rbrepro.drawing import METHOD_STYLE, finish, new_figure
from rbrepro.models.registry import SUBJECT
from rbrepro.theory.rates import fit_rates

#: the method whose curve anchors the reference lines (the Monte Carlo baseline of [33]), else the first drawn
ANCHOR = ("rf", "rb", "nystrom")


def expected(rows: pd.DataFrame, x: str, column: str) -> pd.DataFrame:
    """Mean, min and max of `column` over seeds at each x: Theorem 1 bounds the expected gap, so the
    theory's curves and slopes read the mean over seeds (rates.fit_rates), the one place a mean is read."""
    return rows.groupby(x)[column].agg(["mean", "min", "max"]).sort_index()


def _positive(values: pd.Series) -> np.ndarray:
    """Values for a log axis: <= 0 (a negative gap) is left out, not clipped."""
    v = values.to_numpy(dtype=float)
    return np.where(v > 0, v, np.nan)


def _anchor(stats: dict, R0: int) -> float | None:
    """The mean of the first ANCHOR method with a positive value at R0, for the reference lines."""
    for method in ANCHOR:
        if method in stats and R0 in stats[method].index and stats[method].loc[R0, "mean"] > 0:
            return float(stats[method].loc[R0, "mean"])
    return None


def _slope_label(rates: pd.DataFrame, method: str, quantity: str) -> str:
    rows = rates[(rates["method"] == method) & (rates["quantity"] == quantity) & (rates["against"] == "R")]
    label = METHOD_STYLE[method][0]
    if rows.empty or not np.isfinite(rows["slope"].iloc[0]):
        return label
    r = rows.iloc[0]
    return f"{label}: slope {r['slope']:+.2f} [{r['lo']:+.2f}, {r['hi']:+.2f}]"


def _panel(ax, rows: pd.DataFrame, rates: pd.DataFrame, quantity: str) -> dict:
    stats = {}
    for method in [m for m in METHOD_STYLE if m in set(rows["method"])]:
        _, color, marker = METHOD_STYLE[method]
        s = expected(rows[rows["method"] == method], "R", quantity)
        stats[method] = s
        R = s.index.to_numpy(dtype=float)
        ax.plot(R, _positive(s["mean"]), marker=marker, color=color, label=_slope_label(rates, method, quantity))
        ax.fill_between(R, _positive(s["min"]), _positive(s["max"]), color=color, alpha=0.15, linewidth=0)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("R (grids / features / landmarks)")
    return stats


def _reference(ax, R: np.ndarray, R0: int, value: float | None, power: float, label: str, style: str,
               scale: float = 1.0) -> None:
    """value * (R / R0)^power / scale, drawn over the whole R range."""
    if value is None or not np.isfinite(scale) or scale <= 0:
        return
    ax.plot(R, value * (R / R0) ** power / scale, style, color="0.3", linewidth=1, label=label)


def plot_theory(frame: pd.DataFrame, out_base, rates: pd.DataFrame | None = None) -> list[Path]:
    """Per dataset two rows, per sigma a column: objective gap (top) and relative Frobenius error (bottom) against
    R, mean over seeds with the min-max band, fitted slopes in the legend, and the claimed rates: 1/R
    and 1/(kappa R) through the anchor method's gap (eq. 13: kappa times [33]'s O(1/R)), 1/sqrt(R)
    through its kernel error (Monte Carlo). Gaps <= 0 cannot be drawn on a log axis and are left out.
    Writes out_base.png and .pdf atomically; returns their paths."""
    rates = fit_rates(frame) if rates is None else rates
    groups = list(frame.groupby(["dataset", "sigma"], sort=True))
    datasets = list(dict.fromkeys(d for (d, _), _rows in groups))
    n_cols = max(sum(1 for (d, _), _rows in groups if d == name) for name in datasets)
    fig, grid = new_figure(2 * len(datasets), n_cols, width=4.6, height=3.6)  # a dataset: two rows, a sigma a column
    for ax in grid.ravel():
        ax.set_visible(False)
    seen: dict[str, int] = {}
    for (dataset, sigma), rows in groups:
        row0, col = 2 * datasets.index(dataset), seen.get(dataset, 0)
        seen[dataset] = col + 1
        axes = grid[row0:row0 + 2, :]
        axes[0, col].set_visible(True)
        axes[1, col].set_visible(True)
        r = rates[(rates["dataset"] == dataset) & (rates["sigma"] == sigma)]
        R = np.unique(rows["R"].to_numpy(dtype=float))
        R0 = int(r["R_from"].min()) if len(r) else int(R[0])
        kappa = float(rows.loc[rows["method"] == SUBJECT, "kappa"].mean())
        top, bottom = axes[0, col], axes[1, col]
        stats = _panel(top, rows, r, "gap")
        anchor = _anchor(stats, R0)
        _reference(top, R, R0, anchor, -1.0, "∝ 1/R", "--")
        _reference(top, R, R0, anchor, -1.0, f"∝ 1/(κR), κ = {kappa:.3g}", ":", scale=kappa)
        top.set_title(f"{dataset}, σ = {sigma:g} (n = {rows['n'].iloc[0]})", fontsize=10)
        top.set_ylabel("objective gap F*_Z − F*_K")
        top.legend(fontsize=7, title=f"slopes fitted on R ≥ {R0}", title_fontsize=7)
        stats = _panel(bottom, rows, r, "fro_rel")
        _reference(bottom, R, R0, _anchor(stats, R0), -0.5, "∝ 1/√R", "--")
        bottom.set_ylabel("‖K − ZZᵀ‖_F / ‖K‖_F")
        bottom.legend(fontsize=7, title=f"slopes fitted on R ≥ {R0}", title_fontsize=7)
    note = ""
    negative = int((frame["gap"] <= 0).sum())
    if negative:
        note = f"{negative} row(s) with gap ≤ 0 are outside the log axis (means ≤ 0 are not drawn)"
    title = ("Theorem 1 measured: objective gap and kernel error against R (eq. 13)" if n_cols > 1
             else "Theorem 1 measured (eq. 13)")
    return finish(fig, out_base, title, info=note)  # the room above the panels is measured
