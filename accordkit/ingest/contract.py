"""The reader contract: two methods, the same for built-in and user readers.

A reader is any object with

* ``name`` — a short name used in messages;
* ``sniff(input) -> bool`` — whether it reads this :class:`~accordkit.ingest.inputs.Input`,
  judged by content (:meth:`Input.head <accordkit.ingest.inputs.Input.head>` gives the first
  bytes of a file, :meth:`~accordkit.ingest.inputs.Input.read_bytes` all of them);
* ``read(input, ctx)`` — the input's episodes. ``ctx`` is the
  :class:`~accordkit.ingest.context.ReadContext`: the error policy, where problems and notes
  go, the load's options; it is all a reader sees. ``read`` returns (or yields) canonical
  records (dicts with the columns of :data:`~accordkit.schema.EPISODE_FEATURES`, missing keys
  meaning null) and, for a record it could not convert, the
  :class:`~accordkit.schema.EpisodeValidationError` naming file, record and field; or checked
  :class:`~accordkit.ingest.check.Part` s, as the built-in readers do. A problem with the
  input as a whole is raised. ``None`` says "not mine after all": the next reader is asked.

Optional attributes: ``version`` (part of the episode cache key: change it when the reader's
output changes) and ``cached`` (False: its inputs are not kept in the episode cache).

What a reader gives goes through :func:`parts_of`: records get every check of the schema
(:mod:`accordkit.ingest.check`), under the load's error policy; warnings a reader emits
become notes of the load.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, runtime_checkable

import pyarrow as pa

from ..schema import EpisodeValidationError
from .check import TOP, WHOLE_FILE, Part, records_parts, table_part
from .context import ReadContext
from .inputs import Input

__all__ = ["Reader", "parts_of", "guarded", "whole_file_problem"]


@runtime_checkable
class Reader(Protocol):
    """What :func:`accordkit.load` asks of a format (see the module docstring)."""

    name: str

    def sniff(self, input: Input) -> bool: ...

    def read(self, input: Input, ctx: ReadContext) -> Any: ...


def parts_of(output: Any, ctx: ReadContext, input: Input) -> Iterator[Part]:
    """What ``reader.read(input, ctx)`` gave, as checked parts (at least one).

    Parts pass as they are; an Arrow table is checked as a canonical table; records are
    checked one by one (named ``item i`` by their position among the items given), errors go
    to ``ctx`` as they come. Warnings emitted while the reader runs become notes. Records are
    turned into Arrow ``ctx.options.batch_rows`` at a time, so a reader that yields records
    one by one is read in bounded memory.
    """
    if isinstance(output, Part | pa.Table):
        output = [output]
    size = max(1, ctx.options.batch_rows)
    records: list[tuple[str, Any]] = []
    given = False
    for position, item in enumerate(_noted(iter(output), ctx)):
        if isinstance(item, Part | pa.Table):
            if records:
                yield from records_parts(records, ctx, source=input.name)
                records = []
            given = True
            yield item if isinstance(item, Part) else table_part(
                item, ctx, source=input.name, origin=input.fills)
        elif isinstance(item, EpisodeValidationError):
            ctx.problem(item)
        else:
            records.append((f"item {position}", item))
            if len(records) >= size:
                yield from records_parts(records, ctx, source=input.name)
                records, given = [], True
    if records or not given:
        yield from records_parts(records, ctx, source=input.name)


def _noted(items: Iterator[Any], ctx: ReadContext) -> Iterator[Any]:
    """``items``, with the warnings emitted while each is made kept as notes (only while the
    reader runs, not while the caller works on what it gave)."""
    while True:
        with ctx.warnings_as_notes():
            try:
                item = next(items)
            except StopIteration:
                return
        yield item


def whole_file_problem(exc: BaseException, name: str) -> EpisodeValidationError:
    """The problem an exception raised while reading the input ``name`` is: an
    :class:`~accordkit.schema.EpisodeValidationError` as raised (named after the input when it
    names no file), anything else a problem of the whole file, so that one unreadable file
    never stops the others."""
    if isinstance(exc, EpisodeValidationError):
        if exc.source is None:
            return EpisodeValidationError(exc.reason, source=name,
                                          record=exc.record or WHOLE_FILE, field=exc.field)
        return exc
    if isinstance(exc, RecursionError):
        return EpisodeValidationError("data nested too deeply to read", source=name,
                                      record=WHOLE_FILE, field=TOP)
    return EpisodeValidationError(f"could not be read ({type(exc).__name__}: {exc})",
                                  source=name, record=WHOLE_FILE, field=TOP)


def guarded(ctx: ReadContext, name: str, read: Callable[[], Iterable[Part]]) -> list[Part]:
    """Every part ``read()`` gives, or none when it fails: its failure is then a problem of
    the input ``name`` (raised or listed by ``ctx``'s policy)."""
    try:
        return list(read())
    except (KeyboardInterrupt, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - nothing may cross into other files
        ctx.problem(whole_file_problem(exc, name))
        return []
