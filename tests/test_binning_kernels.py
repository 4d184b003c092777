"""Every Random Binning numba kernel against its plain-numpy reference."""

import numpy as np
import pytest
import scipy.sparse as sp

from rbrepro.features import RandomBinningFeatures, random_binning
from rbrepro.features import _binning_kernels as kernels
from rbrepro.features import reference as ref


def _fit(X, R=12, sigma=2.0, seed=3):
    rb = RandomBinningFeatures(n_grids=R, sigma=sigma, random_state=seed)
    return rb, rb.fit_transform_binned(X)


@pytest.fixture
def X():
    return np.random.default_rng(0).random((400, 6))


def test_keys_and_column_ids_match_reference(X):
    rb, Z = _fit(X)
    keys = ref.bin_keys(X, rb.offsets_, 1.0 / rb.deltas_, rb._multipliers)
    local, n_bins = ref.column_ids(keys)
    np.testing.assert_array_equal(n_bins, rb.bins_per_grid_)
    np.testing.assert_array_equal(Z.ids, local + rb.column_offsets_[:-1, None])
    assert rb.n_bins_ == n_bins.sum() and Z.n_columns == rb.n_bins_


def test_keys_separate_exactly_the_distinct_bin_vectors(X):
    rb, Z = _fit(X, R=5)
    bins = ref.bin_vectors(X, rb.offsets_, 1.0 / rb.deltas_)
    for r in range(5):
        n_distinct = len(np.unique(bins[r], axis=0))
        assert rb.bins_per_grid_[r] == n_distinct
        # rows share a column exactly when they share the whole bin vector
        same_col = Z.ids[r][:, None] == Z.ids[r][None, :]
        same_bin = (bins[r][:, None, :] == bins[r][None, :, :]).all(axis=2)
        np.testing.assert_array_equal(same_col, same_bin)


def test_kappa_is_mean_inverse_largest_bin_share(X):
    rb, Z = _fit(X)
    expected = np.mean([len(X) / np.bincount(Z.ids[r] - Z.offsets[r]).max() for r in range(Z.n_grids)])
    assert rb.kappa_ == pytest.approx(expected)
    assert rb.nnz_ == Z.nnz == len(X) * 12


def test_sparse_input_gives_the_same_columns_as_dense():
    rng = np.random.default_rng(1)
    X = rng.random((300, 40)) * (rng.random((300, 40)) < 0.2)
    rb_dense, Z_dense = _fit(X, R=9)
    rb_sparse, Z_sparse = _fit(sp.csr_matrix(X), R=9)
    np.testing.assert_array_equal(Z_dense.ids, Z_sparse.ids)
    np.testing.assert_array_equal(rb_dense.transform_binned(X[:50]).ids, rb_sparse.transform_binned(sp.csr_matrix(X[:50])).ids)


def test_transform_of_training_rows_reproduces_fit_and_unseen_bins_are_dropped(X):
    rb, Z = _fit(X)
    np.testing.assert_array_equal(rb.transform_binned(X).ids, Z.ids)
    far = X[:20] + 50.0  # far outside the training range: every bin unseen
    assert (rb.transform_binned(far).ids == -1).all()
    mixed = np.vstack([X[:5], far[:5]])
    Zm = rb.transform_binned(mixed)
    assert (Zm.ids[:, :5] >= 0).all() and (Zm.ids[:, 5:] == -1).all()
    assert rb.transform(far).nnz == 0


@pytest.mark.parametrize("sparse", [False, True])
def test_grid_batches_do_not_change_the_result(X, monkeypatch, sparse):
    X = sp.csr_matrix(X) if sparse else X
    _, Z_one = _fit(X, R=20)
    name = "SPARSE_KEY_BATCH_BYTES" if sparse else "KEY_BATCH_BYTES"
    monkeypatch.setattr(random_binning, name, 8 * X.shape[0] * 3)  # tiny batches
    rb, Z_many = _fit(X, R=20)
    assert len(list(random_binning._grid_batches(20, X.shape[0], sparse))) > 1
    np.testing.assert_array_equal(Z_one.ids, Z_many.ids)
    np.testing.assert_array_equal(rb.transform_binned(X).ids, Z_one.ids)


