"""Canonical episodes as JSON: one episode object, a JSON array of them, or JSON Lines.

Records are checked by the loader against :data:`~accordkit.schema.EPISODE_FEATURES` and
the rules of :data:`~accordkit.schema.RULES`, one problem per record, named by its position
(``item 2``, ``line 7``) and its ``episode_id`` when it has one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..schema import EpisodeValidationError

__all__ = ["CanonicalDocument", "is_canonical", "looks_like_jsonl", "note_unmatched",
           "read_canonical_text", "read_jsonl"]

_TOP = "(top level)"
_WHOLE_FILE = "(whole file)"


def is_canonical(obj: Any) -> bool:
    """Whether ``obj`` is an episode object (it has ``episode_id`` and ``benchmark``)."""
    return isinstance(obj, dict) and "episode_id" in obj and "benchmark" in obj


class CanonicalDocument:
    """A parsed episode object, or a list holding at least one."""

    name = "canonical"

    def sniff(self, obj: Any) -> bool:
        return is_canonical(obj) or isinstance(obj, list) and any(is_canonical(o) for o in obj)

    def read(self, loader: Any, obj: Any, source: str, bad_lines: list[int]) -> pa.Table:
        from .json_file import note_replaced

        table = _read_items(loader, _document_items(obj), source)
        if bad_lines:
            note_replaced(loader, source, bad_lines, table)
        return table


def _document_items(obj: Any) -> Iterator[tuple[str, Any]]:
    """The records of a parsed JSON document: one object (``item 0``) or a list of them."""
    return ((f"item {i}", o) for i, o in enumerate(obj if isinstance(obj, list) else [obj]))


def _read_items(loader: Any, items: Iterable[tuple[str, Any]], source: str, *,
                parts: tuple[str, str] | None = None, origin: str | None = None) -> pa.Table:
    """Records ``(position, object)`` of a canonical text file -> the loader's checked rows.

    ``parts`` = (config, split) of a dataset folder's file sets both columns of every record
    (as for parquet files there), ``origin`` (the folder) fills a missing ``source``. Without
    ``parts``, a file none of whose records is of the ``config=`` / ``split=`` asked for
    gets a note (:func:`note_unmatched`) rather than giving 0 rows silently.
    """
    seen: set[tuple[Any, Any]] = set()

    def placed() -> Iterator[tuple[str, Any]]:
        for where, obj in items:
            if isinstance(obj, dict):
                if parts is not None:
                    obj = {**obj, "config": parts[0], "split": parts[1]}
                    if origin is not None and obj.get("source") is None:
                        obj["source"] = origin
                else:
                    seen.add((_hashable(obj.get("config")), _hashable(obj.get("split"))))
            yield where, obj

    table = loader.canonical(placed(), source)
    if parts is None:
        note_unmatched(loader, source, seen)
    return table


def _hashable(value: Any) -> Any:
    return value if value is None or isinstance(value, str | int | float | bool) else repr(value)


def note_unmatched(loader: Any, source: str, seen: Iterable[tuple[Any, Any]]) -> None:
    """Note that no record of a canonical file is of the ``config=`` / ``split=`` asked for.

    ``seen`` holds the (config, split) of the file's records; an empty file, or a load that
    asks for no config or split, gets no note. The note (a ``UserWarning`` of
    :func:`accordkit.load`) names the configs and splits the file holds, so that a
    misspelled split does not pass for a file without episodes.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from accordkit.load import LoadReport
    >>> loader = SimpleNamespace(config=None, split="test", report=LoadReport())
    >>> note_unmatched(loader, "eps.jsonl", {("c1", "train"), (None, None)})
    >>> print(loader.report.notes[0])
    eps.jsonl: no record has split 'test', so none was loaded (the file holds config None, split None; config 'c1', split 'train')
    """
    want = {"config": loader.config, "split": loader.split}
    if all(v is None for v in want.values()):
        return
    seen = set(seen)
    if not seen or any((want["config"] is None or c == want["config"])
                       and (want["split"] is None or s == want["split"]) for c, s in seen):
        return
    asked = " and ".join(f"{k} {v!r}" for k, v in want.items() if v is not None)
    held = sorted(seen, key=lambda cs: (str(cs[0]), str(cs[1])))
    shown = "; ".join(f"config {c!r}, split {s!r}" for c, s in held[:5])
    more = f" and {len(held) - 5} more" if len(held) > 5 else ""
    loader.report.notes.append(f"{source}: no record has {asked}, so none was loaded "
                               f"(the file holds {shown}{more})")


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


def read_jsonl(loader: Any, text: str, source: str, *, bad_lines: Sequence[int] = (),
               parts: tuple[str, str] | None = None, origin: str | None = None) -> pa.Table:
    """The episodes of a JSON Lines text; a line that is not JSON is a problem of its own.

    ``parts`` and ``origin``: as for a dataset folder's files (see :func:`_read_items`).
    """
    from .json_file import note_replaced

    # Records are split on "\n" only: U+2028, U+0085 and the like are valid inside JSON
    # strings and str.splitlines() would cut a record there.
    bad = set(bad_lines)
    replaced: list[str] = []

    def items() -> Iterator[tuple[str, Any]]:
        for n, line in enumerate(text.split("\n"), start=1):
            if not line.strip():
                continue
            if n in bad:
                replaced.append(f"line {n}")
            try:
                yield f"line {n}", json.loads(line)
            except (json.JSONDecodeError, RecursionError) as exc:
                reason = (f"invalid JSON ({exc.msg}, column {exc.colno})"
                          if isinstance(exc, json.JSONDecodeError) else "JSON nested too deeply")
                loader.problem(EpisodeValidationError(reason, source=source,
                                                      record=f"line {n}", field=_TOP))
            except ValueError as exc:  # e.g. an integer of more than 4300 digits
                loader.problem(EpisodeValidationError(f"invalid JSON ({exc})", source=source,
                                                      record=f"line {n}", field=_TOP))
    table = _read_items(loader, items(), source, parts=parts, origin=origin)
    if bad:
        note_replaced(loader, source, sorted(bad), records=replaced)
    return table


def read_canonical_text(loader: Any, path: Path, *, parts: tuple[str, str],
                        origin: str) -> pa.Table:
    """A ``.json`` / ``.jsonl`` data file of a dataset folder: its canonical episodes.

    Read as the ``json`` reader reads text (bytes that are not UTF-8 and lone surrogate
    escapes replaced and noted): a ``.jsonl`` file line by line, a ``.json`` file as one
    episode object or a list of them (or as JSON Lines when it is not one document). Every
    record gets the ``config`` and ``split`` of ``parts``, as a parquet file of the folder
    does; ``origin`` (the folder) fills a missing ``source``.
    """
    from .json_file import (
        JSON_LINES,
        LONE_SURROGATES,
        decode_text,
        note_replaced,
        parse_text,
        replace_lone_surrogates,
    )

    source = str(path)
    text, bad_lines = decode_text(path.read_bytes(), source=source)
    text, lone_lines = replace_lone_surrogates(text)
    if not text.strip():
        raise EpisodeValidationError("empty file", source=source, record=_WHOLE_FILE,
                                     field=_TOP)
    table = None
    if path.suffix.lower() != ".jsonl":
        try:
            obj = parse_text(text, source=source)
        except ValueError as exc:  # e.g. an integer of more than 4300 digits
            if isinstance(exc, EpisodeValidationError):
                raise
            raise EpisodeValidationError(f"invalid JSON ({exc})", source=source,
                                         record=_WHOLE_FILE, field=_TOP) from None
        if obj is not JSON_LINES:
            if not isinstance(obj, dict | list):
                raise EpisodeValidationError(
                    f"expected episode objects, found {type(obj).__name__}", source=source,
                    record=_WHOLE_FILE, field=_TOP)
            table = _read_items(loader, _document_items(obj), source, parts=parts,
                                origin=origin)
            if bad_lines:
                note_replaced(loader, source, bad_lines, table)
    if table is None:
        table = read_jsonl(loader, text, source, bad_lines=bad_lines, parts=parts,
                           origin=origin)
    if lone_lines:
        note_replaced(loader, source, lone_lines, table, what=LONE_SURROGATES)
    return table
