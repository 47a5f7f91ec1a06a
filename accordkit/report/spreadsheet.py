"""Cells a spreadsheet would run as formulas: how the report's CSV files make them text,
and how the report reads its own CSV files back."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["FORMULA_STARTS", "unsafe_cell"]

#: How a cell a spreadsheet would read as a formula starts.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|nan)",
                           re.IGNORECASE)


def _safe_cell(value: Any) -> Any:
    # text already starting with ' is prefixed too, so that reading back is one rule
    # (:func:`unsafe_cell`) and a spreadsheet shows the text as it was
    if isinstance(value, str) and (value.startswith("'") or (
            value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value))):
        return "'" + value
    return value


def unsafe_cell(value: Any) -> Any:
    """The text :func:`spreadsheet_safe` was given, from a cell it wrote.

    Examples
    --------
    >>> [unsafe_cell(_safe_cell(v)) for v in ["=1+1", "'quoted", "-0.5", "gpt", 3]]
    ['=1+1', "'quoted", '-0.5', 'gpt', 3]
    """
    if isinstance(value, str) and value.startswith("'"):
        return value[1:]
    return value