@pytest.mark.parametrize("n_rows", [1, 3_000, 35_000, 10**6])
@pytest.mark.parametrize("sparse", [False, True])
def test_grid_batches_cover_every_grid_once_csr_batches_a_vector_multiple(n_rows, sparse):
    """The batches tile 0 ... R in order; a CSR batch (vectorized over its grids) is a multiple of
    SPARSE_KEY_GRID_MULTIPLE grids unless it is the last or the batch is narrower than one multiple."""
    for R in (1, 7, 64, 1000, 1024):
        batches = list(random_binning._grid_batches(R, n_rows, sparse))
        assert [lo for lo, _ in batches] == [0] + [hi for _, hi in batches[:-1]] and batches[-1][1] == R
        if sparse:
            widths = [hi - lo for lo, hi in batches[:-1]]
            assert all(w % random_binning.SPARSE_KEY_GRID_MULTIPLE == 0 or w < random_binning.SPARSE_KEY_GRID_MULTIPLE
                       for w in widths)


@pytest.mark.parametrize("n_rows", [1, 255, 256, 257, 1000])  # one row; a block less one, exactly one, one more; several
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sparse", [False, True])
def test_key_kernels_match_reference_across_row_blocks(n_rows, dtype, sparse):
    """The key kernels work a block of KEY_ROW_BLOCK rows at a time: every row of every block, the
    last one short, gets exactly the reference key (integer sums mod 2^64: no rounding to allow)."""
    rng = np.random.default_rng(n_rows)
    X = rng.random((n_rows, 7)).astype(dtype)
    X[rng.random(X.shape) < 0.4] = 0.0  # stored zeros are absent from the CSR form
    rb = RandomBinningFeatures(n_grids=9, sigma=3.0, random_state=1)
    rb.prepare_grids(X.shape[1])
    keys = rb._keys(sp.csr_matrix(X) if sparse else X, 0, 9)
    expected = ref.bin_keys(X, rb.offsets_, 1.0 / rb.deltas_, rb._multipliers)
    np.testing.assert_array_equal(keys, expected)


@pytest.mark.parametrize("n_cols", [1, 3])
@pytest.mark.parametrize("R", [3, 12, 13])  # 3: fewer grids than a group; 13: the groups of four leave one over
def test_gather_and_scatter_match_dense_products(X, n_cols, R):
    rb, Z = _fit(X, R=R)
    rng = np.random.default_rng(2)
    dense = ref.dense_features(Z.ids, Z.n_columns)
    W = rng.standard_normal((Z.n_columns, n_cols))
    V = rng.standard_normal((len(X), n_cols))
    np.testing.assert_allclose(Z.matvec(W), dense @ W, atol=1e-12)
    np.testing.assert_allclose(Z.rmatvec(V), dense.T @ V, atol=1e-12)
    np.testing.assert_allclose(Z.matvec(W[:, 0]), dense @ W[:, 0], atol=1e-12)
    # test-time matrix with unseen bins (-1) is handled by the same kernels
    Zt = rb.transform_binned(np.vstack([X[:30], X[:30] + 50.0]))
    dense_t = ref.dense_features(Zt.ids, Zt.n_columns)
    np.testing.assert_allclose(Zt.matvec(W), dense_t @ W, atol=1e-12)
    np.testing.assert_allclose(Zt.rmatvec(V[:60]), dense_t.T @ V[:60], atol=1e-12)


@pytest.mark.parametrize("R", [3, 4, 8, 12, 13, 16, 21])  # below a group; one group; whole passes; a group over
def test_one_target_gather_adds_each_group_of_four_grids_in_order(X, R):
    """The one-target gather walks the rows once for two groups of four grids, yet adds as a pass a group
    does: out = out + ((w_a + w_b) + w_c) + w_d for each whole group in order, then the grids left one by
    one, unseen bins (-1) left out; the sums agree with that order bit for bit."""
    from rbrepro.features import _matvec_kernels as kernels

    rb, _ = _fit(X, R=R)
    Zt = rb.transform_binned(np.vstack([X, X[:30] + 50.0]))
    w = np.random.default_rng(8).standard_normal(Zt.n_columns)
    terms = np.where(Zt.ids >= 0, w[np.maximum(Zt.ids, 0)], 0.0)
    expected = np.zeros(Zt.n_rows)
    full = R - R % kernels.GRID_GROUP
    for r0 in range(0, full, kernels.GRID_GROUP):
        expected = expected + ((((0.0 + terms[r0]) + terms[r0 + 1]) + terms[r0 + 2]) + terms[r0 + 3])
    for r in range(full, R):
        expected = expected + terms[r]
    out = np.empty(Zt.n_rows)
    kernels.gather_vector(Zt.ids, w, Zt.offsets, out)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("R", [3, 12, 13, 17, 33])  # fewer grids than a group; whole groups; one over
