"""Figure 5: the methods compared at equal R, and the cost of reaching a target performance.

Per dataset: test performance vs R (exact kernel as a black line), train time vs R, the
train time each method needs to reach each target performance, and the memory it needs
(the paper's model, stored entries per training point). Targets come from the config
(per dataset) or default to three levels up to the performance every method reaches.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.transforms import blended_transform_factory

from rbrepro.plots.common import (
    METHOD_STYLE,
    METRIC_LABEL,
    empty_panel,
    exact_reference,
    finish,
    higher_is_better,
    ladder,
    line_with_spread,
    new_figure,
    problems_note,
    test_rows,
)


def rows_reaching(rows: pd.DataFrame, target: float, better_high: bool) -> pd.DataFrame:
    """Per R (mean over seeds), the rows whose test performance reaches `target` (shared with the tables)."""
    mean = rows.groupby("R")[["test_metric", "train_s", "memory_model_entries"]].mean()
    return mean[mean["test_metric"] >= target] if better_high else mean[mean["test_metric"] <= target]


def plot_fig5(results: pd.DataFrame, out_base: Path, config: dict | None = None) -> list[Path]:
    ok = test_rows(results)
    approx = ok[ok["method"] != "exact"] if len(ok) else ok
    datasets = list(dict.fromkeys(approx["dataset"])) if len(approx) else []
    cfg_sets = (config or {}).get("datasets", {}) or {}
    fig, axes = new_figure(len(datasets), 4, width=3.8)
    for row, name in enumerate(datasets):
        sub = approx[approx["dataset"] == name]
        metric, better_high = sub["metric"].iloc[0], higher_is_better(sub)
        methods = [m for m in METHOD_STYLE if m in set(sub["method"])]
        ax_perf, ax_time, ax_tt, ax_mem = axes[row]
        for m in methods:
            label, color, marker = METHOD_STYLE[m]
            part = sub[sub["method"] == m]
            sig = ", ".join(f"{s:g}" for s in sorted(part["sigma"].unique()))
            line_with_spread(ax_perf, part, "R", "test_metric", color=color, marker=marker, ms=4,
                             label=f"{label} (sigma {sig})")
            line_with_spread(ax_time, part, "R", "train_s", color=color, marker=marker, ms=4, label=label)
        value, note = exact_reference(results, name)
        if value is not None:
            ax_perf.axhline(value, color="black", lw=1.2, label=note)
        else:  # in the legend, where it cannot collide with the curves or the legend itself
            ax_perf.plot([], [], " ", label=note)
        targets = list(cfg_sets.get(name, {}).get("targets") or [])
        if not targets:
            per_method = [(g.groupby("R")["test_metric"].mean().agg(["min", "max"])) for _, g in sub.groupby("method")]
            pairs = [(s["min"], s["max"]) if better_high else (s["max"], s["min"]) for s in per_method]
            targets = ladder(np.array(pairs), better_high)
        width = 0.8 / max(1, len(methods))
        for k, m in enumerate(methods):
            label, color, _ = METHOD_STYLE[m]
            part = sub[sub["method"] == m]
            times, mems = [], []
            for t in targets:
                hit = rows_reaching(part, t, better_high)
                times.append(hit["train_s"].min() if len(hit) else np.nan)
                mems.append(hit["memory_model_entries"].min() if len(hit) else np.nan)
            xs = np.arange(len(targets)) + (k - (len(methods) - 1) / 2) * width
            ax_tt.bar(xs, times, width, color=color, label=label)
            ax_mem.bar(xs, mems, width, color=color, label=label)
            for ax in (ax_tt, ax_mem):  # x at the foot of the panel (a log axis has no 0)
                foot = blended_transform_factory(ax.transData, ax.transAxes)
                for x, t_val in zip(xs, times):
                    if np.isnan(t_val):
                        ax.text(x, 0.01, "x", transform=foot, ha="center", va="bottom", color=color, fontsize=10,
                                fontweight="bold")
        fmt = (lambda t: f"{t:.2f}%") if better_high else (lambda t: f"{t:.3f}")
        for ax, ylabel, title in ((ax_tt, "train time (s)", "time to reach target"),
                                  (ax_mem, "entries per training point", "memory to reach target")):
            ax.set_xticks(np.arange(len(targets)), [fmt(t) for t in targets], fontsize=7)
            ax.set(yscale="log", xlabel=f"target {METRIC_LABEL.get(metric, metric)} (x: not reached)",
                   ylabel=ylabel, title=f"{name}: {title}")
        ax_perf.set(xscale="log", xlabel="R", ylabel=f"test {METRIC_LABEL.get(metric, metric)}",
                    title=f"{name}: test performance vs R")
        ax_time.set(xscale="log", yscale="log", xlabel="R", ylabel="train time (s)", title=f"{name}: train time vs R")
        for ax in (ax_perf, ax_time, ax_tt, ax_mem):
            ax.title.set_fontsize(9)
        ax_perf.legend(fontsize=6)
        ax_tt.legend(fontsize=6)
    if not datasets:
        empty_panel(axes[0, 0], "no successful rows in these results")
        for ax in axes[0, 1:]:
            ax.axis("off")
    return finish(fig, out_base, "Fig. 5: RB, RF, Nystrom, block and exact at equal R; cost to reach a target",
                  problems_note(results, list(cfg_sets), datasets))
