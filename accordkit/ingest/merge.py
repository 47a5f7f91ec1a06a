"""Joining the parts of a load: one table, each episode once.

An episode found in several inputs with identical content (checkpoints of one run) is kept
once, from its first copy, and the copies are listed in the load report; different content
under one ``episode_id`` is a problem of the later copy (by the error policy).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa

from ..schema import EpisodeValidationError
from .context import ReadContext

__all__ = ["first_copies", "copy_name"]

#: Columns that say where a record was read from; not part of an episode's content.
PROVENANCE = ("source", "config", "split")


def _content_key(row: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in row.items() if k not in PROVENANCE}, sort_keys=True,
                      default=str)


def copy_name(where: tuple[str, str], eid: str) -> str:
    """A copy of episode ``eid`` as the load report's ``duplicates`` names it: its file, and
    its line / item / row when the record label gives one.

    Examples
    --------
    >>> copy_name(("a.jsonl", "e1 (line 3)"), "e1"), copy_name(("run.json", "e1"), "e1")
    ('a.jsonl (line 3)', 'run.json')
    """
    file, label = where
    if label == eid:
        return file
    if label.startswith(f"{eid} (") and label.endswith(")"):
        label = label[len(eid) + 2:-1]
    return f"{file} ({label})"


def first_copies(table: pa.Table, where: list[tuple[str, str]], ctx: ReadContext,
                 duplicates: dict[str, list[str]]) -> np.ndarray:
    """The rows a load keeps (positions, in order): the first copy of each episode id; a later
    copy of different content is a problem (``ctx``), one of the same content is named in
    ``duplicates`` (``episode_id -> copies``). ``where`` holds the (file, record) each row was
    read from.

    Examples
    --------
    >>> from accordkit.ingest.context import ReadContext
    >>> t = pa.table({"episode_id": ["a", "b", "a"], "source": ["x", "x", "y"]})
    >>> dup = {}
    >>> first_copies(t, [("x", "a"), ("x", "b"), ("y", "a")], ReadContext("skip"), dup).tolist()
    [0, 1]
    >>> dup
    {'a': ['x', 'y']}
    """
    ids = table.column("episode_id").to_numpy(zero_copy_only=False)
    everything = np.arange(table.num_rows)
    uniq, counts = np.unique(ids, return_counts=True)
    if not (counts > 1).any():
        return everything
    dup_ids = set(uniq[counts > 1].tolist())
    if len(where) != table.num_rows:  # pragma: no cover - a part without its labels
        src = table.column("source").to_pylist()
        where = [(str(s), f"row {r}") for r, s in enumerate(src)]
    rows: dict[str, list[int]] = {}
    for r, eid in enumerate(ids):
        if eid in dup_ids:
            rows.setdefault(eid, []).append(r)
    drop: list[int] = []
    for eid, found in rows.items():
        base_key = _content_key(table.slice(found[0], 1).to_pylist()[0])
        # the files the copies were loaded from (not the ``source`` stored in the records)
        copies = [copy_name(where[found[0]], str(eid))]
        for r in found[1:]:
            drop.append(r)
            if _content_key(table.slice(r, 1).to_pylist()[0]) != base_key:
                first, second = where[found[0]], where[r]
                there = f" ({first[1]})" if first[1] != str(eid) else ""
                ctx.problem(EpisodeValidationError(
                    f"episode id also loaded from {first[0]}{there} with different content "
                    "(the first copy was kept)", source=second[0],
                    record=second[1], field="episode_id"))
            else:
                copies.append(copy_name(where[r], str(eid)))
        if len(copies) > 1:
            duplicates[str(eid)] = copies
    return np.setdiff1d(everything, np.array(drop, dtype=np.int64))
