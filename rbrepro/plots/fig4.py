"""Figure 4: RB's train and test performance vs R and vs D at a fixed sigma (one row per dataset),
one legend for every panel above them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rbrepro.analysis.chosen import exact_reference
from rbrepro.analysis.rows import test_rows
from rbrepro.drawing import empty_panel, finish, keep_in_view, new_figure, steady
from rbrepro.models.registry import SUBJECT
from rbrepro.plots.common import METRIC_LABEL, line_with_spread, one_point_note, problems_note, unavailable_note


def plot_fig4(results: pd.DataFrame, out_base: Path, config: dict | None = None) -> list[Path]:
    ok = test_rows(results)
    rb = ok[ok["method"] == SUBJECT] if len(ok) else ok
    datasets = list(dict.fromkeys(rb["dataset"])) if len(rb) else []
    expected = list((config or {}).get("datasets", {}) or [])
    fig, axes = new_figure(len(datasets), 2)
    handles: dict = {}  # one legend for every panel, in a band under the title: it covers no data
    for row, name in enumerate(datasets):
        sub = rb[rb["dataset"] == name]
        metric = sub["metric"].iloc[0]
        sigmas = sorted(sub["sigma"].unique())
        value, label = exact_reference(results, name)
        for ax, x, xlabel in ((axes[row, 0], "R", "R (grids)"), (axes[row, 1], "D", "D (columns)")):
            for sigma in sigmas:
                part = sub[sub["sigma"] == sigma]
                tag = f" (sigma={sigma:g})" if len(sigmas) > 1 else ""
                if x == "D":  # D varies with the seed: each R at its median D, the seeds' band kept
                    part = part.assign(D=steady(part.groupby("R")["D"].transform("median").to_numpy()))
                line_with_spread(ax, part, x, "train_metric", ls="--", marker="o", ms=3, label=f"train{tag}")
                color = ax.get_lines()[-1].get_color()  # train and test of one sigma share a colour
                line_with_spread(ax, part, x, "test_metric", ls="-", marker="s", ms=3, color=color, label=f"test{tag}")
            if value is not None:
                ax.axhline(float(steady(value)), color="black", lw=1.2, label=label)
                keep_in_view(ax, [value])
            ax.set(xscale="log", xlabel=xlabel, ylabel=METRIC_LABEL.get(metric, metric),
                   title=f"{name}: performance vs {x} (sigma={', '.join(f'{s:g}' for s in sigmas)})")
            ax.title.set_fontsize(9)
            one_point_note(ax, "R", sub["R"])
            for h, lab in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lab, h)
    if not datasets:
        empty_panel(axes[0, 0], "no successful RB rows in these results")
        axes[0, 1].axis("off")
    unavailable = list((config or {}).get("unavailable", []))
    return finish(fig, out_base, "Fig. 4: Random Binning, performance vs R and D at fixed sigma",
                  problems_note(results, expected, datasets, unavailable), unavailable_note(unavailable),
                  legend=(list(handles.values()), list(handles)))
