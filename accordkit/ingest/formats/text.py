"""Text of JSON and JSON Lines files: decoded as UTF-8, parsed, and what was replaced on the way.

A few bytes that are not UTF-8 are replaced by U+FFFD and noted with the records they hit,
instead of losing the whole file; lone UTF-16 surrogate escapes (a cut emoji) likewise. NUL
bytes or many bad bytes mean a binary file, which is an error of the whole file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from ...schema import EpisodeValidationError
from ..check import TOP, WHOLE_FILE
from ..context import ReadContext

__all__ = ["decode_text", "parse_text", "JSON_LINES", "replace_lone_surrogates", "note_replaced",
           "replaced_note", "LONE_SURROGATES", "looks_like_jsonl", "is_utf8", "plain_text_file",
           "jsonl_file"]

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
        raise EpisodeValidationError("empty file", source=source, record=WHOLE_FILE,
                                     field=TOP)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if looks_like_jsonl(text):
            return JSON_LINES
        raise EpisodeValidationError(
            f"invalid or truncated JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            source=source, record=WHOLE_FILE, field=TOP) from None
    except RecursionError:
        raise EpisodeValidationError("JSON nested too deeply", source=source,
                                     record=WHOLE_FILE, field=TOP) from None


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
                source=source, record=WHOLE_FILE, field=TOP) from None
        lines = sorted({text.count("\n", 0, pos) + 1 for pos in bad})
        return _ESCAPED.sub("\ufffd", text), lines
    if "\x00" in text:
        raise EpisodeValidationError("not a text file: it holds NUL bytes (a binary file?)",
                                     source=source, record=WHOLE_FILE, field=TOP)
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


def note_replaced(ctx: ReadContext, source: str, lines: Sequence[int],
                  table: pa.Table | None = None, *, records: Sequence[str] = (),
                  what: str = "bytes that are not UTF-8") -> None:
    """Report text replaced by U+FFFD (by default bytes that were not UTF-8) with the records
    it hit (``records``, or the episodes of ``table`` whose text holds U+FFFD)."""
    if table is not None:
        records = _records_with_replacement(table)
    ctx.note(replaced_note(source, lines, records, what=what))


def _records_with_replacement(table: pa.Table) -> list[str]:
    """Episode ids whose text holds U+FFFD (after bytes that were not UTF-8 were replaced)."""
    out = []
    for row in table.to_pylist() if len(table) else []:
        if "\ufffd" in json.dumps(row, ensure_ascii=False, default=str):
            out.append(str(row["episode_id"]))
    return out


def looks_like_jsonl(text: str) -> bool:
    """Several lines, one of them a whole JSON object starting in the first column.

    Every line is tried, so a JSONL file whose first lines are broken is still read as
    JSONL (with those lines reported); lines are split on "\\n" only, as :func:`read_jsonl`
    does. Indented lines are left out: they are the inside of a pretty-printed document.
    """
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < 2:
        return False
    for line in lines:
        if not line.startswith("{"):
            continue
        try:
            if isinstance(json.loads(line), dict):
                return True
        except (json.JSONDecodeError, RecursionError):
            continue
    return False


def is_utf8(data: bytes | memoryview, *, chunk: int = 1 << 20) -> bool:
    """Whether ``data`` is valid UTF-8, checked a chunk at a time (no full-size copy)."""
    import codecs

    if isinstance(data, bytes) and data.isascii():
        return True
    view = memoryview(data)
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for start in range(0, view.nbytes, chunk):
            decoder.decode(view[start:start + chunk])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def plain_text_file(fh: Any, *, chunk: int = 8 << 20) -> bool:
    """Whether an open binary file holds plain UTF-8 text: valid UTF-8, no NUL byte, no
    escaped UTF-16 surrogate (nothing :func:`decode_text` or :func:`replace_lone_surrogates`
    would replace or refuse), read a chunk at a time. Such a file can be read a record at a
    time; any other is read whole, where what is wrong with it is noted or reported."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    tail = b""
    try:
        while block := fh.read(chunk):
            if b"\x00" in block:
                return False
            window = tail + block
            if b"\\ud" in window or b"\\uD" in window:
                return False
            tail = block[-5:]
            decoder.decode(block)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def jsonl_file(fh: Any) -> bool:
    """Whether an open binary file is JSON Lines by its first lines: a whole JSON object on
    the first, and another line that is not blank after it."""
    import json

    first = fh.readline()
    second = fh.readline()
    while second and not second.strip():
        second = fh.readline()
    if not second or first.lstrip(b"\xef\xbb\xbf").lstrip()[:1] != b"{":
        return False
    try:
        return isinstance(json.loads(first.decode("utf-8-sig")), dict)
    except (ValueError, RecursionError):
        return False