def test_grouped_scatter_sums_each_column_in_row_order(X, R):
    """The scatters walk a group of grids together (4, 8 or 16, `scatter_group`); every column must still
    add its rows in increasing order, as one grid at a time does (np.add.at), so the sums agree bit for bit
    at every group size."""
    from rbrepro.features import _matvec_kernels as kernels

    rb, _ = _fit(X, R=R)
    Zt = rb.transform_binned(np.vstack([X, X[:30] + 50.0]))  # with unseen bins (-1)
    rng = np.random.default_rng(7)
    V = rng.standard_normal((Zt.n_rows, 2))
    expected = np.zeros((Zt.n_columns, 2))
    for r in range(R):
        seen = Zt.ids[r] >= 0
        for c in range(2):
            np.add.at(expected[:, c], Zt.ids[r][seen], V[seen, c])
    out = np.empty((Zt.n_columns, 2))
    kernels.scatter(Zt.ids, V, Zt.offsets, out)
    np.testing.assert_array_equal(out, expected)
    for group in kernels.GROUP_SIZES:
        out1 = np.full(Zt.n_columns, np.nan)
        kernels._scatter_vector_at(Zt.ids, np.ascontiguousarray(V[:, 0]), Zt.offsets, out1, group)
        np.testing.assert_array_equal(out1, expected[:, 0])


@pytest.mark.parametrize("R", [3, 12, 13, 17, 33])
@pytest.mark.parametrize("n_cols", [1, 3])  # one target's kernel, and several targets'
@pytest.mark.parametrize("preconditioned", [True, False])
def test_scatter_update_matches_numpy_at_every_group_size(X, R, n_cols, preconditioned):
    """The scatter that finishes a CG step, fused with its update (W += alpha P; Rk -= alpha (Z^T Z + lam) P)
    and the new residual's two norms, against plain numpy, at every group size: the same W and Rk, bit
    for bit across the sizes, and each grid's sums in a fixed order."""
    from rbrepro.features import _matvec_kernels as kernels

    rb, Z = _fit(X, R=R)
    S = Z.to_csr() * np.sqrt(R)  # the 0/1 pattern
    rng = np.random.default_rng(8)
    D = Z.n_columns
    P, W0, R0 = (rng.standard_normal((D, n_cols)) for _ in range(3))
    alpha = rng.random(n_cols)
    inv_diag = rng.random(D) if preconditioned else np.empty(0)
    W_want, R_want = W0.copy(), R0.copy()
    rr_want, rz_want = kernels.reference_update(S, P, W_want, R_want, inv_diag, 0.25, 0.5, alpha)
    V = np.ascontiguousarray(S @ P)
    results = []
    for group in kernels.group_sizes(n_cols):
        W, Rk = W0.copy(), R0.copy()
        if n_cols == 1:
            sums = np.empty((R, kernels.N_SUMS))
            kernels.scatter_update_vector(Z.ids, V[:, 0].copy(), Z.offsets, P[:, 0].copy(), W.reshape(-1),
                                          Rk.reshape(-1), inv_diag, 0.25, 0.5, alpha[0], np.empty(D), sums, group)
        else:
            sums = np.empty((R, kernels.N_SUMS, n_cols))
            scratch = kernels.update_scratch(Z.offsets, 2, n_cols, group)
            kernels.scatter_update(Z.ids, V, Z.offsets, P, W, Rk, inv_diag, 0.25, 0.5, alpha, scratch, sums, group)
        np.testing.assert_allclose(W, W_want, rtol=1e-13)
        np.testing.assert_allclose(Rk, R_want, rtol=1e-12, atol=1e-12)
        total = sums.sum(axis=0).reshape(kernels.N_SUMS, n_cols)
        np.testing.assert_allclose(total[0], rr_want, rtol=1e-12)
        np.testing.assert_allclose(total[1], rz_want, rtol=1e-12)
        results.append((W, Rk, sums))
    for W, Rk, sums in results[1:]:
        np.testing.assert_array_equal(W, results[0][0])
        np.testing.assert_array_equal(Rk, results[0][1])
        np.testing.assert_array_equal(sums, results[0][2])


