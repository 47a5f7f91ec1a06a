"""Small Arrow helpers shared by the loading and scoring layers."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    import datasets


@cache
def canonical_schema() -> pa.Schema:
    """``EPISODE_FEATURES.arrow_schema``, built once (``datasets`` rebuilds it on each access).

    Built from the list of the struct's fields: ``pa.schema`` of the struct itself, which is
    how ``datasets`` builds it, costs about 6 ms the first time in a process, and this is
    on the path of every cached load. The schema and its metadata are the same.
    """
    import json

    from .schema import EPISODE_FEATURES

    fields = list(EPISODE_FEATURES.type)
    features = {"info": {"features": EPISODE_FEATURES.to_dict()}}
    return pa.schema(fields).with_metadata({"huggingface": json.dumps(features)})


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


def one_array(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A column as one Arrow array, without a copy when it is one chunk already.

    ``ChunkedArray.combine_chunks`` copies even a single chunk: on the messages column of a
    large table that is a copy of every transcript.
    """
    if isinstance(column, pa.Array):
        return column
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def one_chunk(table: pa.Table, *, keep: tuple[str, ...] = ()) -> pa.Table:
    """``table`` with every column in one chunk, except the columns named in ``keep``; no
    copy of a column that is one chunk already.

    The metrics read some columns many times (one field at a time): on a table loaded from
    several files, each read would otherwise join the files' chunks again. The goal-shift
    metrics keep ``messages`` as it is: :class:`~accordkit.metrics._calls.Transcripts`
    reads it chunk by chunk, and joining it means writing every transcript to fresh
    memory, the slowest step of a first ``ak.score`` in a new process (on a VM, new
    memory is zeroed page by page as it is first touched: 10-40 ms for the 5.5 MB of
    transcripts of 21 result files, against about 1 ms for the same copy a second time).
    """
    if all(column.num_chunks <= 1 or name in keep
           for name, column in zip(table.column_names, table.columns, strict=True)):
        return table
    return pa.table({name: column if name in keep or column.num_chunks <= 1
                     else column.combine_chunks()
                     for name, column in zip(table.column_names, table.columns, strict=True)},
                    schema=table.schema)


def take_rows(column: pa.ChunkedArray | pa.Array, rows: np.ndarray) -> pa.Array:
    """``column[rows]`` as one array, taken chunk by chunk.

    ``ChunkedArray.take`` joins the chunks first, a copy of the whole column (every
    transcript's text, for the ``content`` of the messages) to take a few rows of it. Here
    each chunk gives its own rows, and only those are joined. ``rows`` are positions in the
    whole column, in any order.

    >>> c = pa.chunked_array([["a", "b"], ["c"], ["d", "e"]])
    >>> take_rows(c, np.array([4, 0, 2])).to_pylist()
    ['e', 'a', 'c']
    """
    rows = np.asarray(rows, dtype=np.int64)
    if isinstance(column, pa.Array):
        return column.take(pa.array(rows, type=pa.int64()))
    if column.num_chunks == 1:
        return column.chunk(0).take(pa.array(rows, type=pa.int64()))
    lengths = np.array([len(chunk) for chunk in column.chunks], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)])
    order = np.argsort(rows, kind="stable")
    ranked = rows[order]
    if len(ranked) and (ranked[0] < 0 or ranked[-1] >= starts[-1]):
        raise IndexError(f"row out of range for a column of {starts[-1]} values")
    which = np.searchsorted(starts, ranked, side="right") - 1
    bounds = np.searchsorted(which, np.arange(column.num_chunks + 1), side="left")
    parts = [column.chunk(k).take(pa.array(ranked[lo:hi] - starts[k], type=pa.int64()))
             for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)) if hi > lo]
    taken = pa.concat_arrays(parts) if parts else pa.array([], type=column.type)
    if np.array_equal(order, np.arange(len(order))):
        return taken
    back = np.empty_like(order)
    back[order] = np.arange(len(order), dtype=np.int64)
    return taken.take(pa.array(back, type=pa.int64()))


def arrow_table(ds: datasets.Dataset) -> pa.Table:
    """The dataset's rows as one Arrow table, honouring any ``select``/``filter`` mapping.

    ``Dataset.data`` ignores an indices mapping, so it must never be read directly.
    """
    if ds._indices is None:  # noqa: SLF001 - cheap path: no mapping, no copy
        return ds.data.table
    return ds.with_format("arrow")[:]


#: Releases of ``datasets`` (major.minor) whose ``Dataset`` state :func:`episode_dataset`
#: builds directly; ``tests/test_arrow.py`` checks it against the constructor's for the one
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

    from .schema import EPISODE_FEATURES

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
