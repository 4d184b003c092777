"""The authors' protocol completed (docs/authors-protocol.md): their draws, their scoring,
cadata's scaling over every row, the baselines at the exact kernel's width, and bands of
seeds that form each published point."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rbrepro.features.authors_rng import authors_grids
from rbrepro.features.random_binning import RandomBinningFeatures
from rbrepro.models.cell import CellParams
from rbrepro.models.targets import authors_accuracy, encode
from rbrepro.sweep.backends import LocalBackend
from rbrepro.sweep.cells import cells_on_test
from rbrepro.sweep.config import ConfigError, parse_config
from rbrepro.sweep.runner import run_sweep


def test_authors_draws_are_the_features_grids_whatever_the_seed():
    X = np.random.default_rng(0).random((50, 6))
    a = RandomBinningFeatures(n_grids=8, sigma=1.58, random_state=0, draws="authors").fit(X)
    b = RandomBinningFeatures(n_grids=8, sigma=1.58, random_state=7, draws="authors").fit(X)
    deltas, offsets = authors_grids(8, 6, 1.58)
    assert np.array_equal(a.deltas_, deltas) and np.array_equal(a.offsets_, offsets)
    assert np.array_equal(a.transform(X).toarray(), b.transform(X).toarray())
    with pytest.raises(ValueError, match="draws must be one of"):
        RandomBinningFeatures(n_grids=2, draws="mersenne").fit(X)


def test_authors_label_layout_never_predicts_a_label_past_the_class_count():
    y = np.array([1, 2, 3, 3, 2, 1])  # like letter (1 ... 26) or acoustic (1 ... 3): columns 0 ... 2
    Y, classes = encode(y, "classification", layout="authors")
    assert classes.tolist() == [0, 1, 2]
    assert Y[:, 0].tolist() == [-1] * 6                         # label 0 never occurs
    assert (Y[y == 3] == -1).all()                              # label 3 has no column: never predicted
    assert Y[y == 1, 1].tolist() == [1, 1] and Y[y == 2, 2].tolist() == [1, 1]
    scores = np.array([[0.0, 0.9, 0.1], [0.0, 0.1, 0.8], [0.5, 0.1, 0.2]])
    assert authors_accuracy(np.array([1, 2, 3]), scores, classes) == pytest.approx(200 / 3)


def test_authors_scoring_counts_a_tie_as_wrong():
    classes = np.array([-1, 1])
    scores = np.array([0.3, -0.2, 0.0, 0.0])
    assert authors_accuracy(np.array([1, -1, -1, 1]), scores, classes) == 50.0  # both ties wrong


def test_authors_scoring_in_a_cell_on_a_multiclass_set():
    from rbrepro.data.load import load_dataset
    from rbrepro.models.cell import run_cell

    data = load_dataset("digits", progress=False)
    standard = run_cell(CellParams(dataset="digits", method="rb", sigma=0.3, R=32, threads=1), data)
    authors = run_cell(CellParams(dataset="digits", method="rb", sigma=0.3, R=32, threads=1, scoring="authors"),
                       data)
    # digits' labels are 0 ... 9: the authors' layout is the sorted one, so the scores agree
    assert authors["test_metric"] == pytest.approx(standard["test_metric"])
    assert authors["scoring"] == "authors" and standard["scoring"] == "standard"
    shifted = data.__class__(**{**data.__dict__, "y_train": data.y_train + 1, "y_test": data.y_test + 1})
    off = run_cell(CellParams(dataset="digits", method="rb", sigma=0.3, R=32, threads=1, scoring="authors"), shifted)
    share_of_10 = 100.0 * np.mean(shifted.y_test == 10)
    assert off["test_metric"] <= 100.0 - share_of_10 + 1e-9  # label 10 is never predicted, as letter's 26


def test_maxabs_all_divides_by_the_largest_magnitude_over_training_and_test_rows(tmp_path):
    from rbrepro.data.load import load_dataset

    rows = ["1 1:2 2:-1", "-1 1:1 2:4", "1 1:8 2:1", "-1 1:3 2:1", "1 1:-16 2:2"]
    path = tmp_path / "tiny.libsvm"
    path.write_text("\n".join(rows * 4) + "\n")
    data = load_dataset(str(path), data_path=tmp_path / "cache", scaling="maxabs-all", progress=False)
    both = np.vstack([data.X_train.toarray() if hasattr(data.X_train, "toarray") else data.X_train,
                      data.X_test.toarray() if hasattr(data.X_test, "toarray") else data.X_test])
    np.testing.assert_allclose(np.abs(both).max(axis=0), [1.0, 1.0], rtol=1e-6)
    assert data.scaling == "maxabs on all rows"


def test_rng_and_scoring_of_the_authors_are_as_published_only():
    for key in ("rng: authors", "scoring: authors"):
        with pytest.raises(ConfigError, match=rf"t.yaml:\d+: {key.split(':')[0]}: .*only with `protocol: as-published`"):
            parse_config(f"name: t\nprotocol: fair\n{key}\ndatasets: [digits]\ndefaults: {{sigma: [1]}}\n", "t.yaml")
    cfg = parse_config("name: t\nprotocol: as-published\nrng: authors\nscoring: authors\nmethods: [rb, rf]\n"
                       "datasets: [digits]\ndefaults: {sigma: [1], R: [8]}\n", "t.yaml")
    cells = {c.method: c for c in cells_on_test(cfg)}
    assert cells["rb"].rng == "authors" and cells["rf"].rng == "numpy"
    assert {c.scoring for c in cells.values()} == {"authors"}


@pytest.mark.slow
def test_baselines_take_the_exact_kernels_width_and_bands_run_at_the_choice(tmp_path):
    cfg = parse_config("name: p\nprotocol: as-published\nkernel: euclidean\nmethods: [rb, rf, exact]\n"
                       "rng: authors\nband: {seeds: [0, 1, 2], at: chosen}\n"
                       "sigma_selection: {on: test, per: {rb: R, default: exact}}\n"
                       "datasets:\n  digits: {sigma: [0.03, 0.3], baseline_sigma: [0.01, 0.03, 0.1],"
                       " exact_sigma: [0.01, 0.03, 0.1], R: [8, 16]}\n", "p.yaml")
    assert not [c for c in cells_on_test(cfg) if c.method == "rf"]  # rf waits for the exact kernel's choice
    run_sweep(cfg, tmp_path / "res", backend=LocalBackend(2))
    frame = pd.read_csv(tmp_path / "res" / "results.csv")
    exact = frame[frame["method"] == "exact"]
    best = exact[exact["test_metric"] == exact["test_metric"].max()]["sigma"].min()  # a tie: the smaller sigma
    rf = frame[frame["method"] == "rf"]
    assert set(rf["sigma"]) == {best} and rf["selected"].all()
    assert sorted(rf[rf["R"] == 8]["seed"]) == [0, 1, 2]
    rb = frame[frame["method"] == "rb"]
    chooser = rb[rb["rng"] == "authors"]
    assert len(chooser) == 2 * 2 and set(chooser["seed"]) == {0}
    for R in (8, 16):  # the choice is the authors' draw's best; the band (numpy draws) sits at it
        at_R = chooser[chooser["R"] == R]
        picked = at_R[at_R["test_metric"] == at_R["test_metric"].max()]["sigma"].min()
        band = rb[(rb["rng"] == "numpy") & (rb["R"] == R)]
        assert set(band["sigma"]) == {picked} and sorted(band["seed"]) == [0, 1, 2]
    with pytest.raises(ConfigError, match="runs no exact kernel: list the one sigma"):
        parse_config("name: p\nprotocol: as-published\nmethods: [rf]\nsigma_selection: {on: test, per: exact}\n"
                     "datasets:\n  digits: {sigma: [1, 2], R: [8]}\n", "p.yaml")
