"""CG ridge on Z against a dense direct solve of the normal equations."""

import numpy as np
import pytest

from rbrepro.features import RandomBinningFeatures
from rbrepro.features import reference as ref
from rbrepro.solvers import ridge_cg


@pytest.fixture
def problem():
    rng = np.random.default_rng(0)
    X = rng.random((300, 4))
    Z = RandomBinningFeatures(n_grids=16, sigma=3.0, random_state=0).fit_transform_binned(X)
    Y = np.column_stack([np.sin(3 * X[:, 0]) + X[:, 1], np.cos(2 * X[:, 2])])
    return Z, ref.dense_features(Z.ids, Z.n_columns), Y


@pytest.mark.parametrize("lam", [0.01, 1.0])
def test_cg_converges_to_the_direct_solution(problem, lam):
    Z, dense, Y = problem
    direct = np.linalg.solve(dense.T @ dense + lam * np.eye(Z.n_columns), dense.T @ Y)
    result = ridge_cg(Z, Y, lam, maxit=5000, tol=1e-12)
    assert result.converged
    np.testing.assert_allclose(result.coef, direct, atol=1e-8)


def test_multiple_right_hand_sides_equal_separate_solves(problem):
    Z, _, Y = problem
    joint = ridge_cg(Z, Y, 0.1, maxit=8, tol=1e-14).coef
    for c in range(Y.shape[1]):
        single = ridge_cg(Z, Y[:, c], 0.1, maxit=8, tol=1e-14).coef
        np.testing.assert_allclose(joint[:, c], single[:, 0], atol=1e-10)


def test_iteration_cap_and_tolerance_stop_the_loop(problem):
    Z, dense, Y = problem
    capped = ridge_cg(Z, Y, 0.01, maxit=3, tol=1e-15)
    assert capped.iterations == 3 and not capped.converged
    loose = ridge_cg(Z, Y, 0.01, maxit=500, tol=1e-2)
    assert loose.converged and loose.iterations < 500
    assert (loose.relative_residual <= 1e-2).all()
    # the reported residual is the true one
    b = dense.T @ Y
    r = b - (dense.T @ dense + 0.01 * np.eye(Z.n_columns)) @ loose.coef
    np.testing.assert_allclose(np.linalg.norm(r, axis=0) / np.linalg.norm(b, axis=0), loose.relative_residual,
                               rtol=1e-6)


def test_zero_right_hand_side_and_bad_arguments(problem):
    Z, _, Y = problem
    zero = ridge_cg(Z, np.zeros(Z.n_rows), 0.1)
    assert zero.iterations == 0 and not zero.coef.any()
    with pytest.raises(ValueError):
        ridge_cg(Z, Y, -1.0)


def test_jacobi_preconditioner_is_the_per_grid_block_diagonal(problem):
    from rbrepro.solvers.cg import gram_diagonal

    Z, dense, _ = problem
    np.testing.assert_allclose(gram_diagonal(Z), np.diag(dense.T @ dense))
    G = dense.T @ dense
    for r in range(Z.n_grids):  # Z^T Z restricted to one grid is exactly diagonal
        lo, hi = Z.offsets[r], Z.offsets[r + 1]
        block = G[lo:hi, lo:hi]
        np.testing.assert_allclose(block, np.diag(np.diag(block)))


def test_pcg_reaches_the_direct_solution(problem):
    Z, dense, Y = problem
    lam = 0.01
    direct = np.linalg.solve(dense.T @ dense + lam * np.eye(Z.n_columns), dense.T @ Y)
    pcg = ridge_cg(Z, Y, lam, maxit=5000, tol=1e-10, preconditioned=True)
    cg = ridge_cg(Z, Y, lam, maxit=5000, tol=1e-10)
    assert pcg.converged and cg.converged
    np.testing.assert_allclose(pcg.coef, direct, atol=1e-6)
    # (Jacobi does not reduce iterations for RB ridge: bench/pcg_vs_cg.py measures it)


