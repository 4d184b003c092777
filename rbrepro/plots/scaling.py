"""How cost grows with N and R (configs/scaling.yaml): log-log, each method's measured costs with
its fitted power law (rbrepro.sweep.growth), one column per sweep (over R at one N, over N at
one R) and one row per cost."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rbrepro.analysis.rows import test_rows
from rbrepro.drawing import empty_panel, finish, new_figure, plain_log_ticks, steady
from rbrepro.plots.common import problems_note
from rbrepro.sweep.growth import COSTS, exponents, medians


def fitted_line(fit, ends: np.ndarray) -> np.ndarray:
    """A fitted power law at the ends of its range: on log-log axes it is straight, so two points draw
    it exactly (a line of many nearly collinear points is simplified differently by the renderer when
    the fit's last bits differ), their values `steady`."""
    return steady(fit.predict(ends))


def plot_scaling(results: pd.DataFrame, out_base: Path, config: dict | None = None) -> list[Path]:
    ok = test_rows(results)
    fits = {(e.method, e.cost, e.against): e for e in exponents(ok)} if len(ok) else {}
    methods = sorted(set(ok["method"])) if len(ok) else []
    fig, axes = new_figure(len(COSTS), 2, width=5.0, height=3.0)
    for col, against in enumerate(("R", "N")):
        for row, cost in enumerate(COSTS):
            ax = axes[row, col]
            drawn = False
            for method in methods:
                picked = medians(ok[ok["method"] == method], against, cost)
                if picked is None or picked[1].empty:
                    continue
                at, med = picked
                line, = ax.plot(med.index, steady(med.to_numpy()), "o", ms=4)
                fit = fits.get((method, cost, against))
                label = method if fit is None else f"{method}: x^{fit.slope:.2f} [{fit.low:.2f}, {fit.high:.2f}]"
                if fit is not None:
                    ends = np.array([med.index.min(), med.index.max()], dtype=np.float64)
                    ax.plot(ends, fitted_line(fit, ends), "-", color=line.get_color(), lw=1.2)
                line.set_label(label)
                other = "N" if against == "R" else "R"
                ax.set_title(f"{COSTS[cost]} vs {against} ({other} = {at:,})", fontsize=9)
                drawn = True
            if drawn:
                ax.set(xscale="log", yscale="log", xlabel=against if against == "R" else "N (training rows)",
                       ylabel=COSTS[cost])
                plain_log_ticks(ax)
                ax.legend(fontsize=7)
            else:
                empty_panel(ax, f"no sweep over {against} with {COSTS[cost]} in these results")
    expected = list((config or {}).get("datasets", {}) or [])
    shown = sorted(set(ok["dataset"])) if len(ok) else []
    return finish(fig, out_base, "How cost grows: power laws fitted to time and memory (median over repeats)",
                  problems_note(results, expected, shown, list((config or {}).get("unavailable", []))))
