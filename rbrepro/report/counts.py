"""Counting the published points, in one place for REPRODUCTION.md, README's counts and `rbrepro compare`.

Two counts sit side by side wherever a count is shown:

- *consistent with our seed band*: the published value inside the band our seeds span, widened
  by the tolerance (`fidelity.verdict`: reproduced);
- *matches the same experiment*: for an RB point whose authors' draw is replayed, that replay
  within 0.2 points / 1 %; for every other point, the median over our seeds within 0.5 points / 3 %
  (`fidelity.Point.matches`).

Beside them: how wide our bands are (median, 90th percentile, max), and for each point that is
consistent but does not match, the reason a rule gives (`mismatch_reason`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from rbrepro.models.registry import REFERENCE
from rbrepro.report.fidelity import (
    ACCURACY_POINTS,
    BETTER,
    DRAW_ACCURACY_POINTS,
    DRAW_RELATIVE_ERROR_SHARE,
    MIN_BAND_SEEDS,
    RELATIVE_ERROR_SHARE,
    REPRODUCED,
    WORSE,
    Point,
    compare_points,
)

#: a band wider than this many tolerances (0.5 points, or 3 % of the published value) is "wide"
WIDE_BAND_TOLERANCES = 2.0
#: R up to this is "small R" (claim 4's SMALL_R), where few features make seeds spread most
SMALL_R = 64


def run_points(frame: pd.DataFrame, config: dict | None, figure: str | None = None,
               rows_known: dict | None = None) -> list[Point]:
    """The published points of a run: every dataset its config names (else those in its rows), so the
    report and `rbrepro compare` count the same points."""
    config = config or {}
    datasets = list(config.get("datasets") or {}) or None
    figure = figure or config.get("figure") or ""
    return compare_points(frame, figure, datasets=datasets, rows_known=rows_known)


def band_width(p: Point) -> float:
    """The band's width in units of the tolerance (0.5 points; 3 % of the published value)."""
    lo, hi = p.band
    unit = ACCURACY_POINTS if p.metric == "accuracy" else RELATIVE_ERROR_SHARE * abs(p.published)
    return (hi - lo) / unit if unit else float("nan")


def band_widths(points: list[Point]) -> dict[str, float]:
    """Median, 90th percentile and max of the band widths (in tolerances) over points with two seeds or more."""
    widths = np.array([band_width(p) for p in points if p.seeds >= 2], dtype=float)
    if not len(widths):
        return {}
    return {"points": len(widths), "median": float(np.median(widths)), "p90": float(np.percentile(widths, 90)),
            "max": float(widths.max())}


def widths_text(points: list[Point]) -> str:
    """The band-width distribution as a phrase (in tolerances: 0.5 points or 3 % of the published value)."""
    w = band_widths(points)
    if not w:
        return "no band of two seeds or more"
    return (f"band widths (max - min over seeds, in tolerances of {ACCURACY_POINTS} points / "
            f"{RELATIVE_ERROR_SHARE:.0%}) over {w['points']} points: median {w['median']:.2f}, "
            f"90th percentile {w['p90']:.2f}, max {w['max']:.2f}")


def mismatch_reason(p: Point) -> str:
    """Why a point consistent with our band does not match the same experiment (first rule that applies)."""
    if p.authors_draw is not None:
        if p.same_rows is False:
            return "the replay of the authors' draw misses, and their training rows are not ours"
        return "the replay of the authors' draw misses (our band holds the published value)"
    if p.seeds < MIN_BAND_SEEDS:
        return f"a band of {p.seeds} seed(s), fewer than {MIN_BAND_SEEDS}"
    if band_width(p) > WIDE_BAND_TOLERANCES and p.R <= SMALL_R:
        return f"wide band at small R ({band_width(p):.1f} tolerances): our seeds spread more than the tolerance"
    if band_width(p) > WIDE_BAND_TOLERANCES:
        return f"wide band ({band_width(p):.1f} tolerances) at R = {p.R}"
    return "a single-draw effect: the published value lies at the edge of our band, off our median"


