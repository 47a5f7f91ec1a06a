"""What an engine reads of one work item: canonical episodes, a batch at a time.

The reading is the loading corridor's (:mod:`accordkit.ingest`), with the load's options and
error policy: a parquet item is its row groups, checked as :func:`accordkit.load` checks the
file; any other item is its input read by its reader, in parts. An input of up to
:data:`CACHED_BYTES` is read through the episode cache and whole (each episode once, as a load
keeps it); a larger one is read in parts without the cache and scored part by part, so memory
holds one batch of about ``batch_size`` episodes, not the file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..ingest.check import Part, concat
from ..ingest.context import ReadOptions
from ..ingest.formats.parquet import open_parquet, read_parquet
from ..ingest.intake import Intake, reported, take_in
from ..ingest.read import Reading
from ..schema.arrow import episode_dataset
from .plan import WorkItem

__all__ = ["ItemReading", "CACHED_BYTES", "PART_ROWS"]

#: Inputs of up to this many bytes are read whole, through the episode cache; larger ones in
#: parts, without it.
CACHED_BYTES = 64 << 20
#: Canonical records a reader turns into Arrow at a time in a part (JSON Lines, user readers).
PART_ROWS = 1024


class ItemReading:
    """The reading of one work item: :meth:`batches` gives its episodes, :attr:`report` what
    the reading found (problems, notes, files).

    Parameters
    ----------
    item : WorkItem
    errors : {"skip", "raise"}
    metadata : mapping, optional
        :func:`accordkit.load`'s ``metadata``.
    load_options : mapping, optional
        :func:`accordkit.load`'s ``revision`` and ``split``.
    batch_size : int
        Episodes per batch of an input read in parts.
    """

    def __init__(self, item: WorkItem, *, errors: str = "skip",
                 metadata: Mapping[str, Any] | None = None,
                 load_options: Mapping[str, Any] | None = None,
                 batch_size: int = 20_000) -> None:
        options = dict(load_options or {})
        self.item, self.batch_size = item, max(1, batch_size)
        self.ctx, self.report = reported(errors, ReadOptions(
            split=options.get("split"), revision=options.get("revision"),
            metadata=dict(metadata) if metadata else None,
            batch_rows=min(PART_ROWS, self.batch_size)))

    def batches(self) -> Iterator[Any]:
        """The item's episodes as ``datasets.Dataset`` s, in order, each of at most about
        ``batch_size`` episodes (a parquet item's row groups are one batch)."""
        input = self.item.read()
        if self.item.kind == "parquet":
            table = open_parquet(input).read_row_groups(list(self.item.row_groups))
            part = read_parquet(input, self.ctx, table=table)
            Intake(self.ctx, self.report).noted(part, input.name)
            yield episode_dataset(part.table)
            return
        reading = Reading(self.ctx, cache=_cached(input))
        finished = False
        try:
            if reading.cache:
                table = take_in(reading, [(input.source or input.name, [input])], self.report)
                for start in range(0, max(table.num_rows, 1), self.batch_size):
                    yield episode_dataset(table.slice(start, self.batch_size))
            else:
                yield from self._streamed(reading, input)
            finished = True
        finally:
            reading.finish(warn=finished)

    def _streamed(self, reading: Reading, input: Any) -> Iterator[Any]:
        """An input read in parts: batches of about ``batch_size`` episodes, each episode id
        once (a later copy is a problem of its record)."""
        intake = Intake(self.ctx, self.report)
        held: list[Part] = []
        rows, given = 0, False
        for part in reading.stream(input):
            held.append(intake.first_copies(part, input.name))
            rows += len(held[-1])
            if rows >= self.batch_size:
                yield episode_dataset(concat(p.table for p in held))
                held, rows, given = [], 0, True
        if held or not given:
            yield episode_dataset(concat(p.table for p in held))


def _cached(input: Any) -> bool:
    """Whether ``input`` is read through the episode cache (a local file or run of up to
    :data:`CACHED_BYTES`)."""
    if input.kind not in ("file", "run") or input.is_url:
        return False
    size = input.size
    if size is None and input.local is not None:
        try:
            size = input.local.stat().st_size
        except OSError:
            return True   # read where it is used, where the problem is reported
    return size is None or size <= CACHED_BYTES
