"""Canonical episodes as parquet (recognised by the ``PAR1`` magic bytes).

A ``.parquet`` file without them is an error rather than a text file. Parquet is already
columnar, so it is not put in the episode cache; the whole table is checked at once
(:func:`accordkit.ingest.check.table_part`).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ...schema import EpisodeValidationError
from ..check import TOP, WHOLE_FILE, Part, note_unmatched, table_part
from ..context import ReadContext
from ..inputs import Card, Input

__all__ = ["Parquet", "read_parquet", "with_card", "open_parquet", "config_splits"]


class Parquet:
    """A parquet file of canonical episodes."""

    name = "parquet"
    cached = False

    def sniff(self, input: Input) -> bool:
        return input.head(4) == b"PAR1" or (input.path or "").lower().endswith(".parquet")

    def read(self, input: Input, ctx: ReadContext) -> Part:
        if input.head(4) != b"PAR1":
            raise EpisodeValidationError("not a parquet file (no PAR1 header)",
                                         source=input.name, record=WHOLE_FILE, field=TOP)
        return read_parquet(input, ctx)


def open_parquet(input: Input) -> pq.ParquetFile:
    """The input's parquet file, opened (its metadata read), local or at a URL."""
    if input.is_url:
        import fsspec

        fs, path = fsspec.core.url_to_fs(input.path)
        return pq.ParquetFile(fs.open(path, "rb"))
    return pq.ParquetFile(input.path)


def read_parquet(input: Input, ctx: ReadContext, *, table: pa.Table | None = None) -> Part:
    """A canonical parquet input's good rows (``table``: rows of it read already, e.g. a
    batch of row groups); a data file of a dataset folder gets its card's config and split.
    """
    if table is None:
        try:
            table = open_parquet(input).read()
        except (pa.ArrowException, OSError) as exc:
            raise EpisodeValidationError(f"unreadable parquet file ({exc})", source=input.name,
                                         record=WHOLE_FILE, field=TOP) from None
    if input.card is not None:
        table = with_card(table, input.card)
    part = table_part(table, ctx, source=input.name, origin=input.fills,
                      select=input.card is None)
    if input.card is None and (ctx.options.config is not None or ctx.options.split is not None):
        note_unmatched(ctx, input.name, config_splits(table))
    return part


def config_splits(table: pa.Table) -> set[tuple[Any, Any]]:
    """The (config, split) pairs of a canonical table's rows (none without those columns)."""
    if not table.num_rows or not {"config", "split"} <= set(table.column_names):
        return set()
    pairs = table.select(["config", "split"]).group_by(["config", "split"]).aggregate([])
    return {(row["config"], row["split"]) for row in pairs.to_pylist()}


def with_card(table: pa.Table, card: Card | tuple[str, str]) -> pa.Table:
    """``table`` with its ``config`` and ``split`` columns set as a dataset card gives them
    (when it has those columns)."""
    config, split = (card.config, card.split) if isinstance(card, Card) else card
    for column, value in (("config", config), ("split", split)):
        if column in table.column_names:
            table = table.set_column(table.column_names.index(column), column,
                                     pa.array([value] * table.num_rows, pa.string()))
    return table
