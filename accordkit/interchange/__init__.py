"""Episodes and their scores in the field's interchange formats (Every Eval Ever).

:func:`write_eee` scores episodes, computes accordkit's headline metrics with their clustered
intervals and writes them as EEE aggregate records with instance sidecars
(``ak.save(..., format="eee")``, ``accordkit export --format eee``; docs/formats.md).
"""

from __future__ import annotations

from .eee import eee_records, write_eee

__all__ = ["write_eee", "eee_records"]
