"""Figure 3: RB's train and test performance vs sigma (exact kernel's best test as a black
line, RB's best test point boxed), and train time and D vs sigma; one row per dataset."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rbrepro.plots.common import (
    METRIC_LABEL,
    empty_panel,
    exact_reference,
    finish,
    higher_is_better,
    line_with_spread,
    new_figure,
    problems_note,
    test_rows,
)


def plot_fig3(results: pd.DataFrame, out_base: Path, config: dict | None = None) -> list[Path]:
    ok = test_rows(results)
    rb = ok[ok["method"] == "rb"] if len(ok) else ok
    datasets = list(dict.fromkeys(rb["dataset"])) if len(rb) else []
    expected = list((config or {}).get("datasets", {}) or [])
    fig, axes = new_figure(len(datasets), 2, width=5.0)
    for row, name in enumerate(datasets):
        sub = rb[rb["dataset"] == name]
        metric, better_high = sub["metric"].iloc[0], higher_is_better(sub)
        ax_perf, ax_time = axes[row]
        Rs = sorted(sub["R"].unique())
        for R in Rs:
            part = sub[sub["R"] == R]
            tag = f" (R={R})" if len(Rs) > 1 else ""
            line_with_spread(ax_perf, part, "sigma", "train_metric", ls="--", marker="o", ms=3, label=f"RB train{tag}")
            line_with_spread(ax_perf, part, "sigma", "test_metric", ls="-", marker="o", ms=3, label=f"RB test{tag}")
            line_with_spread(ax_time, part, "sigma", "train_s", marker="o", ms=3, label=f"train time{tag}")
        test = sub.groupby(["sigma", "R"])["test_metric"].mean()
        best_sigma, best_R = test.idxmax() if better_high else test.idxmin()
        ax_perf.plot([best_sigma], [test.loc[(best_sigma, best_R)]], marker="s", ms=12, mfc="none", mec="red",
                     mew=1.5, ls="none", label=f"best test: sigma={best_sigma:g}")
        value, label = exact_reference(results, name)
        if value is not None:
            ax_perf.axhline(value, color="black", lw=1.2, label=label)
        else:
            ax_perf.text(0.02, 0.04, label, transform=ax_perf.transAxes, fontsize=7, color="0.3")
        n_seeds = sub["seed"].nunique()
        ax_perf.set(xscale="log", xlabel="sigma (inverse kernel width)", ylabel=METRIC_LABEL.get(metric, metric),
                    title=f"{name}: performance vs sigma ({n_seeds} seed{'s' if n_seeds > 1 else ''})")
        ax_perf.legend(fontsize=7)
        ax_time.set(xscale="log", xlabel="sigma (inverse kernel width)", ylabel="train time (s)",
                    title=f"{name}: train time and D vs sigma")
        ax_D = ax_time.twinx()
        for R in Rs:
            d = sub[sub["R"] == R].groupby("sigma")["D"].mean()
            ax_D.plot(d.index, d.values, ":", color="gray", marker="x", ms=3)
        ax_D.set_yscale("log")
        ax_D.set_ylabel("D (dotted)", color="gray")
        ax_time.legend(fontsize=7, loc="upper left")
        for ax in (ax_perf, ax_time):
            ax.title.set_fontsize(9)
    if not datasets:
        empty_panel(axes[0, 0], "no successful RB rows in these results")
        axes[0, 1].axis("off")
    return finish(fig, out_base, "Fig. 3: Random Binning, performance and train time vs sigma",
                  problems_note(results, expected, datasets))
