"""Every measured number a reader sees in README.md and docs/ comes from a committed CSV: generated
blocks are filled by `rbrepro report` and checked by `rbrepro report --check`; hand-written prose
holds at most a handful of numbers with units, and those define settings, not results."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from rbrepro.errors import InvalidParameter
from rbrepro.report import blocks
from rbrepro.report.sections.bench import BENCH_BLOCKS, aims_block, stopping_block

ROOT = Path(__file__).resolve().parents[1]
#: a number with a unit, as a reader counts them: times, sizes, percentages, factors
UNIT = re.compile(r"(?<![\w.])(?:×\s?\d[\d,.]*|\d[\d,.]*\s?(?:ms|s|min|h|GB|MB|GiB|MiB|%|x)(?![\w]))")
#: the most numbers with units hand-written prose may hold (settings such as the authors' 50 CG steps)
HAND_NUMBERS = 10


def prose_numbers(text: str) -> list[tuple[int, str]]:
    """(line, number) of each number with a unit outside ``` fences and generated blocks."""
    hits, generated, fence = [], False, False
    for i, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s.startswith("```"):
            fence = not fence
            continue
        if s.startswith("<!-- /"):
            generated = False
            continue
        if blocks.OPENING.match(s):
            generated = True
            continue
        if not (fence or generated):
            hits += [(i, x) for x in UNIT.findall(line)]
    return hits


def test_hand_written_prose_holds_at_most_a_handful_of_numbers_with_units():
    found = {str(p.relative_to(ROOT)): prose_numbers(p.read_text()) for p in blocks.documents(ROOT)}
    assert sum(len(v) for v in found.values()) <= HAND_NUMBERS, {k: v for k, v in found.items() if v}


def test_the_counter_sees_prose_and_skips_code_and_generated_blocks():
    text = "\n".join(["RB takes 3.2 s, ×40 sooner.", "```", "took 9 s", "```", blocks.opening("bench:stopping"),
                      "| 97.5 % |", blocks.closing("bench:stopping"), "97 % again"])
    assert [x for _, x in prose_numbers(text)] == ["3.2 s", "×40", "97 %"]


def test_no_issue_numbers_in_the_pages_a_user_reads():
    pattern = re.compile(r"\bissues? ?#?\d+", re.IGNORECASE)
    for page in blocks.documents(ROOT):
        assert not pattern.search(page.read_text()), page


def test_a_block_is_filled_between_its_markers_and_a_wrong_marker_is_named_by_file_and_line():
    text = "intro\n<!-- bench:stopping -->\nold 3 s\n<!-- /bench:stopping -->\nrest"
    assert blocks.fill(text, {"bench:stopping": "new"}, "docs/p.md") == (
        f"intro\n{blocks.opening('bench:stopping')}\nnew\n{blocks.closing('bench:stopping')}\nrest")
    with pytest.raises(InvalidParameter, match=r"docs/p.md line 2: no generated block named 'bench:nope'"):
        blocks.fill("x\n<!-- bench:nope -->\n<!-- /bench:nope -->", {"bench:stopping": ""}, "docs/p.md")
    with pytest.raises(InvalidParameter, match=r"README.md line 1: block 'bench:stopping' opens but no line"):
        blocks.fill("<!-- bench:stopping -->\nno end", {"bench:stopping": ""}, "README.md")


def test_a_benchmark_block_says_where_its_numbers_come_from_or_which_command_writes_them(tmp_path):
    for name, build in BENCH_BLOCKS.items():
        assert "is committed" in build(tmp_path) and "`" in build(tmp_path), name
    rows = [{"dataset": "d", "R": 256, "rule": rule, "seed": seed, "metric": "accuracy", "test_metric": test,
             "train_s": secs, "git_commit": "abc", "git_dirty": False, "cpu": "CPU", "cpu_cores": 2, "numba_threads": 2,
             "load_other_cores": 0.01, "quiet": True, "finished_at": "2026-01-01T00:00:00"}
            for seed in (0, 1, 2) for rule, test, secs in (("authors", 97.0, 2.0), ("default", 96.9, 1.0))]
    (tmp_path / "bench" / "results").mkdir(parents=True)
    pd.DataFrame(rows).to_csv(tmp_path / "bench" / "results" / "stopping.csv", index=False)
    text = stopping_block(tmp_path)
    assert "on 0 of 1 datasets" in text and "| no | yes |" in text  # 0.1 points below is more than the slack
    assert "commit abc; clean tree; CPU, 2 logical cores; 2 threads; other cores' load 0.01 (quiet)" in text


