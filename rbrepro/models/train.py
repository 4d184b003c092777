"""One model trained on a dataset, as `rbrepro train` does: load (fetching if need be), fit,
score, time, and optionally save the model; returns the result row (models.cell.run_cell's).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numba
import numpy as np

from rbrepro.models.cell import CellParams, run_cell
from rbrepro.models.degenerate import check_auto_sigma, check_learnable
from rbrepro.models.registry import DEFAULT_L1


def resolve_stopping(params: CellParams, stopping: str) -> CellParams:
    """`params` with CG's stopping rule as asked ("auto", "residual" or "validation"), settled as
    every door settles it (CellParams.resolved) and checked."""
    return replace(params, stopping=stopping).validate().resolved()


def choose_sigma(params: CellParams, data, on_point=None, rows: int | None | str = "default") -> tuple[float, list, str]:
    """(the chosen sigma, [(sigma, validation metric)] in the order scored, "low"/"high" at a grid end)
    of `params` without test data: models.sigma_search's pattern search, each candidate scored by early
    stopping's held-out search where the method stops by validation, else by a fit on the validation
    split (the site's validation file, else a seeded 20 %). `rows`: the held-out search's sample size
    (None: every training row; "default": sigma_search.SUBSAMPLE_ROWS)."""
    from rbrepro.models.cell import make_model
    from rbrepro.models.sigma_search import SUBSAMPLE_ROWS, search_sigma
    from rbrepro.threads import thread_count

    threads = thread_count(params.threads)
    numba.set_num_threads(threads)
    return search_sigma(params, data, lambda p: make_model(p, data.model_task, threads),
                        lambda p: float(run_cell(replace(p, evaluate_on="validation"), data)["test_metric"]),
                        on_point, rows=SUBSAMPLE_ROWS if rows == "default" else rows)


def _scored_rows(data) -> str:
    """Which training rows the held-out search of `--sigma auto` scored on, in words."""
    from rbrepro.models.sigma_search import SUBSAMPLE_ROWS, held_out_repeats

    n = data.X_train.shape[0]
    repeats = held_out_repeats(n)
    return (f"a seeded {SUBSAMPLE_ROWS:,} of the {n:,} training rows" if n > SUBSAMPLE_ROWS else
            "the training rows" + (f", the mean of {repeats} splits" if repeats > 1 else ""))


def train(params: CellParams, *, lam: float | None = None, l1: float | None = None, data_dir=None, mirror=None,
          datasets_file=None, test_file=None, label_column: int | None = None, save_model: Path | None = None,
          progress: bool = True, task: str = "auto", auto_sigma: bool = False, scale_sigma: bool = False,
          on_point=None, wrap=None) -> dict:
    """Fit the model `params` describe on `params.dataset` (a name or a file) and return its row.

    `lam` is the ridge lambda (default: the dataset's); `l1` the rcd solver's L1 weight (default
    DEFAULT_L1); the two never stand for each other. `test_file` and `label_column` are for a
    data file named directly (data.load.load_dataset). With `save_model`, the fitted model is
    written there (no pickle) and the row says where (`model_path`). `task`: the user's own data's
    task (data.load.load_dataset). `auto_sigma`: choose sigma first without test data (choose_sigma:
    held-out training rows, or the validation split for a direct solve; `on_point(sigma, metric, name)` hears each point); the row then
    says so (`sigma_selection`, `sigma_curve`, `sigma_edge`). `scale_sigma`: sigma from the training
    rows (sigma_search.scale_sigma), said in `sigma_selection`. `wrap`: run_cell's (a distributed
    fit's meta-estimator around the model; its `estimator_` is what is saved)."""
    from rbrepro.data.load import load_dataset

    params.validate()
    rcd = params.solver == "rcd"
    if l1 is not None and not rcd:
        from rbrepro.errors import InvalidParameter

        raise InvalidParameter("--l1 is the weight of the rcd solver's L1 term; add --solver rcd (ridge uses --lam)")
    data = load_dataset(params.dataset, data_dir, mirror, progress=progress, datasets_file=datasets_file,
                        scaling=params.scaling, test_file=test_file, label_column=label_column, task=task,
                        memory_limit_gb=params.memory_limit_gb)
    check_learnable(data)
    weight = (DEFAULT_L1 if l1 is None else l1) if rcd else (data.info["spec"].lam if lam is None else lam)
    params = replace(params, dataset=data.name, lam=weight)
    chosen = None
    if scale_sigma and not auto_sigma:
        from rbrepro.models.sigma_search import SCALE_RULE
        from rbrepro.models.sigma_search import scale_sigma as width

        params, chosen = replace(params, sigma=width(data.X_train)), {"sigma_selection": SCALE_RULE}
    if auto_sigma:
        check_auto_sigma(data, params.stopping == "validation", params.seed)
        sigma, curve, edge = choose_sigma(params, data, on_point=on_point)
        params, chosen = replace(params, sigma=sigma), {
            "sigma_selection": (f"held-out tenth of {_scored_rows(data)}, {len(curve)} sigmas" if
                                params.stopping == "validation" else f"validation split, {len(curve)} sigmas"),
            "sigma_edge": edge,
            "sigma_curve": ";".join(f"{s:g}:{m:.6g}" for s, m in sorted(curve))}
    models: list = []
    row = run_cell(params, data, model_out=models, wrap=wrap)
    row.update(chosen or {})
    model = getattr(models[0], "estimator_", models[0])  # a wrapper's fitted estimator, else the model
    names = data.info.get("class_names")
    if names and getattr(model, "classes_", None) is not None:  # trained on indices: the model says names
        model.classes_ = np.asarray(names)[model.classes_.astype(np.int64)]
        row["classes"] = ",".join(names)
    if save_model:
        from rbrepro.models.persist import data_fingerprint
        from rbrepro.models.persist import save_model as save

        path = save(model, save_model, data.name, data.n_features, data.task, data.info.get("scaler"),
                    data_fingerprint(data.X_train, data.y_train), data.scaling, label_column or 0)
        row["model_path"] = str(path)
    return row
