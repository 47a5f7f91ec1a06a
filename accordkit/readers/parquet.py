"""Canonical episodes as parquet (recognised by the ``PAR1`` magic bytes).

A ``.parquet`` file without them is an error rather than a text file. Parquet is already
columnar, so it is not put in the episode cache; the whole table is checked at once
(``validate.check_table_types`` and ``validate.table_problems``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..schema import EpisodeValidationError
from .canonical import note_unmatched

__all__ = ["Parquet", "read_parquet", "with_parts"]


class Parquet:
    """A parquet file of canonical episodes."""

    name = "parquet"
    cached = False

    def sniff(self, path: Path, head: bytes) -> bool:
        return head[:4] == b"PAR1" or path.suffix.lower() == ".parquet"

    def read(self, loader: Any, path: Path, data: bytes | None) -> pa.Table:
        with path.open("rb") as fh:
            if fh.read(4) != b"PAR1":
                raise EpisodeValidationError("not a parquet file (no PAR1 header)",
                                             source=str(path), record="(whole file)",
                                             field="(top level)")
        return read_parquet(loader, path)


def read_parquet(loader: Any, path: Path, *, origin: str | None = None,
                 parts: tuple[str, str] | None = None) -> pa.Table:
    """A canonical parquet file's good rows; ``parts`` = (config, split) of a dataset
    folder, ``origin`` the folder (it fills empty ``source`` values)."""
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise EpisodeValidationError(f"unreadable parquet file ({exc})", source=str(path),
                                     record="(whole file)", field="(top level)") from None
    if parts is not None:
        table = with_parts(table, *parts)
    out = loader.canonical_table(table, source=str(path), origin=origin)
    if parts is None and (loader.config is not None or loader.split is not None):
        note_unmatched(loader, str(path), _config_splits(table))
    return out


def _config_splits(table: pa.Table) -> set[tuple[object, object]]:
    """The (config, split) pairs of a canonical table's rows (none without those columns)."""
    if not table.num_rows or not {"config", "split"} <= set(table.column_names):
        return set()
    pairs = table.select(["config", "split"]).group_by(["config", "split"]).aggregate([])
    return {(row["config"], row["split"]) for row in pairs.to_pylist()}


def with_parts(table: pa.Table, config: str, split: str) -> pa.Table:
    """``table`` with its ``config`` and ``split`` columns set (when it has them)."""
    for column, value in (("config", config), ("split", split)):
        if column in table.column_names:
            table = table.set_column(table.column_names.index(column), column,
                                     pa.array([value] * table.num_rows, pa.string()))
    return table
