"""Figure 6: speedup of parallel L1 RCD vs threads, RB and RF, with the eq. 29 curve.

Speedup = time(1 thread) / time(tau threads) to reach F <= F* + eps (F(0) - F*), eps = 1e-3,
F* the best objective of the single-thread run(s) of the same seed, read from each cell's objective trace;
with several seeds (repeats) each time and speedup is the median over them (`analysis.speedups`), the
error bars the seeds' min-max. A setting none of whose seeds reaches the target has no speedup: it is
an x in the strip above the speedup axis ("not reached"), never a point at zero.
The eq. 29 curve tau / (1 + (omega - 1)(tau - 1)/(D - 1)) (omega = non-zeros per row: R for
RB, D for RF; D the median over seeds) is drawn up to 8 threads; thread counts never measured are marked so.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rbrepro.analysis.rows import test_rows
from rbrepro.analysis.speedups import eq29_speedup, speedups
from rbrepro.drawing import METHOD_STYLE, empty_panel, finish, legend_in, new_figure, steady, top_strip
from rbrepro.models.registry import SUBJECT, rcd_baseline
from rbrepro.plots.common import problems_note, unavailable_note

MAX_THREADS_DRAWN = 8
NOT_REACHED = "not\nreached"


def reached(table: pd.DataFrame) -> pd.Series:
    """Settings where at least one seed reaches the target: the only ones with a speedup to draw."""
    return (table["reached"] > 0) & np.isfinite(table["speedup"])


def _error_bars(ax, rows: pd.DataFrame, x, color: str) -> None:
    """The seeds' min-max of each speedup drawn (where they differ)."""
    rows = rows.assign(_x=x)[rows["speedup_max"] > rows["speedup_min"]]
    if len(rows):
        med = steady(rows["speedup"].to_numpy())
        ax.errorbar(rows["_x"], med, yerr=[med - steady(rows["speedup_min"].to_numpy()),
                                           steady(rows["speedup_max"].to_numpy()) - med],
                    fmt="none", ecolor=color, elinewidth=1.0, capsize=3, zorder=2.5)


def _measured_bars(ax, table: pd.DataFrame, name: str, epochs: int) -> None:
    """The measured speedups at the most threads run, one bar per method and variant with the seeds'
    min-max, labelled; "not reached" where no seed reaches the target (no bar: zero is no speedup)."""
    tau = int(table["threads"].max())
    top = table[table["threads"] == tau].sort_values(["method", "variant"]).reset_index(drop=True)
    hit = reached(top)
    labels = [f"{METHOD_STYLE[m][0]}\n{v}" for m, v in zip(top["method"], top["variant"])]
    colors = [METHOD_STYLE[m][1] for m in top["method"]]
    x = np.arange(len(labels))
    heights = np.where(hit, steady(top["speedup"].to_numpy()), 0.0)
    ax.bar(x[hit], heights[hit], color=np.array(colors)[hit], alpha=0.85)
    _error_bars(ax, top[hit], x[hit], "0.2")
    for xi, r, ok in zip(x, top.itertuples(), hit):
        if ok:
            seeds = f"\n{r.reached} of {r.runs} seeds" if r.reached < r.runs else ""
            ax.text(xi, max(r.speedup, r.speedup_max) + 0.03, f"x{r.speedup:.2f}{seeds}", ha="center",
                    va="bottom", fontsize=7)
        else:
            ax.text(xi, 0.03, f"not reached\nin {epochs} epochs", ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="0.3", lw=0.8, ls=":")
    ax.axhline(tau, color="0.7", lw=0.8)
    ax.text(len(labels) - 0.5, tau, f"linear ({tau} threads)", fontsize=7, color="0.4", ha="right", va="bottom")
    ax.set_xticks(x, labels, fontsize=7)
    runs = int(top["runs"].min()) if "runs" in top and len(top) else 1
    highest = max([tau, *top.loc[hit, "speedup_max"].fillna(0)])
    ax.set(ylabel=f"speedup at {tau} threads", title=f"{name}: measured speedup at {tau} threads"
                                                    + (f"\n(median of {runs} seeds, error bars: their min-max)"
                                                       if runs > 1 else ""),
           ylim=(0, highest * 1.25))
    ax.title.set_fontsize(9)


