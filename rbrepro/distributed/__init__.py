"""One model fitted across a dask.distributed cluster, the same model as on one machine.

Rows are split into partitions, each read and featurized on a worker; Random Binning's bins are
numbered by merging the workers' bin keys, so D and every column are the single-process fit's; CG
runs here with each step's Z^T (Z p) summed over the workers (the solvers see an operator); RF and
Nystrom sum their R x R Gram matrix once. Early stopping holds out on each partition its share of
the single-machine fit's held-out rows and scores each CG iterate by a sum over the workers. Modules
by kind of work: `cluster` (connecting, waiting, failures), `partitions` (rows on workers), `binning`
and `dense` (featurizing), `operator` (the reductions), `holdout` (early stopping's rows and score),
`fit` and `estimator` (the model), `train` (the command line's row).
"""

from rbrepro.distributed.cluster import Runner, open_cluster, parse_cluster
from rbrepro.distributed.errors import ClusterTimeout, ClusterUnavailable, NotDistributable, WorkerLost
from rbrepro.distributed.estimator import DistributedRidge
from rbrepro.distributed.partitions import NpyRows, RowBlock, npy_partitions, split_rows
from rbrepro.distributed.train import train_on_cluster

__all__ = ["ClusterTimeout", "ClusterUnavailable", "DistributedRidge", "NotDistributable", "NpyRows", "RowBlock",
           "Runner", "WorkerLost", "npy_partitions", "open_cluster", "parse_cluster", "split_rows", "train_on_cluster"]
