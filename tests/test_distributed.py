"""One model fitted across a dask cluster on loopback is the single-process model.

RB's feature map (D, every column, kappa, the lookup of new rows) must be equal bit for bit; the
weights equal to rounding (CG's first steps to 1e-10; after many steps CG amplifies rounding, as
it does between the fused and unfused single-process steps, so there the predictions are
compared); RF and Nystrom equal to 1e-10. Faults: a killed worker gives the same model, a worker
that dies every time is one line naming it, an unreachable scheduler fails at once."""

from __future__ import annotations

import logging
import os
import signal
import socket
import time

import numpy as np
import pytest

from rbrepro.distributed import (
    ClusterTimeout,
    ClusterUnavailable,
    DistributedRidge,
    NotDistributable,
    RowBlock,
    Runner,
    WorkerLost,
    npy_partitions,
    open_cluster,
    split_rows,
)
from rbrepro.distributed.operator import DistributedOperator
from rbrepro.errors import InvalidParameter
from rbrepro.memory import MemoryLimitError
from rbrepro.models import (
    IndependentBlockClassifier,
    NystromClassifier,
    RandomBinningClassifier,
    RandomBinningRegressor,
    RandomFourierRegressor,
)
from rbrepro.solvers.stopping import held_out
from tests.cli_runner import one_line_error, run_cli

distributed = pytest.importorskip("distributed")


def _problem(n=1500, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, d))
    y = (X[:, 0] + X[:, 1] > 1).astype(int) + (X[:, 2] > 0.7).astype(int)  # three classes
    return X, y


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as c:
        yield c


def _same_binning(single, dist, X):
    fs, fd = single.features_, dist.features_
    assert fd.n_bins_ == fs.n_bins_ and fd.kappa_ == fs.kappa_ and fd.nnz_ == fs.nnz_
    np.testing.assert_array_equal(fd.column_offsets_, fs.column_offsets_)
    np.testing.assert_array_equal(fd.transform_binned(X).ids, fs.transform_binned(X).ids)


@pytest.mark.parametrize("draws", ["numpy", "authors"])
def test_rb_has_the_single_process_columns_and_weights(client, draws):
    X, y = _problem()
    est = RandomBinningClassifier(n_grids=16, sigma=2.0, random_state=3, maxit=5, draws=draws)
    single = est.fit(X, y)
    dist = DistributedRidge(est, client=client, n_partitions=3).fit(X, y)
    _same_binning(single, dist, X)
    np.testing.assert_allclose(dist.coef_, single.coef_, rtol=0, atol=1e-10 * np.abs(single.coef_).max())
    np.testing.assert_array_equal(dist.predict(X), single.predict(X))
    assert (dist.workers_, dist.partitions_) == (2, 3)
    assert dist.bytes_per_cg_step_ == 2 * 8 * single.n_columns_ * 3 * 3


def test_rb_to_convergence_predicts_as_the_single_process_fit(client):
    X, y = _problem(seed=1)
    est = RandomBinningRegressor(n_grids=16, sigma=2.0, random_state=0)
    single, dist = est.fit(X, X[:, 0]), DistributedRidge(est, client=client).fit(X, X[:, 0])
    _same_binning(single, dist, X)
    assert abs(single.cg_iterations_ - dist.cg_iterations_) <= 1  # the tol test on a rounded residual
    np.testing.assert_allclose(dist.predict(X), single.predict(X), atol=1e-3)


@pytest.mark.parametrize("est", [RandomFourierRegressor(n_components=40, sigma=1.0, random_state=0),
                                 NystromClassifier(n_components=60, sigma=1.0, random_state=2)])
def test_rf_and_nystrom_reduce_the_gram_matrix_to_the_same_model(client, est):
    X, y = _problem(seed=2)
    target = X[:, 0] * 3 if est._task == "regression" else y
    single = est.fit(X, target)
    dist = DistributedRidge(est, client=client, n_partitions=4).fit(X, target)
    np.testing.assert_allclose(dist.coef_, single.coef_, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dist.decision_function(X) if est._task != "regression" else dist.predict(X),
                               single.decision_function(X) if est._task != "regression" else single.predict(X),
                               atol=1e-6)  # RF featurizes in float32: BLAS rounds row blocks differently