@pytest.mark.parametrize("C", [1, 3])  # one target and several
def test_the_preconditioned_step_kernels_equal_their_numpy_reference(C):
    from rbrepro.solvers import _cg_kernels as k

    rng = np.random.default_rng(3)
    D = 40_000  # more than one row block
    W, Rk, P, AP = (rng.normal(size=(D, C)) for _ in range(4))
    alpha, beta, inv_diag = rng.normal(size=C), rng.normal(size=C), rng.uniform(0.1, 2.0, size=D)
    ref_W, ref_R = W + alpha * P, Rk - alpha * AP
    rr, rz = np.empty(C), np.empty(C)
    k.step_preconditioned(W, Rk, P, AP, alpha, inv_diag, rr, rz)
    np.testing.assert_allclose(W, ref_W, rtol=1e-14)
    np.testing.assert_allclose(Rk, ref_R, rtol=1e-14)
    np.testing.assert_allclose(rr, np.einsum("ij,ij->j", ref_R, ref_R), rtol=1e-12)
    np.testing.assert_allclose(rz, np.einsum("ij,ij->j", ref_R, inv_diag[:, None] * ref_R), rtol=1e-12)
    out, pp = np.empty_like(P), np.empty(C)
    k.direction(out, P, Rk, inv_diag, beta, pp)
    np.testing.assert_allclose(out, inv_diag[:, None] * Rk + beta * P, rtol=1e-14)
    np.testing.assert_allclose(pp, np.einsum("ij,ij->j", out, out), rtol=1e-12)


def test_the_preconditioner_taken_on_the_diagonals_levels_equals_it_entry_by_entry(problem):
    """RB's diagonal comes as levels (each bin count, scaled) and an index: levels[index] is the diagonal
    bit for bit, and the preconditioner taken once a level is the one taken column by column; a dense
    operator (no levels) takes the same formula on its diagonal."""
    from rbrepro.solvers import cg

    Z, dense, _ = problem
    levels, index = Z.gram_diagonal_levels()
    assert len(levels) < Z.n_columns  # few distinct counts: the levels path is the one taken
    np.testing.assert_array_equal(levels[index], Z.gram_diagonal())
    for lam in (0.0, 0.01, 1.0):
        direct = cg._inverse_power(Z.gram_diagonal(), lam)
        np.testing.assert_array_equal(cg._preconditioner(Z, lam), direct)
        np.testing.assert_allclose(cg._preconditioner(dense, lam), cg._inverse_power((dense ** 2).sum(0), lam),
                                   rtol=1e-15, atol=0)
    few = Z.rows(np.arange(Z.n_rows) < 40)  # 40 rows leave most columns empty: a zero diagonal, lam = 0
    empty = few.gram_diagonal() == 0
    assert empty.any() and (cg._preconditioner(few, 0.0)[empty] == 1.0).all()
    np.testing.assert_array_equal(cg._preconditioner(few, 0.0), cg._inverse_power(few.gram_diagonal(), 0.0))


def _plain_cg_on_d(monkeypatch):
    """ridge_cg with the row-space path turned off: plain CG's steps on D."""
    from rbrepro.solvers import cg

    monkeypatch.setattr(cg, "rows_pay", lambda *shape: False)
    return cg.ridge_cg


