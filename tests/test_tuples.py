"""The tuple layout of a Random Binning matrix (features.tuples): S = T B exactly, its numbering against
plain numpy, and a CG step and solve on it against the plain layout and a dense reference."""

import numba
import numpy as np
import pytest

from rbrepro.features import BinnedMatrix, tuples
from rbrepro.features import _tuple_kernels as kernels
from rbrepro.features import reference as ref
from rbrepro.features._matvec_kernels import GROUP_SIZES, N_SUMS, reference_update
from rbrepro.solvers import ridge_cg


def few_bins(n_rows, n_grids, bins, seed=0, hot=None):
    """ids of n_grids grids with `bins` bins each (every bin used), rows spread uniformly, or, with hot,
    that share of the rows in each grid's first bin (popular bins: long runs of one address)."""
    rng = np.random.default_rng(seed)
    offsets = np.arange(n_grids + 1, dtype=np.int64) * bins
    local = rng.integers(0, bins, (n_grids, n_rows))
    local[:, :bins] = np.arange(bins)
    if hot is not None:
        local[rng.random((n_grids, n_rows)) < hot] = 0
    return (local + offsets[:-1, None]).astype(np.int32), offsets


def plain(Z):
    """The same matrix, held to the plain layout."""
    twin = BinnedMatrix(Z.ids, Z.offsets)
    twin._tuples = None
    return twin


@pytest.mark.parametrize(("k", "n_grids"), [(k, n) for n in (1, 5, 8) for k in (1, 2, 3, 4) if k <= n])
def test_numbering_equals_numpy_and_rebuilds_every_row(k, n_grids):
    ids, offsets = few_bins(400, n_grids, 3, seed=k + n_grids)
    layout = tuples.number_runs(ids, offsets, k)
    tuple_ids, members, starts = kernels.reference_number_tuples(ids, offsets, k)
    np.testing.assert_array_equal(layout.tuple_ids, tuple_ids)
    np.testing.assert_array_equal(layout.members, members)
    np.testing.assert_array_equal(layout.starts, starts)
    # S = T B: each row's tuple names its bins in every grid of the run, -1 past the last grid
    for s in range(layout.tuple_ids.shape[0]):
        rows_bins = layout.members[int(layout.starts[s]) + layout.tuple_ids[s].astype(np.int64)]
        for m in range(k):
            g = s * k + m
            expected = ids[g] if g < n_grids else np.full(ids.shape[1], -1)
            np.testing.assert_array_equal(rows_bins[:, m], expected)
    # the tuples of a run are distinct, and each tuple's number lies in its run's range
    for s in range(len(starts) - 1):
        block = layout.members[starts[s]:starts[s + 1]]
        assert len(np.unique(block, axis=0)) == len(block)
        assert (layout.tuple_ids[s] < starts[s + 1] - starts[s]).all()


def test_numbering_past_the_hash_tables_first_size_equals_numpy():
    """About 1,000 and 2,600 tuples a run over 3,000 rows: the table doubles several times, across key
    chunks."""
    ids, offsets = few_bins(3000, 9, 10, seed=11)
    for k in (3, 4):
        layout = tuples.number_runs(ids, offsets, k)
        assert np.diff(layout.starts).max() > 512  # the first table (1,024 slots) doubled twice at least
        reference = kernels.reference_number_tuples(ids, offsets, k)
        np.testing.assert_array_equal(layout.tuple_ids, reference[0])
        np.testing.assert_array_equal(layout.members, reference[1])
        np.testing.assert_array_equal(layout.starts, reference[2])


def test_a_row_in_an_unseen_bin_gets_no_layout():
    ids, offsets = few_bins(500, 8, 3)
    ids[3, 17] = -1  # a test row's bin that training never saw
    assert tuples.choose_run(ids, offsets) is None
    assert tuples.number_runs(ids, offsets, 2) is None
    assert BinnedMatrix(ids, offsets).tuple_layout() is None


