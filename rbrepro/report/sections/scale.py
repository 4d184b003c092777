"""The paper's scale, how the synthetic shapes bin and how cost grows: the report's sections and the
README's lines, from the same rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rbrepro.analysis.rows import test_rows
from rbrepro.data.registry import paper_set
from rbrepro.models.registry import SUBJECT
from rbrepro.published import published_table
from rbrepro.report.fidelity import SHAPE_BINS_FACTOR, shape_bins, true_values
from rbrepro.report.markdown import table
from rbrepro.report.runs import SHAPE_BINS, stale_shape_bins
from rbrepro.sweep.growth import LINEAR_SLOPE, exponent_table, exponents, growth_kind, training_in_R


def scaling_section(loaded_runs: dict) -> str:
    """How cost grows: the fitted exponents (sweep.growth), and the cells the memory model skipped."""
    head = "## How cost grows\n\n"
    loaded = loaded_runs.get("scaling")
    if loaded is None:
        return head + "Not committed yet: `make scaling` runs `configs/scaling.yaml` and draws `figures/scaling.png`."
    frame, _ = loaded
    found = exponents(test_rows(frame))
    header, rows = exponent_table(found)
    text = [head + "Each cost's exponent b in cost ~ x^b, fitted to the median over repeats on SUSY-shaped "
            "synthetic data (`rbrepro/sweep/growth.py`; `figures/scaling.png`):", "", table(header, rows)]
    linear = [[e.method, e.at, f"{e.slope:.2f}", f"{e.low:.2f} – {e.high:.2f}", growth_kind(e)]
              for e in training_in_R(found)]
    if linear:
        text += ["", "Claim 6 says training is linear in R for every low-rank method. Train time against R, "
                 f"judged by claim 6's rule: linear where the fitted slope lies in {LINEAR_SLOPE[0]} – "
                 f"{LINEAR_SLOPE[1]}, faster or slower than linear above or below it (the interval beside):", "",
                 table(["method", "N", "exponent", "interval", "growth"], linear)]
    return "\n".join(text + _not_run(frame, with_status=True))


def scale_lines(loaded_runs: dict, bins: pd.DataFrame | None = None) -> list[str]:
    """README lines on the paper's scale, how the synthetic shapes bin and how training grows in R, from
    the same rows as the report's sections (none for a run that is not committed)."""
    lines = []
    if bins is not None:
        lines.append("- The synthetic shapes on the authors' own grids, D against their real training rows' "
                     f"(`{SHAPE_BINS}`): " + "; ".join(
                         f"{f.dataset} ×{f.low:.2f} – ×{f.high:.2f} over {f.points} sigmas"
                         if f.points else f"{f.dataset}: no informative sigma" for f in shape_bins(bins)) + ".")
    paper = loaded_runs.get("paper-scale")
    if paper is not None:
        frame = paper[0]
        theirs = published_table()
        theirs = theirs[theirs["panel"] == "fig5"]
        shown = at_authors_sigma(frame[frame["status"] == "ok"], theirs)
        for r in shown.sort_values("R").groupby(["dataset", "method"]).tail(1).itertuples():
            if r.method != SUBJECT:
                continue
            match = theirs[(theirs["dataset"] == paper_set(r.dataset)) & (theirs["method"] == SUBJECT) & (theirs["R"] == r.R)]
            beside = (f"; the authors' real {paper_set(r.dataset)} at the same R: {float(match['train_s'].iloc[0]):,.0f} s "
                      f"on 16 threads, D = {float(match['D'].iloc[0]):,.0f}") if len(match) else ""
            lines.append(f"- The paper's scale (`results/paper-scale`, synthetic `{r.dataset}`, "
                         f"{int(r.n_train):,} training rows): RB at R = {r.R} trains in {r.train_s:,.1f} s on "
                         f"{int(r.threads)} threads, peak {r.peak_fit_mb / 1024:.1f} GB, D = {r.D:,.0f}{beside}.")
    scaling = loaded_runs.get("scaling")
    if scaling is not None:
        fits = training_in_R(exponents(test_rows(scaling[0])))
        if fits:
            lines.append("- How training grows in R (`results/scaling`, N = "
                         f"{fits[0].at:,}): " + "; ".join(f"{e.method} R^{e.slope:.2f} ({growth_kind(e)})" for e in fits)
                         + ".")
    return lines


def _not_run(frame: pd.DataFrame, with_status: bool) -> list[str]:
    """Lines of a table of the cells that did not run (one per dataset, method and R), each with the
    first line of the reason its row recorded; nothing when every cell ran."""
    failed = frame[frame["status"] != "ok"] if "status" in frame else frame.iloc[:0]
    if failed.empty:
        return []
    rows = [[r.dataset, r.method, r.R, *([r.status] if with_status else []),
             str(r.error).splitlines()[0] if str(r.error) else "–"]
            for r in failed.drop_duplicates(["dataset", "method", "R"]).itertuples()]
    return ["", "Cells that did not run, with the reason the run recorded:", "",
            table(["dataset", "method", "R", *(["status"] if with_status else []), "why"], rows)]