@pytest.mark.parametrize("maxit", [1, 2, 5, 12])
def test_row_space_cg_takes_the_same_steps_as_cg_on_d(problem, monkeypatch, maxit):
    from rbrepro.solvers.cg import ridge_cg_rows

    Z, _, Y = problem
    rows = ridge_cg_rows(Z, Y, 0.01, maxit, 1e-14)
    on_d = _plain_cg_on_d(monkeypatch)(Z, Y, 0.01, maxit, 1e-14)
    assert rows.iterations == on_d.iterations == maxit
    np.testing.assert_allclose(rows.coef, on_d.coef, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(rows.relative_residual, on_d.relative_residual, rtol=1e-6)


def test_row_space_cg_stops_where_cg_on_d_stops_and_reports_the_true_residual(problem, monkeypatch):
    from rbrepro.solvers.cg import ridge_cg_rows

    Z, dense, Y = problem
    rows = ridge_cg_rows(Z, Y, 0.01, 500, 1e-3)
    on_d = _plain_cg_on_d(monkeypatch)(Z, Y, 0.01, 500, 1e-3)
    assert rows.converged and rows.iterations == on_d.iterations < 500
    b = dense.T @ Y
    r = b - (dense.T @ dense + 0.01 * np.eye(Z.n_columns)) @ rows.coef
    np.testing.assert_allclose(np.linalg.norm(r, axis=0) / np.linalg.norm(b, axis=0), rows.relative_residual,
                               rtol=1e-6)


def test_plain_cg_runs_in_row_space_only_where_it_pays_and_nothing_else_is_asked(problem, monkeypatch):
    from rbrepro.solvers import cg

    Z, _, Y = problem
    calls = []
    real = cg.ridge_cg_rows
    monkeypatch.setattr(cg, "ridge_cg_rows", lambda *a: calls.append(a) or real(*a))
    assert cg.rows_pay(*Z.shape) and not cg.rows_pay(Z.shape[0], 2 * Z.shape[0])
    cg.ridge_cg(Z, Y, 0.1, maxit=3)
    cg.ridge_cg(Z, Y[:, 0], 0.1, maxit=3)  # one target too
    assert len(calls) == 2
    X = np.random.default_rng(0).random((300, 4))
    narrow = RandomBinningFeatures(n_grids=4, sigma=1.0, random_state=0).fit_transform_binned(X)
    assert not cg.rows_pay(*narrow.shape)
    cg.ridge_cg(narrow, Y, 0.1, maxit=3)
    cg.ridge_cg(Z, Y, 0.1, maxit=3, preconditioned=True)
    cg.ridge_cg(Z, Y, 0.1, maxit=3, callback=lambda it, W: False)
    cg.ridge_cg(Z, Y, 0.1, maxit=3, x0=np.zeros((Z.n_columns, 2)))
    cg.ridge_cg(Z, None, 0.1, maxit=3, rhs=Z.rmatvec(Y))
    cg.ridge_cg(ref.dense_features(Z.ids, Z.n_columns), Y, 0.1, maxit=3)  # an operator without row_gram
    assert len(calls) == 2


def test_row_space_cg_has_the_same_bits_on_one_thread_and_two(problem):
    import numba

    from rbrepro.solvers.cg import ridge_cg_rows

    Z, _, Y = problem
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = ridge_cg_rows(Z, Y, 0.01, 20, 1e-14).coef
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = ridge_cg_rows(Z, Y, 0.01, 20, 1e-14).coef
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one, two)


