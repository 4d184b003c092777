"""Saving fitted models without pickle: named arrays in an .npz plus a JSON header.

The header holds the format version, the estimator class and parameters, scalar fitted
attributes, the number of features, the dataset's name, its scaling (the min-max map is
stored as arrays) and a fingerprint of the training data. Loading uses
`np.load(allow_pickle=False)` and rebuilds the estimator from the header, so a model file
can never execute code.

What is saved is each class's own word: `_saved_arrays` and `_saved_scalars` (estimators and
feature maps alike), `_ragged_state` / `_restore_ragged` for per-leaf arrays, and `_check_saved`
for the checks a loaded state must pass. Classes are found by name among the registered
methods' (models.registry), so a method registered at run time saves and loads with no edit here.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from rbrepro.constraints import check_sigma
from rbrepro.data.atomic import atomic_path
from rbrepro.data.scaling import MinMaxScaler
from rbrepro.dotted import resolve
from rbrepro.errors import RbreproError
from rbrepro.models.registry import METHODS, ORIGINS, RCD_ESTIMATORS

FORMAT = "rbrepro-model"
VERSION = 3  # 2: linear bin-vector hash (keys of version 1 files differ); 3: classifier/regressor classes
#: the tasks a header names (vocabulary.TASKS); files written before by Python said "classification"
HEADER_TASKS = ("regression", "binary", "multiclass")
#: the scikit-learn scalers a saved Pipeline may put before an rbrepro estimator: their fitted arrays
PIPELINE_SCALERS = {"MinMaxScaler": ("min_", "scale_", "data_min_", "data_max_", "data_range_"),
                    "MaxAbsScaler": ("max_abs_", "scale_"),
                    "StandardScaler": ("mean_", "var_", "scale_")}


def _classes() -> dict[str, type]:
    """Every class a model file may name, by name: each registered method's estimators and
    feature map, and the RCD models. Each class says its own fitted state (`_saved_arrays`,
    `_saved_scalars`), so this module imports no estimator."""
    found = [resolve(target) for target in RCD_ESTIMATORS]
    for spec in METHODS.values():
        found += [spec.estimator("classification"), spec.estimator("regression")]
        found += [spec.feature_class()] if spec.features else []
    return {cls.__name__: cls for cls in found}


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


def header_task(model) -> str:
    """The task a model's header names: regression, binary or multiclass (vocabulary.TASKS)."""
    classes = getattr(model, "classes_", None)
    if classes is None:
        return "regression"
    return "binary" if len(classes) == 2 else "multiclass"


def _pipeline_steps(pipeline) -> tuple[list, object]:
    """(the scalers before the estimator, the estimator) of a fitted scikit-learn Pipeline, or a
    ModelFileError naming the step that cannot be saved without pickle."""
    steps = list(pipeline.steps)
    *scalers, (_, model) = steps
    for name, step in scalers:
        if type(step).__name__ not in PIPELINE_SCALERS or type(step).__module__.split(".")[0] != "sklearn":
            raise ModelFileError(f"cannot save the Pipeline step {name!r} ({type(step).__name__}) without pickle: "
                                 f"a saved Pipeline is scikit-learn scalers ({', '.join(PIPELINE_SCALERS)}) "
                                 f"followed by an rbrepro estimator")
    return scalers, model