def test_a_partition_with_no_rows_and_a_class_absent_from_one(client):
    X, y = _problem(seed=4)
    order = np.argsort(y, kind="stable")  # the first partition holds classes 0 and 1 only
    X, y = X[order], y[order]
    est = RandomBinningClassifier(n_grids=8, sigma=2.0, random_state=0, maxit=4)
    half = len(y) // 2
    assert 2 not in y[:half]
    sources = [RowBlock(X[:0], y[:0]), RowBlock(X[:half], y[:half]), RowBlock(X[half:], y[half:])]
    dist = DistributedRidge(est, client=client).fit_partitions(sources)
    single = est.fit(X, y)
    _same_binning(single, dist, X)
    np.testing.assert_array_equal(dist.classes_, single.classes_)
    np.testing.assert_allclose(dist.coef_, single.coef_, rtol=0, atol=1e-10 * np.abs(single.coef_).max())
    assert len(split_rows(X[:2], y[:2], 3)) == 3  # more partitions than rows: empty ones


def test_partitions_read_from_files_on_the_workers(client, tmp_path):
    X, y = _problem(seed=6)
    np.save(tmp_path / "X.npy", X.astype(np.float32))
    np.save(tmp_path / "y.npy", y)
    est = RandomBinningClassifier(n_grids=8, sigma=2.0, random_state=1, maxit=4)
    dist = DistributedRidge(est, client=client).fit_partitions(npy_partitions(tmp_path / "X.npy", tmp_path / "y.npy", 3))
    single = est.fit(X.astype(np.float32), y)
    _same_binning(single, dist, X.astype(np.float32))
    np.testing.assert_allclose(dist.coef_, single.coef_, rtol=0, atol=1e-10 * np.abs(single.coef_).max())


def test_a_dask_array_is_fitted_chunk_by_chunk(client):
    da = pytest.importorskip("dask.array")
    X, y = _problem(seed=7)
    est = RandomBinningClassifier(n_grids=8, sigma=2.0, random_state=2, maxit=4)
    dist = DistributedRidge(est, client=client).fit(da.from_array(X, chunks=(400, 2)), y)
    single = est.fit(X, y)
    assert dist.partitions_ == 4  # 1500 rows in chunks of 400
    _same_binning(single, dist, X)
    np.testing.assert_allclose(dist.coef_, single.coef_, rtol=0, atol=1e-10 * np.abs(single.coef_).max())


@pytest.mark.slow
def test_the_meta_estimator_passes_scikit_learns_checks(client):
    """With the scheduler's address as `client` it clones and pickles; RB, RB regression and Nystrom
    pass every check (RF regression fails only the subset-invariance one: its float32 features of one
    row round differently in a worker thread, by 4e-6)."""
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(DistributedRidge(RandomBinningClassifier(), client=client.scheduler.address),
                              on_fail=None)
    assert [(r["check_name"], repr(r["exception"])) for r in results if r["status"] == "failed"] == []


def test_an_unseeded_fit_draws_its_held_out_rows_once(client, monkeypatch):
    """Without random_state the held-out rows' seed is drawn once per fit: whether the fit stops early
    and the split it then makes must see the same rows (two draws made small fits fail at random,
    one split holding rows out and the other none)."""
    draws = iter([3, 14])  # on 40 rows seed 3 holds some rows out, seed 14 none
    assert held_out(40, 0.1, 3).any() and not held_out(40, 0.1, 14).any()
    monkeypatch.setattr(RandomBinningClassifier, "_split_seed", lambda self: next(draws))
    X, y = _problem(n=40)
    model = DistributedRidge(RandomBinningClassifier(n_grids=8), client=client).fit(X, y)
    assert model.estimator_.early_stopping_ and model.estimator_.n_validation_ == held_out(40, 0.1, 3).sum()


def test_block_and_exact_are_refused_in_one_line(client):
    X, y = _problem(n=50)
    with pytest.raises(NotDistributable, match="does not fit across machines: independent-block") as info:
        DistributedRidge(IndependentBlockClassifier(), client=client).fit(X, y)
    assert "\n" not in str(info.value)


