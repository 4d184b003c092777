"""Saving fitted models without pickle: named arrays in an .npz plus a JSON header.

The header holds the format version, the estimator class and parameters, scalar fitted
attributes, the number of features, the dataset's name, its scaling (the min-max map is
stored as arrays) and a fingerprint of the training data. Loading uses
`np.load(allow_pickle=False)` and rebuilds the estimator from the header, so a model file
can never execute code.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from rbrepro.data.atomic import atomic_path
from rbrepro.data.load import MinMaxScaler
from rbrepro.errors import RbreproError
from rbrepro.features.nystrom import NystromFeatures
from rbrepro.features.random_binning import RandomBinningFeatures
from rbrepro.features.random_fourier import RandomFourierFeatures
from rbrepro.models.feature_ridge import FEATURE_RIDGE
from rbrepro.models.kernel_ridge import KERNEL_RIDGE, _IndependentBlockRidge
from rbrepro.models.l1_model import L1_MODEL

FORMAT = "rbrepro-model"
VERSION = 3  # 2: linear bin-vector hash (keys of version 1 files differ); 3: classifier/regressor classes

# fitted state of each class: array attributes and scalar attributes
_FEATURE_STATE = {
    RandomBinningFeatures: (["deltas_", "offsets_", "_inv_deltas", "_multipliers", "_zero_terms", "_zero_keys",
                             "bins_per_grid_", "column_offsets_", "_table_offsets", "_table_keys", "_table_ids"],
                            ["n_features_in_", "n_bins_", "kappa_", "nnz_"]),
    RandomFourierFeatures: (["omegas_", "phases_"], ["n_features_in_"]),
    NystromFeatures: (["landmarks_", "landmark_indices_", "normalization_"], ["n_features_in_", "rank_"]),
}
_FEATURE_RIDGE_STATE = (["coef_", "y_mean_", "train_scores_"],
                        ["solver_", "center_", "n_columns_", "cg_iterations_", "cg_residual_", "featurize_s_",
                         "solve_s_", "train_s_", "n_features_in_"])
_L1_STATE = (["coef_", "train_scores_"],
             ["loss_", "objective_", "rcd_epochs_", "variant_", "damping_", "n_columns_", "featurize_s_",
              "solve_s_", "train_s_", "n_features_in_"])
_KERNEL_STATE = {"exact": (["X_fit_", "dual_coef_", "y_mean_", "train_scores_"],
                           ["center_", "featurize_s_", "solve_s_", "train_s_", "n_features_in_"]),
                 "block": (["X_fit_", "directions_", "thresholds_", "children_", "leaf_of_node_", "y_mean_",
                            "train_scores_"], ["center_", "featurize_s_", "solve_s_", "train_s_", "n_features_in_"])}
_MODEL_STATE = {
    **{cls: _FEATURE_RIDGE_STATE for cls in FEATURE_RIDGE.values()},
    **{cls: _L1_STATE for cls in L1_MODEL.values()},
    **{cls: _KERNEL_STATE[method] for (method, _), cls in KERNEL_RIDGE.items()},
}
_CLASSES = {c.__name__: c for c in [*_MODEL_STATE, *_FEATURE_STATE]}


class ModelFileError(RbreproError, ValueError):
    """A model file that is not an rbrepro model or does not fit the data given."""


def data_fingerprint(X, y) -> str:
    """sha256 of the training labels and feature values (identifies the data a model saw)."""
    h = hashlib.sha256(np.ascontiguousarray(y, dtype=np.float64).tobytes())
    if sp.issparse(X):
        for part in (X.indptr, X.indices, X.data):
            h.update(np.ascontiguousarray(part).tobytes())
    else:
        h.update(np.ascontiguousarray(X).tobytes())
    return h.hexdigest()


def _checksum(array: np.ndarray) -> str:
    """sha256 of an array's dtype, shape and bytes (any flipped bit or short array shows)."""
    h = hashlib.sha256(f"{array.dtype.str}{array.shape}".encode())
    h.update(np.ascontiguousarray(array).tobytes())
    return h.hexdigest()


