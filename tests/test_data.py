"""Data layer: parsing, binary cache, splits, scaling, verified fetch from a directory and over HTTP."""

import bz2
import json
import lzma
import os

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from rbrepro.data import libsvm, load
from rbrepro.data import transfer as fetch_mod  # the retries and backoff live in the transfer module
from rbrepro.data.fetch import FetchError, fetch_dataset
from rbrepro.data.load import load_dataset
from rbrepro.data.registry import REGISTRY, get_spec
from rbrepro.data.scaling import minmax_scale
from tests.conftest import make_binary_problem, write_libsvm


def test_parse_plain_bz2_and_xz_agree_with_scikit_learn(tmp_path):
    X, y = make_binary_problem(200, 22, seed=1)
    plain = write_libsvm(tmp_path / "a.txt", X, y)
    (tmp_path / "a.bz2").write_bytes(bz2.compress(plain.read_bytes()))
    (tmp_path / "a.xz").write_bytes(lzma.compress(plain.read_bytes()))
    X_ref, y_ref = load_svmlight_file(str(plain), n_features=22, zero_based=False)
    for name in ("a.txt", "a.bz2", "a.xz"):
        parsed = libsvm.parse_libsvm(tmp_path / name, 22)
        Xp = parsed.X.toarray() if sp.issparse(parsed.X) else parsed.X
        np.testing.assert_allclose(Xp, X_ref.toarray(), rtol=1e-6)
        np.testing.assert_array_equal(parsed.y, y_ref)


def test_sparse_data_stays_sparse_and_narrow_files_are_padded(tmp_path):
    X = np.zeros((50, 30))
    X[np.arange(50), np.arange(50) % 10] = 1.0
    path = write_libsvm(tmp_path / "s.txt", X, np.arange(50) % 3)
    parsed = libsvm.parse_libsvm(path, 40)  # file uses 10 columns, the registry says 40
    assert sp.issparse(parsed.X) and parsed.X.shape == (50, 40)


def test_cache_round_trip_and_invalidation(tmp_path):
    X, y = make_binary_problem(100, 22, seed=2)
    raw = write_libsvm(tmp_path / "raw" / "f.txt", X, y)
    first = load.load_parsed(raw, 22, tmp_path / "cache")
    cache = tmp_path / "cache" / "f.txt.npz"  # keyed by the file name when no key is given
    assert cache.exists()
    again = libsvm.load_cache(cache, load._source_digest(raw))
    np.testing.assert_array_equal(again.X, first.X)
    assert libsvm.load_cache(cache, "0" * 64) is None  # another source: stale
    cache.write_bytes(b"garbage")  # a damaged cache is rebuilt, not trusted
    rebuilt = load.load_parsed(raw, 22, tmp_path / "cache")
    np.testing.assert_array_equal(rebuilt.X, first.X)


def test_minmax_scaling_uses_the_training_split_only():
    rng = np.random.default_rng(0)
    tr, te = rng.normal(5, 2, (100, 3)).astype(np.float32), rng.normal(5, 2, (20, 3)).astype(np.float32)
    s_tr, (s_te,) = minmax_scale(tr, [te])
    np.testing.assert_allclose(s_tr.min(axis=0), 0, atol=1e-6)
    np.testing.assert_allclose(s_tr.max(axis=0), 1, atol=1e-6)
    np.testing.assert_allclose(s_te, (te - tr.min(0)) / (tr.max(0) - tr.min(0)), rtol=1e-5)
    sparse_tr = sp.csr_matrix(np.abs(tr) * (rng.random(tr.shape) < 0.3))
    s_sp, _ = minmax_scale(sparse_tr, [None])
    assert sp.issparse(s_sp) and s_sp.max() == pytest.approx(1.0)


def test_registry_covers_table1_and_split_counts():
    for name in ("cadata", "census", "ijcnn1", "cod_rna", "covtype", "SUSY", "mnist", "acoustic", "letter"):
        assert name in REGISTRY
    with pytest.raises(KeyError, match="known datasets"):
        get_spec("nope")


def test_fetch_from_directory_verifies_against_manifest(small_ijcnn1_mirror, tmp_path):
    paths = fetch_dataset(get_spec("ijcnn1"), tmp_path / "data", small_ijcnn1_mirror, progress=False)
    assert [p.name for p in paths] == ["ijcnn1.tr.bz2", "ijcnn1.t.bz2", "ijcnn1.val.bz2"]
    data = load_dataset("ijcnn1", tmp_path / "data", fetch=False)
    assert data.X_train.shape == (1000, 22) and data.X_test.shape == (400, 22) and data.X_val.shape == (200, 22)
    assert data.split == "provided test file" and data.scaling == "as published"


def test_checksum_mismatch_keeps_nothing(small_ijcnn1_mirror, tmp_path):
    target = small_ijcnn1_mirror / "binary" / "ijcnn1.t.bz2"
    target.write_bytes(target.read_bytes() + b"tampered")
    with pytest.raises(FetchError, match="sha256 mismatch"):
        fetch_dataset(get_spec("ijcnn1"), tmp_path / "data", small_ijcnn1_mirror, progress=False)
    raw = tmp_path / "data" / "raw" / "binary"
    assert not (raw / "ijcnn1.t.bz2").exists()
    assert not [p for p in raw.iterdir() if p.name.endswith(".part")]


