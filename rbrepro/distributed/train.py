"""`rbrepro train --cluster`: one model trained as `models.train.train` does, its fit and predictions
on a dask cluster; the row adds the workers, partitions and bytes moved per CG step."""

from __future__ import annotations

from rbrepro.distributed.cluster import open_cluster, parse_cluster
from rbrepro.distributed.errors import NotDistributable
from rbrepro.distributed.estimator import DistributedRidge


def refuse_early(params) -> None:
    """Refuse, before starting or reaching a cluster or loading any row, what cannot run across
    machines: the method, the solver, and every check of the estimator's own (fit.check_distributable
    on the estimator these parameters build)."""
    from rbrepro.distributed.fit import check_distributable, why_not_distributed
    from rbrepro.models.cell import make_model

    params = params.validate().resolved()
    why = why_not_distributed(params.method)
    if why:
        raise NotDistributable(why)
    if params.solver == "rcd":
        raise NotDistributable("the rcd solver updates one coordinate at a time against every row's residual; it does "
                               "not fit across machines (use cg, pcg or, for rf and nystrom, direct)")
    check_distributable(make_model(params, "classification", 1))


def _wrapper(client, partitions):
    """run_cell's `wrap`: the model inside a DistributedRidge on `client`; the list gets each one."""
    wrapped: list[DistributedRidge] = []

    def wrap(model):
        wrapped.append(DistributedRidge(model, client=client, n_partitions=partitions))
        return wrapped[-1]

    return wrap, wrapped


def _cluster_columns(cluster: str, model: DistributedRidge) -> dict:
    return {"cluster": cluster, "workers": model.workers_, "partitions": model.partitions_,
            "bytes_per_cg_step": model.bytes_per_cg_step_,
            **({"bytes_per_stopping_step": model.bytes_per_stopping_step_} if model.bytes_per_stopping_step_ else {})}


def train_on_cluster(params, cluster: str, *, partitions: int | None = None,
                     connect_timeout_s: float | None = None, **train_kwargs) -> dict:
    """models.train.train(params, **train_kwargs) with the fit and the test predictions on `cluster`
    (`local:N` or `tcp://HOST:PORT`)."""
    from rbrepro.models.train import train

    parse_cluster(cluster)
    refuse_early(params)
    with open_cluster(cluster, connect_timeout_s) as client:
        wrap, wrapped = _wrapper(client, partitions)
        row = train(params, wrap=wrap, **train_kwargs)
    return {**row, **_cluster_columns(cluster, wrapped[-1])}


def run_cell_on_cluster(params, data, cluster: str, *, partitions: int | None = None,
                        connect_timeout_s: float | None = None) -> dict:
    """models.cell.run_cell on a loaded dataset with the fit and predictions on `cluster` (a sweep's
    `cluster:` key)."""
    from rbrepro.models.cell import run_cell

    refuse_early(params)
    with open_cluster(cluster, connect_timeout_s) as client:
        wrap, wrapped = _wrapper(client, partitions)
        row = run_cell(params, data, wrap=wrap)
    return {**row, **_cluster_columns(cluster, wrapped[-1])}
