"""Arrow helpers that know no schema: one array of a column, rows taken chunk by chunk, a
dataset's rows as one table."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    import datasets

__all__ = ["one_array", "one_chunk", "take_rows", "arrow_table"]


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
    metrics keep ``messages`` as it is: :class:`~accordkit.metrics.calls.Transcripts`
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
