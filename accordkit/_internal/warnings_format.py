"""Warnings as a reader of a terminal or a report page wants them: the category and the
message, without the file path, line number and source line of the ``warn`` call."""

from __future__ import annotations

import warnings

__all__ = ["plain_warnings"]


def _plain(message: Warning | str, category: type[Warning], filename: str, lineno: int,
           line: str | None = None) -> str:
    # a category with a one-line headline (the statistics' BCaFallbackWarning) shows it
    text = getattr(category, "headline", None) if isinstance(category, type) else None
    return f"{category.__name__}: {text if isinstance(text, str) else message}\n"


def plain_warnings() -> None:
    """Show every warning of this process as ``Category: message`` (one per line group);
    a category with a ``headline`` attribute as ``Category: headline`` (one line).

    Examples
    --------
    >>> _plain(UserWarning("k is capped at 1"), UserWarning, "/x.py", 3)
    'UserWarning: k is capped at 1\\n'
    """
    warnings.formatwarning = _plain
