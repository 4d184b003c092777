"""Figure 3: RB's train and test performance vs sigma (the exact kernel's line, RB's chosen
point boxed), and train time and D vs sigma; one row per dataset. Where the authors published
this panel (R = 64, 128, 256), their test points and exact line are drawn beside ours, hollow."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rbrepro.analysis.rows import chosen_rows, exact_reference, higher_is_better, test_rows
from rbrepro.drawing import empty_panel, finish, new_figure
from rbrepro.models.registry import REFERENCE, SUBJECT
from rbrepro.plots.common import METRIC_LABEL, line_with_spread, problems_note, published_points, unavailable_note


def _boxed_point(sub: pd.DataFrame, better_high: bool) -> tuple[float, float, str]:
    """(sigma, test value, label) of the point to box: the sweep's chosen sigma, else the best test."""
    picked = chosen_rows(sub)
    if picked is not sub:
        on = picked["selected_on"].iloc[0] if "selected_on" in picked else "validation"
        sigma = float(picked["sigma"].iloc[0])
        return sigma, float(picked["test_metric"].mean()), f"chosen on {on}: sigma={sigma:g}"
    test = sub.groupby("sigma")["test_metric"].mean()
    sigma = test.idxmax() if better_high else test.idxmin()
    return float(sigma), float(test.loc[sigma]), f"best test: sigma={sigma:g}"


def plot_fig3(results: pd.DataFrame, out_base: Path, config: dict | None = None) -> list[Path]:
    ok = test_rows(results)
    rb = ok[ok["method"] == SUBJECT] if len(ok) else ok
    datasets = list(dict.fromkeys(rb["dataset"])) if len(rb) else []
    config = config or {}
    expected = list(config.get("datasets", {}) or [])
    unavailable = list(config.get("unavailable", []))
    fig, axes = new_figure(len(datasets), 2, width=5.0, height=3.4)
    for row, name in enumerate(datasets):
        sub = rb[rb["dataset"] == name]
        metric, better_high = sub["metric"].iloc[0], higher_is_better(sub)
        ax_perf, ax_time = axes[row]
        Rs = sorted(sub["R"].unique())
        published = published_points(name, "fig3")
        for R in Rs:
            part = sub[sub["R"] == R]
            tag = f" (R={R})" if len(Rs) > 1 else ""
            train = line_with_spread(ax_perf, part, "sigma", "train_metric", ls="--", marker="o", ms=3, color="tab:blue",
                                     label=f"RB train{tag}")
            line_with_spread(ax_perf, part, "sigma", "test_metric", ls="-", marker="o", ms=3, color="tab:orange",
                             label=f"RB test{tag}")
            line_with_spread(ax_time, part, "sigma", "train_s", marker="o", ms=3, color="tab:green",
                             label=f"train time{tag}")
            for split, color in (("train", "tab:blue"), ("test", "tab:orange")):
                pub = published[(published["method"] == SUBJECT) & (published["R"] == R) & (published["split"] == split)]
                pub = pub[(pub["sigma"] >= train.index.min() * 0.99) & (pub["sigma"] <= train.index.max() * 1.01)]
                if len(pub):
                    ax_perf.plot(pub["sigma"], pub["perf"], ls="none", marker="o", ms=6, mfc="none", mec=color,
                                 mew=1.0, label=f"RB {split}, published (R={R})")
        sigma, value, label = _boxed_point(sub[sub["R"] == Rs[0]], better_high)
        ax_perf.plot([sigma], [value], marker="s", ms=12, mfc="none", mec="red", mew=1.5, ls="none", label=label)
        value, label = exact_reference(results, name)
        if value is not None:
            ax_perf.axhline(value, color="black", lw=1.2, label=label)
        else:
            ax_perf.plot([], [], " ", label=label)
        pub_exact = published[published["method"] == REFERENCE]
        if len(pub_exact):
            ax_perf.axhline(float(pub_exact["perf"].iloc[0]), color="black", lw=1.0, ls=(0, (4, 3)),
                            label="exact kernel, published")
        n_seeds = sub["seed"].nunique()
        R_text = f"R={Rs[0]}" if len(Rs) == 1 else "R=" + ",".join(str(r) for r in Rs)
        ax_perf.set(xscale="log", xlabel="sigma (inverse kernel width)", ylabel=METRIC_LABEL.get(metric, metric),
                    title=f"{name}: performance vs sigma, {R_text} ({n_seeds} seed{'s' if n_seeds > 1 else ''})")
        ax_perf.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
        ax_time.set(xscale="log", xlabel="sigma (inverse kernel width)", ylabel="train time (s)",
                    title=f"{name}: train time (solid) and D (dotted) vs sigma")
        ax_D = ax_time.twinx()
        for R in Rs:
            d = sub[sub["R"] == R].groupby("sigma")["D"].mean()
            ax_D.plot(d.index, d.values, ":", color="gray", marker="x", ms=3)
        ax_D.set_yscale("log")
        ax_D.set_ylabel("D", color="gray")
        for ax in (ax_perf, ax_time):
            ax.title.set_fontsize(9)
    if not datasets:
        empty_panel(axes[0, 0], "no successful RB rows in these results")
        axes[0, 1].axis("off")
    return finish(fig, out_base, "Fig. 3: Random Binning, performance and train time vs sigma "
                                 "(hollow: the authors' published points)",
                  problems_note(results, expected, datasets, unavailable), unavailable_note(unavailable))

