"""The Theorem 1 figure: objective gap and kernel error against R, with the claimed rates drawn in.

Theorem 1 bounds the expected gap, so its curves are the mean over seeds (the one figure that reads
a mean; every other draws the median) with the seeds' min-max band, and the slopes printed beside
each panel are the ones claim 0 judges (`rates.fit_rates`): RB's gap against kappa R, every other
fit against R, each with its bootstrap interval. Each panel's legend sits outside it, at its right
(the slopes differ per panel); what the panels share is named once, in a band under the title. A gap <= 0 has no place on a log axis: each panel counts the rows it leaves off."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rbrepro.drawing import LEGEND_FONTSIZE, METHOD_STYLE, finish, new_figure, steady
from rbrepro.models.registry import SUBJECT, monte_carlo_baseline
from rbrepro.theory.rates import fit_rates


#: the method whose curve anchors the reference lines (the Monte Carlo baseline of [33]), else the first drawn
def anchors() -> tuple[str, ...]:
    """The methods whose curve may anchor the reference lines, in order: [33]'s Monte Carlo baseline (RF),
    RB, then the other methods Theorem 1 is measured on."""
    from rbrepro.theory.diagnostics import theorem1_methods

    first = (monte_carlo_baseline(), SUBJECT)
    return (*first, *(m for m in theorem1_methods() if m not in first))
#: what each panel's y-axis shows
QUANTITY_LABEL = {"gap": "objective gap F*_Z − F*_K", "fro_rel": "‖K − ZZᵀ‖_F / ‖K‖_F"}
#: the shared legend's entries for the reference lines (style, label)
RATE_LINE = ("--", "claimed rates through the mean at the first R fitted: 1/R (gap), 1/√R (kernel error)")
KAPPA_LINE = (":", "the 1/R line divided by κ: 1/(κR) (eq. 13, gap)")


def expected(rows: pd.DataFrame, x: str, column: str) -> pd.DataFrame:
    """Mean, min and max of `column` over seeds at each x: Theorem 1 bounds the expected gap, so the
    theory's curves and slopes read the mean over seeds (rates.fit_rates), the one place a mean is read."""
    return rows.groupby(x)[column].agg(["mean", "min", "max"]).sort_index()


def _positive(values: pd.Series) -> np.ndarray:
    """Values for a log axis: <= 0 (a negative gap) is left out, not clipped."""
    v = steady(values.to_numpy(dtype=float))
    return np.where(v > 0, v, np.nan)


def _anchor(stats: dict, R0: int) -> float | None:
    """The mean of the first ANCHOR method with a positive value at R0, for the reference lines."""
    for method in anchors():
        if method in stats and R0 in stats[method].index and stats[method].loc[R0, "mean"] > 0:
            return float(stats[method].loc[R0, "mean"])
    return None


def against(method: str, quantity: str) -> str:
    """What a fit's slope is taken against, as claim 0 reads it: RB's gap against kappa R (eq. 13's
    1/(kappa R)), everything else against R."""
    return "kappa_R" if method == SUBJECT and quantity == "gap" else "R"


def slope_label(rates: pd.DataFrame, method: str, quantity: str) -> str:
    """"RB: -1.15 [-1.17, -1.11] vs κR": the method's fitted slope with its interval, against what."""
    x = against(method, quantity)
    rows = rates[(rates["method"] == method) & (rates["quantity"] == quantity) & (rates["against"] == x)]
    label = METHOD_STYLE[method][0]
    if rows.empty or not np.isfinite(rows["slope"].iloc[0]):
        return f"{label}: no fit"
    r = rows.iloc[0]
    interval = f" [{r['lo']:+.2f}, {r['hi']:+.2f}]" if np.isfinite(r["lo"]) and np.isfinite(r["hi"]) else ""
    return f"{label}: {r['slope']:+.2f}{interval} vs {'κR' if x == 'kappa_R' else 'R'}"


def dropped_note(rows: pd.DataFrame, quantity: str) -> str:
    """How many rows of a panel are <= 0 (off its log axis), and where a method's mean is <= 0 (a
    point of its curve not drawn); "" when none."""
    bad = int((rows[quantity] <= 0).sum())
    if not bad:
        return ""
    means = rows.groupby(["method", "R"])[quantity].mean()
    gone = [f"{METHOD_STYLE[m][0]}'s mean ≤ 0 at R = {', '.join(str(int(R)) for R in sorted(g.index.get_level_values('R')))}"
            for m, g in means[means <= 0].groupby(level="method")]
    return "\n".join([f"{bad} of {len(rows)} rows ≤ 0: off the axis", *gone])


def _panel(ax, rows: pd.DataFrame, quantity: str) -> tuple[dict, dict]:
    """Each method's mean over seeds with its min-max band; returns (per method its stats, its line)."""
    stats, lines = {}, {}
    for method in [m for m in METHOD_STYLE if m in set(rows["method"])]:
        _, color, marker = METHOD_STYLE[method]
        s = expected(rows[rows["method"] == method], "R", quantity)
        stats[method] = s
        R = s.index.to_numpy(dtype=float)
        (lines[method],) = ax.plot(R, _positive(s["mean"]), marker=marker, color=color)
        ax.fill_between(R, _positive(s["min"]), _positive(s["max"]), color=color, alpha=0.15, linewidth=0)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("R (grids / features / landmarks)")
    ax.set_ylabel(QUANTITY_LABEL[quantity])
    return stats, lines