def _header_checksum(header: dict) -> str:
    return hashlib.sha256(json.dumps({k: v for k, v in header.items() if k != "header_sha256"},
                                     sort_keys=True).encode()).hexdigest()


def _scalar(value):
    if isinstance(value, (np.generic,)):
        return value.item()
    return value


def save_model(model, path: str | Path, dataset: str, n_features: int, task: str, scaler: MinMaxScaler | None,
               fingerprint: str, scaling: str, label_column: int = 0) -> Path:
    """Write `model` to `path` (.npz) atomically; `label_column` is the training CSV's label column
    (`rbrepro predict` reads files of new rows the same way unless told otherwise)."""
    cls = type(model)
    if cls not in _MODEL_STATE:
        raise ModelFileError(f"cannot save a {cls.__name__}")
    arrays, scalars = {}, {}
    names, scalar_names = _MODEL_STATE[cls]
    for name in names:
        arrays[f"model.{name}"] = np.asarray(getattr(model, name))
    for name in scalar_names:
        scalars[name] = _scalar(getattr(model, name))
    if getattr(model, "classes_", None) is not None:
        arrays["model.classes_"] = np.asarray(model.classes_)
    feature_class = None
    if hasattr(model, "features_"):
        feats = model.features_
        feature_class = type(feats).__name__
        fnames, fscalars = _FEATURE_STATE[type(feats)]
        for name in fnames:
            arrays[f"features.{name}"] = np.asarray(getattr(feats, name))
        scalars["features"] = {"params": feats.get_params(), **{n: _scalar(getattr(feats, n)) for n in fscalars}}
    if isinstance(model, _IndependentBlockRidge):
        arrays["model.leaf_rows_flat"] = np.concatenate(model.leaf_rows_)
        arrays["model.leaf_sizes"] = np.array([len(r) for r in model.leaf_rows_])
        arrays["model.leaf_coef_flat"] = np.concatenate(model.leaf_coef_)
    if scaler is not None:
        arrays["scaler.lo"], arrays["scaler.inv"] = scaler.lo, scaler.inv
    header = {"format": FORMAT, "version": VERSION, "class": cls.__name__, "feature_class": feature_class,
              "params": model.get_params(), "scalars": scalars, "dataset": dataset, "n_features": int(n_features),
              "task": task, "scaling": scaling, "data_fingerprint": fingerprint, "label_column": int(label_column),
              "checksums": {name: _checksum(np.asarray(a)) for name, a in arrays.items()}}
    header["header_sha256"] = _header_checksum(header)
    arrays["__header__"] = np.array(json.dumps(header))
    path = Path(path)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
    return path


def _check_tables(path: Path, feats) -> None:
    """RB lookup tables must end every probe: power-of-two segments, each with an empty slot."""
    offsets, ids = np.asarray(feats._table_offsets), np.asarray(feats._table_ids)
    sizes = np.diff(offsets)
    if offsets[0] != 0 or offsets[-1] != len(ids) or len(feats._table_keys) != len(ids) or (sizes < 1).any() \
            or (sizes & (sizes - 1)).any():
        raise ModelFileError(f"{path}: damaged model: its bin lookup tables are malformed")
    empty = np.add.reduceat((ids < 0).astype(np.int64), offsets[:-1])
    if (empty < 1).any():
        raise ModelFileError(f"{path}: damaged model: a bin lookup table has no empty slot")


def _damaged(path: Path, what: str) -> ModelFileError:
    return ModelFileError(f"{path}: damaged model: {what}")