@pytest.mark.parametrize("l2, expected", [(512 * 1024, 16), (64 * 1024, 8), (1024, 4)])
def test_scatter_group_is_the_largest_whose_columns_fit_the_l2_share(monkeypatch, l2, expected):
    """scatter_group: the largest of the target count's group sizes whose mean grid's columns (times the
    targets) fill at most GROUP_CACHE_SHARE of the L2 cache, else the smallest."""
    from rbrepro.features import _matvec_kernels as kernels

    monkeypatch.setattr(kernels, "l2_cache_bytes", lambda: l2)
    offsets = np.arange(0, 64 * 500 + 1, 500)  # 64 grids of 500 columns: 4 KB a grid for one target
    assert kernels.scatter_group(offsets, 1) == expected
    # several targets: the same rule over their own sizes, which go down to 2 grids (3 targets: 12 KB a grid)
    assert kernels.scatter_group(offsets, 3) == {16: 16, 8: 2, 4: 2}[expected]
    assert kernels.scatter_group(offsets, 1000) == min(kernels.SEVERAL_TARGETS_GROUP_SIZES) == 2


def test_l2_cache_size_is_read_from_the_system_or_defaults():
    from rbrepro.features import _matvec_kernels as kernels

    assert kernels.l2_cache_bytes() >= 64 * 1024


@pytest.mark.parametrize("n_cols", [1, 3])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("extra_rows", [5, 17])
def test_column_squares_sum_in_an_order_fixed_by_the_shape(n_cols, threads, extra_rows):
    """|Z p|^2's sum over rows: the same bits on any number of threads, and numpy's value to rounding."""
    from rbrepro.features import _squares_kernels as kernels
    from rbrepro.threads import thread_budget

    V = np.random.default_rng(9).standard_normal((3 * kernels.SQUARES_BLOCK + extra_rows, n_cols))
    want = kernels.reference_column_squares(V)
    with thread_budget(threads):
        out = np.empty(n_cols)
        kernels.column_squares(V, out)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_allclose(out, (V * V).sum(0), rtol=1e-12)


@pytest.mark.parametrize("n_cols", [1, 3])
def test_gram_apply_matches_dense_normal_operator(X, n_cols):
    from rbrepro.solvers.cg import apply_normal

    """The fused CG operator (Z^T Z + lam I) P and its P^T A P against dense products."""
    _, Z = _fit(X, R=13)
    dense = ref.dense_features(Z.ids, Z.n_columns)  # includes the 1/sqrt(R) scale
    P = np.random.default_rng(4).standard_normal((Z.n_columns, n_cols))
    AP, pAp = apply_normal(Z, P, 0.3)
    expected = dense.T @ (dense @ P) + 0.3 * P
    np.testing.assert_allclose(AP, expected, atol=1e-12)
    np.testing.assert_allclose(pAp, np.einsum("ij,ij->j", P, expected), rtol=1e-12)


@pytest.mark.parametrize("n_cols", [1, 3])  # one target and several
@pytest.mark.parametrize("preconditioned", [True, False])
def test_cg_update_kernels_match_numpy(n_cols, preconditioned):
    """step and the new direction (with its norm, the next step's p^T p) against plain numpy; several
    targets' direction may overwrite P in place, and gives the same bits."""
    from rbrepro.solvers import _cg_kernels as k

    rng = np.random.default_rng(5)
    W, Rk, P, AP = (rng.standard_normal((40000, n_cols)) for _ in range(4))  # several row blocks
    alpha, beta = rng.random(n_cols), rng.random(n_cols)
    inv_diag = rng.random(40000) if preconditioned else np.empty(0)
    W2, Rk2, P2 = W.copy(), Rk.copy(), P.copy()
    rr = np.empty(n_cols)
    k.step(W, Rk, P, AP, alpha, rr)
    np.testing.assert_allclose(rr, k.reference_step(W2, Rk2, P2, AP, alpha), rtol=1e-12)
    np.testing.assert_allclose(W, W2)
    np.testing.assert_allclose(Rk, Rk2)
    P_next, pp = np.empty_like(P), np.empty(n_cols)
    k.direction(P_next, P, Rk, inv_diag, beta, pp)
    want_p, want_pp = k.reference_direction(P, Rk, inv_diag, beta)
    np.testing.assert_array_equal(P_next, want_p)  # the same products, bit for bit
    np.testing.assert_allclose(pp, want_pp, rtol=1e-12)
    np.testing.assert_array_equal(pp, k.reference_in_order(want_p * want_p))
    if n_cols > 1:
        in_place, pp2 = P.copy(), np.empty(n_cols)
        k.direction(in_place, in_place, Rk, inv_diag, beta, pp2)
        np.testing.assert_array_equal(in_place, P_next)
        np.testing.assert_array_equal(pp2, pp)


