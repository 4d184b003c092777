"""The claims, one by one: each claim in the paper's words, judged by its rule on each run."""

from __future__ import annotations

import pandas as pd

from rbrepro.report import claims as C
from rbrepro.report import claims_theory as T
from rbrepro.report.markdown import table
from rbrepro.report.runs import EXTRA_RUNS, RUNS, protocol_of

#: A results frame without rows: a rule states its thresholds even where nothing is committed yet.
EMPTY_RESULTS = pd.DataFrame(columns=["status", "evaluate_on", "method", "dataset", "rng", "metric", "sigma", "R",
                                      "seed", "test_metric", "train_metric", "train_s", "D", "memory_model_entries",
                                      "selected", "threads", "variant", "rcd_trace"])
#: The claims, in the paper's words, with the run(s) each is judged on; each rule reads a run's
#: (rows, config) and every loaded run (claim 3b reads the exact kernel of fair Fig. 3). A run of
#: `runs.EXTRA_RUNS` (a larger machine's thread sweep) is judged beside its figure's runs where committed,
#: each on its own rows: a speedup pairs each tau with the 1-thread run of the same machine.
CLAIMS = (
    (0, "fast convergence: RB's objective gap falls as 1/(kappa R), ahead of other random features' 1/R "
        "(§3, Theorem 1, eq. 13)", "theory", lambda res, cfg, runs: T.claim0_theorem1(res)),
    (1, "train and test performance coincide, then diverge as sigma (and D) grows (§5.1, Fig. 3)", "fig3",
     lambda res, cfg, runs: C.claim1_coincide_then_diverge(res)),
    (2, "the train time at the best sigma is only slightly above the smallest (§5.1, Fig. 3)", "fig3",
     lambda res, cfg, runs: C.claim2_best_sigma_is_cheap(res)),
    ("2b", "the same at the paper's setting: sigmas compared at similar CG iterations (§5.1: tol = 1e-15 "
           "\"to force similar CG iterations\")", "fig3",
     lambda res, cfg, runs: C.claim2_best_sigma_is_cheap(res, equal_iterations=True)),
    (3, "performance converges almost linearly with D as R grows (§5.1, Fig. 4)", "fig4",
     lambda res, cfg, runs: C.claim3_steady_convergence(res)),
    ("3b", "the same, read as the paper states it: training and test performance converge, the test error to "
           "the exact kernel's (§5.1, Fig. 4)", "fig4",
     lambda res, cfg, runs: C.claim3_steady_convergence(res, _exact_of_fair_fig3(runs))),
    (4, "RB is ahead of RF, Nyström and the block approximation at equal R, especially at small R (§5.2, Fig. 5)",
     "fig5", lambda res, cfg, runs: C.claim4_ahead_at_equal_R(res)),
    (5, "RB reaches a given accuracy one to three orders of magnitude faster, with less memory (abstract, §5.2, "
        "Fig. 5)", "fig5", lambda res, cfg, runs: C.claim5_faster_to_target(res, cfg)),
    ("5b", "apart from speed: RB reaches accuracies that no baseline reaches at the R swept (judged apart "
           "from claim 5's speed ratio; not the paper's words)", "fig5",
     lambda res, cfg, runs: C.claim5b_reaches_alone(res, cfg)),
    (6, "the train time of every low-rank method grows linearly with R (§5.2, Fig. 5)", "fig5",
     lambda res, cfg, runs: C.claim6_linear_in_R(res)),
    (7, "parallel RCD speeds up almost linearly on RB and not at all on RF (§1, §5.3, Fig. 6)", "fig6",
     lambda res, cfg, runs: T.claim7_parallel_rcd(res)),
)


def _exact_of_fair_fig3(runs: dict) -> dict:
    loaded = runs.get("fig3")
    return C.exact_errors(loaded[0]) if loaded is not None else {}


#: claims also judged on the authors' own figure data, beside our runs
ON_PUBLISHED = {2: C.claim2_on_published}


def _on_published(number) -> list[str]:
    """The claim's rule on the authors' figure data (`ON_PUBLISHED`), or nothing."""
    if number not in ON_PUBLISHED:
        return []
    from rbrepro.published import published_table

    finding = ON_PUBLISHED[number](published_table())
    if not finding.rows:
        return []
    return [f"On the authors' own figure data ({finding.rule}): **{finding.verdict}** ({finding.count}).", "",
            table(finding.header, finding.rows), ""]


def claims_section(loaded_runs: dict) -> tuple[str, list[list]]:
    """The section, and per claim a row of the verdicts in brief (number, claim, verdict per run)."""
    sections, summary = [], []
    for number, text, figure, rule in CLAIMS:
        verdicts, body, rule_text = [], [], rule(EMPTY_RESULTS, {}, {}).rule
        extra = tuple(run for run in EXTRA_RUNS.get(figure, ()) if loaded_runs.get(run) is not None)
        for run in RUNS[figure] + extra:
            loaded = loaded_runs[run]
            if loaded is None:
                verdicts.append(f"{protocol_of(run)}: not committed")
                continue
            finding = rule(*loaded, loaded_runs)
            protocol = protocol_of(run, loaded[0]) + (f", `{run}`" if run in extra else "")
            verdicts.append(f"{protocol}: **{finding.verdict}**{finding.brief}")
            said = "; ".join(filter(None, [finding.count, finding.note]))
            note = f" ({said})" if said else ""
            body += [f"From `results/{run}` ({protocol}): **{finding.verdict}**{note}.", "",
                     table(finding.header, finding.rows) if finding.rows else "(nothing to judge)", ""]
            rule_text = finding.rule
        body += _on_published(number)
        summary.append([number, text, "; ".join(verdicts)])
        sections.append("\n".join([f"### Claim {number}: {text}", "", f"Rule: {rule_text}.", "", *body]).rstrip())
    return "## The claims, one by one\n\n" + "\n\n".join(sections), summary
