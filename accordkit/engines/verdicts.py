"""Stored judge verdicts as an engine's workers read them: once per process while the files
are unchanged."""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

__all__ = ["verdict_table"]


def verdict_table(paths: Sequence[str]) -> Any:
    """Stored judge verdicts, read once per worker process while the files are unchanged."""
    if not paths:
        return None
    stamps = []
    for p in paths:
        try:
            st = os.stat(p)
            stamps.append((str(p), st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError:
            stamps.append((str(p), None, None, None))    # read_verdicts names the problem
    return _read_verdicts(tuple(stamps))


@functools.lru_cache(maxsize=1)
def _read_verdicts(stamps: tuple[tuple[Any, ...], ...]) -> Any:
    from ..judges.verdicts import read_verdicts

    return read_verdicts([s[0] for s in stamps])