@pytest.mark.parametrize("n_cols", [1, 3])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("blocks_and_tail", [(0, 0), (0, 3), (0, 7), (1, 6), (5, 1235)])
def test_cg_update_dots_sum_in_a_fixed_order_within_fixed_row_blocks(n_cols, threads, blocks_and_tail):
    """The residual's norms, and the new direction's, are summed inside each ROW_BLOCK in a fixed order,
    then block by block: the same sum, bit for bit, on any number of threads (a run's iterates do not
    depend on --threads), in each kernel that sums them and on both of its paths (one target, several),
    for no rows, fewer than four, less than a block, and a last block that ends in three rows past its
    last whole four."""
    from rbrepro.solvers import _cg_kernels as k
    from rbrepro.threads import thread_budget

    rng = np.random.default_rng(7)
    whole_blocks, tail = blocks_and_tail
    D = whole_blocks * k.ROW_BLOCK + tail
    W, Rk, P, AP = (rng.standard_normal((D, n_cols)) for _ in range(4))
    alpha, beta, inv_diag = rng.random(n_cols), rng.random(n_cols), rng.random(D)
    R_new = Rk - alpha * AP
    want_rr = k.reference_in_order(R_new * R_new)
    want_rz = k.reference_in_order(inv_diag[:, None] * R_new * R_new)
    P_want = inv_diag[:, None] * Rk + beta * P
    want_pp = k.reference_in_order(P_want * P_want)
    if n_cols == 1 and D > 1000:  # these rows tell the lanes' order from row order
        assert not np.array_equal(want_rr, np.cumsum(R_new * R_new, axis=0)[-1])
    with thread_budget(threads):
        rr, rz = np.empty(n_cols), np.empty(n_cols)
        k.step_preconditioned(W.copy(), Rk.copy(), P, AP, alpha, inv_diag, rr, rz)
        np.testing.assert_array_equal(rr, want_rr)
        np.testing.assert_array_equal(rz, want_rz)
        rr = np.empty(n_cols)
        k.step(W.copy(), Rk.copy(), P, AP, alpha, rr)
        np.testing.assert_array_equal(rr, want_rr)
        pp, P_next = np.empty(n_cols), np.empty_like(P)
        k.direction(P_next, P, Rk, inv_diag, beta, pp)
        np.testing.assert_array_equal(pp, want_pp)


@pytest.mark.parametrize("preconditioned", [True, False])
def test_split_step_cg_follows_the_generic_iterates(X, preconditioned):
    """CG with the operator's split step (alpha from |Z p|^2, the update inside the scatter) against the
    same CG on a matvec and an rmatvec: the iterates agree to rounding over the first steps."""
    from rbrepro.solvers import ridge_cg

    _, Z = _fit(X, R=13)
    Y = np.column_stack([np.sin(3 * X[:, 0]), X[:, 1]])

    class TwoPass:  # the same operator without its optional split step
        shape = Z.shape

        def matvec(self, W):
            return Z.matvec(W)

        def rmatvec(self, V):
            return Z.rmatvec(V)

        def gram_diagonal(self):
            return Z.gram_diagonal()

    for cols in (Y[:, :1], Y):
        one = ridge_cg(Z, cols, 0.1, maxit=6, tol=1e-300, preconditioned=preconditioned).coef
        two = ridge_cg(TwoPass(), cols, 0.1, maxit=6, tol=1e-300, preconditioned=preconditioned).coef
        np.testing.assert_allclose(one, two, rtol=1e-9, atol=1e-12)


def test_csr_export_equals_reference(X):
    _, Z = _fit(X)
    np.testing.assert_allclose(Z.to_csr().toarray(), ref.dense_features(Z.ids, Z.n_columns))
    assert np.allclose(Z.to_csr().sum(axis=1), np.sqrt(Z.n_grids))  # R entries of 1/sqrt(R) per row


def test_same_seed_same_features_different_seed_different(X):
    _, a = _fit(X, seed=7)
    _, b = _fit(X, seed=7)
    _, c = _fit(X, seed=8)
    np.testing.assert_array_equal(a.ids, b.ids)
    assert not np.array_equal(a.ids, c.ids)


@pytest.mark.parametrize("bad", [{"n_grids": 0}, {"n_grids": 2.5}, {"sigma": 0.0}, {"sigma": -1.0},
                                 {"sigma": float("nan")}])
