"""Ray clusters: reaching the one at ``RAY_ADDRESS``, its nodes, and one simulated here.

* :func:`ray_session` connects to the cluster named by ``RAY_ADDRESS`` (after checking,
  within :data:`RAY_CONNECT_TIMEOUT` seconds, that it answers) or starts a local Ray, and
  disconnects afterwards from what it connected to;
* :func:`cluster_nodes` lists the cluster's nodes (id, address, CPUs, alive);
* :class:`LocalCluster` starts a Ray cluster of several nodes on this machine with Ray's own
  ``ray.cluster_utils.Cluster`` (each node its own raylet, object store and worker
  processes), in a private temporary folder, and can kill one of its nodes: a stand-in for
  a cluster of several machines, for tests, benchmarks and trying the cluster route.

Both the scoring engines and the judges run on Ray, so this lives below both; its public
face is :mod:`accordkit.engines.ray_cluster`.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["RAY_CONNECT_TIMEOUT", "RayUnreachableError", "check_ray_address", "ray_session",
           "cluster_nodes", "LocalCluster"]

#: Seconds to wait for a Ray cluster named by RAY_ADDRESS before giving up.
RAY_CONNECT_TIMEOUT = 10.0
#: Times a local Ray or a simulated cluster is started when the start times out (Ray gives
#: a raylet 30 s to register: a machine busy with other work may need a second try).
STARTUP_ATTEMPTS = 2
#: Seconds the worker nodes of a simulated cluster get to join it.
NODES_JOIN_SECONDS = 120.0


def _slow_start(exc: BaseException) -> bool:
    """Whether Ray failed to start only because it started too slowly."""
    return isinstance(exc, TimeoutError) or "timed out during startup" in str(exc)


class RayUnreachableError(RuntimeError):
    """``RAY_ADDRESS`` names a cluster that does not answer."""


def check_ray_address(address: str) -> None:
    """Fail fast (not hang) when ``address`` names a host:port that does not answer.

    Raises
    ------
    RayUnreachableError
        ``address`` is not ``host:port`` / ``ray://host:port``, or nothing answers there
        within :data:`RAY_CONNECT_TIMEOUT` seconds.

    Examples
    --------
    >>> check_ray_address("auto")
    >>> check_ray_address("nowhere")
    Traceback (most recent call last):
    ...
    accordkit._internal.ray_cluster.RayUnreachableError: RAY_ADDRESS='nowhere' is not of the form host:port or ray://host:port
    """
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise RayUnreachableError(f"RAY_ADDRESS={address!r} is not of the form host:port "
                                  "or ray://host:port")
    try:
        with socket.create_connection((host, int(port)), timeout=RAY_CONNECT_TIMEOUT):
            pass
    except OSError as exc:
        raise RayUnreachableError(
            f"cannot reach the Ray cluster at RAY_ADDRESS={address!r} within "
            f"{RAY_CONNECT_TIMEOUT:.0f} s ({exc}); unset RAY_ADDRESS to start a local Ray"
        ) from None


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError("the Ray engine needs Ray: pip install 'accordkit[ray]'") from None
    return ray


@contextmanager
def ray_session(*, num_cpus: int = 1) -> Iterator[str]:
    """Ray, connected for the duration of the block; yields where it runs.

    Inside an already connected Ray (a notebook that called ``ray.init``) nothing changes.
    Else ``RAY_ADDRESS``, when set, names the cluster to connect to (checked first, see
    :func:`check_ray_address`); unset, a local Ray with ``num_cpus`` CPUs is started. What
    was connected or started here is disconnected or stopped when the block ends, also on
    an error (a cluster one connected to keeps running).

    Yields
    ------
    str
        ``"connected"`` (a Ray that was already initialised), the cluster's address, or
        ``"local"``.

    Examples
    --------
    >>> with ray_session(num_cpus=2) as where:                        # doctest: +SKIP
    ...     print(where)
    local
    """
    ray = _import_ray()
    if ray.is_initialized():
        yield "connected"
        return
    address = os.environ.get("RAY_ADDRESS")
    if address:
        check_ray_address(address)
        ray.init(address=address, log_to_driver=False)
        where = address
    else:
        for attempt in range(1, STARTUP_ATTEMPTS + 1):
            try:
                # "local": a Ray of its own, never one that `ray start` left running here
                ray.init(address="local", num_cpus=max(1, num_cpus), include_dashboard=False,
                         log_to_driver=False)
                break
            except Exception as exc:
                ray.shutdown()          # whatever of it did start
                if attempt == STARTUP_ATTEMPTS or not _slow_start(exc):
                    raise
        where = "local"
    try:
        yield where
    finally:
        ray.shutdown()


def cluster_nodes() -> list[dict[str, Any]]:
    """The nodes of the connected Ray cluster, dead ones included, sorted by id.

    Returns
    -------
    list of dict
        ``node_id`` (hex), ``address`` (the node's IP), ``cpus`` (its CPUs) and ``alive``.
    """
    ray = _import_ray()
    out = [{"node_id": str(n["NodeID"]), "address": str(n.get("NodeManagerAddress", "")),
            "cpus": int(n.get("Resources", {}).get("CPU", 0)), "alive": bool(n["Alive"])}
           for n in ray.nodes()]
    return sorted(out, key=lambda n: n["node_id"])


class LocalCluster:
    """A Ray cluster of ``nodes`` nodes on this machine: a head and ``nodes - 1`` workers.

    Each node is started by ``ray.cluster_utils.Cluster`` with its own raylet, object store
    and worker processes and ``cpus_per_node`` CPUs, so that Ray schedules over the nodes
    as over machines. The cluster lives in a private temporary folder (``RAY_TMPDIR`` is
    set to it while the cluster runs): a ``ray.init()`` elsewhere on the machine neither
    finds nor joins it, and closing it touches no other Ray. Point a run at it with
    ``RAY_ADDRESS=cluster.address``. Use it as a context manager (or call :meth:`close`):
    every process it started is stopped, also when the block fails, and ``close`` waits
    until they are gone.

    Parameters
    ----------
    nodes : int
        Nodes in all, the head included (at least 1).
    cpus_per_node : int
        CPUs each node offers to Ray.
    object_store_mb : int
        Object store memory per node, in MiB.
    system_config : mapping, optional
        Ray's ``_system_config`` for the head (e.g. ``{"health_check_period_ms": 500}`` to
        notice a dead node sooner).

    Attributes
    ----------
    address : str
        The cluster's ``host:port`` (for ``RAY_ADDRESS``).
    start_seconds : float
        Wall time it took to start every node.

    Examples
    --------
    >>> with LocalCluster(nodes=3) as cluster:                        # doctest: +SKIP
    ...     os.environ["RAY_ADDRESS"] = cluster.address
    ...     score_to_store(["data/"], out="scores", engine="ray")
    ...     cluster.kill_node(cluster.worker_ids()[0])
    """

    def __init__(self, *, nodes: int = 3, cpus_per_node: int = 1, object_store_mb: int = 150,
                 system_config: Mapping[str, Any] | None = None) -> None:
        if nodes < 1 or cpus_per_node < 1:
            raise ValueError(f"need at least 1 node and 1 CPU per node, got nodes={nodes}, "
                             f"cpus_per_node={cpus_per_node}")
        _import_ray()
        from ray.cluster_utils import Cluster

        self.cpus_per_node = cpus_per_node
        self._store_bytes = object_store_mb * 2**20
        # a short path: Ray puts unix sockets in it (at most 107 characters)
        self.temp_dir = Path(tempfile.mkdtemp(prefix="akray-", dir="/tmp"))
        self._old_tmpdir = os.environ.get("RAY_TMPDIR")
        os.environ["RAY_TMPDIR"] = str(self.temp_dir)
        self._nodes: dict[str, Any] = {}
        self._cluster: Any = None
        head_args: dict[str, Any] = {"num_cpus": cpus_per_node,
                                     "object_store_memory": self._store_bytes,
                                     "include_dashboard": False}
        if system_config:
            head_args["_system_config"] = dict(system_config)
        started = time.perf_counter()
        for attempt in range(1, STARTUP_ATTEMPTS + 1):
            try:
                self._cluster = Cluster(initialize_head=True, head_node_args=head_args)
                head = self._cluster.head_node
                self._nodes[head.node_id] = head
                for _ in range(nodes - 1):
                    self.add_node(wait=False)
                self._cluster.wait_for_nodes(timeout=NODES_JOIN_SECONDS)
                break
            except Exception as exc:
                # a start that failed: what runs of it is stopped now, not waited for
                if attempt == STARTUP_ATTEMPTS or not _slow_start(exc):
                    self.close(timeout=1)
                    raise
                self._stop_nodes(timeout=1)     # a loaded machine: once more, from scratch
            except BaseException:
                self.close(timeout=1)
                raise
        self.start_seconds = time.perf_counter() - started

    @property
    def address(self) -> str:
        return str(self._cluster.address)

    def node_ids(self) -> list[str]:
        """Ids of the nodes still running, the head first."""
        head = self._cluster.head_node
        return [head.node_id] + [n.node_id for n in self._cluster.worker_nodes]

    def worker_ids(self) -> list[str]:
        """Ids of the worker nodes still running (the ones that may be killed)."""
        return self.node_ids()[1:]

    def add_node(self, *, wait: bool = True) -> str:
        """Start one more worker node; returns its id."""
        node = self._cluster.add_node(wait=wait, num_cpus=self.cpus_per_node,
                                      object_store_memory=self._store_bytes)
        self._nodes[node.node_id] = node
        return str(node.node_id)

    def kill_node(self, node_id: str) -> None:
        """Kill a worker node at once (SIGKILL to its raylet and every process it started),
        as a machine that loses power: nothing of it shuts down cleanly."""
        import signal

        node = self._nodes.get(node_id)
        if node is None or node not in self._cluster.worker_nodes:
            raise ValueError(f"{node_id} is not a running worker node of this cluster")
        # the node's worker processes first: children of its raylet, they would otherwise
        # go on (calling, writing) until they notice that their raylet is gone
        started = [info.process.pid for infos in node.all_processes.values()
                   for info in infos if info.process is not None]
        for pid in _descendants(started):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self._cluster.remove_node(node, allow_graceful=False)

    def _stop_nodes(self, *, timeout: float) -> None:
        """Stop every node; then every process of the cluster is gone and reaped, also
        those of a node whose start failed half-way (``Cluster`` kept no handle on them)."""
        try:
            if self._cluster is not None:
                self._cluster.shutdown()
        finally:
            self._cluster = None
            self._nodes.clear()
            _wait_gone(self.temp_dir, timeout=timeout)

    def close(self, *, timeout: float = 30.0) -> None:
        """Stop every node and remove the temporary folder; waits (up to ``timeout``
        seconds) until no process of the cluster is left."""
        try:
            self._stop_nodes(timeout=timeout)
        finally:
            if self._old_tmpdir is None:
                os.environ.pop("RAY_TMPDIR", None)
            else:
                os.environ["RAY_TMPDIR"] = self._old_tmpdir
            shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def processes_using(folder: str | Path) -> list[int]:
    """Ids of the processes whose command line or environment names ``folder`` (a
    cluster's temp folder: its raylets name their session folder in it, and every process
    they start inherits ``RAY_TMPDIR`` set to it, Ray workers included, whose command line
    Ray rewrites)."""
    needle = str(folder).encode()
    found: list[int] = []
    proc = Path("/proc")
    if not proc.is_dir():       # not Linux: nothing to look for
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            seen = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in seen:
            found.append(int(entry.name))
    return found


def _descendants(pids: list[int]) -> list[int]:
    """Every process started, directly or not, by one of ``pids`` (from /proc)."""
    children: dict[int, list[int]] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # the parent id follows the ")" that ends the (possibly spaced) command name
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    todo = list(pids)
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _wait_gone(folder: Path, *, timeout: float) -> None:
    """Wait for the processes of a stopped cluster to exit; SIGTERM, then SIGKILL, the ones
    that remain after ``timeout`` (each by its id: only processes naming this cluster's
    folder), and reap those that are children of this process.

    A node whose start failed (Ray's "Deadline Exceeded" on a loaded machine) leaves running
    processes that nothing stops; their ``Popen`` objects, once collected while they still
    run, warn ``ResourceWarning: subprocess N is still running`` in whatever code runs then.
    Stopped and reaped here, they are gone before this returns.
    """
    import signal

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not processes_using(folder):
            return
        time.sleep(0.2)
    left = processes_using(folder)
    for sig, grace in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
        for pid in left:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        _reap(left, timeout=grace)
        left = processes_using(folder)
        if not left:
            return


def _reap(pids: list[int], *, timeout: float) -> None:
    """Wait (up to ``timeout`` seconds) for ``pids`` to exit, collecting the exit status of
    those that are children of this process, so that none is left running or a zombie."""
    deadline = time.monotonic() + timeout
    todo = set(pids)
    while todo and time.monotonic() < deadline:
        for pid in list(todo):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:           # not ours: gone once /proc has no entry
                done = 0 if Path(f"/proc/{pid}").exists() else pid
            if done:
                todo.discard(pid)
        if todo:
            time.sleep(0.1)
