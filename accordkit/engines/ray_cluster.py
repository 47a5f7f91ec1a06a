"""Ray clusters: reaching the one at ``RAY_ADDRESS``, its nodes, and one simulated here.

The public face of :mod:`accordkit._internal.ray_cluster` (the scoring engines and the judges
both run on Ray, so the code sits below both): :func:`ray_session`, :func:`cluster_nodes`,
:class:`LocalCluster` (a cluster of several nodes on this machine), :func:`processes_using`.

Examples
--------
>>> from accordkit.engines.ray_cluster import LocalCluster
>>> with LocalCluster(nodes=3) as cluster:                     # doctest: +SKIP
...     cluster.kill_node(cluster.worker_ids()[0])
"""

from .._internal.ray_cluster import (  # noqa: F401
    NODES_JOIN_SECONDS,
    RAY_CONNECT_TIMEOUT,
    STARTUP_ATTEMPTS,
    LocalCluster,
    RayUnreachableError,
    __all__,
    check_ray_address,
    cluster_nodes,
    processes_using,
    ray_session,
)