def test_invalid_parameters_are_rejected(X, bad):
    params = {"n_grids": 4, "sigma": 1.0, **bad}
    with pytest.raises(ValueError):
        RandomBinningFeatures(**params).fit(X)


def test_nan_input_is_rejected():
    X = np.ones((4, 2))
    X[1, 1] = np.nan
    with pytest.raises(ValueError):
        RandomBinningFeatures(n_grids=2).fit(X)


def test_hash_tables_grow_past_their_first_size():
    """Thousands of distinct bins per grid: the tables start at 1,024 slots (later grids at
    TABLE_SLOTS_PER_BIN slots per bin of the grid before) and must double (re-inserting what they hold) without losing or
    merging a bin."""
    X = np.random.default_rng(5).random((9000, 3))
    rb, Z = _fit(X, R=4, sigma=300.0)
    keys = ref.bin_keys(X, rb.offsets_, 1.0 / rb.deltas_, rb._multipliers)
    local, n_bins = ref.column_ids(keys)
    assert n_bins.min() > 3 * 4096 // 2  # several doublings
    np.testing.assert_array_equal(n_bins, rb.bins_per_grid_)
    np.testing.assert_array_equal(Z.ids, local + rb.column_offsets_[:-1, None])
    np.testing.assert_array_equal(rb.transform_binned(X).ids, Z.ids)


@pytest.mark.parametrize("n_chunks", [1, 2])
def test_a_grid_with_far_more_bins_than_the_one_before_grows_its_table(n_chunks):
    """Each grid's first table is sized from the grid before it in its chunk: a grid of a few bins
    followed by one of thousands must grow (and one of thousands followed by a few must not break)."""
    rng = np.random.default_rng(7)
    n = 12000
    distinct = [3, 9000, 2, 5000, 1, 11000]
    keys = np.stack([rng.integers(0, 2**63, m, dtype=np.uint64)[rng.integers(0, m, n)] for m in distinct])
    expected, n_bins = ref.column_ids(keys)
    ids = np.empty(keys.shape, np.int32)
    got_bins = np.empty(len(distinct), np.int64)
    kernels.assign_columns(keys.copy(), ids, got_bins, n_chunks)
    np.testing.assert_array_equal(got_bins, n_bins)
    np.testing.assert_array_equal(ids, expected)


def test_the_column_id_guard_checks_the_real_D_not_N_times_R(monkeypatch):
    """N R past the id range is fine when the grids' bins are few (SUSY at R = 1024: D ~ N R / 200);
    a D that really passes it is refused, by the probe before allocating or grid by grid."""
    from rbrepro.features import random_binning

    X = np.random.default_rng(0).random((500, 4))
    monkeypatch.setattr(random_binning, "ID_LIMIT", 20_000)  # N R = 500 x 64 = 32,000 > the limit
    coarse = random_binning.RandomBinningFeatures(n_grids=64, sigma=0.05, random_state=0).fit(X)
    assert coarse.n_bins_ < 20_000
    with pytest.raises(MemoryError, match="D is about .* past the int32 column-id range"):
        random_binning.RandomBinningFeatures(n_grids=64, sigma=1e4, random_state=0).fit(X)
    # the probe's estimate can fall short of the real D (the grids are random): the grid-by-grid check
    monkeypatch.setattr(random_binning.RandomBinningFeatures, "_refuse_if_D_overflows", lambda *a, **k: None)
    with pytest.raises(MemoryError, match=r"D = .* columns after \d+ of 64 grids exceeds"):
        random_binning.RandomBinningFeatures(n_grids=64, sigma=1e4, random_state=0).fit(X)


