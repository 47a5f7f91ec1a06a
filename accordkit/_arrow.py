"""Small Arrow helpers shared by the loading and scoring layers."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    import datasets


@cache
def canonical_schema() -> pa.Schema:
    """``EPISODE_FEATURES.arrow_schema``, built once (``datasets`` rebuilds it on each access)."""
    from .schema import EPISODE_FEATURES

    return EPISODE_FEATURES.arrow_schema


def one_array(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A column as one Arrow array, without a copy when it is one chunk already.

    ``ChunkedArray.combine_chunks`` copies even a single chunk: on the messages column of a
    large table that is a copy of every transcript.
    """
    if isinstance(column, pa.Array):
        return column
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def arrow_table(ds: datasets.Dataset) -> pa.Table:
    """The dataset's rows as one Arrow table, honouring any ``select``/``filter`` mapping.

    ``Dataset.data`` ignores an indices mapping, so it must never be read directly.
    """
    if ds._indices is None:  # noqa: SLF001 - cheap path: no mapping, no copy
        return ds.data.table
    return ds.with_format("arrow")[:]


def episode_dataset(table: pa.Table) -> datasets.Dataset:
    """Wrap a canonical Arrow table as an in-memory dataset with the canonical features.

    A random fingerprint is given: without one, ``datasets`` hashes the whole table (with
    dill) on construction, which costs more than reading the data.
    """
    import datasets
    from datasets.fingerprint import generate_random_fingerprint

    from .schema import EPISODE_FEATURES

    return datasets.Dataset(table, info=datasets.DatasetInfo(features=EPISODE_FEATURES),
                            fingerprint=generate_random_fingerprint())


def empty_dataset() -> datasets.Dataset:
    """A dataset with the canonical columns and no rows."""
    return episode_dataset(canonical_schema().empty_table())