def test_too_little_worker_memory_is_refused_before_any_work():
    X, y = _problem()
    with distributed.LocalCluster(n_workers=1, processes=False, memory_limit="1MB", dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as small:
        with pytest.raises(MemoryLimitError, match="a task may use on dask worker"):
            DistributedRidge(RandomBinningClassifier(n_grids=64), client=small).fit(X, y)
        assert not small.who_has()  # nothing was submitted


def test_the_memory_check_reads_what_a_task_may_use_not_the_whole_limit():
    """dask pauses a worker at 80 % of its limit and its process holds memory already: a partition
    whose estimate fits the limit but not that headroom is refused (it killed workers at 1 M rows)."""
    from rbrepro.distributed.fit import check_worker_memory
    from rbrepro.models.ridge_memory import featurize_memory

    class Source:
        n_rows = 10_000

        def nbytes(self):
            return self.n_rows * 22 * 8

    class Runner_:
        def __init__(self, usable):
            self.usable = usable

        def worker_headroom(self):
            return {"tcp://127.0.0.1:1": (8e9, self.usable, 0.3e9)}

    estimate = featurize_memory("rb", 10_000, 22, 64) + Source().nbytes() + 4.0 * 10_000 * 64
    assert estimate < 8e9
    with pytest.raises(MemoryLimitError, match="a task may use on dask worker tcp://127.0.0.1:1"):
        check_worker_memory(Runner_(estimate * 0.9), "rb", 64, [Source()], 22)
    check_worker_memory(Runner_(estimate * 1.1), "rb", 64, [Source()], 22)  # fits: no error


def test_a_step_that_hangs_is_stopped_by_its_timeout(client):
    t0 = time.perf_counter()
    with pytest.raises(ClusterTimeout, match="CG step 1 did not finish within 0.3 s"):
        Runner(client, timeout_s=0.3).gather([Runner(client).submit(time.sleep, 1.0)], "CG step 1")
    assert time.perf_counter() - t0 < 1.0


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_scheduler_fails_at_once():
    address = f"tcp://127.0.0.1:{_closed_port()}"
    t0 = time.perf_counter()
    with pytest.raises(ClusterUnavailable, match="cannot reach the dask scheduler"):
        with open_cluster(address, timeout_s=5):
            pass
    assert time.perf_counter() - t0 < 2


@pytest.mark.slow
def test_the_cli_says_so_in_one_line(tmp_path):
    from tests.conftest import make_binary_problem, write_libsvm

    X, y = make_binary_problem(60, 4, 0)
    path = write_libsvm(tmp_path / "toy.libsvm", X, y)
    t0 = time.perf_counter()
    proc = run_cli("train", path, "--cluster", f"tcp://127.0.0.1:{_closed_port()}", "--json")
    one_line_error(proc, "cannot reach the dask scheduler")
    proc = run_cli("train", path, "--method", "exact", "--cluster", "local:1", "--json")
    one_line_error(proc, "exact does not fit across machines")
    assert time.perf_counter() - t0 < 60


def test_a_sweep_config_names_a_cluster_and_its_cells_fit_there(tmp_path):
    from rbrepro.models.cell import CellParams
    from rbrepro.sweep.config import ConfigError, parse_config
    from rbrepro.sweep.worker import run_cell_task
    from tests.conftest import make_binary_problem, write_libsvm

    text = "name: t\nmethods: [rb, rf]\ncluster: local:2\ndatasets:\n  ijcnn1: {R: 8, sigma: [1.0]}\n"
    assert parse_config(text).cluster == "local:2"
    assert parse_config(text).to_dict()["cluster"] == "local:2"
    with pytest.raises(ConfigError, match=r"<config>:3: cluster: exact does not fit across machines"):
        parse_config(text.replace("[rb, rf]", "[rb, exact]"))
    with pytest.raises(ConfigError, match="cluster: expected local:N or tcp://HOST:PORT"):
        parse_config(text.replace("local:2", "local:none"))
    X, y = make_binary_problem(300, 4, 1)
    path = str(write_libsvm(tmp_path / "toy.libsvm", X, y))
    params = CellParams(dataset=path, method="rb", R=8, sigma=2.0, maxit=5)
    with distributed.LocalCluster(n_workers=1, processes=False, protocol="tcp", host="127.0.0.1",
                                  dashboard_address=None, silence_logs=logging.ERROR) as cluster:
        row = run_cell_task(params, path, cluster=cluster.scheduler_address)
    alone = run_cell_task(params, path)
    assert row["status"] == "ok", row.get("error")
    assert (row["D"], row["test_metric"], row["workers"], row["partitions"]) == (alone["D"], alone["test_metric"], 1, 1)


class _DieOnce(RowBlock):
    """Rows whose first reading kills the worker process reading them (a marker file says it did)."""

    def __init__(self, X, y, marker):
        super().__init__(X, y)
        object.__setattr__(self, "marker", str(marker))

    def load(self):
        if not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        return super().load()


class _DieAlways(RowBlock):
    def load(self):
        os.kill(os.getpid(), signal.SIGKILL)


@pytest.fixture(scope="module")
def process_cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=logging.CRITICAL) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.mark.slow
def test_a_worker_killed_mid_fit_gives_the_same_model(process_cluster, tmp_path, monkeypatch):
    X, y = _problem(seed=5)
    est = RandomBinningClassifier(n_grids=8, sigma=2.0, random_state=0, maxit=6)
    single = est.fit(X, y)
    # killed while reading its partition: the scheduler reads it again on a live worker
    sources = split_rows(X, y, 2)
    sources[1] = _DieOnce(sources[1].X, sources[1].y, tmp_path / "died")
    dist = DistributedRidge(est, client=process_cluster).fit_partitions(sources)
    assert (tmp_path / "died").exists()
    _same_binning(single, dist, X)
    np.testing.assert_allclose(dist.coef_, single.coef_, rtol=0, atol=1e-10 * np.abs(single.coef_).max())
    # killed between CG steps, holding a partition's Z: the scheduler recomputes it from its source
    original = DistributedOperator.gram_apply
    killed = []

    def kill_at_step_3(self, P, lam):
        if self.steps == 2:
            killed.append(next(iter(process_cluster.run(os.getpid).values())))
            os.kill(killed[-1], signal.SIGKILL)
        return original(self, P, lam)

    monkeypatch.setattr(DistributedOperator, "gram_apply", kill_at_step_3)
    dist = DistributedRidge(est, client=process_cluster, timeout_s=120).fit(X, y)
    assert killed and killed[0] not in process_cluster.run(os.getpid).values()
    _same_binning(single, dist, X)
    np.testing.assert_allclose(dist.coef_, single.coef_, rtol=0, atol=1e-10 * np.abs(single.coef_).max())