@pytest.mark.parametrize("scale, sigma", [(3e38, 1.0), (1.0, 1e20)])
def test_bin_indices_past_exact_integers_are_refused_not_wrapped(scale, sigma):
    """Values near float32's limit, or a sigma of 1e20, would make distant points share a bin."""
    X = np.array([[0.0, 1.0], [scale, -scale]], dtype=np.float32 if scale > 1e30 else np.float64)
    with pytest.raises(ValueError, match="past the .* that binning can tell apart"):
        RandomBinningFeatures(n_grids=4, sigma=sigma, random_state=0).fit(X)
    fitted = RandomBinningFeatures(n_grids=4, sigma=1.0, random_state=0).fit(np.array([[0.0, 1.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="scale the features"):
        fitted.transform(np.array([[1e30, 0.0]]))


def test_unsummed_duplicate_entries_bin_like_the_summed_matrix_and_the_input_is_left_alone():
    cols, vals = [0, 0, 1, 2], [0.25, 0.25, 0.5, 0.75]
    raw = sp.csr_matrix((np.array(vals), np.array(cols), np.array([0, 2, 4])), shape=(2, 3))  # duplicates kept
    assert not raw.has_canonical_format
    before = (raw.data.copy(), raw.indices.copy())
    summed = raw.copy()
    summed.sum_duplicates()
    feats = RandomBinningFeatures(n_grids=8, sigma=3.0, random_state=0).fit(summed)
    np.testing.assert_array_equal(feats.transform(raw).toarray(), feats.transform(summed).toarray())
    np.testing.assert_array_equal(raw.data, before[0])
    np.testing.assert_array_equal(raw.indices, before[1])


@pytest.mark.parametrize("direct", [False, True])  # MAGIC's bits (AVX2 hosts), int64 in the loop (AVX-512)
@pytest.mark.parametrize("scale", [1.0, 1e6, 1e17])  # the exact trick; past EXACT_BINS, bin_term
def test_key_kernels_give_bin_terms_keys_on_and_past_the_exact_range(scale, direct):
    """keys_dense and keys_csr take the bin index to int64 through MAGIC's bits or directly in the summing
    loop where the range allows, else through bin_term: the keys are numpy's, bit for bit, every way (a
    block mixes both), whichever of the two conversions this host would pick."""
    rng = np.random.default_rng(11)
    n, d, R = 700, 5, 9
    X = rng.standard_normal((n, d)) * scale
    X[rng.random((n, d)) < 0.4] = 0.0
    X[::50, 2] = 3e18  # a feature whose range leaves the exact trick in every block it is in
    uT, invT = rng.random((d, R)) * 0.5, 1 / rng.uniform(0.1, 1.0, (d, R))
    mult = rng.integers(1, 1 << 62, d, dtype=np.uint64) | np.uint64(1)
    want = np.zeros((R, n), np.uint64)
    for k in range(R):
        for j in range(d):
            want[k] += np.floor((X[:, j] - uT[j, k]) * invT[j, k]).astype(np.int64).astype(np.uint64) * mult[j]
    dense = np.empty((R, n), np.uint64)
    kernels.keys_dense(X, uT, invT, mult, 64, dense, direct)
    np.testing.assert_array_equal(dense, want)
    Xs = sp.csr_matrix(X)
    zero_terms, zero_keys = np.empty((d, R), np.uint64), np.empty(R, np.uint64)
    kernels.zero_row_terms(uT, invT, mult, zero_terms, zero_keys)
    sparse = np.empty((R, n), np.uint64)
    kernels.keys_csr(Xs.indptr, Xs.indices, Xs.data, uT, invT, mult, zero_terms, zero_keys, 64, sparse, direct)
    np.testing.assert_array_equal(sparse, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dense_nonzeros_match_scipy_csr(dtype):
    """count_nonzeros and dense_nonzeros write the CSR form scipy builds from the same dense array: zero rows, -0.0 (a zero)
    and a row with no zeros included."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((513, 9)).astype(dtype)
    X[rng.random(X.shape) < 0.5] = 0.0
    X[3] = 0.0
    X[4] = 1.5
    X[5, :4] = -0.0
    indptr = np.empty(X.shape[0] + 1, np.int64)
    kernels.count_nonzeros(X, indptr)
    indices, data = kernels.dense_nonzeros(X, indptr)
    want = sp.csr_matrix(X)
    np.testing.assert_array_equal(indptr, want.indptr)
    np.testing.assert_array_equal(indices, want.indices)
    np.testing.assert_array_equal(data, want.data)
    assert data.dtype == dtype


@pytest.mark.parametrize("zeros", [0.0, 0.5, 0.95])  # the dense kernel; keyed as CSR below KEY_CSR_DENSITY
def test_dense_rows_keyed_either_way_give_the_same_bins(zeros, monkeypatch):
    """A dense X with many zeros is keyed through its CSR form (`key_rows`): the ids, D and kappa of the
    fit, and a transform's ids, are those of the dense kernel and of the CSR input, exactly."""
    rng = np.random.default_rng(8)
    X = rng.random((900, 6))
    X[rng.random(X.shape) < zeros] = 0.0
    Xt = np.vstack([X[:50], rng.random((40, 6))])
    assert (random_binning.key_rows(X) is X) == (np.count_nonzero(X) >= random_binning.KEY_CSR_DENSITY * X.size)

    def fit(data, test):
        rb = RandomBinningFeatures(n_grids=11, sigma=2.0, random_state=4)
        Z = rb.fit_transform_binned(data)
        return Z.ids, Z.n_columns, rb.kappa_, rb.transform_binned(test).ids

    routed = fit(X, Xt)
    from_csr = fit(sp.csr_matrix(X), sp.csr_matrix(Xt))
    monkeypatch.setattr(random_binning, "KEY_CSR_DENSITY", 0.0)  # every dense X through keys_dense
    dense = fit(X, Xt)
    for got in (routed, from_csr):
        np.testing.assert_array_equal(got[0], dense[0])
        assert got[1:3] == dense[1:3]
        np.testing.assert_array_equal(got[3], dense[3])


def _grid_ids(rng, offsets, n):
    """Ids of n rows, grid r's in its own columns offsets[r] ... offsets[r + 1] - 1, a tenth unseen (-1)."""
    ids = np.column_stack([rng.integers(lo, hi, n) for lo, hi in zip(offsets[:-1], offsets[1:])]).T
    return np.where(rng.random(ids.shape) < 0.1, -1, ids).astype(np.int32)


@pytest.mark.parametrize("keep", ["none", "first and last", "most", "all"])
def test_taking_rows_of_the_grid_major_ids_equals_numpy(keep):
    """`BinnedMatrix.rows` copies the kept rows' ids grid by grid (`take_rows`), as np.take along the rows'
    axis does, unseen bins (-1) included; the columns stay."""
    from rbrepro.features import BinnedMatrix
    from rbrepro.features._rows_kernels import reference_take_rows

    rng = np.random.default_rng(11)
    n = 1001
    ids = _grid_ids(rng, np.arange(0, 14 * 50, 50), n)
    mask = {"none": np.zeros(n, bool), "first and last": np.isin(np.arange(n), [0, n - 1]),
            "most": rng.random(n) < 0.9, "all": np.ones(n, bool)}[keep]
    Z = BinnedMatrix(ids, np.arange(0, 14 * 50, 50))
    kept = Z.rows(mask)
    np.testing.assert_array_equal(kept.ids, reference_take_rows(ids, np.flatnonzero(mask)))
    assert kept.ids.flags.c_contiguous and kept.shape == (int(mask.sum()), Z.n_columns)


def test_the_kept_rows_counts_are_their_own_when_the_parents_are_known():
    """Where the parent's column counts are known and most rows are kept, `rows` gives the kept rows'
    counts as the parent's less those of the rows left out: equal to counting the kept rows afresh."""
    from rbrepro.features import BinnedMatrix

    rng = np.random.default_rng(12)
    offsets = np.arange(0, 10 * 40, 40)
    ids = _grid_ids(rng, offsets, 777)
    for share in (0.9, 0.3):
        Z = BinnedMatrix(ids, offsets)
        Z.column_counts()  # known, as after a fit
        mask = rng.random(777) < share
        kept = Z.rows(mask)
        fresh = BinnedMatrix(kept.ids.copy(), offsets).column_counts()
        np.testing.assert_array_equal(kept.column_counts(), fresh)


def test_counting_some_rows_bins_equals_numpy_and_rows_refuses_a_mask_that_is_not_one():
    """`count_rows` counts the given rows' bins grid by grid (unseen bins left out), as np.bincount does;
    `rows` takes only a boolean mask of every row (an integer or short mask would count the wrong rows)."""
    from rbrepro.errors import InvalidParameter
    from rbrepro.features import BinnedMatrix
    from rbrepro.features._rows_kernels import count_rows, reference_count_rows

    rng = np.random.default_rng(13)
    offsets = np.arange(0, 8 * 30, 30)
    ids = _grid_ids(rng, offsets, 500)
    rows = np.flatnonzero(rng.random(500) < 0.2)
    out = np.full(offsets[-1], np.nan)
    count_rows(ids, rows, offsets, out)
    np.testing.assert_array_equal(out, reference_count_rows(ids, rows, offsets[-1]))
    Z = BinnedMatrix(ids, offsets)
    for bad in (np.ones(500, int), np.ones(499, bool), np.ones((500, 1), bool)):
        with pytest.raises(InvalidParameter, match="boolean mask of the 500 rows"):
            Z.rows(bad)
