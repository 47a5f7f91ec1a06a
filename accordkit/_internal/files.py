"""Files: writing one so that readers see all of it or none of it, and its digest."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write_bytes", "file_sha256", "stream_sha256"]


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


def stream_sha256(fh) -> str:
    """sha256 hex digest of what a binary file object holds, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    for block in iter(lambda: fh.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


def file_sha256(path: str | Path) -> str:
    """sha256 hex digest of a file's bytes."""
    with Path(path).open("rb") as fh:
        return stream_sha256(fh)
