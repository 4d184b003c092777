"""A held-out split's kept rows as a view of the whole Random Binning matrix (features.kept_rows): every
product against the copy of those rows (`BinnedMatrix.rows`), and the held-out scores its steps carry
against a gather of the held-out rows' copy, through whole CG solves, their restarts and their buffers."""

import numpy as np
import pytest

from rbrepro.errors import InvalidParameter
from rbrepro.features import BinnedMatrix, RandomBinningFeatures
from rbrepro.solvers.cg import CGBuffers, ridge_cg
from rbrepro.solvers.stopping import held_out


def few_bins(n_rows, n_grids, bins, seed=0):
    """A matrix whose rows far outnumber each grid's bins: one target's steps run on the tuple layout."""
    rng = np.random.default_rng(seed)
    offsets = np.arange(n_grids + 1, dtype=np.int64) * bins
    local = rng.integers(0, bins, (n_grids, n_rows))
    local[:, :bins] = np.arange(bins)
    return BinnedMatrix((local + offsets[:-1, None]).astype(np.int32), offsets)


@pytest.fixture(params=["binned", "tuples"])
def split(request):
    """(whole matrix, held-out mask, targets): an RB fit, or a matrix on the tuple layout."""
    rng = np.random.default_rng(1)
    if request.param == "binned":
        X = rng.random((600, 5))
        Z = RandomBinningFeatures(n_grids=24, sigma=2.0, random_state=0).fit_transform_binned(X)
    else:
        Z = few_bins(6000, 12, 3)
        assert Z.tuple_layout() is not None
    held = held_out(Z.n_rows, 0.1, seed=3)
    Y = rng.standard_normal((Z.n_rows, 3))
    return Z, held, Y


