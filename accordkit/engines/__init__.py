"""Engines that score many episodes into a score store (:mod:`accordkit.store`).

Scoring is the same pure function everywhere (:func:`accordkit.score`); an engine only
decides where batches are read and scored:

* ``"local"`` (:func:`score_to_store`, ``num_proc=1``): one process, batch by batch;
* ``"local"`` with ``num_proc=N``: N worker processes on this machine;
* ``"ray"``: the work items as a Ray Dataset, scored with ``map_batches`` on a local Ray or
  the cluster at ``RAY_ADDRESS`` (:mod:`.ray_run`; the manifest lists what each node
  scored). :mod:`.ray_cluster` connects to clusters and simulates one of several nodes on
  this machine (``LocalCluster``).

Every engine plans the same work items (:func:`plan_work`) and writes the same parts, so
the stores they write read back identically, row for row. One item is scored by
:mod:`.item`; with ``merge=True``, inputs that repeat an episode (or split a source file a
pooled mode needs whole) are then read together and merged as :func:`accordkit.load` merges
them (:mod:`.merge`).
"""

from __future__ import annotations

from .plan import WorkItem, plan_work
from .run import ENGINES, score_to_store, write_scores

__all__ = ["ENGINES", "WorkItem", "plan_work", "score_to_store", "write_scores"]
