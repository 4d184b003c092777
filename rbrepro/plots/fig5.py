"""Figure 5: the methods compared at equal R, and the cost of reaching a target performance.

Per dataset: test performance vs R (exact kernel as a black line), train time vs R, the
train time each method needs to reach each target performance, and the memory it needs
(the paper's model, stored entries per training point). Each (method, R) is drawn at the sigma
the protocol chose (`analysis.chosen.chosen_sigma_rows`, as the report reads it: the sweep's
selection, else the best median over seeds on test); a grey ring marks a choice at its grid's
edge. A line is the median over our seeds, its band their min-max; where the authors' draws were
replayed (RB as published), their draw is a star of its own, never inside our band. The authors'
published points are drawn beside ours, hollow. Targets come from the config (per dataset) or
default to three levels up to the performance every method reaches.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.transforms import blended_transform_factory

from rbrepro.analysis.chosen import chosen_sigma_rows, exact_reference
from rbrepro.analysis.rows import chosen_rows, edge_rows, higher_is_better, test_rows
from rbrepro.analysis.targets import at_fastest, cheapest, targets_for
from rbrepro.drawing import (
    METHOD_STYLE,
    empty_panel,
    finish,
    keep_in_view,
    new_figure,
    plain_log_ticks,
    steady,
    top_strip,
)
from rbrepro.models.registry import REFERENCE
from rbrepro.plots.common import (
    METRIC_LABEL,
    REPLAYED,
    line_with_spread,
    method_label,
    one_point_note,
    problems_note,
    published_points,
    replayed_points,
    split_draws,
    unavailable_note,
)

#: a cost panel spans at most this many decades down from its largest value; a smaller cost is drawn
#: at the panel's bottom edge, marked and with its value written
COST_DECADES = 4
#: what the strip above a cost panel's values holds
NOT_REACHED = "not\nreached"


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
    notes = []  # the exact kernel's absence and how sigma was read, per dataset: in the footer, off the panels
    for row, name in enumerate(datasets):
        rows = approx[approx["dataset"] == name]
        note = _dataset_row(axes[row], results, chosen_sigma_rows(rows), name,
                            cfg_sets.get(name, {}).get("targets") or [], drawn)
        notes += [f"{name}: {text}" for text in (note, sigma_note(rows)) if text]
        for ax in axes[row][:2]:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lab, h)
    if not datasets:
        empty_panel(axes[0, 0], "no successful rows in these results")
        for ax in axes[0, 1:]:
            ax.axis("off")
    # one legend for every panel, in a band under the title (it covers no data): each method's
    # own entries first, then the authors' published points, then their replayed draws, the rings
    # and the exact kernel's lines
    def group(lab: str) -> int:
        return 2 if lab.startswith(("sigma", "exact")) or lab.endswith(REPLAYED) else int(", published" in lab)

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


def sigma_note(rows: pd.DataFrame) -> str:
    """What sigma a dataset's rows are drawn at when the sweep chose none among several: the report's
    rule, said on the figure (a line over several sigmas would otherwise read as one setting)."""
    if chosen_rows(rows) is not rows or rows.groupby(["method", "R"])["sigma"].nunique().max() <= 1:
        return ""
    return "no sigma selection in the config: each (method, R) at the sigma with the best median over seeds on test"


def _dataset_row(axes, results: pd.DataFrame, sub: pd.DataFrame, name: str, configured: list, drawn: dict) -> str:
    """One dataset's four panels: performance and train time vs R, time and memory to reach each target.
    `sub` holds the rows at the chosen sigma; the costs to a target are our seeds' alone (claim 5's).
    Returns why the exact kernel's line is missing ("" when it is drawn)."""
    ours, _ = split_draws(sub)
    metric, better_high = sub["metric"].iloc[0], higher_is_better(sub)
    methods = [m for m in METHOD_STYLE if m in set(sub["method"])]
    ax_perf, ax_time, ax_tt, ax_mem = axes
    published = published_points(name, "fig5")
    _curves(ax_perf, ax_time, sub, methods, published, drawn)
    missing_exact = _exact_lines(ax_perf, results, name, published)
    targets = targets_for(ours if len(ours) else sub, configured, better_high)
    _costs_to_target(ax_tt, ax_mem, ours, methods, targets, better_high, published,
                     published_points(name, "fig5-memory"), drawn)
    label = METRIC_LABEL.get(metric, metric)
    fmt = (lambda t: f"{t:.2f}%") if better_high else (lambda t: f"{t:.3f}")
    for ax, ylabel, title in ((ax_tt, "train time (s)", "time to reach target"),
                              (ax_mem, "entries per training point", "memory at the R of that time")):
        ax.set_xticks(np.arange(len(targets)), [fmt(t) for t in targets], fontsize=7)
        ax.set_xlim(-0.6, len(targets) - 0.4)
        ax.set(xlabel=f"target {label}", ylabel=ylabel, title=f"{name}: {title}")
        ax.grid(axis="y", color="0.9", lw=0.6)
    ax_perf.set(xscale="log", xlabel="R", ylabel=f"test {label}", title=f"{name}: test performance vs R")
    ax_time.set(xscale="log", yscale="log", xlabel="R", ylabel="train time (s)", title=f"{name}: train time vs R")
    for ax in axes:
        ax.title.set_fontsize(9)
    plain_log_ticks(ax_time)
    for ax in (ax_perf, ax_time):
        one_point_note(ax, "R", sub["R"])
    return missing_exact


