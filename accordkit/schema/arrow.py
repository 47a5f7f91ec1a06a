"""The canonical schema as Arrow: the schema, tables of records, and the ``datasets.Dataset``
every load returns."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from .features import EPISODE_FEATURES

if TYPE_CHECKING:
    import datasets

__all__ = ["canonical_schema", "empty_table", "records_table", "episode_dataset",
           "empty_dataset"]


@cache
def canonical_schema() -> pa.Schema:
    """``EPISODE_FEATURES.arrow_schema``, built once (``datasets`` rebuilds it on each access).

    Built from the list of the struct's fields: ``pa.schema`` of the struct itself, which is
    how ``datasets`` builds it, costs about 6 ms the first time in a process, and this is
    on the path of every cached load. The metadata is the features as ``Features.to_dict``
    gives them, written by :func:`_features_dict` (``to_dict`` walks them with
    ``dataclasses``: 1-9 ms the first time in a process). The schema and its metadata are
    the same (``tests/schema/test_arrow.py`` compares them).
    """
    import json

    fields = list(EPISODE_FEATURES.type)
    features = {"info": {"features": _features_dict(EPISODE_FEATURES)}}
    return pa.schema(fields).with_metadata({"huggingface": json.dumps(features)})


def _features_dict(feature: Any) -> Any:
    """``Features.to_dict()`` of the canonical features (values, lists and structs only).

    Examples
    --------
    >>> from datasets import List, Value
    >>> _features_dict({"a": List(Value("int32"))})
    {'a': {'feature': {'dtype': 'int32', '_type': 'Value'}, '_type': 'List'}}
    """
    from datasets import List, Value

    if isinstance(feature, Value):
        return {"dtype": feature.dtype, "_type": "Value"}
    if isinstance(feature, List) and feature.length == -1:
        return {"feature": _features_dict(feature.feature), "_type": "List"}
    if isinstance(feature, dict):
        return {name: _features_dict(sub) for name, sub in feature.items()}
    raise TypeError(f"no dictionary form for {feature!r}")  # pragma: no cover


@cache
def _canonical_struct() -> pa.StructType:
    return pa.struct(list(canonical_schema()))


@cache
def empty_table() -> pa.Table:
    """A canonical table with no rows (tables are immutable: one is shared)."""
    return canonical_schema().empty_table()


def records_table(records: list[dict]) -> pa.Table:
    """The canonical table of ``records``, as ``pa.Table.from_pylist(records,
    schema=canonical_schema())`` builds it: a key a record lacks is null, a key the schema
    lacks is left out.

    Built as one struct array split into columns: ``from_pylist`` converts column by
    column, and its cost per call (about 0.1 ms more with the canonical schema) counts
    for the small batches of small files.

    Raises
    ------
    pyarrow.ArrowException, TypeError, ValueError, OverflowError
        When a value does not fit its column, or a record is not a dict.
    """
    if not all(isinstance(rec, dict) for rec in records):
        raise TypeError("a record is not a dict")
    array = pa.array(records, type=_canonical_struct())
    return pa.Table.from_struct_array(array).replace_schema_metadata(canonical_schema().metadata)


#: Releases of ``datasets`` (major.minor) whose ``Dataset`` state :func:`episode_dataset`
#: builds directly; ``tests/schema/test_arrow.py`` checks it against the constructor's for the one
#: installed. Any other release goes through the constructor.
_STATE_CHECKED = frozenset({"5.2"})


def _state_checked(version: str) -> bool:
    """Whether ``datasets`` ``version`` is one whose state :func:`episode_dataset` knows.

    Examples
    --------
    >>> _state_checked("5.2.0"), _state_checked("5.3.1"), _state_checked("4.2.0")
    (True, False, False)
    """
    return ".".join(version.split(".")[:2]) in _STATE_CHECKED


def episode_dataset(table: pa.Table) -> datasets.Dataset:
    """Wrap a canonical Arrow table as an in-memory dataset with the canonical features.

    A random fingerprint is given: without one, ``datasets`` hashes the whole table (with
    dill) on construction, which costs more than reading the data.

    A table with the canonical schema is wrapped without ``Dataset``'s constructor, which
    derives the schema and metadata from the features three times over (3.5-5 ms a call,
    as long as the rest of a cached load of a few files): its state, as the constructor
    would set it, is given to ``Dataset.__setstate__`` (how ``pickle`` restores one). Any
    other table, or a ``datasets`` release not checked (:data:`_STATE_CHECKED`), goes through
    the constructor.
    """
    import datasets
    from datasets.fingerprint import generate_random_fingerprint

    schema = canonical_schema()
    if _state_checked(datasets.__version__) and table.schema.equals(schema, check_metadata=False):
        from datasets.table import InMemoryTable

        ds = datasets.Dataset.__new__(datasets.Dataset)
        ds.__setstate__({
            "_info": datasets.DatasetInfo(features=EPISODE_FEATURES.copy()),
            "_split": None, "_indexes": {},
            "_data": InMemoryTable(table.replace_schema_metadata(schema.metadata)),
            "_indices": None, "_format_type": None, "_format_kwargs": {},
            "_format_columns": None, "_output_all_columns": False,
            "_fingerprint": generate_random_fingerprint()})
        return ds
    return datasets.Dataset(table, info=datasets.DatasetInfo(features=EPISODE_FEATURES),
                            fingerprint=generate_random_fingerprint())


def empty_dataset() -> datasets.Dataset:
    """A dataset with the canonical columns and no rows."""
    return episode_dataset(empty_table())