def _reference(ax, R: np.ndarray, R0: int, value: float | None, power: float, style: str, scale: float = 1.0):
    """value * (R / R0)^power / scale, drawn over the whole R range (None where there is no anchor)."""
    if value is None or not np.isfinite(scale) or scale <= 0:
        return None
    (line,) = ax.plot(R, steady(value * (R / R0) ** power / scale), style, color="0.3", linewidth=1)
    return line


def _slopes_legend(ax, lines: dict, rates: pd.DataFrame, rows: pd.DataFrame, quantity: str, R0: int) -> None:
    """A panel's own legend, at its right, outside the panel (the layout keeps room for it): each
    method's fitted slope and interval, the R they were fitted on, and the rows left off the log axis."""
    handles = list(lines.values())
    labels = [slope_label(rates, method, quantity) for method in lines]
    note = dropped_note(rows, quantity)
    if note:
        handles.append(ax.plot([], [], " ")[0])
        labels.append(note)
    ax.legend(handles, labels, loc="center left", bbox_to_anchor=(1.03, 0.5), borderaxespad=0.0, frameon=False,
              fontsize=LEGEND_FONTSIZE, title=f"slopes of the mean, R ≥ {R0}", title_fontsize=LEGEND_FONTSIZE,
              alignment="left")


def plot_theory(frame: pd.DataFrame, out_base, rates: pd.DataFrame | None = None) -> list[Path]:
    """Per dataset two rows, per sigma a column: objective gap (top) and relative Frobenius error (bottom) against
    R, mean over seeds with the min-max band, each panel's fitted slopes at its right, and the claimed
    rates: 1/R through the anchor method's mean gap at the first R fitted, and that line divided by kappa
    (eq. 13's 1/(kappa R): kappa times [33]'s O(1/R)), 1/sqrt(R) through its kernel error (Monte Carlo). Gaps <= 0 cannot be drawn on a log axis: counted per panel and in
    the footer. Writes out_base.png and .pdf atomically; returns their paths."""
    rates = fit_rates(frame) if rates is None else rates
    groups = list(frame.groupby(["dataset", "sigma"], sort=True))
    datasets = list(dict.fromkeys(d for (d, _), _rows in groups))
    n_cols = max(sum(1 for (d, _), _rows in groups if d == name) for name in datasets)
    # a dataset: two rows, a sigma a column, each panel's legend at its right
    fig, grid = new_figure(2 * len(datasets), n_cols, width=6.9, height=3.2)
    for ax in grid.ravel():
        ax.set_visible(False)
    shared: dict = {}  # the band under the title: each method and each reference line, once
    seen: dict[str, int] = {}
    for (dataset, sigma), rows in groups:
        row0, col = 2 * datasets.index(dataset), seen.get(dataset, 0)
        seen[dataset] = col + 1
        for ax in (grid[row0, col], grid[row0 + 1, col]):
            ax.set_visible(True)
        r = rates[(rates["dataset"] == dataset) & (rates["sigma"] == sigma)]
        R = np.unique(rows["R"].to_numpy(dtype=float))
        R0 = int(r["R_from"].min()) if len(r) else int(R[0])
        kappa = float(rows.loc[rows["method"] == SUBJECT, "kappa"].mean())
        top, bottom = grid[row0, col], grid[row0 + 1, col]
        stats, lines = _panel(top, rows, "gap")
        anchor = _anchor(stats, R0)
        references = {RATE_LINE[1]: _reference(top, R, R0, anchor, -1.0, RATE_LINE[0]),
                      KAPPA_LINE[1]: _reference(top, R, R0, anchor, -1.0, KAPPA_LINE[0], scale=kappa)}
        top.set_title(f"{dataset}, σ = {sigma:g} (n = {rows['n'].iloc[0]}, κ = {kappa:.3g})", fontsize=10)
        _slopes_legend(top, lines, r, rows, "gap", R0)
        stats, bottom_lines = _panel(bottom, rows, "fro_rel")
        _reference(bottom, R, R0, _anchor(stats, R0), -0.5, RATE_LINE[0])
        _slopes_legend(bottom, bottom_lines, r, rows, "fro_rel", R0)
        for method, line in lines.items():
            shared.setdefault(f"{METHOD_STYLE[method][0]}: mean over seeds, band min-max", line)
        for label, line in references.items():
            if line is not None:
                shared.setdefault(label, line)
    negative = int((frame["gap"] <= 0).sum())
    note = (f"{negative} of {len(frame)} rows have a gap ≤ 0 and lie off the log axes (each panel counts its own)"
            if negative else "")
    title = ("Theorem 1 measured: objective gap and kernel error against R (eq. 13)" if n_cols > 1
             else "Theorem 1 measured (eq. 13)")
    return finish(fig, out_base, title, info=note, legend=(list(shared.values()), list(shared)), legend_cols=3)