def _check_state(path: Path, model, d: int) -> None:
    """Every array a kernel will index or multiply is checked before any kernel sees it: a crafted
    file with valid checksums must be refused, never read out of bounds, loop, or predict NaN."""
    from rbrepro.features.params import check_sigma

    for name, value in [*vars(model).items(), *vars(getattr(model, "features_", model)).items()]:
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and not np.isfinite(value).all():
            raise _damaged(path, f"{name} holds a value that is not finite")
    try:
        check_sigma(model.sigma)
    except ValueError as exc:
        raise _damaged(path, str(exc)) from None
    classes = getattr(model, "classes_", None)
    coef = getattr(model, "coef_", getattr(model, "dual_coef_", None))
    if classes is not None and coef is not None and np.ndim(coef) == 2 \
            and coef.shape[1] != (1 if len(classes) == 2 else len(classes)):
        raise _damaged(path, f"{coef.shape[1]} weight columns for {len(classes)} classes")
    feats = getattr(model, "features_", None)
    if isinstance(feats, RandomBinningFeatures):
        _check_binning(path, model, feats, d)
    elif isinstance(feats, RandomFourierFeatures):
        if feats.omegas_.shape != (d, feats.n_components) or feats.phases_.shape != (feats.n_components,) \
                or model.coef_.shape[0] != feats.n_components:
            raise _damaged(path, "its Fourier frequencies, phases and weights do not fit together")
    elif isinstance(feats, NystromFeatures):
        m = feats.landmarks_.shape[0]
        if feats.landmarks_.shape != (m, d) or feats.normalization_.shape[0] != m \
                or model.coef_.shape[0] != feats.normalization_.shape[1]:
            raise _damaged(path, "its landmarks, normalization and weights do not fit together")
    if hasattr(model, "X_fit_") and (model.X_fit_.ndim != 2 or model.X_fit_.shape[1] != d):
        raise _damaged(path, f"its training rows are not {d} features wide")
    if hasattr(model, "dual_coef_") and model.dual_coef_.shape[0] != model.X_fit_.shape[0]:
        raise _damaged(path, "its dual weights do not match its training rows")
    if isinstance(model, _IndependentBlockRidge):
        _check_tree(path, model)


def _check_binning(path: Path, model, feats, d: int) -> None:
    R = feats.n_grids
    if getattr(model, "n_grids", R) != R or model.sigma != feats.sigma:
        raise _damaged(path, f"its grids are not {getattr(model, 'n_grids', R)} x {d} as its parameters say")
    cols = np.asarray(feats.column_offsets_)
    if feats.deltas_.shape != (R, d) or feats.offsets_.shape != (R, d) or feats._inv_deltas.shape != (R, d) \
            or (feats.deltas_ <= 0).any() or feats._multipliers.shape != (d,) \
            or feats._zero_terms.shape != (d, R) or feats._zero_keys.shape != (R,):
        raise _damaged(path, f"its grids are not {R} x {d}, or a bin width is not positive")
    if cols.shape != (R + 1,) or cols[0] != 0 or (np.diff(cols) < 1).any() or cols[-1] != feats.n_bins_ \
            or feats.bins_per_grid_.shape != (R,) or (np.diff(cols) != feats.bins_per_grid_).any() \
            or np.asarray(feats._table_offsets).shape != (R + 1,):
        raise _damaged(path, "its column offsets do not match its grids and bins")
    _check_tables(path, feats)
    ids, offsets = np.asarray(feats._table_ids), np.asarray(feats._table_offsets)
    grid_of_slot = np.repeat(np.arange(R), np.diff(offsets))
    used = ids >= 0
    if (ids < -1).any() or (ids[used] < cols[grid_of_slot[used]]).any() or (ids[used] >= cols[grid_of_slot[used] + 1]).any():
        raise _damaged(path, "a bin id lies outside its grid's columns")
    if model.coef_.shape[0] != feats.n_bins_:
        raise _damaged(path, f"{model.coef_.shape[0]} weights for {feats.n_bins_} bins")


def _check_tree(path: Path, model) -> None:
    """The block model's tree: children after their parent (so routing ends), leaves and rows in range."""
    children, leaf_of = np.asarray(model.children_), np.asarray(model.leaf_of_node_)
    n_nodes, n = len(leaf_of), model.X_fit_.shape[0]
    inner = leaf_of < 0
    if children.shape != (n_nodes, 2) or model.directions_.shape[0] != n_nodes or len(model.thresholds_) != n_nodes:
        raise _damaged(path, "its tree arrays do not have one row per node")
    nodes = np.arange(n_nodes)
    if ((children[inner] <= nodes[inner, None]) | (children[inner] >= n_nodes)).any():
        raise _damaged(path, "a node of its tree does not lead to later nodes")
    leaves = leaf_of[~inner]
    if (leaf_of >= len(model.leaf_rows_)).any() or len(np.unique(leaves)) != len(model.leaf_rows_):
        raise _damaged(path, "its tree's leaves do not match its blocks")
    for rows, coef in zip(model.leaf_rows_, model.leaf_coef_):
        if len(rows) != len(coef) or (rows < 0).any() or (rows >= n).any():
            raise _damaged(path, "a block's rows or weights do not match its training rows")


