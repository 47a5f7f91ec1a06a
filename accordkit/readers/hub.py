"""A Hugging Face hub dataset, by id (``org/name``), read with :func:`datasets.load_dataset`.

Every config and split is read (or the ones asked for), with ``config`` and ``split`` as
columns; ``revision=`` pins a branch, tag or commit. A path that exists locally is never a
hub id.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..schema import EpisodeValidationError
from .parquet import with_parts

__all__ = ["Hub", "is_hub_id"]

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
#: File name endings that mark a path, never a hub repository name.
_FILE_SUFFIXES = (".json", ".jsonl", ".parquet")


def is_hub_id(source: str | Path) -> bool:
    """Whether ``source`` should be read from the Hugging Face hub.

    Only when it has the form ``org/name``, does not end like a file name (``.json``,
    ``.jsonl``, ``.parquet``) and no such local path exists.

    Examples
    --------
    >>> is_hub_id("org/some-dataset")
    True
    >>> is_hub_id("data/does/not/exist.json")
    False
    >>> is_hub_id("results/run.json")
    False
    """
    text = str(source)
    return (bool(_HUB_ID.match(text)) and not text.lower().endswith(_FILE_SUFFIXES)
            and not Path(text).exists())


class Hub:
    """A dataset on the Hugging Face hub (or the hub named by ``HF_ENDPOINT``)."""

    name = "hub"

    def sniff(self, source: str) -> bool:
        return is_hub_id(source)

    def read(self, loader: Any, source: str) -> pa.Table:
        import datasets

        from .._arrow import arrow_table

        try:
            configs = ([loader.config] if loader.config else
                       datasets.get_dataset_config_names(source, revision=loader.revision))
        except Exception as exc:  # noqa: BLE001 - datasets raises many types here
            raise _hub_error(source, exc) from None
        parts = []
        for name in configs:
            try:
                loaded = datasets.load_dataset(source, name, split=loader.split,
                                               revision=loader.revision)
            except Exception as exc:  # noqa: BLE001
                raise _hub_error(source, exc, config=name) from None
            splits = {loader.split: loaded} if loader.split else dict(loaded)
            for split_name, ds in splits.items():
                table = with_parts(arrow_table(ds), name, split_name)
                where = f"{source} (config {name}, split {split_name})"
                parts.append(loader.canonical_table(table, source=where, origin=source,
                                                    filter_parts=False))
        return loader.concat(parts)


def _hub_error(path: str, exc: Exception, config: str | None = None) -> EpisodeValidationError:
    hint = ""
    if os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "TRUE", "ON", "YES"):
        hint = " (HF_HUB_OFFLINE is set: only datasets already in the local cache can be read)"
    where = f"config {config}: " if config else ""
    return EpisodeValidationError(
        f"{where}could not load the dataset: {type(exc).__name__}: {exc}{hint}",
        source=path, record="(whole file)", field="(dataset)")
