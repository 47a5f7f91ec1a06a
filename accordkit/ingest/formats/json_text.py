"""Any other text file: decoded as UTF-8, parsed as JSON, then given to the first *document*
reader that knows the parsed value (:data:`DOCUMENTS`: a tau2 results object, a τ-bench list,
canonical episodes); JSON Lines when it is not one JSON document, or when a ``.jsonl`` file
holds one object on one line (its record is ``line 1``). The last file reader asked: a file
nothing else reads ends here, with an error that says what was found.

A document reader has ``name``, ``sniff(obj)`` and ``read(obj, input, ctx, bad_lines)``
(checked parts); it may claim an empty list by the file's name (``claims_empty(name)``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ...schema import EpisodeValidationError
from ..check import TOP, WHOLE_FILE, Part, concat, describe
from ..context import ReadContext
from ..inputs import Input
from .canonical import CanonicalDocument, read_jsonl
from .tau2 import ResultsDocument
from .taubench import TaubenchDocument
from .text import (
    JSON_LINES,
    LONE_SURROGATES,
    decode_text,
    note_replaced,
    parse_text,
    replace_lone_surrogates,
)

__all__ = ["JsonFile", "DOCUMENTS", "documents"]

#: The document readers, in the order they are asked.
DOCUMENTS = (ResultsDocument, TaubenchDocument, CanonicalDocument)


def documents() -> list[Any]:
    """The document readers, in the order they are asked."""
    return [cls() for cls in DOCUMENTS]


class JsonFile:
    """JSON or JSON Lines text."""

    name = "json"
    cached = True

    def sniff(self, input: Input) -> bool:
        return True

    def read(self, input: Input, ctx: ReadContext) -> Iterator[Part]:
        text, bad_lines = decode_text(input.read_bytes(), source=input.name)
        text, lone_lines = replace_lone_surrogates(text)
        parts = list(_read_text(text, input, ctx, bad_lines))
        if lone_lines:
            note_replaced(ctx, input.name, lone_lines, concat(p.table for p in parts),
                          what=LONE_SURROGATES)
        yield from parts


def _read_text(text: str, input: Input, ctx: ReadContext,
               bad_lines: Sequence[int]) -> Iterator[Part]:
    source = input.name
    obj = parse_text(text, source=source)
    if obj is JSON_LINES:
        yield from read_jsonl(text, input, ctx, bad_lines=bad_lines)
        return
    readers = documents()
    # A .jsonl file of one record parses as one JSON document; its record is still
    # "line 1", as in any other JSON Lines file.
    one_line = (isinstance(obj, dict) and (input.path or source).lower().endswith(".jsonl")
                and "\n" not in text.strip())
    for document in readers:
        if document.sniff(obj) and not (one_line and document.name == "canonical"):
            yield from _read_document(document, obj, input, ctx, bad_lines)
            return
    if one_line:
        yield from read_jsonl(text, input, ctx, bad_lines=bad_lines)
        return
    if isinstance(obj, list) and not obj:
        # An empty list is no format's by content; a reader may claim it by file name.
        for document in readers:
            claims = getattr(document, "claims_empty", None)
            if claims is not None and claims(source):
                yield from _read_document(document, obj, input, ctx, bad_lines)
                return
    hint = ("; an empty list is read as a τ-bench run of 0 episodes only when its file "
            "name follows τ-bench run.py's pattern" if obj == [] else "")
    raise EpisodeValidationError(
        "not a results file or canonical episodes: expected a tau2/AgentChangeBench results "
        "object ({info, tasks, simulations}) or episode records with 'benchmark' and "
        f"'episode_id' (found {describe(obj)}{hint})", source=source, record=WHOLE_FILE,
        field=TOP)


def _read_document(document: Any, obj: Any, input: Input, ctx: ReadContext,
                   bad_lines: Sequence[int]) -> Iterator[Part]:
    """``document.read(...)``, with the warnings it emits kept as notes of the load (so a
    report run stays quiet, and a cached load reports them again)."""
    with ctx.warnings_as_notes():
        parts = list(document.read(obj, input, ctx, bad_lines))
    yield from parts