def load_model(path: str | Path):
    """Return (model, header, scaler or None) from a file written by save_model.

    Anything wrong with the file (not a zip, truncated, a flipped bit, arrays of the wrong
    shape, unknown parameters) is a ModelFileError naming the file, never a traceback."""
    path = Path(path)
    try:
        return _load(path)
    except ModelFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged file can fail anywhere inside numpy's zip reader
        raise ModelFileError(f"{path}: not a readable rbrepro model file ({type(exc).__name__}: {exc})") from None


def _load(path: Path):
    if path.stat().st_size == 0:
        raise ModelFileError(f"{path}: the model file is empty")
    npz = np.load(path, allow_pickle=False)
    with npz:
        header = json.loads(str(npz["__header__"]))
        if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("version") != VERSION \
                or header.get("class") not in _CLASSES:
            raise ModelFileError(f"{path}: not an rbrepro model file of version {VERSION}")
        if header.get("header_sha256") != _header_checksum(header):
            raise ModelFileError(f"{path}: damaged model: its header does not match its checksum")
        sums = header.get("checksums") or {}
        arrays = {}
        for name in npz.files:
            if name == "__header__":
                continue
            arrays[name] = npz[name]
            if sums.get(name) != _checksum(arrays[name]):
                raise ModelFileError(f"{path}: damaged model: array {name!r} does not match its checksum")
        missing = sorted(set(sums) - set(arrays) - {"__header__"})
        if missing:
            raise ModelFileError(f"{path}: damaged model: array {missing[0]!r} is missing")
    cls = _CLASSES[header["class"]]
    allowed = set(inspect.signature(cls.__init__).parameters) - {"self"}
    unknown = sorted(set(header["params"]) - allowed)
    if unknown:
        raise ModelFileError(f"{path}: parameter {unknown[0]!r} is not one of {cls.__name__}'s")
    model = cls(**header["params"])
    names, scalar_names = _MODEL_STATE[cls]
    for name in names:
        setattr(model, name, arrays[f"model.{name}"])
    for name in scalar_names:
        setattr(model, name, header["scalars"][name])
    if "model.classes_" in arrays:
        model.classes_ = arrays["model.classes_"]
    if header.get("feature_class"):
        fcls = _CLASSES[header["feature_class"]]
        fstate = header["scalars"]["features"]
        feats = fcls(**fstate["params"])
        fnames, fscalars = _FEATURE_STATE[fcls]
        for name in fnames:
            setattr(feats, name, arrays[f"features.{name}"])
        for name in fscalars:
            setattr(feats, name, fstate[name])
        model.features_ = feats
    if issubclass(cls, _IndependentBlockRidge):
        bounds = np.cumsum(arrays["model.leaf_sizes"])[:-1]
        model.leaf_rows_ = np.split(arrays["model.leaf_rows_flat"], bounds)
        model.leaf_coef_ = np.split(arrays["model.leaf_coef_flat"], bounds)
    d = int(header["n_features"])
    if getattr(model, "n_features_in_", d) != d:
        raise ModelFileError(f"{path}: damaged model: it expects {model.n_features_in_} features, its header {d}")
    _check_state(path, model, d)
    scaler = None
    if "scaler.lo" in arrays:
        lo, inv = arrays["scaler.lo"], arrays["scaler.inv"]
        if lo.shape != (d,) or inv.shape != (d,):
            raise ModelFileError(f"{path}: damaged model: its scaling holds {lo.shape} / {inv.shape} values for "
                                 f"{d} features")
        scaler = MinMaxScaler(lo, inv)
    return model, header, scaler
