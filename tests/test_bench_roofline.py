"""The roofline benchmark's floor kernels do the work they claim to time (plain-numpy references)."""

import numba
import numpy as np
import pytest

from bench import floor_kernels, roofline_floors


@pytest.mark.parametrize("direct", [False, True])  # both of the key kernels' int64 conversions
def test_key_steps_add_every_values_bin_term_in_every_grid(direct):
    rng = np.random.default_rng(0)
    x, u = rng.normal(size=1001), rng.random(7)
    inv_delta = 1.0 / rng.uniform(0.1, 1.0, 7)
    mult = rng.integers(1, 1 << 62, 16, dtype=np.uint64) | np.uint64(1)
    out = np.empty(numba.get_num_threads(), np.uint64)
    floor_kernels.key_steps(x, u, inv_delta, mult, out, direct)
    bins = np.floor((x[:, None] - u[None, :]) * inv_delta[None, :]).astype(np.int64).astype(np.uint64)
    terms = bins * mult[np.arange(x.size) & 15][:, None]  # uint64 products wrap mod 2^64, as the keys do
    assert out.sum(dtype=np.uint64) == terms.sum(dtype=np.uint64)


def test_indirect_loads_sum_the_table_at_every_id():
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 64, 4 * 250, dtype=np.int32)
    table = rng.random(64)
    out = np.empty(numba.get_num_threads())
    floor_kernels.indirect_loads(ids, table, out)
    np.testing.assert_allclose(out.sum(), table[ids].sum(), rtol=1e-12)


