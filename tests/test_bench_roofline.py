"""The roofline benchmark's floor kernels do the work they claim to time (plain-numpy references)."""

import numba
import numpy as np

from bench import roofline


def test_key_steps_add_every_values_bin_term_in_every_grid():
    rng = np.random.default_rng(0)
    x, u = rng.normal(size=1001), rng.random(7)
    inv_delta = 1.0 / rng.uniform(0.1, 1.0, 7)
    mult = rng.integers(1, 1 << 62, 16, dtype=np.uint64) | np.uint64(1)
    out = np.empty(numba.get_num_threads(), np.uint64)
    roofline.key_steps(x, u, inv_delta, mult, out)
    bins = np.floor((x[:, None] - u[None, :]) * inv_delta[None, :]).astype(np.int64).astype(np.uint64)
    terms = bins * mult[np.arange(x.size) & 15][:, None]  # uint64 products wrap mod 2^64, as the keys do
    assert out.sum(dtype=np.uint64) == terms.sum(dtype=np.uint64)


def test_indirect_loads_sum_the_table_at_every_id():
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 64, 4 * 250, dtype=np.int32)
    table = rng.random(64)
    out = np.empty(numba.get_num_threads())
    roofline.indirect_loads(ids, table, out)
    np.testing.assert_allclose(out.sum(), table[ids].sum(), rtol=1e-12)


def test_read_modify_writes_add_every_value_at_its_id():
    rng = np.random.default_rng(2)
    n_ids, size = 4 * 300, 64
    ids = (rng.integers(0, size // 4, n_ids) + (np.arange(n_ids) % 4) * (size // 4)).astype(np.int32)
    values = rng.random(n_ids)
    tables = np.zeros((numba.get_num_threads(), size))
    roofline.read_modify_writes(ids, values, tables)
    want = np.zeros(size)
    np.add.at(want, ids, values)
    np.testing.assert_allclose(tables.sum(axis=0), want, rtol=1e-12)
