"""Writing a file so that readers see all of it or none of it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write_bytes"]


def atomic_write_bytes(path: str | Path, data: bytes, *, suffix: str = "") -> Path:
    """Write ``data`` to ``path`` through a temp file in the same folder, flushed to disk and
    renamed into place; an interrupted write leaves no partial file (only a ``.tmp-*``
    file that is removed on failure, or left by a killed process for cleanup)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
