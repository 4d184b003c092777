"""Synthetic sets with the paper's shapes (rbrepro.data.synthetic): deterministic, the right shape
and classes, registered, cached and fingerprinted like any dataset, and learnable non-linearly."""

from __future__ import annotations

import numpy as np

from rbrepro.data.load import dataset_availability, load_dataset
from rbrepro.data.registry import REGISTRY, shape_dataset
from rbrepro.data.synthetic import SHAPES, generate, shape_digest


def test_every_shape_is_registered_with_the_papers_counts():
    for name, shape in SHAPES.items():
        spec = REGISTRY[shape_dataset(name)]
        assert (spec.n_train, spec.n_test, spec.n_features) == (shape.n_train, shape.n_test, shape.d)
        assert spec.generated and not spec.files and spec.source == f"synthetic:{name}"
    assert [REGISTRY[f"susy_shape_{tag}"].n_train for tag in ("10k", "100k", "1m")] == [10_000, 100_000, 1_000_000]
    assert shape_dataset("cod_rna") == "cod_rna_shape" and shape_dataset("susy_1m") == "susy_shape_1m"
    assert (SHAPES["susy"].n_train, SHAPES["susy"].n_test, SHAPES["susy"].d) == (4_000_000, 1_000_000, 18)
    assert (SHAPES["covtype"].n_train, SHAPES["covtype"].d) == (464_810, 54)


def test_generation_is_deterministic_scaled_and_balanced():
    X, y = generate(SHAPES["covtype"], seed=0, n_rows=5000)
    X2, y2 = generate(SHAPES["covtype"], seed=0, n_rows=5000)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    assert X.dtype == np.float32 and X.shape == (5000, 54) and 0.0 <= X.min() and X.max() <= 1.0
    assert set(np.unique(X[:, 10:])) <= {0.0, 1.0}  # the 44 one-hot columns
    assert (X[:, 10:14].sum(axis=1) == 1).all() and (X[:, 14:].sum(axis=1) == 1).all()  # area, soil
    assert not np.array_equal(generate(SHAPES["covtype"], seed=1, n_rows=5000)[0], X)
    assert abs((y == 1).mean() - 0.5) < 0.01
    _, y3 = generate(SHAPES["acoustic"], seed=0, n_rows=6000)
    assert sorted(np.unique(y3)) == [0.0, 1.0, 2.0] and np.bincount(y3.astype(int)).min() > 1000


def test_covtype_shape_rows_share_bins_as_real_rows_do():
    """The one-hot groups leave few (area, soil) combinations, so RB's bins hold many rows each;
    with 44 independent 0/1 columns (version 1) nearly every row had a bin of its own (D = N R)."""
    from rbrepro.features import RandomBinningFeatures

    X, _ = generate(SHAPES["covtype"], seed=0, n_rows=20_000)
    assert len(np.unique(X[:, 10:] @ (2.0 ** np.arange(44)))) <= 160
    Z = RandomBinningFeatures(n_grids=8, sigma=1.12, random_state=0).fit_transform_binned(X)
    assert Z.n_columns < 20_000 * 8 / 5, Z.n_columns


def test_shared_latent_factors_make_fewer_bins_than_independent_features():
    """The binning knobs do what the generator says: the smaller each feature's own share beside the
    latent factors, the fewer cells of a grid the rows fill (the real sets' correlated features)."""
    import dataclasses

    from rbrepro.features import RandomBinningFeatures

    def bins(**knobs):
        X, _ = generate(dataclasses.replace(SHAPES["cod_rna"], **knobs), seed=0, n_rows=20_000)
        return RandomBinningFeatures(n_grids=16, sigma=3.0, random_state=0).fit(X).n_bins_

    independent, half, mostly_shared = bins(latent_dims=0), bins(latent_dims=2, own_share=0.5), bins(latent_dims=2,
                                                                                                    own_share=0.05)
    assert independent > half > 3 * mostly_shared, (independent, half, mostly_shared)


def test_a_changed_knob_changes_the_fingerprint_and_the_cache_even_at_the_same_version(tmp_path, monkeypatch):
    import dataclasses

    from rbrepro.data import synthetic

    registered = SHAPES["cod_rna"]
    before = dataset_availability("cod_rna_shape", tmp_path)[0]
    monkeypatch.setitem(synthetic.SHAPES, "cod_rna", dataclasses.replace(registered, own_share=0.5))
    assert dataset_availability("cod_rna_shape", tmp_path)[0] != before
    assert shape_digest(synthetic.SHAPES["cod_rna"]) != shape_digest(registered)


def test_a_shape_whose_one_hot_groups_miss_binary_columns_is_refused():
    import pytest

    from rbrepro.data.synthetic import Shape

    with pytest.raises(ValueError, match=r"one-hot groups \(4, 39\) must cover the 44 binary columns"):
        Shape(10, 10, 54, binary_features=44, one_hot_groups=(4, 39))


def test_rb_learns_what_a_linear_model_cannot_on_the_cod_rna_shape():
    from sklearn.linear_model import RidgeClassifier

    from rbrepro.models import RandomBinningClassifier

    X, y = generate(SHAPES["cod_rna"], seed=0, n_rows=8000)
    rb = RandomBinningClassifier(n_grids=128, sigma=3.0, random_state=0).fit(X[:6000], y[:6000]).score(X[6000:], y[6000:])
    linear = RidgeClassifier().fit(X[:6000], y[:6000]).score(X[6000:], y[6000:])
    assert rb > linear + 0.04, (rb, linear)


def test_a_shape_loads_split_cached_and_fingerprinted(tmp_path):
    first = load_dataset("cod_rna_shape", tmp_path, progress=False)
    assert first.X_train.shape == (59_535, 8) and first.X_test.shape == (271_617, 8) and first.task == "binary"
    assert list((tmp_path / "cache").glob(f"synthetic-cod_rna-v{SHAPES['cod_rna'].version}-{shape_digest(SHAPES['cod_rna'])}.npz"))
    again = load_dataset("cod_rna_shape", tmp_path, progress=False)
    assert np.array_equal(first.X_train, again.X_train)
    fingerprint, why = dataset_availability("cod_rna_shape", tmp_path)
    assert why == "" and fingerprint == dataset_availability("cod_rna_shape", tmp_path / "elsewhere")[0]


def test_spreading_towards_ranks_keeps_equal_values_equal_and_the_order():
    from rbrepro.data.synthetic import _spread

    column = np.array([3.0, 1.0, 3.0, 2.0, 3.0, 0.0], dtype=np.float32)
    out = _spread(column, 1.0)  # pure ranks: 0 for the smallest, 1 for the largest, ties averaged
    assert np.allclose(out, [0.8, 0.2, 0.8, 0.4, 0.8, 0.0])
    half = _spread(column, 0.5)
    assert half[0] == half[2] == half[4] and np.array_equal(np.argsort(half, kind="stable"),
                                                            np.argsort(column, kind="stable"))
    assert np.allclose(_spread(column, 0.0), column / 3.0)