def at_authors_sigma(frame: pd.DataFrame, theirs: pd.DataFrame) -> pd.DataFrame:
    """The rows to set beside the authors' runs: where a (dataset, method, R) ran at several sigmas and
    one of them is the authors' at that R (their Fig. 5 data), that one; otherwise every row."""
    keep = []
    for (dataset, method, R), group in frame.groupby(["dataset", "method", "R"], sort=False):
        match = theirs[(theirs["dataset"] == paper_set(dataset)) & (theirs["method"] == method) & (theirs["R"] == R)]
        if len(group) > 1 and len(match) and "sigma" in group:
            same = group[np.isclose(group["sigma"].astype(float), float(match["sigma"].iloc[0]), rtol=1e-3)]
            keep.append(same if len(same) else group)
        else:
            keep.append(group)
    return pd.concat(keep) if keep else frame


def paper_scale_section(loaded_runs: dict, bins: pd.DataFrame | None) -> str:
    """The paper's largest runs on the shapes of its sets: our time, memory and D per cell beside
    the authors' train time and D on the real set at the same method and R (their Fig. 5 data)."""
    head = "## The paper's scale\n\n"
    loaded = loaded_runs.get("paper-scale")
    if loaded is None:
        return head + ("Not committed yet: `rbrepro sweep configs/paper-scale.yaml --out results/paper-scale` runs "
                       "Fig. 5's methods on the covtype shape and RB at the paper's largest R on the SUSY shape.\n\n"
                       + shape_bins_section(bins))
    frame, _ = loaded
    published = published_table()
    theirs = published[published["panel"] == "fig5"]
    rows = []
    for r in at_authors_sigma(frame, theirs).sort_values(["dataset", "method", "R"]).itertuples():
        real = paper_set(r.dataset)
        match = theirs[(theirs["dataset"] == real) & (theirs["method"] == r.method) & (theirs["R"] == r.R)]
        their_s = float(match["train_s"].iloc[0]) if len(match) else float("nan")
        their_D = float(match["D"].iloc[0]) if len(match) else float("nan")
        their_sigma = float(match["sigma"].iloc[0]) if len(match) else float("nan")
        sigma = float(getattr(r, "sigma", float("nan")))
        if r.status != "ok":
            rows.append([r.dataset, r.method, r.R, sigma, r.status, "–", "–", "–", "–", real, their_sigma, their_s,
                         their_D, "–"])
            continue
        rows.append([r.dataset, r.method, r.R, sigma, "ok", r.D, r.train_s, r.predict_s, r.peak_fit_mb, real,
                     their_sigma, their_s, their_D,
                     f"×{their_s / r.train_s:.1f}" if their_s == their_s and r.train_s > 0 else "–"])
    text = [head + "Each cell on a synthetic set with the shape of one of the paper's (`configs/paper-scale.yaml`; "
            "its accuracies are not the paper's), beside the authors' train time and D on the real set at the same "
            "method and R (their Fig. 5 data, 16 threads; ours on the threads the row records). Where a method ran "
            "at several sigmas, the cell at the authors' sigma for that R is shown:", "",
            table(["dataset", "method", "R", "sigma", "status", "D", "train s", "predict s", "peak fit MB",
                    "authors' set", "authors' sigma", "authors' train s", "authors' D", "their time / ours"], rows)]
    return "\n".join(text + _not_run(frame, with_status=False) + ["", shape_bins_section(bins)])


def shape_bins_section(frame: pd.DataFrame | None) -> str:
    """How each synthetic shape bins on the authors' own grids, beside their real training rows."""
    head = "### How the synthetic shapes bin\n\n"
    if frame is None:
        return head + f"Not committed yet: `make shape-binning` writes `{SHAPE_BINS}`."
    found = shape_bins(frame)
    rows = [[f.dataset, f.paper_set, f.R, f.points, f.low, f.high, f.typical,
             "yes" if f.realistic else "no"] for f in found]
    detail = [[r.dataset, r.sigma, int(r.D), int(r.authors_D), r.D / r.authors_D]
              for r in frame[true_values(frame["informative"])].sort_values(["dataset", "sigma"]).itertuples()]
    stale = stale_shape_bins(frame)
    warning = ([f"**Stale:** {', '.join(stale)} were measured on generator settings the registry no longer uses; "
                "`make shape-binning` measures them again.", ""] if stale else [])
    commits = ", ".join(sorted({str(c)[:7] for c in frame["git_commit"].dropna()})) or "–"
    return "\n".join([
        head + "A shape stands for its set only if its rows fall into bins as the real rows do: D sets RB's time "
        "and memory. The authors' Fig. 3 data records D for their own training rows at every sigma; their grids "
        "are replayed bit for bit (`draws: authors`) on each shape's training rows, so only the data differs "
        "(`bench/shape_binning.py`, commit " + commits + "). Sigmas where their D is under 3 bins a grid or "
        "over 30 % of the rows a grid are left out (nothing to compare). The generator's three binning knobs per "
        "shape were fitted to these same counts, so this shows how close the fit came, not an independent check; "
        "the Fig. 5 D beside each run below (other sigmas and R, test rows' bins included, numpy's draws) is the "
        f"check. A shape bins like its set when every ratio lies within ×{SHAPE_BINS_FACTOR:g} either way "
        "(`fidelity.shape_bins`):", "", *warning,
        table(["shape", "authors' set", "R", "sigmas", "lowest D ratio", "highest", "geometric mean",
                "bins like the set"], rows), "",
        "<details><summary>D per sigma</summary>", "",
        table(["shape", "sigma", "D", "authors' D", "ratio"], detail), "", "</details>"])
