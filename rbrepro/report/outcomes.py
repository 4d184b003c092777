"""The outcomes of a claim's rule: each case passes, fails or is inconclusive, and the claim's verdict
follows from one count over them, the same for every claim (`verdict_of`).

A case is conclusive only when its evidence separates pass from fail: the seed band (or the bootstrap
interval) does not straddle the rule's threshold, and the measurement lies inside what the theory
allows. A claim is judged on its conclusive cases: it holds when at least HOLDS_SHARE of them pass,
holds partly when at least PARTLY_SHARE do, and does not hold otherwise; when fewer than
CONCLUSIVE_SHARE of its cases are conclusive it is inconclusive; "not judged" when the results hold
nothing to judge it on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from rbrepro.sweep.quiet import LOAD_FLAG_CORES, disturbed_timings

HOLDS, PARTLY, FAILS, INCONCLUSIVE, NOT_JUDGED = "holds", "holds partly", "does not hold", "inconclusive", \
    "not judged"
VERDICTS = (HOLDS, PARTLY, FAILS, INCONCLUSIVE, NOT_JUDGED)
#: the verdict's thresholds, the same for every claim: the share of its conclusive cases that pass
HOLDS_SHARE, PARTLY_SHARE = 0.8, 0.5
#: a claim is judged only when at least this share of its cases are conclusive
CONCLUSIVE_SHARE = 0.5
#: a case's cell in the `passes` column
PASS, FAIL, UNDECIDED = "yes", "no", "inconclusive"


@dataclass
class Finding:
    verdict: str
    header: list[str] = field(default_factory=list)
    rows: list[list] = field(default_factory=list)
    rule: str = ""
    note: str = ""     # what else the verdict's line says (how many timings were quiet)
    cases: str = "cases"
    passed: list[bool] = field(default_factory=list)   # the conclusive cases' outcomes
    undecided: int = 0                                 # how many cases were inconclusive

    def judge(self, ok: bool, conclusive: bool = True) -> str:
        """Record one case's outcome; returns its cell for the `passes` column."""
        if not conclusive:
            self.undecided += 1
            return UNDECIDED
        self.passed.append(bool(ok))
        return PASS if ok else FAIL

    def close(self) -> Finding:
        self.verdict = verdict_of(self.passed, self.undecided)
        return self

    @property
    def total(self) -> int:
        return len(self.passed) + self.undecided

    @property
    def count(self) -> str:
        """The count the verdict follows from: "k of n <cases> pass" when every case is conclusive,
        "k of m conclusive <cases> pass; u of n inconclusive" otherwise ("" before any case)."""
        if not self.total:
            return ""
        if self.verdict == INCONCLUSIVE:
            return f"{len(self.passed)} of {self.total} {self.cases} conclusive, {sum(self.passed)} of them pass"
        if not self.undecided:
            return f"{sum(self.passed)} of {len(self.passed)} {self.cases} pass"
        return (f"{sum(self.passed)} of {len(self.passed)} conclusive {self.cases} pass; {self.undecided} of "
                f"{self.total} inconclusive")

    @property
    def brief(self) -> str:
        """The count in the verdicts in brief: "(k of n)", "(k of m conclusive, of n)" or "(m of n conclusive)"."""
        if not self.total:
            return ""
        if self.verdict == INCONCLUSIVE:
            return f" ({len(self.passed)} of {self.total} conclusive)"
        if not self.undecided:
            return f" ({sum(self.passed)} of {len(self.passed)})"
        return f" ({sum(self.passed)} of {len(self.passed)} conclusive pass; {self.undecided} of {self.total} inconclusive)"


def verdict_of(passed: list[bool], undecided: int = 0) -> str:
    """On the conclusive cases `passed`: holds when at least HOLDS_SHARE pass, partly when at least
    PARTLY_SHARE, else does not hold; inconclusive when fewer than CONCLUSIVE_SHARE of all cases
    (the `undecided` ones besides) are conclusive; not judged without a case."""
    total = len(passed) + undecided
    if not total:
        return NOT_JUDGED
    if len(passed) < CONCLUSIVE_SHARE * total:
        return INCONCLUSIVE
    share = sum(passed) / len(passed)
    return HOLDS if share >= HOLDS_SHARE else PARTLY if share >= PARTLY_SHARE else FAILS


def verdict_rule(cases: str) -> str:
    """The printed thresholds of `verdict_of`, for a claim whose cases are `cases`."""
    return (f"the claim is judged on its conclusive {cases}: it holds when at least {HOLDS_SHARE:.0%} of them pass, "
            f"holds partly when at least {PARTLY_SHARE:.0%} do, and does not hold otherwise; with fewer than "
            f"{CONCLUSIVE_SHARE:.0%} of its {cases} conclusive it is inconclusive")


def straddles(low: float, high: float, threshold: float) -> bool:
    """Whether a band [low, high] holds values on both sides of `threshold`: its case is inconclusive."""
    return bool(min(low, high) < threshold < max(low, high))


def quiet_note(rows: pd.DataFrame) -> str:
    """How many of the timed rows a timing claim reads were taken quiet (`disturbed_timings`)."""
    if rows.empty:
        return ""
    quiet = int((~disturbed_timings(rows)).sum())
    return (f"{quiet} of {len(rows)} timed rows it reads taken quiet: other processes' load at most "
            f"{LOAD_FLAG_CORES} cores, no cell beside")
