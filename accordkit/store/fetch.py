"""Drill-down: the transcripts of a few stored episodes, read from the store's inputs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .format import _parts, read_manifest
from .inputs import warn_if_changed

__all__ = ["fetch_episodes"]


def fetch_episodes(store: str | Path, episode_ids: Sequence[str]) -> Any:
    """The canonical episodes with these ids, read from the inputs the store was scored from.

    Only the inputs that hold them are read, and from parquet inputs only the matching rows
    (a filter pushed down to the parquet reader): a report page that shows three
    conversations out of a million episodes reads three episodes' worth of transcripts.

    Before an input's transcripts are read, its file is checked against the sha256 the
    store recorded (a file of the same size and time is trusted, any other hashed once per
    process): a file that changed, or a manifest pointing at another file, is said with a
    :class:`StoreChangedWarning`.

    Returns
    -------
    datasets.Dataset
        In the order of ``episode_ids`` (ids not in the store are left out).

    Warns
    -----
    StoreChangedWarning
        When an input read is not the file that was scored.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from ..ingest.read import load_table
    from ..load import load

    store = Path(store)
    manifest = read_manifest(store)
    wanted = list(dict.fromkeys(str(e) for e in episode_ids))
    where: dict[int, list[str]] = {}
    for part in _parts(store, "episode", manifest):
        table = pq.read_table(part, columns=["episode_id", "_input"])
        mask = pc.is_in(table.column("episode_id"), value_set=pa.array(wanted, pa.string()))
        hits = table.filter(mask)
        for eid, idx in zip(hits.column("episode_id").to_pylist(),
                            hits.column("_input").to_pylist(), strict=True):
            where.setdefault(int(idx), []).append(eid)
    sources = {r["index"]: r["source"] for r in manifest["inputs"]}
    warn_if_changed(store, manifest, sorted(where))
    tables = []
    for idx, ids in sorted(where.items()):
        src = sources[idx]
        if src.endswith(".parquet"):
            table = pq.read_table(src, filters=[("episode_id", "in", ids)])
            ds, _ = load_table(table, source=src, errors="skip")
        else:
            full = load(src, errors="skip", cache=True)
            keep = pc.is_in(pa.array(full["episode_id"], pa.string()),
                            value_set=pa.array(ids, pa.string()))
            ds = full.select(keep.to_numpy(zero_copy_only=False).nonzero()[0])
        tables.append(ds)
    if not tables:
        from ..schema.arrow import empty_dataset

        return empty_dataset()
    import datasets

    joined = datasets.concatenate_datasets(tables) if len(tables) > 1 else tables[0]
    order = {eid: i for i, eid in enumerate(joined["episode_id"])}
    return joined.select([order[e] for e in wanted if e in order])

