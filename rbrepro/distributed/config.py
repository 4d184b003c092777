"""A sweep config's `cluster` key, read and checked where the distributed fit's rules live (which
methods fit across machines), so the config parser holds no copy of them."""

from __future__ import annotations

from rbrepro.distributed.cluster import parse_cluster
from rbrepro.distributed.fit import why_not_distributed
from rbrepro.errors import InvalidParameter


def cluster_key(rd, node, methods: tuple[str, ...]) -> str:
    """A sweep config's `cluster` key (a yamlconf Node read by `rd`): local:N or tcp://HOST:PORT, with
    methods that fit across machines only; a fault names the config's line."""
    try:
        parse_cluster(node.value)
    except InvalidParameter:
        rd.fail(node, "cluster", f"expected local:N or tcp://HOST:PORT, got {node.value!r}")
    for method in dict.fromkeys(methods):
        why = why_not_distributed(method)
        if why:
            rd.fail(node, "cluster", f"{why} (a sweep with a cluster takes those only)")
    return str(node.value)
