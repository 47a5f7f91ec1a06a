"""Any other text file: decoded as UTF-8, parsed as JSON, then given to the *document*
readers (results object, τ-bench list, canonical episodes); JSON Lines when it is not one
JSON document, or when a ``.jsonl`` file holds one object on one line (its record is
``line 1``). The last file reader asked: a file nothing else reads ends here, with an error
that says what was found.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..schema import EpisodeValidationError
from .canonical import looks_like_jsonl, read_jsonl

__all__ = ["JsonFile", "decode_text", "parse_text", "JSON_LINES", "replace_lone_surrogates",
           "note_replaced", "replaced_note", "LONE_SURROGATES"]

_WHOLE_FILE = "(whole file)"
_TOP = "(top level)"
#: Share of bytes that may be invalid UTF-8 before a file is taken for a binary file.
_MAX_BAD_BYTES = 0.01
_ESCAPED = re.compile("[\udc80-\udcff]")
#: At a backslash of JSON text: an escaped backslash (kept), a UTF-16 surrogate pair (kept),
#: or a surrogate escape without its pair (replaced), in this order of preference.
_SURROGATE_ESCAPE = re.compile(
    r"\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
#: What :func:`replace_lone_surrogates` replaces, as the notes of a load name it.
LONE_SURROGATES = ("lone UTF-16 surrogate escapes (\\ud800-\\udfff without their pair, "
                   "e.g. a cut emoji)")


class JsonFile:
    """JSON or JSON Lines text."""

    name = "json"
    cached = True

    def sniff(self, path: Path, head: bytes) -> bool:
        return True

    def read(self, loader: Any, path: Path, data: bytes) -> pa.Table:
        source = str(path)
        text, bad_lines = decode_text(data, source=source)
        text, lone_lines = replace_lone_surrogates(text)
        table = self._read_text(loader, text, source, bad_lines)
        if lone_lines:
            note_replaced(loader, source, lone_lines, table, what=LONE_SURROGATES)
        return table

    @staticmethod
    def _read_text(loader: Any, text: str, source: str, bad_lines: list[int]) -> pa.Table:
        from . import formats

        obj = parse_text(text, source=source)
        if obj is JSON_LINES:
            return read_jsonl(loader, text, source, bad_lines=bad_lines)
        documents = formats("document")
        # A .jsonl file of one record parses as one JSON document; its record is still
        # "line 1", as in any other JSON Lines file.
        one_line = (isinstance(obj, dict) and source.lower().endswith(".jsonl")
                    and "\n" not in text.strip())
        for document in documents:
            if document.sniff(obj) and not (one_line and document.name == "canonical"):
                return _read_document(document, loader, obj, source, bad_lines)
        if one_line:
            return read_jsonl(loader, text, source, bad_lines=bad_lines)
        if isinstance(obj, list) and not obj:
            # An empty list is no format's by content; a reader may claim it by file name.
            for document in documents:
                claims = getattr(document, "claims_empty", None)
                if claims is not None and claims(source):
                    return _read_document(document, loader, obj, source, bad_lines)
        hint = ("; an empty list is read as a τ-bench run of 0 episodes only when its file "
                "name follows τ-bench run.py's pattern" if obj == [] else "")
        raise EpisodeValidationError(
            "not a results file or canonical episodes: expected a tau2/AgentChangeBench results "
            "object ({info, tasks, simulations}) or episode records with 'benchmark' and "
            f"'episode_id' (found {_describe(obj)}{hint})", source=source, record=_WHOLE_FILE,
            field=_TOP)


def _read_document(document: Any, loader: Any, obj: Any, source: str,
                   bad_lines: list[int]) -> pa.Table:
    """``document.read(...)``, with the warnings it emits kept as notes of the load (so a
    report run stays quiet, and a cached load reports them again)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = document.read(loader, obj, source, bad_lines)
    loader.report.notes.extend(str(w.message) for w in caught)
    return table


#: What :func:`parse_text` gives for text that is not one JSON document but JSON Lines.
JSON_LINES = object()


