"""Canonical episodes as JSON: one episode object, a JSON array of them, or JSON Lines.

Records are checked by the loader against :data:`~accordkit.schema.EPISODE_FEATURES` and
the rules of :data:`~accordkit.schema.RULES`, one problem per record, named by its position
(``item 2``, ``line 7``) and its ``episode_id`` when it has one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from ..schema import EpisodeValidationError

__all__ = ["CanonicalDocument", "is_canonical", "looks_like_jsonl", "read_jsonl"]

_TOP = "(top level)"


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

        items = ((f"item {i}", o) for i, o in enumerate([obj] if is_canonical(obj) else obj))
        table = loader.canonical(items, source)
        if bad_lines:
            note_replaced(loader, source, bad_lines, table)
        return table


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


def read_jsonl(loader: Any, text: str, source: str, *,
               bad_lines: Sequence[int] = ()) -> pa.Table:
    """The episodes of a JSON Lines text; a line that is not JSON is a problem of its own."""
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
    table = loader.canonical(items(), source)
    if bad:
        note_replaced(loader, source, sorted(bad), records=replaced)
    return table
