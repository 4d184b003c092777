"""Random Binning features for the Laplacian kernel exp(-sigma ||x - y||_1) (Alg. 1).

For grid r and feature j: delta_rj ~ Gamma(shape 2, scale 1/sigma) and
u_rj ~ U[0, delta_rj). sigma is an inverse width (docs/design.md §2): larger sigma, narrower
bins, more columns D. The columns of grid r are its non-empty training bins, numbered
consecutively; a test point in an unseen bin gets no entry for that grid. Then
E[z(x)^T z(y)] = exp(-sigma ||x - y||_1).
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from rbrepro.constraints import check_count, check_sigma, seed_of
from rbrepro.errors import InvalidParameter
from rbrepro.features import _binning_kernels as kernels
from rbrepro.features.authors_rng import authors_grids
from rbrepro.features.binned_matrix import BinnedMatrix
from rbrepro.memory import MemoryLimitError, check_memory, map_new_pages, memory_limit_bytes
from rbrepro.mixing import splitmix64
from rbrepro.vocabulary import RNGS

#: the largest |bin index| binning accepts: floats are exact integers up to 2^53
MAX_BIN_INDEX = float(2 ** 52)
#: column ids are int32: the largest D a fit can have
ID_LIMIT = int(np.iinfo(np.int32).max)
#: bytes of key scratch space per batch of grids (keys are computed a batch at a time): for dense rows
#: 8 MB, so a batch's keys are still in cache when they are numbered and no batch faults in fresh pages
#: (ijcnn1, cadata, cod_rna_split: 10-25% less featurize time than 256 MB batches)
KEY_BATCH_BYTES = 8 * 2**20
#: the same for CSR rows (and dense rows keyed as CSR, `key_rows`): each batch re-reads every stored entry and
#: vectorizes over its grids, so batches stay wider, yet not so wide that each fit faults in a fresh buffer
#: of hundreds of MB. Featurize, min of 5, alternating sizes in one process (2 threads, AMD EPYC Zen 1), at
#: 8 / 32 / 256 MB: mnist R = 64 623 / 454 / 455 ms; ijcnn1 R = 256 162 / 140 / 149 ms, R = 1024
#: 659 / 548 / 817 ms; 16 and 64 MB no better than 32
SPARSE_KEY_BATCH_BYTES = 32 * 2**20
#: a CSR batch's grids are a multiple of this (but the last): `keys_csr` vectorizes over the grids, eight
#: doubles a vector on AVX-512, and a loop's leftover grids run one at a time. keys_csr per grid, min of 9,
#: one process, 2 threads, AMD EPYC Zen 4, ijcnn1 R = 1024: 119 grids a batch 99.9 us, 112 / 120 / 128 grids
#: 91.4 / 90.5 / 94.5 us (through MAGIC's bits: 142.6 against 126.0 / 114.3 / 111.0)
SPARSE_KEY_GRID_MULTIPLE = 8
#: a dense X whose share of non-zeros is below this is keyed as CSR (`key_rows`): a CSR row costs one key step
#: per non-zero and grid, a dense row one per feature and grid, but a CSR step costs more (measured, 2 threads,
#: AMD EPYC Zen 1, R = 256, keys alone, CSR over dense: ijcnn1 at 0.59 non-zero 0.68; 1.0 non-zero cadata and
#: cod_rna_split 1.3, letter 1.09: even somewhere near 0.8, kept below it)
KEY_CSR_DENSITY = 0.7
#: bytes each bin costs at the end of a fit: its key kept (8), lookup-table slots (a power of two
#: >= 2 slots per bin, 12 bytes each: at most 48) and its row count, kept by Z (8)
BYTES_PER_BIN = 8 + 48 + 8


def fit_memory(n: int, d: int, R: int) -> float:
    """Bytes of the big arrays of binning n rows of d features on R grids, before any bin is known:
    int32 ids (R x n), key batches, per-row scratch, the four R x d grid arrays and a dense X's CSR copy
    (`key_rows`)."""
    return (4.0 * n * R + min(8.0 * n * R, max(KEY_BATCH_BYTES, SPARSE_KEY_BATCH_BYTES)) * 3 + 24.0 * 2 * n
            + 32.0 * R * d + 12.0 * KEY_CSR_DENSITY * n * d)


def key_rows(X):
    """X as the key kernels should read it: a dense X with fewer than KEY_CSR_DENSITY non-zeros as CSR
    (`_binning_kernels.dense_nonzeros`, 12 bytes a non-zero), else unchanged. A row's keys are the same
    either way, bit for bit (the key is linear in the bins; `keys_csr`)."""
    if sp.issparse(X) or X.size == 0:
        return X
    indptr = np.empty(X.shape[0] + 1, np.int64)
    kernels.count_nonzeros(X, indptr)  # the row starts, kept for the copy: X is counted once
    if indptr[-1] >= KEY_CSR_DENSITY * X.size:
        return X
    indices, data = kernels.dense_nonzeros(X, indptr)
    return sp.csr_matrix((data, indices, indptr), shape=X.shape, copy=False)


def _feature_multipliers(n_features: int) -> np.ndarray:
    """Odd per-feature multipliers of the linear bin-vector hash (fixed, so keys are reproducible)."""
    with np.errstate(over="ignore"):
        return splitmix64(np.arange(n_features, dtype=np.uint64) + np.uint64(0x5BD1E995)) | np.uint64(1)


#: rows per block of the key kernels: a block's values and a grid's keys for it stay in L1 for the
#: usual few dozen features (256 measured best or within 10% of it among 32 ... 1024 rows, on 8 to 784 features)
KEY_ROW_BLOCK = 256


def _grid_batches(n_grids: int, n_rows: int, sparse: bool = False):
    """(lo, hi) ranges of grids whose keys (8 bytes per row and grid) fit the batch size for dense or CSR rows
    (CSR batches a multiple of SPARSE_KEY_GRID_MULTIPLE grids)."""
    batch_bytes = SPARSE_KEY_BATCH_BYTES if sparse else KEY_BATCH_BYTES
    size = max(4 * numba.get_num_threads(), batch_bytes // max(8 * n_rows, 1))
    if sparse and size > SPARSE_KEY_GRID_MULTIPLE:
        size -= size % SPARSE_KEY_GRID_MULTIPLE
    size = max(1, min(n_grids, size))
    for lo in range(0, n_grids, size):
        yield lo, min(n_grids, lo + size)


def _next_pow2(values: np.ndarray) -> np.ndarray:
    return (2 ** np.ceil(np.log2(np.maximum(values, 1)))).astype(np.int64)


def canonical_rows(X):
    """CSR rows with duplicates summed and indices sorted (on a copy where needed): a row's bin must not
    depend on how it is stored."""
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


class RandomBinningFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Random Binning feature map (Wu et al. 2016, Alg. 1) for the Laplacian kernel.

    Each of R grids draws, per feature j, a bin width delta_j ~ Gamma(2, 1/sigma) and an offset
    u_j ~ U[0, delta_j); a row's bin is floor((x_j - u_j) / delta_j) over all j. A row's features
    are the indicators of its bin in each grid, scaled by 1/sqrt(R), so that
    E[z(x)^T z(y)] = exp(-sigma ||x - y||_1) (eq. 7; sigma is an inverse width, where eq. 5 writes
    1/sigma). The columns are the non-empty training bins, D of them in all; a new row in a bin
    unseen in training gets no entry for that grid.

    Parameters
    ----------
    n_grids : int, default=256
        R, the number of random grids; every row of Z has exactly R non-zeros 1/sqrt(R).
    sigma : float, default=1.0
        Inverse kernel width of exp(-sigma ||x - y||_1).
    random_state : int, RandomState instance or None, default=None
        Seed of the grid draw.
    draws : {"numpy", "authors"}, default="numpy"
        "numpy" draws the grids from numpy's generator seeded by random_state; "authors" replays
        the draws of the authors' C++ code bit for bit (rbrepro.features.authors_rng; the same
        grids for every seed, every sigma scaled, nested across R), to regenerate their numbers.
    memory_limit_gb : float or None, default=None
        Refuse, before allocating, work whose estimate exceeds this many GB.

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen during fit.
    deltas_, offsets_ : ndarray of shape (R, n_features_in_)
        Bin widths and grid shifts.
    bins_per_grid_ : ndarray of shape (R,)
        D_r, the non-empty training bins of each grid.
    column_offsets_ : ndarray of shape (R + 1,)
        First column of each grid; D = column_offsets_[-1].
    n_bins_ : int
        D, the number of columns.
    kappa_ : float
        kappa (eq. 10): the mean over grids of 1 / max_b nu_b, nu_b the share of training rows in bin b.
    nnz_ : int
        Stored entries of the training Z (N R).

    See Also
    --------
    rbrepro.models.RandomBinningClassifier, rbrepro.models.RandomBinningRegressor : Ridge on these features.
    BinnedMatrix : The compact Z that `fit_transform_binned` returns.

    Examples
    --------
    >>> import numpy as np
    >>> from rbrepro.features import RandomBinningFeatures
    >>> X = np.random.default_rng(0).uniform(size=(100, 4))
    >>> rb = RandomBinningFeatures(n_grids=64, sigma=1.0, random_state=0)
    >>> Z = rb.fit_transform(X)  # scipy CSR, N x D
    >>> Z.shape == (100, rb.n_bins_)
    True
    >>> set(Z.getnnz(axis=1).tolist())  # R non-zeros a row
    {64}
    >>> K = np.exp(-1.0 * np.abs(X[:, None] - X[None]).sum(axis=2))  # the kernel matrix
    >>> float(np.abs((Z @ Z.T).toarray() - K).mean()) < 0.1
    True
    """

    #: its fitted state, as a saved model holds it (models.persist): arrays, then scalars
    _saved_arrays = ("deltas_", "offsets_", "_inv_deltas", "_multipliers", "_zero_terms", "_zero_keys",
                     "bins_per_grid_", "column_offsets_", "_table_offsets", "_table_keys", "_table_ids")
    _saved_scalars = ("n_features_in_", "n_bins_", "kappa_", "nnz_")
    fit_memory = staticmethod(fit_memory)
    #: a direct solve factors the sparse Z^T Z (its memory is bounded as if dense)
    sparse = True

    def __init__(self, *, n_grids: int = 256, sigma: float = 1.0, random_state=None, draws: str = "numpy",
                 memory_limit_gb=None):
        self.n_grids = n_grids
        self.sigma = sigma
        self.random_state = random_state
        self.draws = draws
        self.memory_limit_gb = memory_limit_gb

    # -- validation -------------------------------------------------------------
    def _validate_params(self):
        check_count("n_grids (R)", self.n_grids)
        check_sigma(self.sigma)
        if self.draws not in RNGS:
            raise InvalidParameter(f"draws must be one of {', '.join(RNGS)}, got {self.draws!r}")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _check_X(self, X, reset: bool):
        return canonical_rows(validate_data(self, X, accept_sparse="csr", dtype=[np.float32, np.float64], order="C",
                                            reset=reset))

    # -- keys -------------------------------------------------------------------
    def _check_bin_range(self, X) -> None:
        """Bin indices floor((x - u) / delta) are int64: past 2^52 a float can no longer tell neighbouring
        bins apart, and past 2^63 the cast wraps, so distant points would share a bin. Refuse instead."""
        values = X.data if sp.issparse(X) else X
        if values.size == 0:
            return
        largest = max(float(np.max(values)), -float(np.min(values)))  # |x|'s max without an |x| copy of X
        reach = (largest + float(np.max(self.offsets_))) * float(np.max(self._inv_deltas))
        if not reach < MAX_BIN_INDEX:
            raise InvalidParameter(f"feature values up to {largest:.3g} with sigma = {self.sigma:g} "
                             f"give bin indices up to {reach:.3g}, past the {MAX_BIN_INDEX:.3g} that binning can tell "
                             "apart; scale the features (e.g. to [0, 1]) or lower sigma")

    def _batched_keys(self, X):
        """(lo, hi, keys) for every batch of grids (`_grid_batches`), keys (hi - lo, n) a view of one
        buffer for the whole pass, so that its pages are faulted in once, not once per batch (a fresh
        process's first fit paid that for 8 N R bytes); each batch overwrites the one before."""
        X = key_rows(X)
        batches = list(_grid_batches(int(self.n_grids), X.shape[0], sp.issparse(X)))
        buffer = map_new_pages(np.empty(max((hi - lo for lo, hi in batches), default=0) * X.shape[0], np.uint64))
        for lo, hi in batches:
            yield lo, hi, self._keys(X, lo, hi, buffer)

    def _keys(self, X, lo: int, hi: int, buffer: np.ndarray | None = None) -> np.ndarray:
        """The keys (hi - lo, n) of grids lo..hi-1 for X's rows (paper Alg. 1), written into the front of
        `buffer` where given."""
        shape = (hi - lo, X.shape[0])
        keys = (np.empty(shape, np.uint64) if buffer is None
                else buffer[:shape[0] * shape[1]].reshape(shape))
        # feature-major copies of this batch's grid parameters (d x grids), as the key kernels read them
        uT = np.ascontiguousarray(self.offsets_[lo:hi].T)
        invT = np.ascontiguousarray(self._inv_deltas[lo:hi].T)
        if sp.issparse(X):
            kernels.keys_csr(X.indptr, X.indices, X.data, uT, invT, self._multipliers,
                             np.ascontiguousarray(self._zero_terms[:, lo:hi]), self._zero_keys[lo:hi],
                             KEY_ROW_BLOCK, keys, kernels.vector_int64())
        else:
            kernels.keys_dense(X, uT, invT, self._multipliers, KEY_ROW_BLOCK, keys, kernels.vector_int64())
        return keys

    # -- fit / transform --------------------------------------------------------
    def fit(self, X, y=None):
        self.fit_transform_binned(X)
        return self

    def _draw_grids(self, R: int, d: int) -> tuple[np.ndarray, np.ndarray]:
        """(deltas, offsets), each (R, d): delta ~ Gamma(2, 1/sigma), u ~ U[0, delta) (Alg. 1)."""
        if self.draws == "authors":
            return authors_grids(R, d, float(self.sigma))
        rng = np.random.default_rng(seed_of(self.random_state))
        deltas = rng.gamma(shape=2.0, scale=1.0 / self.sigma, size=(R, d))
        return deltas, rng.uniform(0.0, deltas)

    def _refuse_if_D_overflows(self, X, n: int, R: int, probe_grids: int = 16) -> None:
        """Column ids are int32, and D <= N R. Where N R could pass the int32 range, estimate D from
        the first grids' bin counts (grids are i.i.d., so D ~ R mean D_r) and refuse before allocating
        when the estimate passes it; fit_transform_binned also checks the real D grid by grid."""
        limit = ID_LIMIT
        if n * R <= limit:
            return
        k = min(R, probe_grids)
        keys = self._keys(X, 0, k)
        mean_bins = float(np.mean([len(np.unique(keys[g])) for g in range(k)]))
        if mean_bins * R > limit:
            raise MemoryLimitError(f"D is about {mean_bins * R:,.0f} columns (R = {R} grids of about {mean_bins:,.0f} "
                              f"bins each, from the first {k}), past the int32 column-id range ({limit:,}); "
                              "lower R or sigma")

    def _refuse_if_tables_outgrow(self, n: int, d: int, R: int, done: int, bins: int, limit_bytes: int) -> None:
        """The bins are known only as grids are binned: after each batch, extrapolate D from the grids
        so far (i.i.d., so D ~ R mean D_r) and refuse before the key lists and lookup tables outgrow
        the memory limit (a small sigma on many rows gives up to N bins per grid)."""
        estimate = bins * R / done
        check_memory(f"rb lookup tables for D ~ {estimate:,.0f} bins ({bins:,} in the first {done} of {R} grids; "
                     f"lower sigma or R)", fit_memory(n, d, R) + BYTES_PER_BIN * estimate, limit_bytes=limit_bytes)

    def prepare_grids(self, n_features: int) -> None:
        """Validate the parameters and draw the grids for rows of `n_features` features (the first half
        of a fit; a distributed fit draws them once and bins every partition on them)."""
        self._validate_params()
        R, d = int(self.n_grids), int(n_features)
        self.deltas_, self.offsets_ = self._draw_grids(R, d)
        self._inv_deltas = 1.0 / self.deltas_
        self._multipliers = _feature_multipliers(d)
        self._zero_terms = np.empty((d, R), dtype=np.uint64)  # feature-major, as the key kernels read it
        self._zero_keys = np.empty(R, dtype=np.uint64)
        kernels.zero_row_terms(np.ascontiguousarray(self.offsets_.T), np.ascontiguousarray(self._inv_deltas.T),
                               self._multipliers, self._zero_terms, self._zero_keys)

    def number_bins(self, X):
        """Bin rows on the drawn grids: (ids, n_bins, keys) with ids (R, n) the local column of each row
        in its grid (bins numbered in order of first appearance), n_bins (R,) each grid's bins, keys the
        R arrays of each grid's distinct keys in id order."""
        R, n = int(self.n_grids), X.shape[0]
        ids = map_new_pages(np.empty((R, n), dtype=np.int32))  # the numbering's threads write it first
        n_bins = np.empty(R, dtype=np.int64)
        uniq_parts = []
        # read once a fit: each read parses the control group's files (about 0.1 ms, 0.3 ms with the caches
        # just swept by a batch's keys), and cod_rna_split's R = 256 takes 12 batches
        limit = memory_limit_bytes(self.memory_limit_gb)
        for lo, hi, keys in self._batched_keys(X):
            kernels.assign_columns(keys, ids[lo:hi], n_bins[lo:hi], numba.get_num_threads())  # distinct keys -> keys
            if int(n_bins[:hi].sum()) > ID_LIMIT:  # the real D, not N R, must fit int32 ids
                raise MemoryLimitError(f"D = {int(n_bins[:hi].sum()):,} columns after {hi} of {R} grids exceeds the "
                                       f"int32 column-id range ({ID_LIMIT:,}); lower R or sigma")
            self._refuse_if_tables_outgrow(n, X.shape[1], R, hi, int(n_bins[:hi].sum()), limit)
            uniq_parts.extend(keys[k, : n_bins[lo + k]].copy() for k in range(hi - lo))
        return ids, n_bins, uniq_parts

    def set_columns(self, uniq_parts: list, n_rows: int, max_count: np.ndarray) -> np.ndarray:
        """Number the columns grid by grid from each grid's distinct training keys (in id order) and
        build the lookup tables of transform; returns the column offsets (the second half of a fit)."""
        R = int(self.n_grids)
        n_bins = np.array([len(u) for u in uniq_parts], dtype=np.int64)
        col_offsets = np.zeros(R + 1, dtype=np.int64)
        col_offsets[1:] = np.cumsum(n_bins)
        if col_offsets[-1] > ID_LIMIT:
            raise MemoryLimitError(f"D = {col_offsets[-1]:,} columns exceeds the int32 column-id range "
                                   f"({ID_LIMIT:,}); lower R or sigma")
        self.bins_per_grid_ = n_bins
        self.column_offsets_ = col_offsets
        self.n_bins_ = int(col_offsets[-1])
        self._n_features_out = self.n_bins_
        self.kappa_ = float(np.mean(n_rows / max_count)) if n_rows else float("nan")
        self.nnz_ = n_rows * R
        uniq_flat = np.concatenate(uniq_parts) if uniq_parts else np.empty(0, np.uint64)
        table_offsets = np.zeros(R + 1, dtype=np.int64)
        table_offsets[1:] = np.cumsum(_next_pow2(2 * n_bins))
        self._table_offsets = table_offsets
        self._table_keys = map_new_pages(np.zeros(table_offsets[-1], dtype=np.uint64))
        self._table_ids = np.full(table_offsets[-1], -1, dtype=np.int32)
        kernels.build_lookup(uniq_flat, col_offsets, table_offsets, self._table_keys, self._table_ids)
        return col_offsets

    def fit_transform_binned(self, X) -> BinnedMatrix:
        """Draw the grids, bin the training rows, and return their compact Z."""
        self._validate_params()
        X = self._check_X(X, reset=True)
        n, d = X.shape
        check_memory(f"rb features of {n} rows at R = {int(self.n_grids)}", fit_memory(n, d, int(self.n_grids)),
                     self.memory_limit_gb)
        self.prepare_grids(d)
        self._check_bin_range(X)
        self._refuse_if_D_overflows(X, n, int(self.n_grids))
        ids, n_bins, uniq_parts = self.number_bins(X)
        col_offsets = np.zeros(len(n_bins) + 1, dtype=np.int64)
        col_offsets[1:] = np.cumsum(n_bins)
        kernels.add_grid_offsets(ids, 0, col_offsets)
        Z = BinnedMatrix(ids, col_offsets, self.memory_limit_gb)
        # each grid's largest bin, for kappa, from the bins' counts (kept by Z for PCG's preconditioner)
        max_count = (np.maximum.reduceat(Z.column_counts(), col_offsets[:-1]).astype(np.int64) if n
                     else np.zeros(len(n_bins), np.int64))
        self.set_columns(uniq_parts, n, max_count)
        return Z

    def transform_binned(self, X) -> BinnedMatrix:
        """Compact Z of new rows; bins unseen in training give no entry (id -1)."""
        check_is_fitted(self, "n_bins_")
        X = self._check_X(X, reset=False)
        self._check_bin_range(X)
        R = int(self.n_grids)
        ids = map_new_pages(np.empty((R, X.shape[0]), dtype=np.int32))
        for lo, hi, keys in self._batched_keys(X):
            kernels.lookup_columns(keys, lo, self._table_offsets, self._table_keys, self._table_ids, ids)
        return BinnedMatrix(ids, self.column_offsets_, self.memory_limit_gb)

    def transform(self, X) -> sp.csr_matrix:
        """Z as a scipy CSR matrix (N x D), for use inside scikit-learn pipelines."""
        return self.transform_binned(X).to_csr()

    def fit_transform(self, X, y=None, **fit_params) -> sp.csr_matrix:
        return self.fit_transform_binned(X).to_csr()

    def warm_up(self, X) -> None:
        """Compile (or load from the on-disk cache) every kernel for X's types on 2 rows."""
        probe = type(self)(n_grids=2, sigma=self.sigma, random_state=0, draws=self.draws,
                           memory_limit_gb=self.memory_limit_gb)
        Z = probe.fit_transform_binned(X[:2])
        probe.transform_binned(X[:2])
        for n_rhs in (1, 2):  # one right-hand side and several use different kernels
            Z.matvec(np.zeros((Z.n_columns, n_rhs)))
            Z.rmatvec(np.zeros((Z.n_rows, n_rhs)))

    def cost(self, n: int) -> dict:
        """D, nnz, kappa and the paper's memory model (stored entries per training point) of the
        training Z of n rows."""
        return {"D": self.n_bins_, "nnz": self.nnz_, "kappa": self.kappa_,
                "memory_model_entries": self.n_grids + self.n_bins_ / n}

    # -- a loaded model's state ---------------------------------------------------
    def _check_saved(self, model, d: int) -> None:
        """Every array a kernel will index, checked before any kernel sees it (ValueError says what
        is wrong): a crafted model file with valid checksums must never be read out of bounds."""
        R = self.n_grids
        if getattr(model, "n_grids", R) != R or (getattr(model, "sigma_", None) or model.sigma) != self.sigma:
            raise ValueError(f"its grids are not {getattr(model, 'n_grids', R)} x {d} as its parameters say")
        cols = np.asarray(self.column_offsets_)
        if self.deltas_.shape != (R, d) or self.offsets_.shape != (R, d) or self._inv_deltas.shape != (R, d) \
                or (self.deltas_ <= 0).any() or self._multipliers.shape != (d,) \
                or self._zero_terms.shape != (d, R) or self._zero_keys.shape != (R,):
            raise ValueError(f"its grids are not {R} x {d}, or a bin width is not positive")
        if cols.shape != (R + 1,) or cols[0] != 0 or (np.diff(cols) < 1).any() or cols[-1] != self.n_bins_ \
                or self.bins_per_grid_.shape != (R,) or (np.diff(cols) != self.bins_per_grid_).any() \
                or np.asarray(self._table_offsets).shape != (R + 1,):
            raise ValueError("its column offsets do not match its grids and bins")
        self._check_tables()
        ids, offsets = np.asarray(self._table_ids), np.asarray(self._table_offsets)
        grid_of_slot = np.repeat(np.arange(R), np.diff(offsets))
        used = ids >= 0
        if (ids < -1).any() or (ids[used] < cols[grid_of_slot[used]]).any() \
                or (ids[used] >= cols[grid_of_slot[used] + 1]).any():
            raise ValueError("a bin id lies outside its grid's columns")
        if model.coef_.shape[0] != self.n_bins_:
            raise ValueError(f"{model.coef_.shape[0]} weights for {self.n_bins_} bins")

    def _check_tables(self) -> None:
        """The bin lookup tables must end every probe: power-of-two segments, each with an empty slot."""
        offsets, ids = np.asarray(self._table_offsets), np.asarray(self._table_ids)
        sizes = np.diff(offsets)
        if offsets[0] != 0 or offsets[-1] != len(ids) or len(self._table_keys) != len(ids) or (sizes < 1).any() \
                or (sizes & (sizes - 1)).any():
            raise ValueError("its bin lookup tables are malformed")
        empty = np.add.reduceat((ids < 0).astype(np.int64), offsets[:-1])
        if (empty < 1).any():
            raise ValueError("a bin lookup table has no empty slot")