def test_the_view_gives_the_copys_products(split):
    Z, held, Y = split
    kept, copy = Z.kept_rows(held), Z.rows(~held)
    assert kept.shape == copy.shape
    W = np.random.default_rng(2).standard_normal((Z.n_columns, 3))
    np.testing.assert_array_equal(kept.matvec(W), copy.matvec(W))
    np.testing.assert_allclose(kept.rmatvec(Y[~held]), copy.rmatvec(Y[~held]), rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(kept.gram_diagonal(), copy.gram_diagonal())
    for a, b in zip(kept.gram_diagonal_levels(), copy.gram_diagonal_levels()):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(kept.held_out.matvec(W), Z.rows(held).matvec(W))
    np.testing.assert_array_equal(kept.held_out.matvec(np.zeros_like(W)), np.zeros((int(held.sum()), 3)))


@pytest.mark.parametrize("C", [1, 3])
@pytest.mark.parametrize("preconditioned", [False, True])
def test_a_solve_on_the_view_takes_the_copys_steps_and_carries_the_held_out_scores(split, C, preconditioned):
    """The same iterates as on the copy up to the order of |Z p|^2's additions, and at every step the
    held-out scores the stopping rule reads equal a gather of the held-out rows' copy."""
    Z, held, Y = split
    kept, held_copy = Z.kept_rows(held), Z.rows(held)
    seen = []

    def check(it, W):
        seen.append(it)
        np.testing.assert_allclose(kept.held_out.matvec(W), held_copy.matvec(W), rtol=1e-10, atol=1e-12)
        return False

    # steps well above the residual's rounding: CG near convergence turns last-bit differences into larger ones
    on_view = ridge_cg(kept, Y[~held, :C], 0.05, maxit=6, tol=1e-300, preconditioned=preconditioned, callback=check)
    on_copy = ridge_cg(Z.rows(~held), Y[~held, :C], 0.05, maxit=6, tol=1e-300, preconditioned=preconditioned)
    assert seen == list(range(1, 7)) and on_copy.relative_residual.min() > 1e-8
    np.testing.assert_allclose(on_view.coef, on_copy.coef, rtol=1e-9, atol=1e-12)


def test_a_second_solve_on_kept_buffers_scores_its_own_iterate(split):
    """Buffers kept from solve to solve hand the next solve the very array the last one moved (zeroed):
    its held-out scores start again, at its start x0 too."""
    Z, held, Y = split
    kept, held_copy = Z.kept_rows(held), Z.rows(held)
    buffers = CGBuffers()
    first = ridge_cg(kept, Y[~held], 0.05, maxit=6, preconditioned=True, buffers=buffers)
    np.testing.assert_allclose(kept.held_out.matvec(first.coef), held_copy.matvec(first.coef), rtol=1e-10,
                               atol=1e-12)
    x0 = np.random.default_rng(4).standard_normal((Z.n_columns, 3))
    for start in (None, x0):
        def check(it, W):
            np.testing.assert_allclose(kept.held_out.matvec(W), held_copy.matvec(W), rtol=1e-10, atol=1e-12)
            return False

        again = ridge_cg(kept, Y[~held], 0.05, maxit=4, preconditioned=True, buffers=buffers, x0=start,
                         callback=check)
        assert again.coef is first.coef  # the same array, written over


def test_after_the_final_steps_move_the_searchs_array_its_held_out_scores_are_gathered_anew(split):
    """Early stopping's order: the search on the view, then the final steps on the whole matrix with the
    same buffers, which move the very array the search's steps tracked; the held-out rows' product of the
    result is then a gather of it, not the search's last scores."""
    Z, held, Y = split
    kept, held_copy = Z.kept_rows(held), Z.rows(held)
    buffers = CGBuffers()
    search = ridge_cg(kept, Y[~held], 0.05, maxit=5, preconditioned=True, buffers=buffers)
    best = search.coef.copy()
    final = ridge_cg(Z, Y, 0.05, maxit=3, preconditioned=True, buffers=buffers, x0=best)
    assert final.coef is search.coef
    np.testing.assert_allclose(kept.held_out.matvec(final.coef), held_copy.matvec(final.coef), rtol=1e-10,
                               atol=1e-12)
    assert kept.held_out.matvec(final.coef[:, 0]).shape == (int(held.sum()),)  # a 1-D iterate: 1-D scores


def test_kept_rows_refuses_a_mask_that_is_not_one_of_its_rows():
    Z = few_bins(100, 4, 3)
    with pytest.raises(InvalidParameter, match="boolean mask of the 100 rows"):
        Z.kept_rows(np.ones(99, dtype=bool))
    with pytest.raises(InvalidParameter, match="boolean mask"):
        Z.kept_rows(np.arange(100))


@pytest.mark.parametrize("n_classes", [2, 4])
def test_early_stopping_on_the_view_stops_where_the_copy_does(monkeypatch, n_classes):
    """The estimator's default fit (early stopping's search, then the final steps): the same step kept,
    the same search, coefficients equal up to rounding, on the view and on copies of the rows."""
    from rbrepro.models import RandomBinningClassifier

    rng = np.random.default_rng(5)
    X = rng.random((1500, 4))
    y = np.digitize(X[:, 0] + 0.3 * np.sin(6 * X[:, 1]) + 0.2 * rng.standard_normal(1500),
                    np.quantile(X[:, 0], np.linspace(0, 1, n_classes + 1)[1:-1]))
    on_view = RandomBinningClassifier(n_grids=32, sigma=1.0, random_state=0).fit(X, y)
    monkeypatch.delattr(BinnedMatrix, "kept_rows")
    on_copy = RandomBinningClassifier(n_grids=32, sigma=1.0, random_state=0).fit(X, y)
    assert on_view.early_stopping_ and on_copy.early_stopping_
    assert on_view.best_iteration_ == on_copy.best_iteration_ > 0
    assert on_view.search_iterations_ == on_copy.search_iterations_
    np.testing.assert_allclose(on_view.validation_scores_, on_copy.validation_scores_)
    np.testing.assert_allclose(on_view.coef_, on_copy.coef_, rtol=1e-7, atol=1e-8)
