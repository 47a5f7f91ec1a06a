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
        if input.data is None and _large(input):
            streamed = _streamed(input, ctx)
            if streamed is not None:
                yield from streamed
                return
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


# --------------------------------------------------------------------------- large files

#: A file of more than this many bytes, read without its bytes held already (a scoring
#: engine's large input), is read a record at a time when it is plain text: JSON Lines line
#: by line, a JSON array of canonical episodes item by item.
STREAM_BYTES = 64 << 20
#: The largest record of a streamed file (one JSON Lines line, one item of an array of
#: canonical episodes): a larger one is a problem naming the file and the record, skipped
#: without being held whole, so memory stays bounded whatever one record holds.
MAX_RECORD_BYTES = 64 << 20


def _large(input: Input) -> bool:
    local = input.local
    try:
        return local is not None and local.stat().st_size > STREAM_BYTES
    except OSError:
        return False


def _streamed(input: Input, ctx: ReadContext) -> Iterator[Part] | None:
    """A large plain-text file's parts, read a record at a time; None when it is not one this
    way reads (not plain text, not JSON Lines nor a JSON array of canonical episodes): it is
    then read whole."""
    from .text import jsonl_file, plain_text_file

    with input.open() as fh:
        if not plain_text_file(fh):
            return None
        fh.seek(0)
        if jsonl_file(fh):
            return _jsonl_parts(input, ctx)
        fh.seek(0)
        if fh.read(4096).lstrip(b"\xef\xbb\xbf").lstrip()[:1] == b"[":
            return _array_parts(input, ctx)
    return None


def _jsonl_parts(input: Input, ctx: ReadContext) -> Iterator[Part]:
    """A plain-text JSON Lines file, line by line: ``ctx.options.batch_rows`` records per part."""
    import json

    from .canonical import read_items

    source = input.name

    def items() -> Iterator[tuple[str, Any]]:
        with input.open() as fh:
            for n, raw in enumerate(_bounded_lines(fh), start=1):
                if raw is None:
                    ctx.problem(_too_large(source, f"line {n}"))
                    continue
                line = raw.decode("utf-8-sig" if n == 1 else "utf-8").rstrip("\n")
                if not line.strip():
                    continue
                try:
                    yield f"line {n}", json.loads(line)
                except (json.JSONDecodeError, RecursionError) as exc:
                    reason = (f"invalid JSON ({exc.msg}, column {exc.colno})"
                              if isinstance(exc, json.JSONDecodeError)
                              else "JSON nested too deeply")
                    ctx.problem(EpisodeValidationError(reason, source=source,
                                                       record=f"line {n}", field=TOP))
                except ValueError as exc:  # e.g. an integer of more than 4300 digits
                    ctx.problem(EpisodeValidationError(f"invalid JSON ({exc})", source=source,
                                                       record=f"line {n}", field=TOP))

    yield from read_items(items(), input, ctx)


def _array_parts(input: Input, ctx: ReadContext) -> Iterator[Part] | None:
    """A plain-text JSON array of canonical episodes, item by item: the array is split into
    its items' undecoded bytes (``msgspec``), each decoded when its batch comes. None when it
    is not such an array (a τ-bench list, an array that is not JSON): read whole."""
    import json

    import msgspec

    from .canonical import is_canonical, read_items

    data = input.read_bytes()
    try:
        raws = msgspec.json.decode(data, type=list[msgspec.Raw])
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    first = next((json.loads(bytes(r)) for r in raws[:1] if len(r) <= MAX_RECORD_BYTES), None)
    if not is_canonical(first):
        return None

    def items() -> Iterator[tuple[str, Any]]:
        for i, raw in enumerate(raws):
            if len(raw) > MAX_RECORD_BYTES:
                ctx.problem(_too_large(input.name, f"item {i}"))
                continue
            try:
                yield f"item {i}", json.loads(bytes(raw))
            except (ValueError, RecursionError) as exc:  # pragma: no cover - msgspec parsed it
                ctx.problem(EpisodeValidationError(f"invalid JSON ({exc})", source=input.name,
                                                   record=f"item {i}", field=TOP))

    return read_items(items(), input, ctx)


def _too_large(source: str, record: str) -> EpisodeValidationError:
    return EpisodeValidationError(
        f"record larger than {MAX_RECORD_BYTES:,} bytes (accordkit's bound on one record, "
        "so memory stays bounded); left out unread", source=source, record=record, field=TOP)


def _bounded_lines(fh: Any) -> Iterator[bytes | None]:
    """The lines of a binary file, each at most :data:`MAX_RECORD_BYTES` long; a longer
    line is read past in chunks (never held whole) and given as None."""
    while True:
        line = fh.readline(MAX_RECORD_BYTES + 1)
        if not line:
            return
        if len(line) <= MAX_RECORD_BYTES or line.endswith(b"\n"):
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = fh.readline(1 << 20)
        yield None
