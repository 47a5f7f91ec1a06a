"""Canonical episodes as JSON: one episode object, a JSON array of them, or JSON Lines.

Records are checked against :data:`~accordkit.schema.EPISODE_FEATURES` and the rules of
:data:`~accordkit.schema.RULES` (:func:`accordkit.ingest.check.records_parts`), one problem per
record, named by its position (``item 2``, ``line 7``) and its ``episode_id`` when it has one.
A data file of a dataset folder gives every record the config and split of the card
(:func:`read_canonical_text`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ...schema import EpisodeValidationError
from ..check import TOP, WHOLE_FILE, Part, records_parts
from ..context import ReadContext
from ..inputs import Card, Input
from .text import (
    JSON_LINES,
    LONE_SURROGATES,
    decode_text,
    note_replaced,
    parse_text,
    replace_lone_surrogates,
)

__all__ = ["CanonicalDocument", "is_canonical", "read_jsonl", "read_canonical_text",
           "document_items", "read_items"]


def is_canonical(obj: Any) -> bool:
    """Whether ``obj`` is an episode object (it has ``episode_id`` and ``benchmark``)."""
    return isinstance(obj, dict) and "episode_id" in obj and "benchmark" in obj


class CanonicalDocument:
    """A parsed episode object, or a list holding at least one (read by the ``json``
    reader, :mod:`accordkit.ingest.formats.json_text`)."""

    name = "canonical"

    def sniff(self, obj: Any) -> bool:
        return is_canonical(obj) or isinstance(obj, list) and any(is_canonical(o) for o in obj)

    def read(self, obj: Any, input: Input, ctx: ReadContext,
             bad_lines: Sequence[int]) -> Iterator[Part]:
        parts = list(read_items(document_items(obj), input, ctx))
        if bad_lines:
            note_replaced(ctx, input.name, bad_lines, _joined(parts))
        yield from parts


def _joined(parts: list[Part]) -> Any:
    from ..check import concat

    return concat(p.table for p in parts)


def document_items(obj: Any) -> Iterator[tuple[str, Any]]:
    """The records of a parsed JSON document: one object (``item 0``) or a list of them."""
    return ((f"item {i}", o) for i, o in enumerate(obj if isinstance(obj, list) else [obj]))


def read_items(items: Iterable[tuple[str, Any]], input: Input, ctx: ReadContext) -> Iterator[Part]:
    """Records ``(position, object)`` of a canonical text file -> checked parts.

    A data file of a dataset folder (``input.card``) sets the config and split of every
    record (as its parquet files do), and its folder fills a missing ``source``. Any other
    file none of whose records is of the ``config=`` / ``split=`` asked for gets a note
    (:func:`~accordkit.ingest.check.note_unmatched`) rather than giving 0 rows silently.
    """
    from ..check import note_unmatched

    card: Card | None = input.card
    seen: set[tuple[Any, Any]] = set()

    def placed() -> Iterator[tuple[str, Any]]:
        for where, obj in items:
            if isinstance(obj, dict):
                if card is not None:
                    obj = {**obj, "config": card.config, "split": card.split}
                    if obj.get("source") is None:
                        obj["source"] = input.fills
                else:
                    seen.add((_hashable(obj.get("config")), _hashable(obj.get("split"))))
            yield where, obj

    yield from records_parts(placed(), ctx, source=input.name, batch=ctx.options.batch_rows)
    if card is None:
        note_unmatched(ctx, input.name, seen)


def _hashable(value: Any) -> Any:
    return value if value is None or isinstance(value, str | int | float | bool) else repr(value)


def _jsonl_items(text: str, ctx: ReadContext, source: str, bad: set[int],
                 replaced: list[str]) -> Iterator[tuple[str, Any]]:
    """``(line n, object)`` of JSON Lines text; a line that is not JSON is a problem of its
    own. Lines are split on "\\n" only: U+2028, U+0085 and the like are valid inside JSON
    strings and ``str.splitlines()`` would cut a record there."""
    start, n = 0, 0
    while start <= len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end]
        n += 1
        start = end + 1
        if not line.strip():
            continue
        if n in bad:
            replaced.append(f"line {n}")
        try:
            yield f"line {n}", json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            reason = (f"invalid JSON ({exc.msg}, column {exc.colno})"
                      if isinstance(exc, json.JSONDecodeError) else "JSON nested too deeply")
            ctx.problem(EpisodeValidationError(reason, source=source, record=f"line {n}",
                                               field=TOP))
        except ValueError as exc:  # e.g. an integer of more than 4300 digits
            ctx.problem(EpisodeValidationError(f"invalid JSON ({exc})", source=source,
                                               record=f"line {n}", field=TOP))


def read_jsonl(text: str, input: Input, ctx: ReadContext, *,
               bad_lines: Sequence[int] = ()) -> Iterator[Part]:
    """The episodes of a JSON Lines text, ``ctx.options.batch_rows`` records per part."""
    bad = set(bad_lines)
    replaced: list[str] = []
    yield from read_items(_jsonl_items(text, ctx, input.name, bad, replaced), input, ctx)
    if bad:
        note_replaced(ctx, input.name, sorted(bad), records=replaced)


def read_canonical_text(input: Input, ctx: ReadContext) -> Iterator[Part]:
    """A ``.json`` / ``.jsonl`` data file of a dataset folder: its canonical episodes.

    Read as the ``json`` reader reads text (bytes that are not UTF-8 and lone surrogate
    escapes replaced and noted): a ``.jsonl`` file line by line, a ``.json`` file as one
    episode object or a list of them (or as JSON Lines when it is not one document). Every
    record gets the config and split of the input's card, as a parquet file of the folder
    does.
    """
    source = input.name
    text, bad_lines = decode_text(input.read_bytes(), source=source)
    text, lone_lines = replace_lone_surrogates(text)
    if not text.strip():
        raise EpisodeValidationError("empty file", source=source, record=WHOLE_FILE, field=TOP)
    parts: list[Part] | None = None
    if not (input.path or "").lower().endswith(".jsonl"):
        try:
            obj = parse_text(text, source=source)
        except ValueError as exc:  # e.g. an integer of more than 4300 digits
            if isinstance(exc, EpisodeValidationError):
                raise
            raise EpisodeValidationError(f"invalid JSON ({exc})", source=source,
                                         record=WHOLE_FILE, field=TOP) from None
        if obj is not JSON_LINES:
            if not isinstance(obj, dict | list):
                raise EpisodeValidationError(
                    f"expected episode objects, found {type(obj).__name__}", source=source,
                    record=WHOLE_FILE, field=TOP)
            parts = list(read_items(document_items(obj), input, ctx))
            if bad_lines:
                note_replaced(ctx, source, bad_lines, _joined(parts))
    if parts is None:
        parts = list(read_jsonl(text, input, ctx, bad_lines=bad_lines))
    if lone_lines:
        note_replaced(ctx, source, lone_lines, _joined(parts), what=LONE_SURROGATES)
    yield from parts