def parse_text(text: str, *, source: str) -> Any:
    """Decoded text of a file as one JSON document, or :data:`JSON_LINES`.

    Raises
    ------
    EpisodeValidationError
        (whole file) when the text is empty, is neither one JSON document nor JSON Lines
        (naming the line and column where it breaks), or is nested too deeply.
    """
    if not text.strip():
        raise EpisodeValidationError("empty file", source=source, record=_WHOLE_FILE,
                                     field=_TOP)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if looks_like_jsonl(text):
            return JSON_LINES
        raise EpisodeValidationError(
            f"invalid or truncated JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            source=source, record=_WHOLE_FILE, field=_TOP) from None
    except RecursionError:
        raise EpisodeValidationError("JSON nested too deeply", source=source,
                                     record=_WHOLE_FILE, field=_TOP) from None


def decode_text(data: bytes, *, source: str) -> tuple[str, list[int]]:
    """UTF-8 text of a JSON / JSONL file and the lines that held bytes that are not UTF-8.

    A few stray bytes are replaced by U+FFFD (and reported with the records they hit)
    instead of losing the whole file; NUL bytes or many bad bytes mean a binary file, which
    is an error.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8-sig", errors="surrogateescape")
        bad = [m.start() for m in _ESCAPED.finditer(text)]
        if b"\x00" in data or len(bad) > max(1, _MAX_BAD_BYTES * len(data)):
            raise EpisodeValidationError(
                f"not a text file: byte {exc.start} is not UTF-8 (a binary file?)",
                source=source, record=_WHOLE_FILE, field=_TOP) from None
        lines = sorted({text.count("\n", 0, pos) + 1 for pos in bad})
        return _ESCAPED.sub("\ufffd", text), lines
    if "\x00" in text:
        raise EpisodeValidationError("not a text file: it holds NUL bytes (a binary file?)",
                                     source=source, record=_WHOLE_FILE, field=_TOP)
    return text, []


def replace_lone_surrogates(text: str) -> tuple[str, list[int]]:
    r"""JSON text with every lone surrogate escape replaced by ``\ufffd``, and their lines.

    ``"\ud83d"`` is valid JSON (Python's ``json.dump`` writes it for a cut emoji) but its
    string cannot be encoded as UTF-8, so no Arrow table could hold it. An escape that is
    half of a surrogate pair, or an escaped backslash followed by ``ud83d``, is kept.

    Parameters
    ----------
    text : str
        JSON (or JSON Lines) text.

    Returns
    -------
    tuple of (str, list of int)
        The text (the same object when there was nothing to replace) and the 1-based line
        numbers that held a replaced escape.

    Examples
    --------
    >>> replace_lone_surrogates('["ok \\ud83d\\ude00", "cut \\ud83d", "\\\\ud83d"]')
    ('["ok \\ud83d\\ude00", "cut \\ufffd", "\\\\ud83d"]', [1])
    """
    if "\\ud" not in text and "\\uD" not in text:
        return text, []
    found: list[int] = []

    def fix(m: re.Match[str]) -> str:
        if len(m.group()) != 6:  # an escaped backslash or a whole pair
            return m.group()
        found.append(m.start())
        return "\\ufffd"

    fixed = _SURROGATE_ESCAPE.sub(fix, text)
    if not found:
        return text, []
    lines, line, last = [], 1, 0
    for pos in found:
        line += text.count("\n", last, pos)
        last = pos
        if not lines or lines[-1] != line:
            lines.append(line)
    return fixed, lines


def replaced_note(source: str, lines: Sequence[int], records: Sequence[str] = (), *,
                  what: str = "bytes that are not UTF-8") -> str:
    """The note saying that ``what`` on ``lines`` were replaced by U+FFFD in ``records``."""
    where = ", ".join(f"line {n}" for n in lines[:5]) + (" ..." if len(lines) > 5 else "")
    hit = (f"; record(s) affected: {', '.join(records[:5])}"
           + (f" and {len(records) - 5} more" if len(records) > 5 else "")) if records else ""
    return f"{source}: {what} were replaced by U+FFFD ({where}){hit}"


def note_replaced(loader: Any, source: str, lines: Sequence[int],
                  table: pa.Table | None = None, *, records: Sequence[str] = (),
                  what: str = "bytes that are not UTF-8") -> None:
    """Report text replaced by U+FFFD (by default bytes that were not UTF-8) with the records
    it hit (``records``, or the episodes of ``table`` whose text holds U+FFFD)."""
    if table is not None:
        records = _records_with_replacement(table)
    loader.report.notes.append(replaced_note(source, lines, records, what=what))


def _records_with_replacement(table: pa.Table) -> list[str]:
    """Episode ids whose text holds U+FFFD (after bytes that were not UTF-8 were replaced)."""
    out = []
    for row in table.to_pylist() if len(table) else []:
        if "\ufffd" in json.dumps(row, ensure_ascii=False, default=str):
            out.append(str(row["episode_id"]))
    return out


def _describe(obj: Any) -> str:
    if isinstance(obj, dict):
        keys = list(obj)[:6]
        return f"an object with keys {keys}" + (" ..." if len(obj) > 6 else "")
    if isinstance(obj, list):
        return f"a list of {len(obj)} item(s)"
    return f"{type(obj).__name__} {obj!r:.40}"