def test_each_speed_aim_is_judged_against_its_steps_with_every_part_at_the_machines_floor(tmp_path):
    provenance = {"git_commit": "abc", "git_dirty": False, "cpu": "CPU", "cpu_cores": 2, "load_other_cores": 0.01,
                  "quiet": True}
    authors = [{"dataset": name, "R": R, "their_s": 30.0, "cg50_s": ours, "cg50_steps": steps, **provenance}
               for name, R, ours, steps in (("ijcnn1", 64, 0.9, 50), ("ijcnn1", 256, 1.5, 50), ("ijcnn1", 1024, 2.0, 40),
                                            ("cadata", 256, 9.0, None), ("cadata", 64, 9.0, 50))]
    roofline = []
    for R, featurize_floor, step_floor in ((64, 0.1, 10.0), (256, 0.1, 10.0), (1024, 0.2, 40.0)):
        for part, value, floor, unit in (("gather Z p", 3.0, 2.0, "ms"), ("scatter Z^T v + dots", 1.0, 1.0, "ms"),
                                         ("whole CG step", 2 * step_floor, step_floor, "ms"),
                                         ("featurize: numbering", 9.0, 1.0, "ms"),
                                         ("featurize", 2 * featurize_floor, featurize_floor, "s")):
            roofline.append({"figure": f"ijcnn1 R={R} {part}", "value": value, "baseline": floor, "unit": unit,
                             **provenance})
    (tmp_path / "bench" / "results").mkdir(parents=True)
    pd.DataFrame(authors).to_csv(tmp_path / "bench" / "results" / "authors.csv", index=False)
    pd.DataFrame(roofline).to_csv(tmp_path / "bench" / "results" / "roofline.csv", index=False)
    text = aims_block(tmp_path)
    assert text.startswith("Of 4 aims, 1 met, 1 within what the floors allow") and "1 past them" in text
    assert "1 without a floor measured" in text and "| cadata | 64 |" not in text  # no aim at cadata R = 64
    rows = {line.split(" | ")[1]: line for line in text.splitlines() if line.startswith("| ijcnn1 |")}
    assert "| ×33.3 |" in rows["64"] and "| met |" in rows["64"]
    # 0.1 s + 50 steps of 10 ms = 0.6 s at the floor, against the 1 s the aim needs
    assert "| 0.6 | ×50.0 | within the floor | featurize: numbering, gather Z p | 0.5 s less, of the 0.9 s above the floor |" in rows["256"]
    # 0.2 s + 40 steps of 40 ms = 1.8 s at the floor: 1.8 times what the aim allows
    assert "| 1.8 | ×16.7 | past the floor | featurize: numbering, gather Z p | a step ×1.80 below its floor" in rows["1024"]
    assert "| cadata | 256 | ×10 | 30 | 9 | – | ×3.3 | 3 | – | – | no floor measured |" in text
    assert text.count("From `bench/results/") == 2
    # floors measured on another CPU judge nothing: every aim not met says so and names that CPU
    pd.DataFrame(roofline).assign(cpu="Other CPU").to_csv(tmp_path / "bench" / "results" / "roofline.csv", index=False)
    text = aims_block(tmp_path)
    assert text.startswith("Of 4 aims, 1 met, 0 within what the floors allow") and "3 without a floor measured" in text
    assert text.count("`make bench-roofline` on this machine (the floors are of Other CPU)") == 3


def test_an_aim_whose_rule_runs_in_row_space_is_judged_by_the_row_space_steps_floor(tmp_path):
    from rbrepro.report.sections.bench import STEP_IN_ROW_SPACE

    provenance = {"git_commit": "abc", "git_dirty": False, "cpu": "CPU", "cpu_cores": 2, "load_other_cores": 0.01,
                  "quiet": True}
    authors = [{"dataset": "letter", "R": 256, "their_s": 10.0, "cg50_s": 2.0, "cg50_steps": 40, **provenance}]
    roofline = [{"figure": f"letter R=256 {part}", "value": value, "baseline": floor, "unit": unit, **provenance}
                for part, value, floor, unit in (("whole CG step", 40.0, 30.0, "ms"),
                                                 (STEP_IN_ROW_SPACE, 30.0, 20.0, "ms"),
                                                 ("featurize", 0.2, 0.1, "s"))]
    (tmp_path / "bench" / "results").mkdir(parents=True)
    pd.DataFrame(authors).to_csv(tmp_path / "bench" / "results" / "authors.csv", index=False)
    pd.DataFrame(roofline).to_csv(tmp_path / "bench" / "results" / "roofline.csv", index=False)
    row = next(line for line in aims_block(tmp_path).splitlines() if line.startswith("| letter |"))
    # 0.1 s + 40 steps of 20 ms (the row-space step's floor, not PCG's 30 ms) = 0.9 s, within the 1 s needed
    assert "| 0.9 | ×11.1 | within the floor | whole CG step in row space |" in row
