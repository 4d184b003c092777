"""Figure 3: RB's train and test performance vs sigma, and its train time (and D) vs sigma.

One row of two panels per dataset. With several seeds, lines are means and the band is
the min-max spread. RB's best test point is boxed; the exact kernel's best test
performance is a black line when the results hold exact-kernel rows, otherwise the
panel says it is absent. Datasets the config listed but the CSV lacks are named on the
figure.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from rbrepro.data.atomic import atomic_path  # noqa: E402

METRIC_LABEL = {"accuracy": "accuracy (%)", "rel_error": "relative error"}


def _spread(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    return frame.groupby("sigma")[column].agg(["mean", "min", "max"]).sort_index()


def plot_fig3(results: pd.DataFrame, out_base: Path, expected_datasets: list[str] | None = None,
              title: str | None = None) -> list[Path]:
    """Draw Fig. 3 panels from a results frame; writes <out_base>.png and .pdf."""
    ok = results[(results.get("status") == "ok")] if "status" in results else results
    rb = ok[ok["method"] == "rb"] if len(ok) else ok
    datasets = list(dict.fromkeys(rb["dataset"])) if len(rb) else []
    missing = [d for d in (expected_datasets or []) if d not in datasets]
    n = max(1, len(datasets))
    fig, axes = plt.subplots(n, 2, figsize=(10, 3.2 * n), squeeze=False)
    for row, name in enumerate(datasets):
        sub = rb[rb["dataset"] == name]
        metric = sub["metric"].iloc[0]
        higher_better = metric == "accuracy"
        Rs = sorted(sub["R"].unique())
        ax_perf, ax_time = axes[row]
        for R in Rs:
            part = sub[sub["R"] == R]
            label_r = f" (R={R})" if len(Rs) > 1 else ""
            for col, style, label in (("train_metric", "--", "train"), ("test_metric", "-", "test")):
                s = _spread(part, col)
                ax_perf.plot(s.index, s["mean"], style, marker="o", ms=3, label=f"RB {label}{label_r}")
                if (s["max"] > s["min"]).any():
                    ax_perf.fill_between(s.index, s["min"], s["max"], alpha=0.2)
            t = _spread(part, "train_s")
            ax_time.plot(t.index, t["mean"], marker="o", ms=3, label=f"train time{label_r}")
        test = sub.groupby(["sigma", "R"])["test_metric"].mean()
        best_sigma, best_R = test.idxmax() if higher_better else test.idxmin()
        ax_perf.plot([best_sigma], [test.loc[(best_sigma, best_R)]], marker="s", ms=12, mfc="none", mec="red",
                     mew=1.5, ls="none", label=f"best test (sigma={best_sigma:g})")
        exact = ok[(ok["dataset"] == name) & (ok["method"] == "exact")] if len(ok) else ok
        if len(exact):
            best_exact = exact["test_metric"].max() if higher_better else exact["test_metric"].min()
            ax_perf.axhline(best_exact, color="black", lw=1.2, label="exact kernel (best test)")
        else:
            ax_perf.text(0.02, 0.04, "exact kernel: not in these results", transform=ax_perf.transAxes,
                         fontsize=7, color="0.35")
        n_seeds = sub["seed"].nunique()
        ax_perf.set_title(f"{name}: performance vs sigma ({n_seeds} seed{'s' if n_seeds > 1 else ''})", fontsize=9)
        ax_perf.set_xscale("log")
        ax_perf.set_xlabel("sigma (inverse kernel width)")
        ax_perf.set_ylabel(METRIC_LABEL.get(metric, metric))
        ax_perf.legend(fontsize=7)
        ax_time.set_xscale("log")
        ax_time.set_xlabel("sigma (inverse kernel width)")
        ax_time.set_ylabel("train time (s)")
        ax_time.set_title(f"{name}: train time and D vs sigma", fontsize=9)
        ax_D = ax_time.twinx()
        for R in Rs:
            d = _spread(sub[sub["R"] == R], "D")
            ax_D.plot(d.index, d["mean"], ":", color="gray", marker="x", ms=3)
        ax_D.set_yscale("log")
        ax_D.set_ylabel("D (dotted)", color="gray")
        ax_time.legend(fontsize=7, loc="upper left")
    if not datasets:
        axes[0, 0].text(0.5, 0.5, "no successful RB rows in the results", ha="center", transform=axes[0, 0].transAxes)
    notes = []
    if missing:
        notes.append(f"missing datasets (in the config, not in the results): {', '.join(missing)}")
    if "status" in results and (results["status"] != "ok").any():
        notes.append(f"{int((results['status'] != 'ok').sum())} failed cell(s) not shown")
    fig.suptitle(title or "Fig. 3: Random Binning, performance and train time vs sigma", fontsize=11)
    if notes:
        fig.text(0.5, 0.005, "; ".join(notes), ha="center", fontsize=8, color="darkred")
    fig.tight_layout(rect=(0, 0.02, 1, 0.97))
    out_base.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "pdf"):
        path = out_base.with_suffix(f".{ext}")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=130, format=ext)
        paths.append(path)
    plt.close(fig)
    return paths
