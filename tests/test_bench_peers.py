"""bench.peers' core on toy inputs: the ladder stops at the first R reaching every target and refits
only there, targets follow the stated rule, rows say 'not reached', the CSV is written whole
(atomically, with its columns), and the figure is drawn from the CSVs alone. No timing assertions."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from bench import peers


def _toy(metric_of_R):
    calls = []

    def fit_score(R):
        calls.append(R)
        return 0.001 * R, metric_of_R(R)

    return fit_score, calls


def test_ladder_stops_at_first_R_reaching_every_target_and_repeats_only_there():
    fit_score, calls = _toy(lambda R: {16: 80.0, 32: 90.0, 64: 95.0, 128: 99.0}.get(R, 99.0))
    out = peers.climb(fit_score, [94.0, 89.0], True, rs=[16, 32, 64, 128, 256], budget_s=1e9, repeats=3)
    assert [R for R, _, _ in out.ladder] == [16, 32, 64]  # stopped once 95 >= 94
    assert out.reached == {94.0: 64, 89.0: 32}
    assert len(out.times[64]) == len(out.times[32]) == 3 and len(out.times[16]) == 1
    assert calls == [16, 32, 64, 32, 32, 64, 64]


def test_ladder_lower_is_better_and_budget_ends_it():
    fit_score, _ = _toy(lambda R: 1.0 / R)
    out = peers.climb(fit_score, [0.001], False, rs=[16, 32, 64, 128], budget_s=0.05, repeats=2)
    assert [R for R, _, _ in out.ladder] == [16, 32, 64]  # 0.064 s > 0.05 s budget: no R = 128
    assert out.reached == {0.001: None} and "budget" in out.note


def test_targets_rule():
    acc = peers.targets_from(97.0, True)
    assert [v for _, v in acc] == pytest.approx([96.5, 96.0, 95.0])
    err = peers.targets_from(0.20, False)
    assert [v for _, v in err] == pytest.approx([0.205, 0.21, 0.22])


def test_rows_csv_atomic_and_figure(tmp_path):
    targets = peers.targets_from(90.0, True)
    tv = [v for _, v in targets]
    fit_score, _ = _toy(lambda R: 60.0 + R / 4)
    ladder = peers.climb(fit_score, tv, True, rs=[16, 32, 64, 128], budget_s=1e9, repeats=3, method="toy RB")
    one = peers.single([0.5, 0.4, 0.6], 89.2, tv, True, "toy exact")
    machine = {"machine": "toy", "threads": 1, "git_commit": "abc"}
    rows = []
    for o in (ladder, one, peers.skipped("missing", "not installed")):
        rows += peers.rows_of("toy", "accuracy", targets, o, machine)
    by = {(r["method"], r["target_value"]): r for r in rows}
    assert by["toy RB", 89.5]["reached_R"] == 128 and by["toy RB", 89.5]["repeats"] == 3
    assert by["toy exact", 89.5]["reached_R"] == "not reached" and by["toy exact", 88.0]["reached_R"] == "-"
    assert by["toy exact", 88.0]["median_s"] == 0.5
    assert by["missing", 88.0]["reached_R"] == "not run" and by["missing", 88.0]["note"] == "not installed"

    out = tmp_path / "peers.csv"
    out.write_text("old,partial\n")
    peers.write_csv(out, rows, peers.FIELDS)
    assert not list(tmp_path.glob("*.part"))
    with open(out, newline="") as fh:
        back = list(csv.DictReader(fh))
    assert list(back[0]) == peers.FIELDS and len(back) == len(rows) == 9
    lad = tmp_path / "peers-ladder.csv"
    peers.write_csv(lad, peers.ladder_rows("toy", ladder) + peers.ladder_rows("toy", one), peers.LADDER_FIELDS)
    peers.draw(out, lad, tmp_path / "peers.png")
    assert (tmp_path / "peers.png").stat().st_size > 0
    table = peers.markdown(rows)
    assert "R = 128" in table and "not run" in table


def test_validation_slice_never_overlaps_and_labels_for_the_authors():
    fit, val = peers.validation_slice(100, cap=50)
    assert len(val) == 20 and len(fit) == 50 and not set(fit) & set(val)
    labels, n = peers.authors_labels(np.array([3.0, 1.0, 2.0, 3.0]), "classification")
    assert n == 3 and labels.tolist() == [2.0, 0.0, 1.0, 2.0]
    labels, n = peers.authors_labels(np.array([-1.0, 1.0]), "classification")
    assert n == 2 and labels.tolist() == [-1.0, 1.0]
    assert peers.authors_labels(np.array([0.5, 2.0]), "regression")[1] == 1


def test_firsts_counts_the_fastest_method_that_reaches_each_target():
    from bench.peers import firsts

    def row(target, method, R, s):
        return {"dataset": "d", "target": target, "target_value": 1.0, "method": method, "reached_R": R,
                "median_s": s}

    rows = [row("a", "rb", "64", 0.5), row("a", "svc", "-", 0.2), row("b", "rb", "128", 1.0),
            row("b", "svc", "not reached", 0.1), row("c", "rb", "not reached", 0.0), row("c", "svc", "not run", 0.0)]
    assert firsts(rows) == "first to the target: rb 1 of 3; svc 1 of 3"
