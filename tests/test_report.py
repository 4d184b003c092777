"""REPRODUCTION.md is computed: the committed report matches the committed CSVs, a changed
number makes it stale, and each claim's rule gives the verdict its thresholds say."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rbrepro.analysis.speedups import eq29_speedup
from rbrepro.report import claims as C
from rbrepro.report import claims_theory as T
from rbrepro.report import outcomes as O
from rbrepro.report.render import REPORT_BEGIN, REPORT_END, build_report, check_report, write_report
from tests.cli_runner import run_cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_committed_report_and_readme_counts_are_what_the_csvs_give():
    assert check_report(ROOT) == []


def _copy_results(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "results", root / "results", ignore=shutil.ignore_patterns("cells", "bench.csv"))
    (root / "README.md").write_text(f"intro\n\n{REPORT_BEGIN}\nSTALE-BLOCK\n{REPORT_END}\n\nrest\n")
    (root / "pyproject.toml").write_text('[project]\nname = "rbrepro"\n')  # a checkout's marker
    return root


@pytest.mark.slow
def test_a_changed_number_makes_the_report_stale_and_the_command_says_so(tmp_path):
    root = _copy_results(tmp_path)
    written = write_report(root)
    assert {p.name for p in written} == {"REPRODUCTION.md", "README.md"}
    readme = (root / "README.md").read_text()
    assert readme.startswith("intro\n\n" + REPORT_BEGIN) and readme.endswith(REPORT_END + "\n\nrest\n")
    assert "published points consistent with our seed band" in readme and "STALE-BLOCK" not in readme
    assert check_report(root) == []
    csv = root / "results" / "fig5" / "results.csv"
    frame = pd.read_csv(csv, low_memory=False)
    frame.loc[frame["method"] == "rb", "test_metric"] += 1.0
    frame.to_csv(csv, index=False)
    assert check_report(root) == ["REPRODUCTION.md", "README.md"]
    run = run_cli("report", "--check", "--root", root)
    assert run.returncode == 1 and "REPRODUCTION.md, README.md differ" in run.stderr


def test_the_report_says_which_runs_are_missing(tmp_path):
    report, block = build_report(tmp_path)
    assert "results/fig5: not committed" not in report  # named in the provenance table instead
    assert "| results/fig5 | not committed |" in report
    assert "fair: not committed" in report and block.startswith(REPORT_BEGIN)


def _fig3_rows(train: list[float], test: list[float], dataset: str = "d") -> pd.DataFrame:
    return pd.DataFrame([{"dataset": dataset, "method": "rb", "sigma": sigma, "R": 128, "seed": 0, "status": "ok",
                          "evaluate_on": "test", "metric": "accuracy", "test_metric": te, "train_metric": tr,
                          "train_s": 1.0} for sigma, tr, te in zip((0.01, 0.1, 1.0, 10.0, 100.0), train, test)])


def test_claim1_rule_follows_its_thresholds():
    test = [80.0, 85.0, 90.0, 88.0, 70.0]
    together = _fig3_rows([80.0, 85.5, 91.0, 95.0, 100.0], test)
    apart = _fig3_rows([95.0, 90.0, 85.0, 95.0, 100.0], test)       # train falls while test rises
    no_gap = _fig3_rows([80.0, 85.5, 91.0, 90.0, 72.0], test)       # never diverges
    assert C.claim1_coincide_then_diverge(together).verdict == O.HOLDS
    assert C.claim1_coincide_then_diverge(apart).verdict == O.FAILS
    assert C.claim1_coincide_then_diverge(no_gap).verdict == O.FAILS
    both = pd.concat([together, _fig3_rows([80.0, 85.5, 91.0, 90.0, 72.0], test, dataset="e")])
    assert C.claim1_coincide_then_diverge(both).verdict == O.PARTLY
    assert C.claim1_coincide_then_diverge(together.iloc[:0]).verdict == O.NOT_JUDGED


def test_claim4_counts_the_R_where_rb_leads():
    rows = []
    for R, rb, rf in ((8, 90.0, 91.0), (16, 92.0, 91.0), (32, 93.0, 92.0)):
        for method, value in (("rb", rb), ("rf", rf)):
            rows.append({"dataset": "d", "method": method, "R": R, "sigma": 1.0, "seed": 0, "status": "ok",
                         "evaluate_on": "test", "metric": "accuracy", "test_metric": value, "train_s": 1.0,
                         "memory_model_entries": R})
    finding = C.claim4_ahead_at_equal_R(pd.DataFrame(rows))
    # RB behind at R = 8 <= 64: the paper's "especially when R is small" fails on this dataset
    assert finding.verdict == O.FAILS and finding.rows == [["d", "16, 32", "8 (rf: 91 vs 90)", 1, "no"]]


@pytest.mark.slow
def test_claim0_judges_each_dataset_and_sigma_from_the_diagnostics():
    from rbrepro.theory.run import diagnose

    frame = diagnose("digits", n=150, sigmas=(0.3, 1e4), Rs=(1, 2, 4, 8, 16), seeds=(0, 1, 2))
    finding = T.claim0_theorem1(frame)
    assert finding.verdict in O.VERDICTS and [r[1] for r in finding.rows] == [0.3, 1e4]
    # at sigma 1e4 every point has its own bin in every grid: Z Z^T = K = I, so the gap is ~0 and no rate
    # can be fitted: that sigma decides nothing, and is not counted as a failure
    assert finding.rows[1][-1] == "inconclusive" and finding.undecided >= 1
    assert finding.verdict == O.verdict_of(finding.passed, finding.undecided)
    assert T.claim0_theorem1(frame.iloc[:0]).verdict == O.NOT_JUDGED


def test_eq29_speedup_is_tau_for_very_sparse_rows_and_one_for_dense_ones():
    assert eq29_speedup(8, omega=4096, D=4096) == 1.0                   # RF: every row touches every column
    assert abs(eq29_speedup(8, omega=128, D=10**7) - 8.0) < 1e-3       # RB: R << D
    assert eq29_speedup(1, omega=50, D=100) == 1.0


def test_the_paper_scale_section_sets_each_cell_beside_the_authors_run_on_the_real_set():
    from rbrepro.report.sections.scale import paper_scale_section

    assert "Not committed yet" in paper_scale_section({"paper-scale": None}, None)
    frame = pd.DataFrame([
        {"dataset": "covtype_shape", "method": "rb", "R": 1024, "sigma": 4.46, "status": "ok", "D": 5_000_000,
         "train_s": 51.85, "predict_s": 1.0, "peak_fit_mb": 2000.0, "error": ""},
        {"dataset": "covtype_shape", "method": "rb", "R": 1024, "sigma": 10.0, "status": "ok", "D": 9_000_000,
         "train_s": 77.0, "predict_s": 1.0, "peak_fit_mb": 2000.0, "error": ""},  # not the authors' sigma at 1024
        {"dataset": "covtype_shape", "method": "rf", "R": 1024, "status": "skipped", "D": 0, "train_s": 0.0,
         "predict_s": 0.0, "peak_fit_mb": 0.0, "error": "needs 30.1 GB for the dense Z; the limit is 14.0 GB"}])
    text = paper_scale_section({"paper-scale": (frame, {})}, None)
    # the authors' covtype RB at R = 1024: 518.5 s train, D = 32,252,110 (their Fig. 5 data): ten times ours
    rb = next(line for line in text.splitlines() if line.startswith("| covtype_shape | rb | 1,024"))
    assert "| covtype |" in rb and "518.5" in rb and "×10.0" in rb
    assert "9,000,000" not in text  # the cell at another sigma than theirs is not set beside their run
    assert "| covtype_shape | rf | 1,024 | needs 30.1 GB for the dense Z; the limit is 14.0 GB |" in text


def test_the_scaling_section_gives_the_fitted_exponents_and_the_skipped_cells():
    from rbrepro.report.sections.scale import scaling_section

    assert "Not committed yet" in scaling_section({"scaling": None})
    rows = [{"dataset": "susy_shape_100k", "method": "rb", "R": R, "n_train": 100_000, "seed": 0, "status": "ok",
             "evaluate_on": "test", "metric": "accuracy", "test_metric": 80.0, "featurize_s": 1e-3 * R,
             "solve_s": 2e-3 * R, "predict_s": 1e-4 * R, "peak_fit_mb": 0.5 * R, "train_s": 3e-3 * R, "error": ""}
            for R in (8, 64, 512)]
    rows += [{**row, "method": "nystrom", "train_s": 1e-6 * row["R"] ** 2} for row in rows]  # bends: R^2
    rows.append({**rows[0], "method": "exact", "R": 0, "status": "skipped", "error": "needs 80 GB; the limit is 14 GB"})
    text = scaling_section({"scaling": (pd.DataFrame(rows), {})})
    assert "| rb | featurize (s) | R | N = 100,000 | 1.00 | 1.00 – 1.00 | 3 |" in text
    assert "| rb | 100,000 | 1.00 | 1.00 – 1.00 | linear |" in text
    assert "| nystrom | 100,000 | 2.00 | 2.00 – 2.00 | faster than linear |" in text
    assert "| susy_shape_100k | exact | 0 | skipped | needs 80 GB; the limit is 14 GB |" in text
    from rbrepro.report.sections.scale import scale_lines

    assert scale_lines({"scaling": (pd.DataFrame(rows), {})}) == [
        "- How training grows in R (`results/scaling`, N = 100,000): nystrom R^2.00 (faster than linear); "
        "rb R^1.00 (linear)."]


def test_the_readme_gives_the_papers_largest_run_beside_the_authors():
    from rbrepro.report.sections.scale import scale_lines

    frame = pd.DataFrame([{"dataset": "susy_shape", "method": "rb", "R": 1024, "status": "ok", "D": 184_791,
                           "train_s": 116.66, "predict_s": 6.7, "peak_fit_mb": 16125.0, "n_train": 4_000_000,
                           "threads": 2, "error": ""}])
    [line] = scale_lines({"paper-scale": (frame, {})})
    assert "`susy_shape`, 4,000,000 training rows): RB at R = 1024 trains in 116.7 s on 2 threads, peak 15.7 GB" in line
    assert "D = 184,791; the authors' real SUSY at the same R: 2,783 s on 16 threads, D = 397,666." in line


def test_a_shape_bins_like_its_set_only_when_every_informative_ratio_is_within_the_factor():
    from rbrepro.report.fidelity import SHAPE_BINS_FACTOR, shape_bins
    from rbrepro.report.sections.scale import scale_lines, shape_bins_section

    def rows(dataset, ratios, informative=True):
        return [{"dataset": dataset, "paper_set": "covtype", "R": 128, "sigma": 0.1 * (i + 1), "D": 1000 * r,
                 "authors_D": 1000.0, "informative": informative, "git_commit": "abcdef0123", "git_dirty": False}
                for i, r in enumerate(ratios)]

    inside = [0.6, 1.0, 1.9]
    frame = pd.DataFrame(rows("a_shape", inside) + rows("b_shape", [1.0, SHAPE_BINS_FACTOR * 1.05])
                         + rows("b_shape", [50.0], informative=False) + rows("c_shape", [9.0], informative=False))
    found = {f.dataset: f for f in shape_bins(frame)}
    assert found["a_shape"].realistic and found["a_shape"].points == 3
    assert abs(found["a_shape"].typical - np.exp(np.mean(np.log(inside)))) < 1e-12
    assert not found["b_shape"].realistic and found["b_shape"].high == SHAPE_BINS_FACTOR * 1.05  # 50 is not informative
    assert not found["c_shape"].realistic and found["c_shape"].points == 0
    text = shape_bins_section(frame)
    assert "| a_shape | covtype | 128 | 3 | 0.6 | 1.9 | " in text and "| b_shape | covtype | 128 | 2 | 1 | 2.1 |" in text
    assert "commit abcdef0" in text and "Not committed yet" in shape_bins_section(None)
    [line] = scale_lines({}, frame[frame["dataset"] == "a_shape"])
    assert "a_shape ×0.60 – ×1.90 over 3 sigmas." in line


def test_binning_rows_and_runs_made_on_other_generator_settings_are_named_stale():
    from rbrepro.data.load import dataset_availability
    from rbrepro.data.synthetic import SHAPES, shape_digest
    from rbrepro.report.runs import stale_generated_data
    from rbrepro.report.sections.scale import shape_bins_section

    row = {"shape": "cod_rna", "dataset": "cod_rna_shape", "paper_set": "cod_rna", "R": 128, "sigma": 1.0, "D": 900,
           "authors_D": 1000.0, "informative": "True", "git_commit": "abc1234", "git_dirty": "False",
           "shape_digest": shape_digest(SHAPES["cod_rna"])}
    assert "Stale" not in shape_bins_section(pd.DataFrame([row]))
    assert "**Stale:** cod_rna_shape were measured" in shape_bins_section(pd.DataFrame([{**row, "shape_digest": "0" * 12}]))
    now = dataset_availability("cod_rna_shape", fetch=False)[0]
    assert stale_generated_data(pd.DataFrame([{"dataset": "cod_rna_shape", "data_fingerprint": now}])) == []
    old = pd.DataFrame([{"dataset": "cod_rna_shape", "data_fingerprint": "0123456789abcdef"},
                        {"dataset": "ijcnn1", "data_fingerprint": "0123456789abcdef"}])  # real data: not judged here
    assert stale_generated_data(old) == ["cod_rna_shape"]


def _fig5_grid() -> pd.DataFrame:
    """ijcnn1 as published, nothing chosen by the sweep: RB at two sigmas (five seeds and the authors'
    draw each; their draw is best at 0.79), RF at one, the exact kernel at two widths (the first worse)."""
    rows = []
    base = {"dataset": "ijcnn1", "status": "ok", "evaluate_on": "test", "metric": "accuracy", "selected": False,
            "memory_model_entries": 8.0}
    for R in (8, 16):
        for sigma, seeds, draw in ((0.79, [89.0, 89.2, 89.33, 89.5, 89.6], 94.71), (2.0, [93.0] * 5, 90.0)):
            rows += [{**base, "method": "rb", "R": R, "sigma": sigma, "seed": s, "rng": "numpy",
                      "test_metric": v + (R == 16), "train_s": 0.1 * (s + 1)} for s, v in enumerate(seeds)]
            rows.append({**base, "method": "rb", "R": R, "sigma": sigma, "seed": 0, "rng": "authors",
                         "test_metric": draw, "train_s": 0.5})
        rows += [{**base, "method": "rf", "R": R, "sigma": 0.45, "seed": s, "rng": "numpy", "test_metric": 90.0,
                  "train_s": 0.01} for s in range(5)]
    rows += [{**base, "method": "exact", "R": 0, "sigma": sigma, "seed": 0, "rng": "numpy", "test_metric": value,
              "train_s": 9.0} for sigma, value in ((0.45, 98.70), (0.89, 98.78))]
    return pd.DataFrame(rows)


def test_the_fig5_tables_show_the_chosen_sigma_and_claim5s_times_to_target():
    from rbrepro.report.tables import fig5_tables

    frame = _fig5_grid()
    config = {"datasets": {"ijcnn1": {"targets": [89.0, 95.0]}}}
    text = fig5_tables(frame, config)
    # RB at R = 8: the sigma their draw chose, our median there and their draw; not the mean over both sigmas
    assert "| 8 | 89.33 at sigma 0.79 (0.3 s); their draw 94.71 |" in text
    assert "exact kernel 98.78 at sigma 0.89" in text  # the chosen width, not the first row
    finding = C.claim5_faster_to_target(frame, config)
    (row,) = [r for r in finding.rows if r[1] == 89.0]
    assert f"| 89.0 | {float(row[2].split()[0]):.2g} s," in text  # claim 5's time for RB, to the same rows
    # 95 is reached by nobody: no case of claim 5's ratio, and none of 5b's
    assert "| 95.0 | not reached | not reached |" in text and not [r for r in finding.rows if r[1] == 95.0]
    assert not [r for r in C.claim5b_reaches_alone(frame, config).rows if r[1] == 95.0]


def test_every_verdict_follows_one_strict_count_of_its_cases():
    assert O.verdict_of([True] * 4 + [False]) == O.HOLDS            # 80 %
    assert O.verdict_of([True] * 3 + [False] * 2) == O.PARTLY       # 60 %
    assert O.verdict_of([True, False]) == O.PARTLY                  # 50 %
    assert O.verdict_of([True] * 3 + [False] * 9) == O.FAILS        # 3 of 12: once "holds partly"
    assert O.verdict_of([True, True, True, False, False, False, False]) == O.FAILS
    assert O.verdict_of([]) == O.NOT_JUDGED


def test_every_rule_line_says_when_its_claim_holds_and_holds_partly():
    from rbrepro.report.sections.claims import CLAIMS, EMPTY_RESULTS

    for number, _, _, rule in CLAIMS:
        text = rule(EMPTY_RESULTS, {}, {}).rule
        assert "holds when at least 80%" in text and "holds partly when at least 50%" in text, number
        assert "does not hold otherwise" in text, number


def test_the_committed_verdicts_rest_on_the_share_of_cases_their_rule_prints():
    import re

    text = (ROOT / "REPRODUCTION.md").read_text()
    lines = re.findall(r"From `results/[\w-]+` \([^)]*\): \*\*(holds partly|does not hold|holds|inconclusive)\*\* "
                       r"\((\d+) of (\d+) (conclusive )?(?:[^;\n]*?; (\d+) of \d+ inconclusive)?", text)
    assert len(lines) >= 17
    for verdict, k, n, conclusive, undecided in lines:
        if verdict == O.INCONCLUSIVE:   # "m of n <cases> conclusive": fewer than half of them
            assert int(k) < 0.5 * int(n), (k, n)
            continue
        undecided = int(undecided or 0)
        assert bool(conclusive) == bool(undecided)
        share = int(k) / int(n)
        assert verdict == O.verdict_of([True] * int(k) + [False] * (int(n) - int(k)), undecided), (verdict, k, n)
        assert verdict != O.PARTLY or share >= 0.5
        assert verdict != O.HOLDS or share >= 0.8
    brief = text.split("## Verdicts in brief", 1)[1].split("##", 1)[0]
    assert len(re.findall(r"\*\* \(\d+ of \d+[ )]", brief)) == len(lines)


def test_an_inconclusive_case_is_never_counted_as_a_failure():
    assert O.verdict_of([True, True, True], undecided=3) == O.HOLDS          # judged on the 3 conclusive
    assert O.verdict_of([True, True, False, False], undecided=4) == O.PARTLY
    assert O.verdict_of([True, False], undecided=3) == O.INCONCLUSIVE        # 2 of 5 conclusive
    finding = O.Finding(O.NOT_JUDGED, cases="pairs")
    cells = [finding.judge(True), finding.judge(False), finding.judge(False, conclusive=False)]
    assert cells == ["yes", "no", "inconclusive"] and finding.close().verdict == O.PARTLY
    assert finding.count == "1 of 2 conclusive pairs pass; 1 of 3 inconclusive"
    assert O.straddles(1.1, 1.8, 1.4) and not O.straddles(1.5, 1.8, 1.4)


def test_verdict_check_counts_only_the_conclusive_cases(tmp_path):
    import subprocess
    import sys

    tool = ROOT.parent / "shared" / "tools" / "verdict_check.py"
    if not tool.exists():
        pytest.skip("no ../shared/tools/verdict_check.py beside this checkout")
    report = tmp_path / "R.md"
    report.write_text("### Claim 9: x\n\nRule: the claim holds partly when at least 50% do.\n\n"
                      "From `results/x` (fair): **holds partly** (1 of 2 conclusive pairs pass; 3 of 5 inconclusive)."
                      "\n\n| a | passes |\n|---|---|\n| 1 | yes |\n| 2 | no |\n| 3 | inconclusive |\n"
                      "| 4 | inconclusive |\n| 5 | inconclusive |\n")
    done = subprocess.run([sys.executable, str(tool), str(report)], capture_output=True, text=True)
    assert done.returncode == 0 and "0 problems" in done.stdout, done.stdout


def test_the_cost_lines_are_summed_from_the_rows_and_say_what_reuse_counts_twice(tmp_path):
    from rbrepro.analysis.costs import cost_rows, profile, total_line
    from rbrepro.report.render import build_all
    from rbrepro.report.runs import SWEEP_RUNS

    cell = {"status": "ok", "method": "rb", "dataset": "d", "featurize_s": 10.0, "solve_s": 20.0, "predict_s": 0.0}
    frames = {"fig5": pd.DataFrame([{**cell, "wall_s": 60.0}, {**cell, "wall_s": 120.0, "status": "failed"}]),
              "fig3": pd.DataFrame([{**cell, "wall_s": 60.0, "reused_from": "results/fig5"},
                                    {**cell, "wall_s": 120.0, "reused_from": None}])}
    runs, _ = profile(cost_rows(frames))
    assert runs.loc["fig3", "wall_min"] == 3.0 and runs.loc["fig3", "reused_min"] == 1.0
    assert total_line(runs).startswith("Summed cell wall time of the 2 runs below: 4.0 min over 3 cells, of which 1.0 min are cells "
                                       "reused") and "3.0 min computed" in total_line(runs)
    # the README's block and results/cost-profile.md: what the committed figure runs' rows sum to
    _, blocks, profile_md = build_all(ROOT)
    block = blocks["report:costs"]
    assert set(SWEEP_RUNS) == {"fig3", "fig3-as-published", "fig4", "fig5", "fig5-as-published", "fig6", "scaling",
                               "paper-scale"}  # every committed sweep run, not the figure runs alone
    total = sum(pd.read_csv(ROOT / "results" / run / "results.csv", low_memory=False).query("status == 'ok'")
                ["wall_s"].sum() for run in SWEEP_RUNS)
    assert f"of the {len(SWEEP_RUNS)} runs below: {total / 60:.1f} min" in block
    assert profile_md == (ROOT / "results" / "cost-profile.md").read_text()


def test_the_seeds_come_from_the_configs_and_every_figure_run_asks_for_a_band_of_five():
    from rbrepro.report.fidelity import MIN_BAND_SEEDS
    from rbrepro.report.sections.configs import SEEDED_RUNS, config_seeds
    from rbrepro.sweep.config import load_config

    assert config_seeds({"seeds": [0, 1, 2, 3, 4], "datasets": {"mnist": {"seeds": [0]}, "d": {}}}) == "5; mnist 1"
    assert config_seeds({"seeds": [0], "band": {"seeds": [0, 1, 2, 3, 4], "at": "grid"}}) == "5 (band, at every sigma)"
    for run in SEEDED_RUNS:
        if run == "fig4":  # Fig. 4 draws no band against published points (its claim is a fit over R)
            continue
        config = load_config(ROOT / "configs" / f"{run}.yaml")
        seeds = config.band_seeds or config.seeds
        assert len(seeds) >= MIN_BAND_SEEDS, run
        assert all(len(spec.get("seeds") or seeds) >= MIN_BAND_SEEDS
                   for spec in config.to_dict()["datasets"].values()), run
    from rbrepro.report.render import build_all

    block = build_all(ROOT)[1]["report:seeds"]
    assert "3 seeds; mnist 1" not in block and "| `configs/fig3.yaml` | 5 |" in block


def test_the_provenance_names_the_runs_older_than_the_newest_and_their_quiet_share():
    from rbrepro.report.sections.provenance import provenance_section

    def run(commit: str, day: str, loads: list[float]) -> tuple[pd.DataFrame, dict]:
        return pd.DataFrame([{"dataset": "d", "method": "rb", "R": 8, "sigma": 1.0, "seed": s, "status": "ok",
                              "evaluate_on": "test", "git_commit": commit, "git_dirty": False,
                              "finished_at": f"{day}T10:00:00+0000", "load_other_cores": load, "concurrent_cells": 0}
                             for s, load in enumerate(loads)]), {"protocol": "fair"}

    loaded = {"fig3": run("a" * 40, "2026-11-23", [0.0, 1.0, 1.0, 1.0]),
              "fig5": run("b" * 40, "2026-11-25", [0.0, 0.1, 0.2, 0.3])}
    text = provenance_section(loaded, {"fig3": [], "fig5": []})
    assert "| results/fig3 | 4 | aaaaaaa | 2026-11-23 | 0 | 25 % |" in text
    assert "| results/fig5 | 4 | bbbbbbb | 2026-11-25 | 0 | 75 % |" in text
    assert "fig3 is older than the code of the newest run (bbbbbbb" in text


def test_a_timing_claim_says_how_many_of_its_rows_were_timed_quiet():
    rows = pd.DataFrame({"load_other_cores": [0.0, 0.2, 0.9, 0.0], "concurrent_cells": [0, 0, 0, 1]})
    assert O.quiet_note(rows).startswith("2 of 4 timed rows it reads taken quiet")
    assert O.quiet_note(rows.iloc[:0]) == ""


def _timed_rows(rows) -> pd.DataFrame:
    """Fig. 5-like test rows: (method, R, seed, metric, train s, entries) at one sigma."""
    return pd.DataFrame([{"dataset": "d", "method": m, "R": R, "sigma": 1.0, "seed": seed, "status": "ok",
                          "evaluate_on": "test", "metric": "accuracy", "test_metric": acc, "train_s": t,
                          "memory_model_entries": mem, "load_other_cores": 0.0, "concurrent_cells": 0}
                         for m, R, seed, acc, t, mem in rows])


def test_claim5_splits_the_speed_ratio_from_the_targets_only_rb_reaches():
    rows = _timed_rows([("rb", 8, 0, 91.0, 0.1, 8), ("rb", 64, 0, 96.0, 1.0, 64),
                        ("rf", 8, 0, 90.5, 0.3, 8), ("rf", 64, 0, 92.0, 3.0, 64)])
    config = {"datasets": {"d": {"targets": [90.0, 95.0, 99.0]}}}
    speed = C.claim5_faster_to_target(rows, config)
    alone = C.claim5b_reaches_alone(rows, config)
    # 90: both reach it, RB only x3 sooner -> the paper's ratio fails; 95: RB alone; 99: nobody (no case)
    assert [r[1] for r in speed.rows] == [90.0] and speed.passed == [False] and speed.verdict == O.FAILS
    assert [r[1] for r in alone.rows] == [90.0, 95.0] and alone.passed == [False, True]
    assert alone.verdict == O.PARTLY and "no baseline does" in alone.rule


def test_targets_and_ratios_read_the_median_over_seeds_not_the_mean():
    # RB at R = 8: seeds 90, 90.2, 99 -> median 90.2 (mean 93.07): the target 93 is not reached at R = 8
    rows = _timed_rows([("rb", 8, s, acc, 0.1, 8) for s, acc in enumerate((90.0, 90.2, 99.0))]
                       + [("rb", 64, s, 94.0, 1.0, 64) for s in range(3)]
                       + [("rf", 64, s, 93.5, 20.0, 64) for s in range(3)])
    finding = C.claim5_faster_to_target(rows, {"datasets": {"d": {"targets": [93.0]}}})
    (row,) = finding.rows
    assert row[2] == "1 (64)" and row[3] == 3 and row[5] == 20.0


def test_the_fair_claims_read_the_sigma_chosen_on_validation_not_the_best_on_test():
    frame = _fig3_rows([80.0, 85.5, 91.0, 95.0, 100.0], [80.0, 85.0, 90.0, 88.0, 70.0])
    frame["train_s"] = [1.0, 1.0, 5.0, 1.0, 1.0]
    frame["selected"] = frame["sigma"] == 0.1       # validation chose 0.1; the best on test is 1.0
    frame["selected_on"] = "validation"
    finding = C.claim2_best_sigma_is_cheap(frame)
    assert finding.rows[0][1] == "0.1 (validation)" and finding.verdict == O.HOLDS
    frame["selected"] = frame["sigma"] == 1.0
    assert C.claim2_best_sigma_is_cheap(frame).verdict == O.FAILS   # 5 s against 1 s


def _rcd_rows(dataset: str, method: str, seconds_per_epoch: dict, epochs: int = 10) -> list[dict]:
    """RCD cells whose objective falls geometrically, one per (variant, threads), seed 0."""
    import json

    rows = []
    for (variant, threads), s in seconds_per_epoch.items():
        trace = [[e * s, 0.5 ** e] for e in range(epochs + 1)]
        rows.append({"dataset": dataset, "method": method, "status": "ok", "seed": 0, "threads": threads,
                     "variant": variant, "R": 256, "D": 10**6 if method == "rb" else 256,
                     "rcd_trace": json.dumps(trace)})
    return rows


def test_claim7_fails_a_speedup_above_eq29s_bound_as_a_slower_baseline():
    honest = _rcd_rows("a", "rb", {("async", 1): 1.0, ("async", 2): 0.55}) + \
        _rcd_rows("a", "rf", {("async", 1): 1.0, ("async", 2): 2.0})
    too_fast = _rcd_rows("b", "rb", {("async", 1): 1.0, ("async", 2): 0.4}) + \
        _rcd_rows("b", "rf", {("async", 1): 1.0, ("async", 2): 2.0})
    finding = T.claim7_parallel_rcd(pd.DataFrame(honest + too_fast))
    by_dataset = {r[0]: r for r in finding.rows}
    assert by_dataset["a"][4] is True and by_dataset["a"][-1] == "yes"
    # x2.5 per epoch on 2 threads: outside what 2 cores allow, so it decides nothing (not a failure)
    assert by_dataset["b"][4] is False and by_dataset["b"][-1] == "inconclusive"
    assert by_dataset["b"][6] == 2.5 and finding.passed == [True] and finding.verdict == O.HOLDS


def test_claim7_judges_a_larger_machines_thread_sweep_beside_fig6_each_tau_against_its_own_1_thread_run():
    from rbrepro.report.sections.claims import claims_section

    here = _rcd_rows("a", "rb", {("async", 1): 1.0, ("async", 2): 0.55}) + \
        _rcd_rows("a", "rf", {("async", 1): 1.0, ("async", 2): 2.0})
    larger = _rcd_rows("a", "rb", {("async", 1): 2.0, ("async", 2): 1.1, ("async", 4): 0.6}) + \
        _rcd_rows("a", "rf", {("async", 1): 1.0, ("async", 2): 2.0, ("async", 4): 2.0})
    runs = {run: None for run in ("theory", "fig3", "fig3-as-published", "fig4", "fig5", "fig5-as-published")}
    text, _ = claims_section({**runs, "fig6": (pd.DataFrame(here), {})})
    assert f"`results/{T.THREADS_RUN}`" not in text       # not committed: not named
    text, summary = claims_section({**runs, "fig6": (pd.DataFrame(here), {}),
                                    T.THREADS_RUN: (pd.DataFrame(larger), {})})
    section = text.split("### Claim 7", 1)[1]
    assert f"From `results/{T.THREADS_RUN}`" in section and "tau measured: 2, 4 of" in section
    assert "| a | 4 | 3.333 |" in section               # 2.0 s per epoch on 1 thread of that machine, 0.6 on 4
    assert f"`{T.THREADS_RUN}`" in summary[-1][2]
