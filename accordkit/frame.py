"""``to_frame``: a flat pandas view of an episode dataset."""

from __future__ import annotations

from typing import Literal

import datasets
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ._internal.arrow import arrow_table

__all__ = ["to_frame"]

_NESTED_COUNTS = {"messages": "n_messages", "preferences": "n_preferences", "goals": "n_goals"}


def _nullable(dtype: pa.DataType) -> pd.api.extensions.ExtensionDtype | None:
    """Integers as "Int64" and flags as "boolean", so that nulls do not turn them to floats."""
    if pa.types.is_integer(dtype):
        return pd.Int64Dtype()
    if pa.types.is_boolean(dtype):
        return pd.BooleanDtype()
    return None


def to_frame(ds: datasets.Dataset, *, nested: Literal["count", "keep"] = "count") -> pd.DataFrame:
    """Return one row per episode as a pandas DataFrame.

    Integer columns come out as pandas ``"Int64"`` and flags as ``"boolean"`` (missing
    values stay ``<NA>``), text as Python strings, numbers as ``float64`` with NaN.

    Parameters
    ----------
    ds : datasets.Dataset
        Canonical episodes, as returned by :func:`accordkit.load` (a ``select`` or
        ``filter`` of them is honoured).
    nested : {"count", "keep"}
        ``"count"`` (default) drops list and struct columns and adds ``n_messages``,
        ``n_preferences`` and ``n_goals`` (null where the list is null); ``"keep"`` keeps
        them as Python objects.

    Examples
    --------
    >>> import accordkit as ak
    >>> df = ak.to_frame(ak.load("data/sample/accord"))   # doctest: +SKIP
    >>> df.groupby("agent_model").size()                    # doctest: +SKIP
    """
    if nested not in ("count", "keep"):
        raise ValueError(f"nested must be 'count' or 'keep', got {nested!r}")
    table = arrow_table(ds)
    if nested == "keep":
        return table.to_pandas(types_mapper=_nullable)
    flat = [f.name for f in table.schema if not pa.types.is_nested(f.type)]
    out = table.select(flat)
    for col, name in _NESTED_COUNTS.items():
        if col in table.column_names:
            out = out.append_column(name, pc.list_value_length(table.column(col)))
    return out.to_pandas(types_mapper=_nullable)