@pytest.mark.slow
def test_a_worker_that_dies_every_time_is_one_line_naming_it(process_cluster):
    X, y = _problem(n=200)
    sources = [_DieAlways(X, y)]
    with pytest.raises(WorkerLost, match=r"dask worker tcp://127\.0\.0\.1:\d+ died") as info:
        DistributedRidge(RandomBinningClassifier(n_grids=4), client=process_cluster,
                         timeout_s=120).fit_partitions(sources)
    assert "\n" not in str(info.value)



# -- early stopping across the cluster (held-out rows, each partition holding out its own) --

def _es_sources(X, y, seed: int, fraction: float = 0.1) -> list[RowBlock]:
    """Partitions in row order: an empty one, one holding a single held-out row (no fit rows), one
    of three fit rows (no held-out row), and the rest in uneven pieces."""
    from rbrepro.solvers.stopping import held_out

    held = held_out(len(y), fraction, seed)
    j = int(np.flatnonzero(held)[0])  # the first held-out row
    k = next(i for i in range(j + 1, len(y)) if not held[i:i + 3].any())  # three fit rows after it
    cuts = [0, 0, j, j + 1, k, k + 3, (k + 3 + len(y)) // 2, len(y)]
    return [RowBlock(X[lo:hi], y[lo:hi]) for lo, hi in zip(cuts[:-1], cuts[1:])]


def _same_early_stopping(single, dist, n_partitions, rtol=1e-9):
    assert (dist.n_columns_, dist.best_iteration_, dist.n_validation_, dist.cg_iterations_, dist.search_iterations_) == \
        (single.n_columns_, single.best_iteration_, single.n_validation_, single.cg_iterations_,
         single.search_iterations_)
    assert single.best_iteration_ >= 1 and single.n_validation_ > 0
    np.testing.assert_allclose(dist.validation_scores_, single.validation_scores_, rtol=rtol, atol=0)
    np.testing.assert_allclose(dist.y_mean_, single.y_mean_, rtol=1e-12, atol=1e-15)
    assert dist.train_scores_.shape == single.train_scores_.shape  # every training row, held out or not
    scale = np.abs(single.train_scores_).max()
    np.testing.assert_allclose(dist.train_scores_, single.train_scores_, rtol=0, atol=10 * rtol * scale)
    assert dist.partitions_ == n_partitions and dist.bytes_per_cg_step_ == 2 * 8 * dist.coef_.size * n_partitions
    assert dist.bytes_per_stopping_step_ == (8 * dist.coef_.size + 16) * n_partitions


@pytest.mark.parametrize("solver", ["cg", "pcg"])
def test_rb_early_stopped_across_partitions_is_the_single_process_fit(client, solver):
    """D from every row's bins (held-out rows included, as without early stopping), the same held-out
    rows, scores, step count and predictions; partitions with no rows, with no held-out row and with no
    fit row among them."""
    X, y = _problem(seed=8)
    est = RandomBinningClassifier(n_grids=16, sigma=2.0, lam=1e-4, solver=solver, maxit=60, early_stopping=True,
                                  random_state=5)
    single = est.fit(X, y)
    sources = _es_sources(X, y, seed=5)
    dist = DistributedRidge(est, client=client).fit_partitions(sources)
    _same_binning(single, dist, X)  # the early-stopped fit's columns: bins of every training row
    assert single.n_columns_ == RandomBinningClassifier(n_grids=16, sigma=2.0, random_state=5).fit(X, y).n_columns_
    _same_early_stopping(single, dist, len(sources))
    np.testing.assert_allclose(dist.coef_, single.coef_, rtol=0, atol=1e-10 * np.abs(single.coef_).max())
    np.testing.assert_array_equal(dist.predict(X), single.predict(X))


def test_two_classes_and_the_meta_estimators_seed_and_split(client):
    """One target column (the sign decides), random_state given to the meta-estimator, even splits;
    random_state=None draws one seed for every partition (the split is the union of theirs)."""
    X, y = _problem(seed=9)
    y = (y > 0).astype(int)
    est = RandomBinningClassifier(n_grids=16, sigma=2.0, solver="pcg", maxit=40, early_stopping=True)
    single = clone_with(est, random_state=7).fit(X, y)
    dist = DistributedRidge(est, client=client, n_partitions=3, random_state=7).fit(X, y)
    _same_binning(single, dist, X)
    _same_early_stopping(single, dist, 3)
    np.testing.assert_array_equal(dist.predict(X), single.predict(X))
    unseeded = DistributedRidge(est, client=client, n_partitions=3).fit(X, y)
    assert 0.05 * len(y) < unseeded.n_validation_ < 0.15 * len(y)


def clone_with(est, **params):
    from sklearn.base import clone

    return clone(est).set_params(**params)


@pytest.mark.parametrize("est", [
    NystromClassifier(n_components=60, sigma=1.0, lam=10.0, random_state=2, solver="cg", maxit=60, early_stopping=True),
    RandomFourierRegressor(n_components=30, sigma=1.0, lam=100.0, random_state=0, solver="pcg", early_stopping=True,
                           validation_fraction=0.2),
])
def test_rf_and_nystrom_by_cg_stop_early_as_the_single_process_fit(client, est):
    """The map fitted on the fit rows (Nystrom's landmarks drawn among them), y_mean of all rows. A
    large lam: Nystrom's Z is so ill-conditioned that CG amplifies rounding past 1e-3 in 13 steps at
    lam = 0.1 (with or without early stopping), and RF's features are float32, rounded differently
    by BLAS in partitions of other sizes."""
    X, y = _problem(seed=10)
    target = X[:, 0] * 3 + np.sin(5 * X[:, 1]) if est._task == "regression" else y
    single = est.fit(X, target)
    fraction = est.validation_fraction
    dist = DistributedRidge(est, client=client).fit_partitions(_es_sources(X, target, est.random_state, fraction))
    rtol = 1e-5 if est._task == "regression" else 1e-9
    _same_early_stopping(single, dist, 7, rtol)
    if est._task != "regression":
        np.testing.assert_array_equal(dist.features_.landmark_indices_, single.features_.landmark_indices_)
        np.testing.assert_array_equal(dist.predict(X), single.predict(X))
    np.testing.assert_allclose(dist.coef_, single.coef_, rtol=0, atol=rtol * np.abs(single.coef_).max())


def test_rb_regression_stops_early_as_the_single_process_fit(client):
    """The squared error summed over the partitions' held-out rows decides as the single fit's."""
    X, _ = _problem(seed=11)
    target = np.sin(6 * X[:, 0]) + X[:, 1] + np.random.default_rng(0).normal(scale=0.3, size=len(X))
    est = RandomBinningRegressor(n_grids=16, sigma=3.0, lam=0.5, maxit=200, tol=1e-12, early_stopping=True,
                                 random_state=4, center=True)
    single = est.fit(X, target)
    assert single.cg_iterations_ < 200  # stopped by the held-out rows, not by maxit
    dist = DistributedRidge(est, client=client, n_partitions=3).fit(X, target)
    _same_binning(single, dist, X)
    _same_early_stopping(single, dist, 3)
    np.testing.assert_allclose(dist.predict(X), single.predict(X), rtol=0, atol=1e-8)


def test_a_split_with_an_empty_side_is_refused_as_on_one_machine(client):
    from rbrepro.solvers.stopping import held_out

    X, y = _problem(n=3)
    assert not held_out(3, 0.1, 1).any()
    est = RandomBinningRegressor(n_grids=4, early_stopping=True, random_state=1)
    with pytest.raises(InvalidParameter, match="some rows on each side"):
        est.fit(X, X[:, 0])
    with pytest.raises(InvalidParameter, match="some rows on each side"):
        DistributedRidge(est, client=client, n_partitions=2).fit(X, X[:, 0])