def test_fetch_over_http_and_trust_on_first_use_without_manifest(http_mirror, tmp_path):
    url, root = http_mirror
    fetch_dataset(get_spec("ijcnn1"), tmp_path / "a", url, progress=False)
    assert (tmp_path / "a" / "raw" / "binary" / "ijcnn1.t.bz2").exists()
    (root / "MANIFEST.tsv").unlink()  # no manifest: the first download's hash is recorded, then enforced
    with pytest.raises(FetchError, match="1,000 data lines, but this file has 35,000 rows"):
        fetch_dataset(get_spec("ijcnn1"), tmp_path / "b", url, progress=False)  # the registry's rows, first
    X, y = make_binary_problem(20640, 8, seed=3)  # cadata's shape: rows as the registry has them
    write_libsvm(root / "regression" / "cadata", X, 1000 * (y + 2.0))
    fetch_dataset(get_spec("cadata"), tmp_path / "b", url, progress=False)
    lock = json.loads((tmp_path / "b" / "hashes.lock.json").read_text())
    assert list(lock) == [f"mirror:{url}/regression/cadata"]
    (tmp_path / "b" / "raw" / "regression" / "cadata").unlink()
    (root / "regression" / "cadata").write_bytes(b"changed upstream")
    with pytest.raises(FetchError, match="sha256 mismatch.*hashes.lock.json.*--forget-hashes"):
        fetch_dataset(get_spec("cadata"), tmp_path / "b", url, progress=False)


def test_http_errors_are_named(http_mirror, tmp_path, monkeypatch):
    url, root = http_mirror
    (root / "binary" / "ijcnn1.val.bz2").unlink()  # listed in the manifest, gone from the server
    with pytest.raises(FetchError, match="404"):
        fetch_dataset(get_spec("ijcnn1"), tmp_path, url, progress=False)
    monkeypatch.setattr(fetch_mod, "RETRIES", 2)
    monkeypatch.setattr(fetch_mod.time, "sleep", lambda s: None)
    with pytest.raises(FetchError, match="after 2 attempts"):
        fetch_dataset(get_spec("ijcnn1"), tmp_path, "http://127.0.0.1:9", progress=False)
    with pytest.raises(FetchError, match="neither"):
        fetch_dataset(get_spec("ijcnn1"), tmp_path, str(tmp_path / "no-such-dir"), progress=False)


def test_embedded_and_user_datasets():
    digits = load_dataset("digits")
    assert digits.X_train.shape == (1437, 64) and digits.X_test.shape == (360, 64)
    assert digits.X_train.min() == 0 and digits.X_train.max() == 1
    with pytest.raises(FetchError, match="--from"):
        fetch_dataset(get_spec("census"), None, None)


def test_atomic_writes_get_ordinary_permissions(tmp_path):
    from rbrepro.data.atomic import write_text_atomic

    old = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "x.txt", "hi")
    finally:
        os.umask(old)
    assert (tmp_path / "x.txt").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]


def test_atomic_writes_never_replace_a_device_or_a_symlink(tmp_path):
    import os

    from rbrepro.data.atomic import write_text_atomic

    null_before = os.stat("/dev/null")
    write_text_atomic("/dev/null", "discarded\n")
    after = os.stat("/dev/null")
    assert (after.st_rdev, after.st_ino) == (null_before.st_rdev, null_before.st_ino)
    target = tmp_path / "target.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_text_atomic(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    import threading

    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    write_text_atomic(fifo, "through the pipe")
    reader.join(10)
    assert got == ["through the pipe"] and not fifo.is_file()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["canonical", "unsorted", "duplicates", "explicit zeros"])
def test_sparse_scaling_gives_the_products_bits_in_canonical_row_order(dtype, layout):
    """Min-max scaling of a sparse split is X @ diag(inv) in float32: the same bits as that product, rows
    sorted without duplicates or stored zeros, whatever the input's layout (binning then copies nothing)."""
    import scipy.sparse as sp

    from rbrepro.data.scaling import MinMaxScaler

    rng = np.random.default_rng(11)
    X = sp.random(60, 30, density=0.3, format="csr", random_state=2, dtype=np.float64)
    X.data = (X.data * 37.3).astype(dtype)
    data, indices, indptr = X.data.copy(), X.indices.copy(), X.indptr.copy()
    if layout == "unsorted":  # every row's entries stored back to front
        for i in range(60):
            a, b = indptr[i], indptr[i + 1]
            indices[a:b], data[a:b] = indices[a:b][::-1].copy(), data[a:b][::-1].copy()
    elif layout == "duplicates":  # each row's second entry repeats its first column
        for i in range(60):
            if indptr[i + 1] - indptr[i] > 1:
                indices[indptr[i] + 1] = indices[indptr[i]]
    elif layout == "explicit zeros":
        data[rng.random(len(data)) < 0.2] = 0
    X = sp.csr_matrix((data, indices, indptr), shape=X.shape)
    assert X.has_canonical_format == (layout in ("canonical", "explicit zeros"))
    scaler = MinMaxScaler.fit(X)
    expected = (X @ sp.diags(scaler.inv)).tocsr().astype(np.float32)
    out = scaler.transform(X)
    assert out.dtype == np.float32 and out.has_canonical_format
    assert out.nnz == expected.count_nonzero()
    np.testing.assert_array_equal(out.toarray().view(np.uint32), expected.toarray().view(np.uint32))