@dataclass(frozen=True)
class Counts:
    """The counts of a run's published points: two-sided verdicts (of the points we have a result for),
    the same-experiment matches beside them, the points without a result (of the datasets that ran,
    and of those that did not), the one-sided count under its own name, and the authors' draws' count."""
    published: int
    total: int
    reproduced: int
    matching: int
    better: int
    worse: int
    no_worse: int
    min_seeds: int
    missing_here: int             # points of datasets with results, without a result of ours
    missing_datasets: tuple[str, ...]  # datasets with published points and no result at all
    missing_there: int            # their points
    draws_total: int
    draws_matching: int
    same_rows_total: int = 0      # authors' draws on training rows that are theirs (TrainingRows.same)
    same_rows_matching: int = 0
    widths: tuple = ()            # band widths in tolerances: (points, median, 90th percentile, max)

    @classmethod
    def of(cls, points: list[Point]) -> "Counts":
        compared = [p for p in points if p.values]
        ran = {p.dataset for p in compared}
        draws = [p for p in compared if p.authors_draw is not None]
        absent = [p for p in points if not p.values]
        return cls(published=len(points), total=len(compared),
                   reproduced=sum(p.verdict == REPRODUCED for p in compared),
                   matching=sum(p.matches for p in compared),
                   better=sum(p.verdict == BETTER for p in compared), worse=sum(p.verdict == WORSE for p in compared),
                   no_worse=sum(p.no_worse for p in compared),
                   min_seeds=min((p.seeds for p in compared if p.method != REFERENCE), default=0),
                   missing_here=sum(p.dataset in ran for p in absent),
                   missing_datasets=tuple(sorted({p.dataset for p in absent} - ran, key=str.lower)),
                   missing_there=sum(p.dataset not in ran for p in absent),
                   draws_total=len(draws), draws_matching=sum(bool(p.draw_matches) for p in draws),
                   same_rows_total=sum(bool(p.same_rows) for p in draws),
                   same_rows_matching=sum(bool(p.same_rows and p.draw_matches) for p in draws),
                   widths=tuple(band_widths(compared).values()))

    def line(self) -> str:
        """One line: the two counts first, the one-sided count after, under its name."""
        def share(n: int) -> str:
            return f"{100.0 * n / self.total:.0f} %" if self.total else "–"
        text = (f"{self.reproduced} of {self.total} published points consistent with our seed band ({share(self.reproduced)}: "
                f"{self.better} better, {self.worse} worse), {self.matching} of {self.total} match the same experiment "
                f"({share(self.matching)}) (bands over {self.min_seeds} seed(s)"
                f"{'' if self.min_seeds >= MIN_BAND_SEEDS else f', fewer than {MIN_BAND_SEEDS}'}); "
                f"one-sided 'no worse': {self.no_worse}")
        if self.widths:
            text += (f"; band widths over {self.widths[0]} points, in tolerances of {ACCURACY_POINTS} points / "
                     f"{RELATIVE_ERROR_SHARE:.0%}: median {self.widths[1]:.2f}, "
                     f"90th percentile {self.widths[2]:.2f}, max {self.widths[3]:.2f}")
        if self.missing_here:
            text += f"; {self.missing_here} more published point(s) of these datasets have no result here"
        if self.missing_there:
            text += (f"; {self.missing_there} published point(s) on datasets without a result here "
                     f"({', '.join(self.missing_datasets)})")
        if self.draws_total:
            text += (f"; authors' draws: {self.draws_matching} of {self.draws_total} RB points within "
                     f"{DRAW_ACCURACY_POINTS} points / {DRAW_RELATIVE_ERROR_SHARE:.0%}")
            if self.same_rows_total:
                text += (f" ({self.same_rows_matching} of {self.same_rows_total} on datasets whose training rows "
                         "are the authors')")
        return text


def _worst(group: list[Point]) -> Point:
    compared = [p for p in group if p.values]
    return min(compared, key=lambda p: -p.difference if p.metric == "rel_error" else p.difference)


def _point_line(p: Point) -> str:
    unit = "%" if p.metric == "accuracy" else ""
    at = f"R={p.R}" if p.method != REFERENCE else "exact"
    lo, hi = p.band
    draw = "" if p.authors_draw is None else \
        f" authors' draw {p.authors_draw:8.4f}{unit} {'match' if p.draw_matches else 'off'}"
    return (f"{p.dataset:9s} {p.method:8s} {at:7s} sigma={p.sigma:<8.4g} median {p.median:8.4f}{unit} "
            f"[{lo:.4f}, {hi:.4f}] over {p.seeds} seed(s) published {p.published:8.4f}{unit} "
            f"{'consistent' if p.consistent else p.verdict}, {'matches' if p.matches else 'does not match'}{draw}")


def comparison_lines(points: list[Point], mode: str = "points") -> list[str]:
    """What `rbrepro compare` prints: one line per point ("points"), the counts per dataset and
    method ("summary"), or those counts as a Markdown table ("markdown"); then the totals."""
    groups: dict = {}
    for p in points:
        groups.setdefault((p.dataset, p.method), []).append(p)
    lines = [_point_line(p) for p in points if p.values] if mode == "points" else []
    if mode == "markdown":
        lines += ["| dataset | method | points | consistent | matches | better | worse | seeds "
                  "| authors' draws within |", "|---|---|---|---|---|---|---|---|---|"]
    for (dataset, method), group in sorted(groups.items()):
        c = Counts.of(group)
        if not c.total:
            continue
        draws = f"{c.draws_matching} / {c.draws_total}" if c.draws_total else "–"
        seeds = min(p.seeds for p in group if p.values)
        if mode == "markdown":
            lines.append(f"| {dataset} | {method} | {c.total} | {c.reproduced} | {c.matching} | {c.better} | {c.worse} "
                         f"| {seeds} | {draws} |")
        elif mode == "summary":
            lines.append(f"{dataset:9s} {method:8s} {c.reproduced}/{c.total} consistent, {c.matching}/{c.total} match, "
                         f"{c.better} better, {c.worse} worse; worst difference {_worst(group).difference:+.4g} "
                         f"(R={_worst(group).R})")
            if c.missing_here:
                lines[-1] += f"; {c.missing_here} published without a result here"
    lines.append(Counts.of(points).line())
    return lines
