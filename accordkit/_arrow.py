"""Small Arrow helpers shared by the loading and scoring layers."""

from __future__ import annotations

import datasets
import pyarrow as pa


def arrow_table(ds: datasets.Dataset) -> pa.Table:
    """The dataset's rows as one Arrow table, honouring any ``select``/``filter`` mapping.

    ``Dataset.data`` ignores an indices mapping, so it must never be read directly.
    """
    if ds._indices is None:  # noqa: SLF001 - cheap path: no mapping, no copy
        return ds.data.table
    return ds.with_format("arrow")[:]


def empty_dataset() -> datasets.Dataset:
    """A dataset with the canonical columns and no rows."""
    from .schema import EPISODE_FEATURES

    table = EPISODE_FEATURES.arrow_schema.empty_table()
    return datasets.Dataset(table, info=datasets.DatasetInfo(features=EPISODE_FEATURES))