def _curves(ax_perf, ax_time, sub: pd.DataFrame, methods: list[str], published: pd.DataFrame, drawn: dict) -> None:
    """Each method's test performance and train time vs R: our seeds' median and band, the authors'
    replayed draw as a star of its own, a ring where sigma sat at its grid's edge, and the authors'
    published points beside them, hollow."""
    for m in methods:
        label, color, marker = METHOD_STYLE[m]
        ours, replayed = split_draws(sub[sub["method"] == m])
        name_k = method_label(sub[sub["method"] == m], m)
        if len(ours):
            line_with_spread(ax_perf, ours, "R", "test_metric", color=color, marker=marker, ms=4, label=name_k)
            line_with_spread(ax_time, ours, "R", "train_s", color=color, marker=marker, ms=4, label=name_k)
        replayed_points(ax_perf, replayed, "R", "test_metric", color, name_k)
        replayed_points(ax_time, replayed, "R", "train_s", color, name_k)
        edges = edge_rows(ours).groupby("R")["test_metric"].median()
        if len(edges):
            ax_perf.plot(edges.index, steady(edges.to_numpy()), ls="none", marker="o", ms=10, mfc="none", mec="0.45",
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
    and the authors', dashed; the panel's limits hold both, clear of its frame. Returns why there is
    no line ("" when there is one): the footer says it, text on the panel would sit on the curves."""
    value, note = exact_reference(results, name)
    lines = []
    if value is not None:
        lines.append(value)
        ax_perf.axhline(float(steady(value)), color="black", lw=1.2, label=note)
    pub_exact = published[published["method"] == REFERENCE]
    if len(pub_exact):
        lines.append(float(pub_exact["perf"].iloc[0]))
        ax_perf.axhline(lines[-1], color="black", lw=1.0, ls=(0, (4, 3)), label="exact kernel, published")
    keep_in_view(ax_perf, lines)
    return "" if value is not None else note


def _costs_to_target(ax_tt, ax_mem, sub: pd.DataFrame, methods: list[str], targets: list[float], better_high: bool,
                     published: pd.DataFrame, pub_memory: pd.DataFrame, drawn: dict) -> None:
    """Per target, each method's least train time among the R whose median reaches it and its memory at
    that same R (one R per point, as claim 5 reads them),
    points on a log axis, the authors' beside them, hollow. A method that reaches no target is an x
    in the strip above the values ("not reached"); a cost below the panel's floor sits on its bottom
    edge, a triangle with its value written."""
    step = 0.8 / max(1, len(methods))
    series = {ax_tt: [], ax_mem: []}  # per panel: (xs, values, style, ours) of every series, drawn once the limits are known
    for k, m in enumerate(methods):
        label, color, marker = METHOD_STYLE[m]
        part = sub[sub["method"] == m]
        xs = np.arange(len(targets)) + (k - (len(methods) - 1) / 2) * step
        ours = {"marker": marker, "color": color, "ms": 6, "label": method_label(part, m)}
        series[ax_tt].append((xs, cheapest(part, targets, better_high, "train_s"), ours, True))
        series[ax_mem].append((xs, at_fastest(part, targets, better_high, "memory_model_entries"), ours, True))
        pub = published[published["method"] == m].rename(columns={"perf": "test_metric"})
        pub_mem = pub_memory[pub_memory["method"] == m].rename(columns={"perf": "test_metric"})
        hollow = {"marker": marker, "color": color, "ms": 8, "mfc": "none", "mew": 1.0, "label": "_"}
        for ax, ref, column in ((ax_tt, pub, "train_s"), (ax_mem, pub_mem, "mem_est")):
            if len(ref):
                drawn["points"] = True
                drawn["times"] |= column == "train_s" and bool(ref[column].notna().any())
                series[ax].append((xs, cheapest(ref, targets, better_high, column), hollow, False))
    for ax, drawn_series in series.items():
        ax.set_yscale("log")
        _cost_panel(ax, drawn_series)


def _cost_panel(ax, series: list) -> None:
    """One cost panel on a log axis: values at most COST_DECADES below the largest drawn as they are,
    smaller ones on the bottom edge (a triangle, the value written), and where our seeds never reach
    a target (NaN) an x in the strip above the values (the authors' published points: none there)."""
    costs = steady([v for _, values, _, _ in series for v in values if np.isfinite(v) and v > 0])
    top = costs.max() if len(costs) else 1.0
    floor = max(costs.min(), top / 10 ** COST_DECADES) if len(costs) else top / 10
    decades = max(np.log10(top / floor), 0.5)
    below = 0.25 * decades if (costs < floor).any() else 0.0  # room under the floor for the marks and values
    strip = top_strip(ax, floor / 10 ** (0.08 * decades + below), top * 10 ** (0.08 * decades), NOT_REACHED)
    edge = blended_transform_factory(ax.transData, ax.transAxes)
    for xs, values, style, ours in series:
        values = steady(values)
        shown = np.where(values >= floor, values, np.nan)
        ax.plot(xs, shown, ls="none", zorder=3, **style)
        style = {k: v for k, v in style.items() if k not in ("marker", "label")}
        for x, v in zip(xs, values):
            if np.isnan(v) and ours:
                ax.plot([x], [strip], ls="none", marker="x", zorder=3, label="_not reached",
                        **{**style, "ms": 7, "mew": 2})
            elif v < floor:
                ax.plot([x], [0.0], ls="none", marker="v", transform=edge, clip_on=False, zorder=3,
                        label="_below the floor", **style)
                ax.text(x, 0.035, f"{v:.2g}", transform=edge, ha="center", va="bottom", fontsize=7,
                        color=style["color"], rotation=90)


def _protocol_text(results: pd.DataFrame) -> str:
    if "protocol" in results and results["protocol"].notna().any():
        return f" [{results['protocol'].dropna().iloc[0]} protocol]"
    return ""