@pytest.mark.parametrize("lanes", [4, 8])
def test_read_modify_writes_add_each_groups_value_at_its_ids(lanes):
    rng = np.random.default_rng(2)
    n_ids, size = lanes * 300, 64
    ids = (rng.integers(0, size // lanes, n_ids) + (np.arange(n_ids) % lanes) * (size // lanes)).astype(np.int32)
    values = rng.random(n_ids // lanes)
    tables = np.zeros((numba.get_num_threads(), size))
    floor_kernels.read_modify_writes(ids, values, tables, lanes)
    want = np.zeros(size)
    np.add.at(want, ids, np.repeat(values, lanes))
    np.testing.assert_allclose(tables.sum(axis=0), want, rtol=1e-12)


@pytest.mark.parametrize("streams", [4, 8])
def test_gather_walk_sums_the_table_at_every_id_of_every_full_group_of_grids(streams):
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 64, (2 * streams + 2, 333), dtype=np.int32)  # two whole walks, two grids left over
    table = rng.random(64)
    out = np.empty(numba.get_num_threads())
    floor_kernels.gather_walk(ids, table, out, streams)
    np.testing.assert_allclose(out.sum(), table[ids[:2 * streams]].sum(), rtol=1e-12)


@pytest.mark.parametrize("lanes", [4, 8])
def test_scatter_walk_adds_each_rows_value_at_its_id_in_every_full_group_of_grids(lanes):
    rng = np.random.default_rng(4)
    n_grids, n, size = 2 * lanes + 3, 257, 64  # two full groups, three grids left over
    parts = (np.arange(n_grids) % lanes)[:, None] * (size // lanes)
    ids = (rng.integers(0, size // lanes, (n_grids, n)) + parts).astype(np.int32)
    values = rng.random(n)
    tables = np.zeros((numba.get_num_threads(), size))
    floor_kernels.scatter_walk(ids, values, tables, lanes)
    want = np.zeros(size)
    np.add.at(want, ids[:2 * lanes], np.broadcast_to(values, (2 * lanes, n)))
    np.testing.assert_allclose(tables.sum(axis=0), want, rtol=1e-12)


def test_hash_lookups_find_every_key_in_its_home_slot():
    rng = np.random.default_rng(5)
    table_keys, table_ids = roofline_floors.home_slot_table(rng)
    held = table_ids >= 0
    assert held.sum() == roofline_floors.TABLE_KEYS
    assert sorted(table_ids[held]) == list(range(roofline_floors.TABLE_KEYS))
    pick = rng.integers(0, roofline_floors.TABLE_KEYS, 999)
    keys = table_keys[held][pick]
    found = np.empty(keys.size, np.int32)
    floor_kernels.hash_lookups(keys, table_keys, table_ids, found, numba.get_num_threads())
    np.testing.assert_array_equal(found, table_ids[held][pick])


def test_read_stream_sums_both_arrays():
    rng = np.random.default_rng(5)
    b, c = rng.random(10_001), rng.random(10_001)
    assert floor_kernels.read_stream(b, c) == pytest.approx(b.sum() + c.sum(), rel=1e-12)


def test_featurize_passes_time_keys_numbering_and_lookups_without_touching_the_fit():
    from bench.roofline import featurize_passes
    from rbrepro.features import RandomBinningFeatures

    X = np.random.default_rng(0).random((300, 5))
    features = RandomBinningFeatures(n_grids=40, sigma=2.0, random_state=0)
    Z = features.fit_transform_binned(X)
    times = featurize_passes(features, X)
    assert set(times) == {"keys", "numbering", "lookups"}
    assert all(t > 0 for t in times.values())
    np.testing.assert_array_equal(features.transform_binned(X).ids, Z.ids)  # the fit's tables are unchanged


def test_a_cells_core_rates_are_the_best_of_its_probe_and_the_machines():
    """A slow probe (a VM's neighbours) must not lower a cell's floor rates below the run's best; a cell's
    own faster probe still counts, and the memory-side rates stay the cell's own."""
    cell = {"loads_per_s": 4e9, "rmw_per_s": 1.2e9, "key_steps_per_s": 1.7e9, "lookups_per_s": 1.0e9,
            "call_s": 5e-6, "bytes_per_s": 3e10, "fresh_bytes_per_s": 9e9}
    machine = {"loads_per_s": 4.3e9, "rmw_per_s": 1.9e9, "key_steps_per_s": 1.6e9, "lookups_per_s": 1.2e9,
               "call_s": 3e-6}
    f = roofline_floors.best_rates(cell, machine)
    assert f["loads_per_s"] == 4.3e9 and f["rmw_per_s"] == 1.9e9 and f["lookups_per_s"] == 1.2e9
    assert f["key_steps_per_s"] == 1.7e9  # the cell's own probe was the faster
    assert f["call_s"] == 3e-6
    assert f["bytes_per_s"] == 3e10 and f["fresh_bytes_per_s"] == 9e9
    assert cell["rmw_per_s"] == 1.2e9  # the cell's dict is left as it was


def test_a_step_that_outgrows_the_last_level_cache_is_floored_by_a_stream_from_memory(monkeypatch):
    """The vectors' floor streams over the step's own bytes where they fit in the cache's share, and over
    at least MEMORY_OVER_LLC caches where they do not (the solve's passes then read memory)."""
    llc = 8 << 20
    monkeypatch.setattr(roofline_floors, "cache_bytes", lambda level: llc if level == 3 else None)
    fits = int(roofline_floors.LLC_SHARE * llc)
    assert roofline_floors.stream_bytes(fits) == fits
    assert roofline_floors.stream_bytes(fits + 1) == roofline_floors.MEMORY_OVER_LLC * llc
    huge = 10 * roofline_floors.MEMORY_OVER_LLC * llc
    assert roofline_floors.stream_bytes(huge) == huge


def test_in_sequence_times_the_three_parts_of_a_pcg_solve_on_its_own_iterates():
    """The solve's sequence runs on a small RB matrix (one target and several) and times each part."""
    from bench.roofline import in_sequence
    from rbrepro.features import RandomBinningFeatures

    X = np.random.default_rng(0).random((300, 4))
    Z = RandomBinningFeatures(n_grids=8, sigma=0.5, random_state=0).fit_transform_binned(X)
    for Y in (np.sign(X[:, :1] - 0.5), np.sign(X[:, :3] - 0.5)):
        times = in_sequence(Z, Y, 0.01, steps=3, repeats=1)
        assert set(times) == {"gather", "scatter", "update"}
        assert all(t > 0 for t in times.values())
