"""The Ray engine: work items scored as a Ray Dataset, on a local Ray or a cluster.

The items of a run (:func:`~accordkit.engines.plan_work`) become a Ray Dataset of one item
per block, scored with ``map_batches`` by the same :func:`~accordkit.engines.run.score_item`
as the local engine; each task writes its item's parts into the store itself (so the store
folder must be reachable from every node), and says on which node it ran. The manifest then
lists, per node, the batches it scored (:func:`node_records`).

A node that dies mid-run loses its running tasks and the results it had not handed over:
Ray Data retries them on the nodes left (its map tasks retry system failures without
limit). A retried item writes the same parts again under the same names (atomic renames of
identical bytes), and each item's result reaches the driver once, so every batch is scored
into the store, and listed, exactly once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._internal.ray_cluster import cluster_nodes, ray_session
from .plan import WorkItem

__all__ = ["run_on_ray", "node_records"]


def _score_on_node(batch: Any, *, score: Callable[..., dict[str, Any]], out: str,
                   options: Mapping[str, Any]) -> Any:
    """map_batches function: score the batch's items and add the id of this node.

    Items come as :meth:`WorkItem.encode` gives them (column ``item``) and results leave as
    JSON text (column ``result``): both cross Ray's pandas batches whole, whatever they hold
    (a dataset card, lists, a reason with a newline).
    """
    import pandas as pd
    import ray

    results = [json.dumps(score(WorkItem.decode(encoded), out=out, **options))
               for encoded in batch["item"]]
    return pd.DataFrame({"result": results,
                         "node_id": ray.get_runtime_context().get_node_id()})


def run_on_ray(items: Sequence[WorkItem], *, score: Callable[..., dict[str, Any]], out: str,
               num_proc: int, progress: bool,
               **options: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Score every item on Ray (``RAY_ADDRESS``, else a local Ray of ``num_proc`` CPUs).

    ``score`` scores one item (:func:`~accordkit.engines.run.score_item`, passed in so that
    this module needs nothing from the engine that calls it); ``options`` are its options.

    Returns
    -------
    results : list of dict
        One per item, as :func:`~accordkit.engines.run.score_item` returns, with the
        ``node_id`` it was scored on.
    extra : dict
        For the manifest: ``nodes``, see :func:`node_records`.
    """
    import ray

    with ray_session(num_cpus=num_proc):
        before = cluster_nodes()
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = progress
        # each item crosses Ray's pandas batches whole, in its one encoded form
        data = ray.data.from_items([{"item": i.encode().decode()} for i in items],
                                   override_num_blocks=max(1, len(items)))
        scored = data.map_batches(_score_on_node, batch_size=1, batch_format="pandas",
                                  fn_kwargs={"score": score, "out": str(out),
                                             "options": dict(options)})
        rows = scored.take_all()
        after = cluster_nodes()
    _remove_stale_temp(out)
    results = [{**json.loads(r["result"]), "node_id": str(r.get("node_id") or "")}
               for r in rows]
    return results, {"nodes": node_records(results, before=before, after=after)}


def _remove_stale_temp(out: str) -> None:
    """Remove the temp files of part writes that a lost node left behind (every item has
    its parts by now; the dead node's write was done again elsewhere)."""
    from pathlib import Path

    from ..store import PART_DIRS

    for sub in PART_DIRS.values():
        for tmp in (Path(out) / sub).glob(".tmp-*"):
            tmp.unlink(missing_ok=True)


def node_records(results: Sequence[Mapping[str, Any]], *,
                 before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]],
                 ) -> list[dict[str, Any]]:
    """What each node of the cluster did in a run, for the store's manifest.

    Parameters
    ----------
    results : list of dict
        The items' results, each with its ``node_id``, ``input_index``, ``batch_index``
        and ``episodes``.
    before, after : list of dict
        :func:`~accordkit._internal.ray_cluster.cluster_nodes` when the run started and
        ended.

    Returns
    -------
    list of dict
        One per node alive when the run started (or that scored an item), sorted by id:
        ``node_id``, ``address``, ``cpus``, ``alive_at_end`` (False for a node lost
        during the run), ``inputs`` (the input indices it scored batches of),
        ``batches`` (``[input, batch]`` pairs: its parts, ``IIIII-BBBBB.parquet``; an item
        that wrote none, the compare_modes item or a failed one, as itself) and
        ``episodes``.

    Examples
    --------
    >>> n = {"node_id": "a1", "address": "10.0.0.2", "cpus": 1, "alive": True}
    >>> node_records([{"node_id": "a1", "input_index": 0, "batch_index": 1, "episodes": 5},
    ...               {"node_id": "a1", "input_index": 2, "batch_index": 0, "episodes": 9,
    ...                "batches": 2}], before=[n], after=[{**n, "alive": False}])
    [{'node_id': 'a1', 'address': '10.0.0.2', 'cpus': 1, 'alive_at_end': False, 'inputs': [0, 2], 'batches': [[0, 1], [2, 0], [2, 1]], 'episodes': 14}]
    """
    known = {n["node_id"]: n for n in before}
    alive_now = {n["node_id"]: bool(n["alive"]) for n in after}
    ids = {n["node_id"] for n in before if n["alive"]} | {str(r["node_id"]) for r in results}
    records = []
    for node_id in sorted(ids):
        mine = [r for r in results if str(r["node_id"]) == node_id]
        info = known.get(node_id) or next((n for n in after if n["node_id"] == node_id), {})
        records.append({
            "node_id": node_id, "address": info.get("address", ""),
            "cpus": info.get("cpus", 0), "alive_at_end": alive_now.get(node_id, False),
            "inputs": sorted({int(r["input_index"]) for r in mine}),
            "batches": sorted(b for r in mine for b in _parts_of(r)),
            "episodes": sum(int(r["episodes"]) for r in mine)})
    return records


def _parts_of(result: Mapping[str, Any]) -> list[list[int]]:
    """``[input, batch]`` of each batch of scores an item wrote (an item read in several
    batches writes parts ``batch_index``, ``batch_index + 1``, ...), or of the item itself
    when it wrote none (the compare_modes item, a failed item)."""
    i, b = int(result["input_index"]), int(result["batch_index"])
    return [[i, b + k] for k in range(int(result.get("batches") or 0))] or [[i, b]]