def save(model, path: str | Path) -> Path:
    """Write a fitted rbrepro estimator, or a fitted scikit-learn Pipeline of scalers (PIPELINE_SCALERS)
    ending in one, to `path` (.npz, no pickle); `rbrepro.models.load(path)` reads it back whole."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model)
    estimator = _pipeline_steps(model)[1] if type(model).__name__ == "Pipeline" else model
    return save_model(model, path, dataset="(python)", n_features=int(model.n_features_in_),
                      task=header_task(estimator), scaler=None, fingerprint="", scaling="as given")


def save_model(model, path: str | Path, dataset: str, n_features: int, task: str, scaler: MinMaxScaler | None,
               fingerprint: str, scaling: str, label_column: int = 0) -> Path:
    """Write `model` (an rbrepro estimator, or a scikit-learn Pipeline of scalers and one) to `path`
    (.npz) atomically; `label_column` is the training CSV's label column (`rbrepro predict` reads files
    of new rows the same way unless told otherwise)."""
    scalers = []
    if type(model).__name__ == "Pipeline":
        scalers, model = _pipeline_steps(model)
    cls = type(model)
    if _classes().get(cls.__name__) is not cls:
        raise ModelFileError(f"cannot save a {cls.__name__}")
    arrays, scalars = {}, {}
    for name in cls._saved_arrays:
        arrays[f"model.{name}"] = np.asarray(getattr(model, name))
    for name in cls._saved_scalars:
        scalars[name] = _scalar(getattr(model, name))
    if getattr(model, "classes_", None) is not None:
        arrays["model.classes_"] = np.asarray(model.classes_)
    feature_class = None
    if hasattr(model, "features_"):
        feats = model.features_
        feature_class = type(feats).__name__
        for name in feats._saved_arrays:
            arrays[f"features.{name}"] = np.asarray(getattr(feats, name))
        scalars["features"] = {"params": feats.get_params(),
                               **{n: _scalar(getattr(feats, n)) for n in feats._saved_scalars}}
    if hasattr(model, "_ragged_state"):  # per-leaf arrays, saved flat (the block model)
        arrays.update({f"model.{name}": a for name, a in model._ragged_state().items()})
    if scaler is not None:
        arrays["scaler.lo"], arrays["scaler.inv"] = scaler.lo, scaler.inv
    pipeline = []
    for i, (name, step) in enumerate(scalers):
        kind = type(step).__name__
        pipeline.append({"name": name, "class": kind, "params": step.get_params(),
                         "n_samples_seen_": _scalar(np.asarray(step.n_samples_seen_).max())})
        for attr in PIPELINE_SCALERS[kind]:
            if getattr(step, attr, None) is not None:
                arrays[f"pipeline{i}.{attr}"] = np.asarray(getattr(step, attr))
    method = getattr(model, "method", None)
    header = {"format": FORMAT, "version": VERSION, "class": cls.__name__, "feature_class": feature_class,
              **({"method": method, "plugin": ORIGINS.get(method)} if isinstance(method, str) else {}),
              **({"pipeline": pipeline} if pipeline else {}),
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


def _damaged(path: Path, what: str) -> ModelFileError:
    return ModelFileError(f"{path}: damaged model: {what}")


def _check_state(path: Path, model, d: int) -> None:
    """Every array a kernel will index or multiply is checked before any kernel sees it: a crafted
    file with valid checksums must be refused, never read out of bounds, loop, or predict NaN."""
    for name, value in [*vars(model).items(), *vars(getattr(model, "features_", model)).items()]:
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and not np.isfinite(value).all():
            raise _damaged(path, f"{name} holds a value that is not finite")
    try:
        if model.sigma != "scale":  # "scale" was resolved at fit: the feature map holds the number
            check_sigma(model.sigma)
    except ValueError as exc:
        raise _damaged(path, str(exc)) from None
    classes = getattr(model, "classes_", None)
    coef = getattr(model, "coef_", getattr(model, "dual_coef_", None))
    if classes is not None and coef is not None and np.ndim(coef) == 2 \
            and coef.shape[1] != (1 if len(classes) == 2 else len(classes)):
        raise _damaged(path, f"{coef.shape[1]} weight columns for {len(classes)} classes")
    feats = getattr(model, "features_", None)
    try:  # each class checks its own state (`_check_saved`), saying what does not fit
        if hasattr(feats, "_check_saved"):
            feats._check_saved(model, d)
    except ValueError as exc:
        raise _damaged(path, str(exc)) from None
    if hasattr(model, "X_fit_") and (model.X_fit_.ndim != 2 or model.X_fit_.shape[1] != d):
        raise _damaged(path, f"its training rows are not {d} features wide")
    if hasattr(model, "dual_coef_") and model.dual_coef_.shape[0] != model.X_fit_.shape[0]:
        raise _damaged(path, "its dual weights do not match its training rows")
    try:
        if hasattr(model, "_check_saved"):
            model._check_saved(d)
    except ValueError as exc:
        raise _damaged(path, str(exc)) from None


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


def _not_installed(path: Path, header: dict) -> str:
    """Why a model file's classes are not here: the method (and the package to install) it was saved by."""
    method, plugin = header.get("method"), header.get("plugin")
    if not isinstance(method, str):
        return f"{path}: its model class {str(header.get('class'))[:80]!r} belongs to no installed method"
    get = f"; install the package {plugin!r} (pip install {plugin}) that declares it" if isinstance(plugin, str) \
        else " (it was registered at run time, by register_method, when the model was saved)"
    return f"{path}: a model of the method {method[:80]!r}, which is not installed here{get[:200]}"