@pytest.mark.parametrize("C", [1, 3])
def test_the_row_space_kernels_equal_their_numpy_reference(C):
    from rbrepro.solvers import _row_cg_kernels as k

    rng = np.random.default_rng(C)
    from rbrepro.solvers._cg_kernels import ROW_BLOCK

    n = 2 * ROW_BLOCK + 37  # three blocks, the last one short
    c, s, y, a, z, u = (rng.standard_normal((n, C)) for _ in range(6))
    alpha, beta, lam = rng.random(C), rng.random(C), 0.3
    mine = [x.copy() for x in (c, s, y, a, z, u)]
    sy = np.empty(C)
    k.rows_step(*mine, alpha, lam, sy)
    theirs = [x.copy() for x in (c, s, y, a, z, u)]
    ref_sy = k.reference_rows_step(*theirs, alpha, lam)
    for got, want in zip(mine, theirs):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(sy, ref_sy, rtol=1e-10)
    zz, az = np.empty(C), np.empty(C)
    k.rows_direction(mine[3], mine[4], mine[1], mine[2], beta, zz, az)
    ref_zz, ref_az = k.reference_rows_direction(theirs[3], theirs[4], theirs[1], theirs[2], beta)
    np.testing.assert_allclose(mine[3], theirs[3], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(mine[4], theirs[4], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(zz, ref_zz, rtol=1e-10)
    np.testing.assert_allclose(az, ref_az, rtol=1e-10)


@pytest.mark.parametrize("on", ["binned", "dense"])
@pytest.mark.parametrize("C", [1, 2])
def test_a_start_from_x0_begins_at_x0_with_its_true_residual(problem, on, C):
    """x0's residual Z^T y - (Z^T Z + lam I) x0: the split step of length 1 along x0 (BinnedMatrix) and
    the matvec and rmatvec (a dense array) both give the dense reference's, and maxit = 0 returns x0."""
    Z, dense, Y = problem
    Y = Y[:, :C]
    x0 = np.random.default_rng(C).standard_normal((Z.n_columns, C))
    b = dense.T @ Y
    r = b - (dense.T @ dense + 0.1 * np.eye(Z.n_columns)) @ x0
    want = np.linalg.norm(r, axis=0) / np.linalg.norm(b, axis=0)
    start = ridge_cg(Z if on == "binned" else dense, Y, 0.1, maxit=0, x0=x0)
    assert start.iterations == 0
    np.testing.assert_array_equal(start.coef, x0)
    np.testing.assert_allclose(start.relative_residual, want, rtol=1e-10)
    more = ridge_cg(Z if on == "binned" else dense, Y, 0.1, maxit=5000, tol=1e-12, x0=x0, preconditioned=True)
    direct = np.linalg.solve(dense.T @ dense + 0.1 * np.eye(Z.n_columns), b)
    np.testing.assert_allclose(more.coef, direct, atol=1e-8)


@pytest.mark.parametrize("on", ["binned", "dense"])
@pytest.mark.parametrize("C", [1, 2])
def test_solves_on_kept_buffers_take_the_same_steps_as_on_fresh_arrays(problem, on, C):
    """A search and its final steps on one CGBuffers (models.feature_ridge): the same bits as on fresh
    arrays, each solve writing over the last one's; a start from the last solve's coef (an array the
    buffers hold) is copied before the buffers are written; rhs given or not."""
    from rbrepro.solvers.cg import CGBuffers

    Z, dense, Y = problem
    fit = np.arange(Z.n_rows) < 250
    Z, Z_fit = (Z, Z.rows(fit)) if on == "binned" else (dense, dense[fit])
    Y = Y[:, :C]
    first = ridge_cg(Z_fit, Y[fit], 0.1, maxit=7, preconditioned=True)
    then = ridge_cg(Z, Y, 0.1, maxit=5, preconditioned=True, x0=first.coef)
    buffers = CGBuffers()
    kept_first = ridge_cg(Z_fit, Y[fit], 0.1, maxit=7, preconditioned=True, buffers=buffers)
    np.testing.assert_array_equal(kept_first.coef, first.coef)
    assert buffers.holds(kept_first.coef)
    kept_then = ridge_cg(Z, Y, 0.1, maxit=5, preconditioned=True, x0=kept_first.coef, buffers=buffers)
    np.testing.assert_array_equal(kept_then.coef, then.coef)
    assert kept_then.coef is kept_first.coef  # the same array, written over
    rhs = (Z.rmatvec(Y) if on == "binned" else dense.T @ Y).copy()
    again = ridge_cg(Z, None, 0.1, maxit=5, rhs=rhs, buffers=buffers)
    np.testing.assert_array_equal(again.coef, ridge_cg(Z, None, 0.1, maxit=5, rhs=rhs).coef)


def test_rmatvec_writes_into_a_given_array_and_refuses_one_of_another_shape(problem):
    Z, dense, Y = problem
    out = np.full((Z.n_columns, 2), np.nan)
    assert np.shares_memory(Z.rmatvec(Y, out=out), out)
    np.testing.assert_allclose(out, dense.T @ Y, atol=1e-12)
    with pytest.raises(ValueError, match=r"shape \(%d, 2\)" % Z.n_columns):
        Z.rmatvec(Y, out=np.empty((Z.n_columns, 3)))