def test_the_layout_is_chosen_where_tuples_are_few_beside_the_rows():
    few, offsets = few_bins(4000, 16, 3)
    k, count = tuples.choose_run(few, offsets)
    assert k == max(tuples.RUN_LENGTHS) and count == 81  # 1/4 + 81/4000 of the plain loads
    many, wide = few_bins(4000, 16, 500)  # 500 bins a grid: pairs are nearly all distinct
    assert tuples.choose_run(many, wide) is None
    assert BinnedMatrix(many, wide).tuple_layout() is None
    # a memory limit the layout would overrun: the plain layout serves
    assert tuples.tuple_layout(few, offsets, limit_bytes=1000) is None
    assert tuples.tuple_layout(few, offsets, limit_bytes=1e12).k == k


@pytest.mark.parametrize("bins", [3, 6, 8, 12, 60])
def test_a_count_that_stops_at_its_limit_chooses_as_the_whole_count_does(bins):
    """choose_run stops counting once a run cannot pay: the same choice as the rule (1/k + U/N at most
    LOADS_SHARE, the fewest loads) on whole counts, at tuple counts on either side of the bar."""
    ids, offsets = few_bins(2000, 8, bins, seed=bins)
    n = ids.shape[1]
    whole = {k: kernels.count_run_tuples(ids, offsets, 0, k, n) for k in tuples.RUN_LENGTHS}
    want, best = None, tuples.LOADS_SHARE
    for k in tuples.RUN_LENGTHS:
        if 1.0 / k + whole[k] / n <= best:
            want, best = k, 1.0 / k + whole[k] / n
    chosen = tuples.choose_run(ids, offsets)
    assert (chosen[0] if chosen else None) == want
    if chosen:
        assert chosen[1] == whole[want]
    for k, u in whole.items():
        for limit in (0, u // 2, u - 1, u, u + 5):
            assert kernels.count_run_tuples(ids, offsets, 0, k, limit) == min(u, limit + 1)


@pytest.mark.parametrize("n_tuples, chosen", [(100, (3, 100)), (101, None), (102, None)])
def test_the_choice_at_the_bar_is_the_whole_counts(n_tuples, chosen):
    """Runs of three grids whose tuples are exactly at the bar (1/3 + U/N = 1/2: U = N/6), one past it (the
    count's limit) and two past it (where the count stops), the fourth grid a bin a row (k = 4 cannot pay)."""
    n = 600
    t = np.arange(n) % n_tuples
    local = np.stack([t % 5, t // 5 % 5, t // 25, np.arange(n)])
    widths = np.array([5, 5, 5, n])
    offsets = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    ids = (local + offsets[:-1, None]).astype(np.int32)
    assert tuples.choose_run(ids, offsets) == chosen


def test_keys_that_would_overflow_are_not_tried():
    offsets = np.array([0, 2 ** 20, 2 ** 21, 2 ** 21 + 2 ** 20, 2 ** 22], dtype=np.int64)
    assert tuples.fits_key(offsets, 3) and not tuples.fits_key(offsets, 4)


@pytest.mark.parametrize("n_grids", [8, 11])  # 11: a shorter last run
@pytest.mark.parametrize("preconditioned", [False, True])
@pytest.mark.parametrize("hot", [None, 0.9])
def test_a_cg_step_on_tuples_equals_the_plain_layout_and_dense_algebra(n_grids, preconditioned, hot):
    ids, offsets = few_bins(3000, n_grids, 3, seed=n_grids, hot=hot)
    Z = BinnedMatrix(ids, offsets)
    assert Z.tuple_layout() is not None
    rng = np.random.default_rng(1)
    D = Z.n_columns
    P = rng.standard_normal((D, 1))
    W0, R0 = rng.standard_normal((D, 1)), rng.standard_normal((D, 1))
    inv_diag = rng.random(D) if preconditioned else np.empty(0)
    alpha = np.array([0.37])
    results, works = [], []
    for matrix in (Z, plain(Z)):
        W, Rk = W0.copy(), R0.copy()
        work, zp = matrix.normal_gather(P)
        sums = matrix.normal_update(work, P, 0.1, alpha, W, Rk, inv_diag if preconditioned else None)
        results.append((work.V.copy(), zp, W, Rk, sums))
        works.append(work)
    assert works[0].tuples is not None and works[1].tuples is None  # the first step ran on the tuples
    dense = ref.dense_features(ids, D) / Z.scale  # the 0/1 pattern S
    Wd, Rd = W0.copy(), R0.copy()
    expected = reference_update(dense, P, Wd, Rd, inv_diag, Z.scale ** 2, 0.1, alpha)
    for V, zp, W, Rk, (rr, rz) in results:
        np.testing.assert_allclose(V, dense @ P, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(zp, ((dense @ P) ** 2).sum(0) * Z.scale ** 2, rtol=1e-12)
        np.testing.assert_allclose(W, Wd, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(Rk, Rd, rtol=1e-12, atol=1e-11)
        np.testing.assert_allclose(rr, expected[0], rtol=1e-12)
        np.testing.assert_allclose(rz, expected[1], rtol=1e-12)


@pytest.mark.parametrize("preconditioned", [False, True])
def test_a_solve_on_tuples_equals_the_direct_solution(preconditioned):
    ids, offsets = few_bins(3000, 12, 4, seed=3, hot=0.5)
    Z = BinnedMatrix(ids, offsets)
    rng = np.random.default_rng(2)
    y = rng.standard_normal(Z.n_rows)
    dense = ref.dense_features(ids, Z.n_columns)  # Z, scaled
    direct = np.linalg.solve(dense.T @ dense + 0.01 * np.eye(Z.n_columns), dense.T @ y)
    result = ridge_cg(Z, y, 0.01, maxit=2000, tol=1e-12, preconditioned=preconditioned, x0=np.zeros(Z.n_columns))
    assert Z.tuple_layout() is not None and result.converged
    np.testing.assert_allclose(result.coef[:, 0], direct, atol=1e-8)
    twin = ridge_cg(plain(Z), y, 0.01, maxit=2000, tol=1e-12, preconditioned=preconditioned,
                    x0=np.zeros(Z.n_columns))
    np.testing.assert_allclose(result.coef, twin.coef, atol=1e-9)


def test_the_same_bits_on_one_thread_and_two():
    ids, offsets = few_bins(5000, 160, 3, seed=4, hot=0.3)  # 40 runs: three groups and five gather passes
    y = np.random.default_rng(3).standard_normal(5000)
    before = numba.get_num_threads()
    coefs = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            Z = BinnedMatrix(ids, offsets)
            coefs.append(ridge_cg(Z, y, 0.01, maxit=20, tol=1e-14, preconditioned=True,
                                  x0=np.zeros(Z.n_columns)).coef)
            assert Z.tuple_layout() is not None
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(coefs[0], coefs[1])


def test_most_rows_of_a_matrix_take_its_layout_and_few_number_their_own():
    ids, offsets = few_bins(4000, 12, 3, seed=5)
    Z = BinnedMatrix(ids, offsets)
    mask = np.random.default_rng(4).random(4000) < 0.9
    kept = Z.rows(mask)
    whole = Z.tuple_layout()
    np.testing.assert_array_equal(kept.tuple_layout().tuple_ids, whole.tuple_ids[:, mask])
    assert kept.tuple_layout().members is whole.members
    few = Z.rows(~mask)  # a tenth of the rows: numbered on their own
    np.testing.assert_array_equal(few.tuple_layout().tuple_ids,
                                  tuples.number_runs(ids[:, ~mask], offsets, few.tuple_layout().k).tuple_ids)
    # a step on the kept rows is the plain layout's
    P = np.random.default_rng(5).standard_normal((Z.n_columns, 1))
    np.testing.assert_allclose(kept.normal_gather(P)[1], plain(kept).normal_gather(P)[1], rtol=1e-12)


def test_runs_with_more_tuples_than_uint16_holds_keep_uint32_ids():
    narrow, offsets = few_bins(70_000, 4, 3, seed=6)  # more rows than uint16 counts, few tuples: narrowed
    assert tuples.number_runs(narrow, offsets, 2).tuple_ids.dtype == np.uint16
    wide, wide_offsets = few_bins(70_000, 4, 1000, seed=7)  # about 67,700 distinct pairs a run
    layout = tuples.number_runs(wide, wide_offsets, 2)
    assert layout.tuple_ids.dtype == np.uint32 and np.diff(layout.starts).max() > 2 ** 16
    Z = BinnedMatrix(wide, wide_offsets)
    Z._tuples = layout  # held to this layout (it would not pay here), to check its kernels on uint32 ids
    P = np.random.default_rng(8).standard_normal((Z.n_columns, 1))
    V = Z.normal_gather(P)[0].V
    np.testing.assert_allclose(V, plain(Z).normal_gather(P)[0].V, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("group", GROUP_SIZES)
@pytest.mark.parametrize("n_grids", [40, 41])  # 20 or 21 runs: full groups, a shorter one, a shorter last run
def test_the_scatter_at_each_group_size_and_the_gather_over_many_runs_equal_dense_algebra(group, n_grids):
    ids, offsets = few_bins(2000, n_grids, 3, seed=group + n_grids, hot=0.5)
    layout = tuples.number_runs(ids, offsets, 2)
    D = int(offsets[-1])
    rng = np.random.default_rng(group)
    S = ref.dense_features(ids, D) * np.sqrt(n_grids)
    p, w0, r0, inv_diag = rng.standard_normal(D), rng.standard_normal(D), rng.standard_normal(D), rng.random(D)
    t, v = np.empty(layout.n_tuples), np.empty(ids.shape[1])
    kernels.tuple_sums(p, layout.members, t)
    kernels.gather_tuples(layout.tuple_ids, layout.starts, t, v)
    np.testing.assert_allclose(v, S @ p, rtol=1e-12, atol=1e-12)
    w, r, acc = w0.copy(), r0.copy(), np.empty(D)
    grid_sums = np.empty((n_grids, N_SUMS))
    kernels.scatter_update_tuples(layout.tuple_ids, v, layout.starts, layout.members, layout.k, offsets, p, w, r,
                                  inv_diag, 0.5, 0.1, 0.3, t, acc, grid_sums, group)
    wd, rd = w0[:, None].copy(), r0[:, None].copy()
    expected = reference_update(S, p[:, None], wd, rd, inv_diag, 0.5, 0.1, np.array([0.3]))
    np.testing.assert_allclose(acc, S.T @ v, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(w, wd[:, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r, rd[:, 0], rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(grid_sums.sum(0), np.concatenate(expected), rtol=1e-11)


def test_step_buffers_of_another_layout_are_made_again():
    ids, offsets = few_bins(3000, 12, 3, seed=9)
    Z, other = BinnedMatrix(ids, offsets), BinnedMatrix(*few_bins(3000, 12, 4, seed=10))
    P = np.random.default_rng(6).standard_normal((Z.n_columns, 1))
    work, _ = other.normal_gather(np.ones((other.n_columns, 1)))  # the same rows, another matrix's tuples
    assert work.tuples.shape[0] != Z.tuple_layout().n_tuples
    mine, zp = Z.normal_gather(P, work)
    assert mine is not work and mine.tuples.shape[0] == Z.tuple_layout().n_tuples
    np.testing.assert_allclose(zp, plain(Z).normal_gather(P)[1], rtol=1e-12)
    plain_work, _ = plain(Z).normal_gather(P)
    assert Z.normal_gather(P, plain_work)[0] is not plain_work  # plain buffers: no tuple scratch


def test_a_pickled_matrix_leaves_its_layout_and_its_source_behind():
    import gc
    import pickle

    ids, offsets = few_bins(3000, 12, 3, seed=12)
    Z = BinnedMatrix(ids, offsets)
    kept = Z.rows(np.arange(3000) % 10 != 0)
    Z.tuple_layout()
    copy = pickle.loads(pickle.dumps(kept))
    assert copy._tuples is False and copy._tuples_from is None
    k = kept.tuple_layout().k
    np.testing.assert_array_equal(copy.tuple_layout().tuple_ids, tuples.number_runs(kept.ids, offsets, k).tuple_ids)
    orphan = Z.rows(np.arange(3000) % 10 != 1)
    del Z
    gc.collect()
    assert orphan.tuple_layout() is not None  # its source gone: numbered afresh