def _load(path: Path):
    if path.stat().st_size == 0:
        raise ModelFileError(f"{path}: the model file is empty")
    classes = _classes()
    npz = np.load(path, allow_pickle=False)
    with npz:
        header = json.loads(str(npz["__header__"]))
        if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("version") != VERSION:
            raise ModelFileError(f"{path}: not an rbrepro model file of version {VERSION}")
        if header.get("class") not in classes or (header.get("feature_class") or "") not in {"", *classes}:
            raise ModelFileError(_not_installed(path, header))
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
    cls = classes[header["class"]]
    allowed = set(inspect.signature(cls.__init__).parameters) - {"self"}
    unknown = sorted(set(header["params"]) - allowed)
    if unknown:
        raise ModelFileError(f"{path}: parameter {unknown[0]!r} is not one of {cls.__name__}'s")
    model = cls(**header["params"])
    for name in cls._saved_arrays:
        setattr(model, name, arrays[f"model.{name}"])
    defaults = getattr(cls, "_scalar_defaults", {})  # scalars added since: older files lack them
    for name in cls._saved_scalars:
        if name not in header["scalars"] and name not in defaults:
            raise ModelFileError(f"{path}: damaged model: scalar {name!r} is missing")
        setattr(model, name, header["scalars"].get(name, defaults.get(name)))
    if "model.classes_" in arrays:
        model.classes_ = arrays["model.classes_"]
    if header.get("feature_class"):
        fcls = classes[header["feature_class"]]
        fstate = header["scalars"]["features"]
        feats = fcls(**fstate["params"])
        for name in fcls._saved_arrays:
            setattr(feats, name, arrays[f"features.{name}"])
        for name in fcls._saved_scalars:
            setattr(feats, name, fstate[name])
        model.features_ = feats
    if hasattr(model, "_restore_ragged"):
        model._restore_ragged({name.removeprefix("model."): a for name, a in arrays.items() if name.startswith("model.")})
    d = int(header["n_features"])
    if getattr(model, "n_features_in_", d) != d:
        raise ModelFileError(f"{path}: damaged model: it expects {model.n_features_in_} features, its header {d}")
    _check_state(path, model, d)
    if header.get("pipeline"):
        model = _restore_pipeline(path, header["pipeline"], arrays, model, d)
    return model, header, _scaler(path, arrays, d)


def _scaler(path: Path, arrays: dict, d: int) -> MinMaxScaler | None:
    """The training rows' min-max map a command-line model carries, checked (d finite values each)."""
    if "scaler.lo" not in arrays:
        return None
    lo, inv = arrays["scaler.lo"], arrays["scaler.inv"]
    if lo.shape != (d,) or inv.shape != (d,):
        raise ModelFileError(f"{path}: damaged model: its scaling holds {lo.shape} / {inv.shape} values for "
                             f"{d} features")
    for name, values in (("scaler.lo", lo), ("scaler.inv", inv)):
        if not np.isfinite(values).all():
            raise _damaged(path, f"its scaling array {name!r} holds a value that is not finite")
    return MinMaxScaler(lo, inv)


def _restore_pipeline(path: Path, steps: list, arrays: dict, model, d: int):
    """The saved scikit-learn Pipeline: each scaler rebuilt from its parameters and fitted arrays
    (checked finite and d wide), then the estimator."""
    from sklearn import preprocessing
    from sklearn.pipeline import Pipeline

    rebuilt = []
    for i, step in enumerate(steps):
        kind = step.get("class")
        if kind not in PIPELINE_SCALERS:
            raise _damaged(path, f"pipeline step {i} is a {kind!r}, not one of {', '.join(PIPELINE_SCALERS)}")
        scaler = getattr(preprocessing, kind)(**step["params"])
        for attr in PIPELINE_SCALERS[kind]:
            name = f"pipeline{i}.{attr}"
            if name in arrays:
                values = arrays[name]
                if values.shape != (d,) or not np.isfinite(values).all():
                    raise _damaged(path, f"its pipeline array {name!r} is not {d} finite values")
                setattr(scaler, attr, values)
        scaler.n_features_in_, scaler.n_samples_seen_ = d, int(step.get("n_samples_seen_", 1))
        rebuilt.append((step["name"], scaler))
    return Pipeline([*rebuilt, (type(model).__name__.lower(), model)])
