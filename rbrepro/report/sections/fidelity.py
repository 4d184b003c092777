"""Fidelity to the published points: per run, the counts of the two-sided verdicts and the points
outside the band; then whose training rows each dataset's are."""

from __future__ import annotations

import pandas as pd

from rbrepro.report.counts import Counts, comparison_lines, mismatch_reason, run_points, widths_text
from rbrepro.report.fidelity import (
    ACCURACY_POINTS,
    DRAW_ACCURACY_POINTS,
    DRAW_RELATIVE_ERROR_SHARE,
    MIN_BAND_SEEDS,
    MIN_BIN_POINTS,
    RELATIVE_ERROR_SHARE,
    REPRODUCED,
    SAME_ROWS_SHARE,
    replay_at_published_sigma,
    training_rows,
)
from rbrepro.report.markdown import table
from rbrepro.report.runs import FIDELITY_RUNS, protocol_of


def _training_rows(known: dict, points: list) -> str:
    """Which datasets' training rows are the authors', and the authors' draws' matches on each."""
    rows = []
    for dataset, found in sorted(known.items()):
        draws = [p for p in points if p.dataset == dataset and p.authors_draw is not None]
        same = {True: "yes", False: "no", None: "too few points"}[found.same]
        rows.append([dataset, found.compared, found.equal, same,
                     f"{sum(bool(p.draw_matches) for p in draws)} / {len(draws)}" if draws else "–"])
    return ("### The authors' training rows\n\nThe replay of the authors' draws can only give their numbers on "
            "their training rows. Their figure data records, for each (R, sigma) of Fig. 3, the number of bins D "
            "their draws made on their training rows; our rows with their draws record ours. The rows count as "
            f"the authors' when D is equal at {SAME_ROWS_SHARE:.0%} of at least {MIN_BIN_POINTS} points "
            "(`fidelity.training_rows`); where they are not, a replay that misses is explained by that "
            "(docs/authors-protocol.md says what is known of each dataset's rows).\n\n"
            + table(["dataset", "(R, sigma) points compared", "D equal", "training rows the authors'",
                      "authors' draws within (Fig. 3 and 5, as published)"], rows))


def _unmatched(points: list) -> list[str]:
    """The points consistent with our band that do not match the same experiment, each with its reason."""
    if not points:
        return []
    rows = [[p.dataset, p.method, p.R or "exact", p.sigma, p.published, p.median, f"{p.band[0]:.4g}–{p.band[1]:.4g}",
             "–" if p.authors_draw is None else p.authors_draw, mismatch_reason(p)] for p in points]
    return ["", "Points consistent with our band that do not match the same experiment, each with the reason a "
                "rule gives (`counts.mismatch_reason`):", "",
            table(["dataset", "method", "R", "sigma", "published", "our median", "our band", "authors' draw",
                   "why"], rows)]


def _replay_at_published(frame: pd.DataFrame) -> list[str]:
    """The replay of the authors' draws at the sigma they published, beside the one at our chosen sigma."""
    if "figure" not in frame or not (frame["figure"] == "fig5").any():   # Fig. 5's points: its runs alone
        return []
    rows = replay_at_published_sigma(frame)
    if not rows:
        return []
    within = sum(r[5] is True for r in rows)
    ran = sum(r[4] != "–" for r in rows)
    other = sum(r[6] != "same" for r in rows)
    return ["", f"The replay of the authors' draws at the sigma they published: {within} of {ran} RB points "
                f"within {DRAW_ACCURACY_POINTS} points / {DRAW_RELATIVE_ERROR_SHARE:.0%} (of {len(rows)} points "
                f"replayed; the counts above read the replay at our chosen sigma, which differs from the "
                f"published one at {other} of them, both shown):", "",
            table(["dataset", "R", "published sigma", "published", "replay there", "within",
                   "our chosen sigma", "replay there"], rows)]


def fidelity_section(loaded_runs: dict, drifts: dict[str, list[str]]) -> tuple[str, dict[str, Counts]]:
    parts, counts, all_points = [], {}, []
    frames = [loaded[0] for run in FIDELITY_RUNS if (loaded := loaded_runs[run]) is not None]
    known = training_rows(pd.concat(frames, ignore_index=True)) if frames else {}
    for run in FIDELITY_RUNS:
        loaded = loaded_runs[run]
        if loaded is None:
            parts.append(f"### results/{run}\n\nNot committed: no comparison.")
            continue
        frame, config = loaded
        points = run_points(frame, config, rows_known=known)
        if not points:
            continue
        all_points += points
        counts[run] = c = Counts.of(points)
        missed = [p for p in points if p.values and p.verdict != REPRODUCED]
        drift = drifts[run]
        text = [f"### results/{run} ({protocol_of(run, frame)})", "", f"**{c.line()}.**", ""]
        if drift:
            text += [f"This run was made under an older config: today's `configs/{run}.yaml` differs in "
                     f"{', '.join(drift)}, so these counts are not yet those of the protocol as it now stands.", ""]
        text += ["\n".join(line for line in comparison_lines(points, "markdown") if line.startswith("|")),
                 "", f"Our {widths_text([p for p in points if p.values])} (a band that wide holds the published "
                 "value more easily: hence the second count)."]
        absent = sorted({p.dataset for p in points if not p.values})
        if absent:
            text += ["", "Published points without a result here, by dataset: "
                         + ", ".join(f"{d} ({sum(1 for p in points if p.dataset == d and not p.values)})"
                                     for d in absent) + "."]
        if c.min_seeds < MIN_BAND_SEEDS:
            text += ["", "Some bands rest on fewer seeds than the rule asks for; their verdicts are provisional."]
        if missed:
            rows = [[p.dataset, p.method, p.R or "exact", p.sigma, p.published, f"{p.band[0]:.4g}–{p.band[1]:.4g}",
                     p.seeds, p.verdict, "–" if p.authors_draw is None else p.authors_draw, p.explanation]
                    for p in missed]
            text += ["", "Points outside the band, each with the rule that explains it (`fidelity.EXPLANATIONS`):", "",
                     table(["dataset", "method", "R", "sigma", "published", "our band", "seeds", "verdict",
                             "authors' draw", "why"], rows)]
        text += _unmatched([p for p in points if p.consistent and not p.matches])
        text += _replay_at_published(frame)
        parts.append("\n".join(text))
    intro = ("## Fidelity to the published points\n\nEach point the authors published (their figure data) is "
             "counted twice. *Consistent with our seed band*: inside the band our seeds span at the same "
             f"coordinates (min to max), widened by {ACCURACY_POINTS} accuracy points or "
             f"{RELATIVE_ERROR_SHARE:.0%} relative error (*better* or *worse* outside). *Matches the same "
             "experiment*: where RB ran with the authors' own draws, that replay within "
             f"{DRAW_ACCURACY_POINTS} points or {DRAW_RELATIVE_ERROR_SHARE:.0%}; everywhere else the median over "
             f"our seeds within {ACCURACY_POINTS} points or {RELATIVE_ERROR_SHARE:.0%}. A wide band makes the "
             "first easy, so the band widths are given too (rules: `rbrepro/report/fidelity.py`, "
             "`rbrepro/report/counts.py`; `rbrepro compare RESULTS` prints every point and the same counts). "
             f"Points are counted at our chosen sigma; a band of fewer than {MIN_BAND_SEEDS} seeds is flagged.")
    if known:
        parts.append(_training_rows(known, all_points))
    return intro + "\n\n" + "\n\n".join(parts), counts
