"""Saving fitted models without pickle: named arrays in an .npz plus a JSON header.

The header holds the format version, the estimator class and parameters, scalar fitted
attributes, the number of features, the dataset's name, its scaling (the min-max map is
stored as arrays) and a fingerprint of the training data. Loading uses
`np.load(allow_pickle=False)` and rebuilds the estimator from the header, so a model file
can never execute code.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from rbrepro.data.atomic import atomic_path
from rbrepro.data.load import MinMaxScaler
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


class ModelFileError(ValueError):
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


def _scalar(value):
    if isinstance(value, (np.generic,)):
        return value.item()
    return value


def save_model(model, path: str | Path, dataset: str, n_features: int, task: str, scaler: MinMaxScaler | None,
               fingerprint: str, scaling: str) -> Path:
    """Write `model` to `path` (.npz) atomically."""
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
              "task": task, "scaling": scaling, "data_fingerprint": fingerprint}
    arrays["__header__"] = np.array(json.dumps(header))
    path = Path(path)
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
    return path


def load_model(path: str | Path):
    """Return (model, header, scaler or None) from a file written by save_model."""
    path = Path(path)
    try:
        npz = np.load(path, allow_pickle=False)
        header = json.loads(str(npz["__header__"]))
    except (OSError, ValueError, KeyError) as exc:
        raise ModelFileError(f"{path}: not an rbrepro model file ({type(exc).__name__}: {exc})") from None
    with npz:
        if header.get("format") != FORMAT or header.get("version") != VERSION or header.get("class") not in _CLASSES:
            raise ModelFileError(f"{path}: not an rbrepro model file of version {VERSION}")
        cls = _CLASSES[header["class"]]
        model = cls(**header["params"])
        names, scalar_names = _MODEL_STATE[cls]
        for name in names:
            setattr(model, name, npz[f"model.{name}"])
        for name in scalar_names:
            setattr(model, name, header["scalars"][name])
        if "model.classes_" in npz.files:
            model.classes_ = npz["model.classes_"]
        if header.get("feature_class"):
            fcls = _CLASSES[header["feature_class"]]
            fstate = header["scalars"]["features"]
            feats = fcls(**fstate["params"])
            fnames, fscalars = _FEATURE_STATE[fcls]
            for name in fnames:
                setattr(feats, name, npz[f"features.{name}"])
            for name in fscalars:
                setattr(feats, name, fstate[name])
            model.features_ = feats
        if issubclass(cls, _IndependentBlockRidge):
            bounds = np.cumsum(npz["model.leaf_sizes"])[:-1]
            model.leaf_rows_ = np.split(npz["model.leaf_rows_flat"], bounds)
            model.leaf_coef_ = np.split(npz["model.leaf_coef_flat"], bounds)
        scaler = MinMaxScaler(npz["scaler.lo"], npz["scaler.inv"]) if "scaler.lo" in npz.files else None
    return model, header, scaler
