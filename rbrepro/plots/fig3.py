"""Figure 3: RB's train and test performance vs sigma (the exact kernel's line, RB's chosen
point ringed), and train time and D vs sigma; one row per dataset, its legend beside it. The lines
are the median over our seeds with their min-max band; where the authors' draws were replayed (RB
as published) those are stars of their own. The ring marks the sigma claims 1 and 2 read
(`analysis.chosen.chosen_sigma_rows` at the dataset's most-run R); the time panel marks it too, with
the cheapest sigma claim 2 compares it with and the cheapest at equal CG iterations (claim 2b). Where the authors published
this panel (R = 64, 128, 256), their points and exact line are drawn beside ours, hollow. A sweep
that ran only the chosen sigma on test (`run: chosen`) shows the validation scores the choice was
made on as the curve."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from rbrepro.analysis.chosen import chosen_sigma_rows, draws_of, exact_reference, most_run_R
from rbrepro.analysis.rows import chosen_rows, test_rows, validation_rows
from rbrepro.analysis.sigma_cost import cheapest_sigma, time_and_iterations
from rbrepro.drawing import empty_panel, finish, keep_in_view, legend_in, new_figure, steady
from rbrepro.metrics import seed_statistic
from rbrepro.models.registry import REFERENCE, SUBJECT
from rbrepro.plots.common import (
    METRIC_LABEL,
    REPLAYED,
    REPLAYED_MARKER,
    line_with_spread,
    problems_note,
    published_points,
    replayed_points,
    split_draws,
    unavailable_note,
)


def ringed_R(sub: pd.DataFrame) -> int:
    """The R whose chosen sigma is ringed: the one claims 1 and 2 read (`analysis.chosen.most_run_R`)."""
    return most_run_R(sub)


def ringed_point(sub: pd.DataFrame) -> tuple[float, float, str] | None:
    """(sigma, test value, label) of the point to ring, from one dataset's RB test rows at one R: the
    sigma the protocol chose (`chosen_sigma_rows`: the sweep's selection, else the best median on test;
    the authors' replayed draws pick where they ran), at our seeds' median there (the authors' draw
    where no seed of ours ran it). None where no sigma can be chosen (no finite score)."""
    chosen = chosen_sigma_rows(sub)
    if chosen.empty:
        return None
    sigma = float(chosen["sigma"].iloc[0])
    ours, replayed = split_draws(chosen)
    value = seed_statistic((ours if len(ours) else replayed)["test_metric"])
    if chosen_rows(sub) is not sub:
        on = chosen["selected_on"].dropna().iloc[0] if "selected_on" in chosen and chosen["selected_on"].notna().any() \
            else "validation"
        return sigma, value, f"chosen on {on}: sigma={sigma:g}"
    return sigma, value, f"best median on test: sigma={sigma:g}"


def plot_fig3(results: pd.DataFrame, out_base: Path, config: dict | None = None) -> list[Path]:
    ok = test_rows(results)
    rb = ok[ok["method"] == SUBJECT] if len(ok) else ok
    valid = validation_rows(results)
    valid = valid[valid["method"] == SUBJECT] if len(valid) else valid
    datasets = list(dict.fromkeys(rb["dataset"])) if len(rb) else []
    config = config or {}
    expected = list(config.get("datasets", {}) or [])
    unavailable = list(config.get("unavailable", []))
    fig, axes = new_figure(len(datasets), 2, width=5.0, height=3.4, legend_width=3.2)
    hollow = False  # whether any of the authors' points is drawn (the title says so only then)
    for row, name in enumerate(datasets):
        sub = rb[rb["dataset"] == name]
        hollow |= _dataset_row(axes[row], results, sub, valid[valid["dataset"] == name] if len(valid) else valid, name)
    if not datasets:
        empty_panel(axes[0, 0], "no successful RB rows in these results")
        axes[0, 1].axis("off")
    title = "Fig. 3: Random Binning, performance and train time vs sigma"
    return finish(fig, out_base, title + (" (hollow: the authors' published points)" if hollow else ""),
                  problems_note(results, expected, datasets, unavailable), unavailable_note(unavailable))


#: one R: a colour per split (and the train time's own); several R: a colour per R, a line style per split
SPLIT_COLOUR = {"train": "tab:blue", "test": "tab:orange", "validation": "tab:purple", "time": "tab:green"}
R_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan")
SPLIT_STYLE = {"train": {"ls": "--", "marker": "s"}, "test": {"ls": "-", "marker": "o"},
               "validation": {"ls": ":", "marker": "^"}}


def _dataset_row(axes, results: pd.DataFrame, sub: pd.DataFrame, valid: pd.DataFrame, name: str) -> bool:
    """One dataset: performance and train time (with D) vs sigma, the row's legend beside them.
    Where only the chosen sigma ran on test (`run: chosen`), the validation scores it was chosen
    on are the curve, dotted. With several R a colour tells the R and the legend names each colour
    and each line style once. True when the authors' published points were drawn."""
    ax_perf, ax_time, slot = axes
    Rs = sorted(sub["R"].unique())
    published = published_points(name, "fig3")
    ax_D = ax_time.twinx()
    drawn = {"hollow": False, "lone": True, "validated": False}
    for i, R in enumerate(Rs):
        _one_R(ax_perf, ax_time, ax_D, sub[sub["R"] == R], valid, published, i, len(Rs) > 1, drawn)
    if len(Rs) > 1:
        _name_colours_and_styles(ax_perf, Rs, drawn, (draws_of(sub) == "authors").any())
    sigma = _ring(ax_perf, sub, len(Rs) > 1)
    _claim2_marks(ax_time, sub, sigma)
    _exact_lines(ax_perf, results, name, published)
    if drawn["lone"]:
        ax_perf.plot([], [], " ", label=ONE_SIGMA_NOTE if drawn["validated"] else
                     "one point per R: each ran one sigma\n(a curve needs several)" if len(Rs) > 1 else
                     f"one point: sigma = {sigma:g}, the only\nsigma run (a curve needs several)")
    _titles(ax_perf, ax_time, ax_D, sub, name, Rs)
    handles, labels = [], []
    for ax in (ax_perf, ax_time, ax_D):
        h, lab = ax.get_legend_handles_labels()
        handles += h
        labels += lab
    legend_in(slot, handles, labels)
    return drawn["hollow"]


def _one_R(ax_perf, ax_time, ax_D, part: pd.DataFrame, valid: pd.DataFrame, published: pd.DataFrame, i: int,
           several: bool, drawn: dict) -> None:
    """One R's curves: train and test performance and train time vs sigma (our seeds' median and band),
    the authors' replayed draw as its own points, D, and the authors' published points."""
    R = part["R"].iloc[0]

    def look(split: str, ax_label: str) -> dict:
        """Colour and label of one split's line (several R: the proxies name them)."""
        colour = R_COLOURS[i % len(R_COLOURS)] if several else SPLIT_COLOUR[split]
        return {"color": colour, "label": "_" if several else ax_label}

    part, replayed = split_draws(part)
    if part.empty:  # the authors' draws alone: they are the curve
        part, replayed = replayed, replayed.iloc[:0]
    curve = part
    if part["sigma"].nunique() == 1:
        v = valid[valid["R"] == R] if len(valid) else valid
        if len(v) and v["sigma"].nunique() > 1:
            curve, drawn["validated"] = v, True
            line_with_spread(ax_perf, v, "sigma", "test_metric", ms=3, **SPLIT_STYLE["validation"],
                             **look("validation", "RB validation"))
            line_with_spread(ax_time, v, "sigma", "train_s", ms=3, **SPLIT_STYLE["validation"],
                             **look("time", "train time, validation fits"))
    else:
        drawn["lone"] = False
    train = line_with_spread(ax_perf, part, "sigma", "train_metric", ms=3, **SPLIT_STYLE["train"],
                             **look("train", "RB train"))
    line_with_spread(ax_perf, part, "sigma", "test_metric", ms=3, **SPLIT_STYLE["test"], **look("test", "RB test"))
    line_with_spread(ax_time, part, "sigma", "train_s", ms=3, **SPLIT_STYLE["test"], **look("time", "train time"))
    for split in ("train", "test"):
        replayed_points(ax_perf, replayed, "sigma", f"{split}_metric", look(split, "")["color"],
                        "_" if several else f"RB {split}", ms=6)
    d = curve.groupby("sigma")["D"].median()
    ax_D.plot(d.index, steady(d.to_numpy()), ":", color="gray", marker="x", ms=3,
              label="D (right axis)" if i == 0 else "_")
    for split in ("train", "test"):
        pub = published[(published["method"] == SUBJECT) & (published["R"] == R) & (published["split"] == split)]
        pub = pub[(pub["sigma"] >= train.index.min() * 0.99) & (pub["sigma"] <= train.index.max() * 1.01)]
        if len(pub):
            drawn["hollow"] = True
            ax_perf.plot(pub["sigma"], pub["perf"], ls="none", marker="o", ms=6, mfc="none",
                         mec=look(split, "")["color"], mew=1.0, label="_" if several else f"RB {split}, published")


def _name_colours_and_styles(ax_perf, Rs: list, drawn: dict, replayed: bool) -> None:
    """Several R: legend proxies naming each R's colour and each split's line style once."""
    for i, R in enumerate(Rs):
        ax_perf.plot([], [], color=R_COLOURS[i % len(R_COLOURS)], lw=2, label=f"R={R}")
    for split in ("train", "test", "validation")[:3 if drawn["validated"] else 2]:
        ax_perf.plot([], [], color="0.3", ms=3, **SPLIT_STYLE[split], label=f"RB {split}")
    if drawn["hollow"]:
        ax_perf.plot([], [], ls="none", marker="o", ms=6, mfc="none", mec="0.3", label="published (hollow)")
    if replayed:
        ax_perf.plot([], [], ls="none", marker=REPLAYED_MARKER, ms=6, color="0.5", mec="black", mew=0.4,
                     label="RB" + REPLAYED)


def _ring(ax_perf, sub: pd.DataFrame, several: bool) -> float:
    """The red ring on the sigma claims 1 and 2 read (at the R they read); returns that sigma."""
    at = ringed_R(sub)
    ring = ringed_point(sub[sub["R"] == at])
    if ring is None:
        return float(sub["sigma"].iloc[0])
    sigma, value, label = ring
    # a ring wider than the point and under it: the point it marks stays visible
    ax_perf.plot([sigma], steady([value]), marker="o", ms=14, mfc="none", mec="red", mew=1.3, ls="none",
                 zorder=1.5, label=label + (f" (R={at})" if several else ""))
    return sigma


def _claim2_marks(ax_time, sub: pd.DataFrame, chosen: float) -> None:
    """On the time panel, the sigma claim 2 reads (`analysis.sigma_cost`, at the ringed R, our seeds):
    the chosen one ringed, the cheapest over the grid, and the cheapest among those that ran at least
    the chosen sigma's CG iterations (claim 2b, the paper's setting), each at its median train time."""
    ours = split_draws(sub[sub["R"] == ringed_R(sub)])[0]
    if ours.empty or ours["sigma"].nunique() < 2:
        return
    seconds = time_and_iterations(ours)["train_s"]
    marks = [(chosen, {"marker": "o", "ms": 12, "mfc": "none", "mec": "red", "mew": 1.3}, "chosen sigma (claim 2)"),
             (cheapest_sigma(ours, chosen), {"marker": "v", "ms": 8, "color": "black"}, "cheapest sigma (claim 2)"),
             (cheapest_sigma(ours, chosen, equal_iterations=True), {"marker": "D", "ms": 7, "mfc": "none",
                                                                    "mec": "black", "mew": 1.0},
              "cheapest at >= its CG iterations (claim 2b)")]
    for sigma, style, label in marks:
        at = seconds.index[np.isclose(seconds.index, sigma)] if sigma is not None else []
        if len(at):
            ax_time.plot([sigma], steady([seconds.loc[at[0]]]), ls="none", zorder=4, label=label, **style)


def _exact_lines(ax_perf, results: pd.DataFrame, name: str, published: pd.DataFrame) -> None:
    """The exact kernel's line (ours, and the authors' dashed), kept in view."""
    value, label = exact_reference(results, name)
    references = []
    if value is not None:
        references.append(value)
        ax_perf.axhline(float(steady(value)), color="black", lw=1.2, label=label)
    else:
        ax_perf.plot([], [], " ", label=label)
    pub_exact = published[published["method"] == REFERENCE]
    if len(pub_exact):
        references.append(float(pub_exact["perf"].iloc[0]))
        ax_perf.axhline(references[-1], color="black", lw=1.0, ls=(0, (4, 3)), label="exact kernel, published")
    keep_in_view(ax_perf, references)


def _titles(ax_perf, ax_time, ax_D, sub: pd.DataFrame, name: str, Rs: list) -> None:
    metric = sub["metric"].iloc[0]
    ours = split_draws(sub)[0]
    n_seeds = (ours if len(ours) else sub)["seed"].nunique()
    R_text = f"R={Rs[0]}" if len(Rs) == 1 else "R=" + ",".join(str(r) for r in Rs)
    ax_perf.set(xscale="log", xlabel="sigma (inverse kernel width)", ylabel=METRIC_LABEL.get(metric, metric),
                title=f"{name}: performance vs sigma, {R_text} ({n_seeds} seed{'s' if n_seeds > 1 else ''})")
    ax_time.set(xscale="log", xlabel="sigma (inverse kernel width)", ylabel="train time (s)",
                title=f"{name}: train time and D (grey, right axis) vs sigma")
    ax_D.set_yscale("log")
    ax_D.set_ylabel("D", color="gray")
    for ax in (ax_perf, ax_time):
        ax.title.set_fontsize(9)


#: the note where every R ran one sigma on test and the validation scores give the curve
ONE_SIGMA_NOTE = "run: chosen: only the chosen sigma ran\non test (one point per R); the dotted curve\nis the validation score it was chosen on"
