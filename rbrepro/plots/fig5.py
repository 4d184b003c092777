"""Figure 5: the methods compared at equal R, and the cost of reaching a target performance.

Per dataset: test performance vs R (exact kernel as a black line), train time vs R, the
train time each method needs to reach each target performance, and the memory it needs
(the paper's model, stored entries per training point). With sigma selection, each
(method, R) shows its chosen sigma; a grey ring marks a choice at its grid's edge. The
authors' published points are drawn beside ours, hollow. Targets come from the config
(per dataset) or default to three levels up to the performance every method reaches.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.transforms import blended_transform_factory

from rbrepro.analysis.rows import chosen_rows, edge_rows, exact_reference, higher_is_better, test_rows
from rbrepro.analysis.targets import cheapest, targets_for
from rbrepro.drawing import METHOD_STYLE, empty_panel, finish, new_figure, plain_log_ticks
from rbrepro.models.registry import REFERENCE
from rbrepro.plots.common import (
    METRIC_LABEL,
    line_with_spread,
    method_label,
    one_point_note,
    problems_note,
    published_points,
    unavailable_note,
)


def plot_fig5(results: pd.DataFrame, out_base: Path, config: dict | None = None) -> list[Path]:
    ok = test_rows(results)
    approx = ok[ok["method"] != REFERENCE] if len(ok) else ok
    datasets = list(dict.fromkeys(approx["dataset"])) if len(approx) else []
    config = config or {}
    cfg_sets = config.get("datasets", {}) or {}
    unavailable = list(config.get("unavailable", []))
    fig, axes = new_figure(len(datasets), 4, width=3.8, height=3.3)
    handles: dict = {}
    drawn = {"points": False, "times": False}  # what of the authors' published data the figure shows
    notes = []  # the exact kernel's absence, per dataset: in the footer, never on a panel's data
    for row, name in enumerate(datasets):
        note = _dataset_row(axes[row], results, chosen_rows(approx[approx["dataset"] == name]), name,
                            cfg_sets.get(name, {}).get("targets") or [], drawn)
        if note:
            notes.append(f"{name}: {note}")
        for ax in axes[row][:2]:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lab, h)
    if not datasets:
        empty_panel(axes[0, 0], "no successful rows in these results")
        for ax in axes[0, 1:]:
            ax.axis("off")
    # one legend for every panel, in a band under the title (it covers no data): each method's
    # own entries first, then the authors', then the rings and the exact kernel's lines
    def group(lab: str) -> int:
        return 2 if lab.startswith(("sigma", "exact")) else int(", published" in lab)

    order = sorted(handles, key=group)
    methods = sum(1 for lab in order if group(lab) == 0)
    protocol = _protocol_text(results)
    hollow = ("\n(hollow: the authors' published points; their train times are from their own machine and "
              "threads, not comparable with ours in seconds)" if drawn["times"] else
              " (hollow: the authors' published points)" if drawn["points"] else "")
    return finish(fig, out_base, f"Fig. 5: RB, RF, Nyström, block and exact at equal R; cost to reach a target{protocol}"
                                 + hollow,
                  problems_note(results, list(cfg_sets), datasets, unavailable),
                  "; ".join(filter(None, [*notes, unavailable_note(unavailable)])),
                  legend=([handles[lab] for lab in order], order), legend_cols=max(4, methods))


def _dataset_row(axes, results: pd.DataFrame, sub: pd.DataFrame, name: str, configured: list, drawn: dict) -> str:
    """One dataset's four panels: performance and train time vs R, time and memory to reach each target.
    Returns why the exact kernel's line is missing ("" when it is drawn)."""
    metric, better_high = sub["metric"].iloc[0], higher_is_better(sub)
    methods = [m for m in METHOD_STYLE if m in set(sub["method"])]
    ax_perf, ax_time, ax_tt, ax_mem = axes
    published = published_points(name, "fig5")
    _curves(ax_perf, ax_time, sub, methods, published, drawn)
    missing_exact = _exact_lines(ax_perf, results, name, published)
    targets = targets_for(sub, configured, better_high)
    _costs_to_target(ax_tt, ax_mem, sub, methods, targets, better_high, published,
                     published_points(name, "fig5-memory"), drawn)
    label = METRIC_LABEL.get(metric, metric)
    fmt = (lambda t: f"{t:.2f}%") if better_high else (lambda t: f"{t:.3f}")
    for ax, ylabel, title in ((ax_tt, "train time (s)", "time to reach target"),
                              (ax_mem, "entries per training point", "memory to reach target")):
        ax.set_xticks(np.arange(len(targets)), [fmt(t) for t in targets], fontsize=7)
        ax.set_xlim(-0.6, len(targets) - 0.4)
        ax.set(yscale="log", xlabel=f"target {label} (x: not reached)", ylabel=ylabel, title=f"{name}: {title}")
        ax.grid(axis="y", color="0.9", lw=0.6)
    ax_perf.set(xscale="log", xlabel="R", ylabel=f"test {label}", title=f"{name}: test performance vs R")
    ax_time.set(xscale="log", yscale="log", xlabel="R", ylabel="train time (s)", title=f"{name}: train time vs R")
    for ax in axes:
        ax.title.set_fontsize(9)
    for ax in (ax_time, ax_tt, ax_mem):
        plain_log_ticks(ax)
    for ax in (ax_perf, ax_time):
        one_point_note(ax, "R", sub["R"])
    return missing_exact