def _median_D(part: pd.DataFrame) -> float:
    """A method's D as `speedups` gives it (the median over seeds), read at its 1-thread cells."""
    single = part[part["threads"] == 1]
    return float((single if len(single) else part)["D"].median())


def _speedup_panel(ax, table: pd.DataFrame) -> int:
    """Measured speedups and eq. 29 against threads; returns the threads drawn."""
    measured_max = int(table["threads"].max())
    drawn = min(MAX_THREADS_DRAWN, measured_max + 2)  # eq. 29 a little past what was measured, no further
    tau = np.arange(1, drawn + 1, dtype=float)
    highest = max([drawn + 0.5, *table.loc[reached(table), "speedup_max"].fillna(0) * 1.05])
    ax.set(xlim=(0.5, drawn + 0.5))
    strip = top_strip(ax, 0.0, highest, NOT_REACHED)
    # linear first and underneath: RB's eq. 29 curve (D >> R) lies on it and must stay visible
    ax.plot(tau, tau, color="0.75", lw=2.5, zorder=1, label="linear")
    for method in (SUBJECT, rcd_baseline()):
        part = table[table["method"] == method]
        if part.empty:
            continue
        label, color, marker = METHOD_STYLE[method]
        D = _median_D(part)
        omega = part["R"].iloc[0] if method == SUBJECT else D
        runs = int(part["runs"].max())  # seeds: D is their median
        ax.plot(tau, steady(eq29_speedup(tau, omega, D)), ":", color=color, lw=1.8, zorder=3,
                label=f"{label}: eq. 29 (omega={omega:g}, {'median ' if runs > 1 else ''}D={D:,.0f})")
        for variant, style, mfc in (("async", "-", color), ("sync", "--", "white")):
            pts = part[(part["variant"].isin([variant, "sequential"]))].sort_values("threads")
            if len(pts) <= 1:
                continue
            hit = pts[reached(pts)]
            # async filled, sync hollow: the two never share a marker
            ax.plot(hit["threads"], steady(hit["speedup"].to_numpy()), style, marker=marker, color=color, mfc=mfc,
                    ms=7, zorder=4, label=f"{label} measured ({variant})")
            _error_bars(ax, hit, hit["threads"].to_numpy(), color)
            missed = pts[~reached(pts)]
            if len(missed):  # never reached the target objective: no speedup, marked apart from the axis
                ax.plot(missed["threads"], [strip] * len(missed), ls="none", marker="x", color=color, ms=9, mew=2,
                        zorder=4, label=f"{label} ({variant}): target not reached")
    if measured_max < drawn:
        ax.axvspan(measured_max + 0.5, drawn + 0.5, color="0.92", zorder=0)
        ax.text(measured_max + 0.6, 0.3, f"> {measured_max} threads:\neq. 29 only,\nnot measured", fontsize=7,
                color="0.3")
    ax.set_xticks(np.arange(1, drawn + 1))
    return drawn


def plot_fig6(results: pd.DataFrame, out_base: Path, config: dict | None = None) -> list[Path]:
    ok = test_rows(results)
    rcd = ok[(ok["solver"] == "rcd")] if len(ok) and "solver" in ok else ok.iloc[0:0]
    datasets = list(dict.fromkeys(rcd["dataset"])) if len(rcd) else []
    expected = list((config or {}).get("datasets", {}) or [])
    fig, axes = new_figure(len(datasets), 2, width=5.2, height=3.8, legend_width=3.2, legend_at=1)
    for row, name in enumerate(datasets):
        ax = axes[row, 0]
        table = speedups(rcd[rcd["dataset"] == name])
        _speedup_panel(ax, table)
        ax.set(xlabel="threads", ylabel="speedup (time to objective)", title=f"{name}: parallel RCD speedup")
        ax.title.set_fontsize(9)
        legend_in(axes[row, 1], *ax.get_legend_handles_labels())  # beside the row: it covers no line
        _measured_bars(axes[row, 2], table, name, int(rcd[rcd["dataset"] == name]["epochs"].max()))
    if not datasets:
        empty_panel(axes[0, 0], "no RCD rows in these results")
    unavailable = list((config or {}).get("unavailable", []))
    return finish(fig, out_base, "Fig. 6: speedup of parallel randomized coordinate descent (RB vs RF)",
                  problems_note(results, expected, datasets, unavailable), unavailable_note(unavailable))
