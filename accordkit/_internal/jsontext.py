"""JSON text -> Python values, exactly as ``json.loads`` gives them, several times faster.

The canonical tables keep JSON text (tool-call arguments, expected parameters, reward
info) that the metrics parse again, often thousands of small texts per run. ``msgspec``'s
untyped decoder builds the same values as ``json.loads`` (same dict key order, last
duplicate key wins, integers of any size, the same floats); it refuses what ``json`` reads
beyond the standard (``NaN``, ``Infinity``, numbers out of a double's range, lone surrogate
escapes), and such text is read by ``json.loads``, so the result never differs, and an
error is always ``json``'s own (:class:`json.JSONDecodeError`, with its line and column).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

__all__ = ["loads"]

_decode = msgspec.json.Decoder().decode


def loads(text: str | bytes) -> Any:
    """Parse JSON text as :func:`json.loads` does.

    Examples
    --------
    >>> loads('{"amount": 12.5, "tags": ["a"]}')
    {'amount': 12.5, 'tags': ['a']}
    >>> loads("NaN")  # beyond the standard: json's reading
    nan
    """
    try:
        return _decode(text)
    except msgspec.DecodeError:
        return json.loads(text)