def _curves(ax_perf, ax_time, sub: pd.DataFrame, methods: list[str], published: pd.DataFrame, drawn: dict) -> None:
    """Each method's test performance and train time vs R (seed bands), a ring where sigma sat at its grid's
    edge, and the authors' published points beside them, hollow."""
    for m in methods:
        label, color, marker = METHOD_STYLE[m]
        part = sub[sub["method"] == m]
        name_k = method_label(part, m)
        line_with_spread(ax_perf, part, "R", "test_metric", color=color, marker=marker, ms=4, label=name_k)
        line_with_spread(ax_time, part, "R", "train_s", color=color, marker=marker, ms=4, label=name_k)
        edges = edge_rows(part).groupby("R")["test_metric"].mean()
        if len(edges):
            ax_perf.plot(edges.index, edges.values, ls="none", marker="o", ms=10, mfc="none", mec="0.45",
                         mew=0.8, label="sigma at its grid's edge")
        pub = published[published["method"] == m]
        if len(pub):
            drawn["points"] = True
            drawn["times"] |= bool(pub["train_s"].notna().any())  # (and below: only where drawn)
            ax_perf.plot(pub["R"], pub["perf"], ls="none", marker=marker, ms=6, mfc="none", mec=color, mew=1.0,
                         label=f"{label}, published")
            ax_time.plot(pub["R"], pub["train_s"], ls="none", marker=marker, ms=6, mfc="none", mec=color, mew=1.0,
                         label=f"{label}, published")


def _exact_lines(ax_perf, results: pd.DataFrame, name: str, published: pd.DataFrame) -> str:
    """The exact kernel's performance as a black line, named in the legend (how its sigma was chosen),
    and the authors', dashed. Returns why there is no line ("" when there is one): the footer says it,
    text on the panel would sit on the curves."""
    value, note = exact_reference(results, name)
    if value is not None:
        ax_perf.axhline(value, color="black", lw=1.2, label=note)
    pub_exact = published[published["method"] == REFERENCE]
    if len(pub_exact):
        ax_perf.axhline(float(pub_exact["perf"].iloc[0]), color="black", lw=1.0, ls=(0, (4, 3)),
                        label="exact kernel, published")
    return "" if value is not None else note


def _costs_to_target(ax_tt, ax_mem, sub: pd.DataFrame, methods: list[str], targets: list[float], better_high: bool,
                     published: pd.DataFrame, pub_memory: pd.DataFrame, drawn: dict) -> None:
    """Per target, each method's least train time and memory among the R that reach it (x: none does),
    points on a log axis, the authors' beside them, hollow."""
    step = 0.8 / max(1, len(methods))
    for k, m in enumerate(methods):
        label, color, marker = METHOD_STYLE[m]
        part = sub[sub["method"] == m]
        times = cheapest(part, targets, better_high, "train_s")
        mems = cheapest(part, targets, better_high, "memory_model_entries")
        xs = np.arange(len(targets)) + (k - (len(methods) - 1) / 2) * step
        for ax, values in ((ax_tt, times), (ax_mem, mems)):
            # points on a log axis (bars there would start at an arbitrary floor), x: not reached
            ax.plot(xs, values, ls="none", marker=marker, color=color, ms=6, label=method_label(part, m))
            foot = blended_transform_factory(ax.transData, ax.transAxes)
            for x, v in zip(xs, values):
                if np.isnan(v):
                    ax.text(x, 0.01, "x", transform=foot, ha="center", va="bottom", color=color, fontsize=10,
                            fontweight="bold")
        pub = published[published["method"] == m].rename(columns={"perf": "test_metric"})
        pub_mem = pub_memory[pub_memory["method"] == m].rename(columns={"perf": "test_metric"})
        for ax, ref, column in ((ax_tt, pub, "train_s"), (ax_mem, pub_mem, "mem_est")):
            if len(ref):
                drawn["points"] = True
                drawn["times"] |= column == "train_s" and bool(ref[column].notna().any())
                ax.plot(xs, cheapest(ref, targets, better_high, column), ls="none", marker=marker, ms=8,
                        mfc="none", mec=color, mew=1.0)


def _protocol_text(results: pd.DataFrame) -> str:
    if "protocol" in results and results["protocol"].notna().any():
        return f" [{results['protocol'].dropna().iloc[0]} protocol]"
    return ""
