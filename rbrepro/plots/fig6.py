"""Figure 6: speedup of parallel L1 RCD vs threads, RB and RF, with the eq. 29 curve.

Speedup = time(1 thread) / time(tau threads) to reach F <= F* + eps (F(0) - F*), eps = 1e-3,
F* the best objective of the single-thread run(s) of the same seed, read from each cell's objective trace;
with several seeds (repeats) each time and speedup is the median over them.
The eq. 29 curve tau / (1 + (omega - 1)(tau - 1)/(D - 1)) (omega = non-zeros per row: R for
RB, D for RF) is drawn up to 8 threads; thread counts never measured are marked so.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rbrepro.analysis.rows import test_rows
from rbrepro.analysis.speedups import eq29_speedup, speedups
from rbrepro.drawing import METHOD_STYLE, empty_panel, finish, legend_in, new_figure
from rbrepro.models.registry import RCD_BASELINE, SUBJECT
from rbrepro.plots.common import problems_note, unavailable_note

MAX_THREADS_DRAWN = 8


def _measured_bars(ax, table: pd.DataFrame, name: str, epochs: int) -> None:
    """The measured speedups at the most threads run, one bar per method and variant, labelled."""
    tau = int(table["threads"].max())
    top = table[table["threads"] == tau].sort_values(["method", "variant"])
    labels, heights, colors = [], [], []
    for r in top.itertuples():
        labels.append(f"{METHOD_STYLE[r.method][0]}\n{r.variant}")
        heights.append(r.speedup)
        colors.append(METHOD_STYLE[r.method][1])
    x = np.arange(len(labels))
    ax.bar(x, heights, color=colors, alpha=0.85)
    for xi, h in zip(x, heights):
        ax.text(xi, max(h, 0) + 0.03, f"x{h:.2f}" if h > 0 else f"not reached\nin {epochs} epochs",
                ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="0.3", lw=0.8, ls=":")
    ax.axhline(tau, color="0.7", lw=0.8)
    ax.text(len(labels) - 0.5, tau, f"linear ({tau} threads)", fontsize=7, color="0.4", ha="right", va="bottom")
    ax.set_xticks(x, labels, fontsize=7)
    runs = int(top["runs"].min()) if "runs" in top and len(top) else 1
    ax.set(ylabel=f"speedup at {tau} threads", title=f"{name}: measured speedup at {tau} threads"
                                                    + (f" (median of {runs} runs)" if runs > 1 else ""),
           ylim=(0, max(tau, max(heights, default=1)) * 1.25))
    ax.title.set_fontsize(9)


def plot_fig6(results: pd.DataFrame, out_base: Path, config: dict | None = None) -> list[Path]:
    ok = test_rows(results)
    rcd = ok[(ok["solver"] == "rcd")] if len(ok) and "solver" in ok else ok.iloc[0:0]
    datasets = list(dict.fromkeys(rcd["dataset"])) if len(rcd) else []
    expected = list((config or {}).get("datasets", {}) or [])
    fig, axes = new_figure(len(datasets), 2, width=5.2, height=3.8, legend_width=2.8, legend_at=1)
    for row, name in enumerate(datasets):
        ax = axes[row, 0]
        table = speedups(rcd[rcd["dataset"] == name])
        measured_max = int(table["threads"].max())
        drawn = min(MAX_THREADS_DRAWN, measured_max + 2)  # eq. 29 a little past what was measured, no further
        tau = np.arange(1, drawn + 1, dtype=float)
        # linear first and underneath: RB's eq. 29 curve (D >> R) lies on it and must stay visible
        ax.plot(tau, tau, color="0.75", lw=2.5, zorder=1, label="linear")
        for method in (SUBJECT, RCD_BASELINE):
            part = table[table["method"] == method]
            if part.empty:
                continue
            label, color, marker = METHOD_STYLE[method]
            omega = part["R"].iloc[0] if method == SUBJECT else part["D"].iloc[0]
            ax.plot(tau, eq29_speedup(tau, omega, part["D"].iloc[0]), ":", color=color, lw=1.8, zorder=3,
                    label=f"{label}: eq. 29 (omega={omega:g}, D={part['D'].iloc[0]:.0f})")
            for variant, style, mfc in (("async", "-", color), ("sync", "--", "white")):
                pts = part[(part["variant"].isin([variant, "sequential"]))].sort_values("threads")
                if len(pts) > 1:  # async filled, sync hollow: the two never share a marker
                    ax.plot(pts["threads"], pts["speedup"], style, marker=marker, color=color, mfc=mfc, ms=7,
                            label=f"{label} measured ({variant})")
                    missed = pts[pts["speedup"] <= 0]
                    if len(missed):  # never reached the target objective: drawn as an x on the axis
                        ax.plot(missed["threads"], missed["speedup"], "x", color=color, ms=9, mew=2, clip_on=False)
        if measured_max < drawn:
            ax.axvspan(measured_max + 0.5, drawn + 0.5, color="0.92")
            ax.text(measured_max + 0.6, 0.3, f"> {measured_max} threads:\neq. 29 only,\nnot measured", fontsize=7,
                    color="0.3")
        ax.set(xlabel="threads", ylabel="speedup (time to objective)", title=f"{name}: parallel RCD speedup",
               xlim=(0.5, drawn + 0.5), ylim=(0, drawn + 0.5))
        ax.set_xticks(np.arange(1, drawn + 1))
        ax.title.set_fontsize(9)
        legend_in(axes[row, 1], *ax.get_legend_handles_labels())  # beside the row: it covers no line
        _measured_bars(axes[row, 2], table, name, int(rcd[rcd["dataset"] == name]["epochs"].max()))
    if not datasets:
        empty_panel(axes[0, 0], "no RCD rows in these results")
    unavailable = list((config or {}).get("unavailable", []))
    return finish(fig, out_base, "Fig. 6: speedup of parallel randomized coordinate descent (RB vs RF)",
                  problems_note(results, expected, datasets, unavailable), unavailable_note(unavailable))
