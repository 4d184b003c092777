"""One model trained on a dataset, as `rbrepro train` does: load (fetching if need be), fit,
score, time, and optionally save the model; returns the result row (models.cell.run_cell's).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from rbrepro.models.cell import CellParams, run_cell

#: rcd's L1 weight when none is given (the ridge lambda comes from the dataset's registry entry)
DEFAULT_L1 = 1e-4


def train(params: CellParams, *, lam: float | None = None, l1: float | None = None, data_dir=None, mirror=None,
          datasets_file=None, test_file=None, label_column: int | None = None, save_model: Path | None = None,
          progress: bool = True, wrap=None) -> dict:
    """Fit the model `params` describe on `params.dataset` (a name or a file) and return its row.

    `lam` is the ridge lambda (default: the dataset's); `l1` the rcd solver's L1 weight (default
    DEFAULT_L1); the two never stand for each other. `test_file` and `label_column` are for a
    data file named directly (data.load.load_dataset). With `save_model`, the fitted model is
    written there (no pickle) and the row says where (`model_path`). `wrap`: run_cell's (a distributed
    fit's meta-estimator around the model; its `estimator_` is what is saved)."""
    from rbrepro.data.load import load_dataset

    params.validate()
    rcd = params.solver == "rcd"
    if l1 is not None and not rcd:
        from rbrepro.errors import InvalidParameter

        raise InvalidParameter("--l1 is the weight of the rcd solver's L1 term; add --solver rcd (ridge uses --lam)")
    data = load_dataset(params.dataset, data_dir, mirror, progress=progress, datasets_file=datasets_file,
                        scaling=params.scaling, test_file=test_file, label_column=label_column)
    weight = (DEFAULT_L1 if l1 is None else l1) if rcd else (data.info["spec"].lam if lam is None else lam)
    params = replace(params, dataset=data.name, lam=weight)
    models: list = []
    row = run_cell(params, data, model_out=models, wrap=wrap)
    model = getattr(models[0], "estimator_", models[0])  # a wrapper's fitted estimator, else the model
    names = data.info.get("class_names")
    if names and getattr(model, "classes_", None) is not None:  # trained on indices: the model says names
        model.classes_ = np.asarray(names)[model.classes_.astype(np.int64)]
        row["classes"] = ",".join(names)
    if save_model:
        from rbrepro.models.persist import data_fingerprint
        from rbrepro.models.persist import save_model as save

        path = save(model, save_model, data.name, data.n_features, data.task, data.info.get("scaler"),
                    data_fingerprint(data.X_train, data.y_train), data.scaling)
        row["model_path"] = str(path)
    return row
