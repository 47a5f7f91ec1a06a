"""Any other folder: every ``.json``, ``.jsonl`` and ``.parquet`` file below it (hidden ones
left out), in name order, each read as a file on its own (one bad file is one problem)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from ..schema import EpisodeValidationError

__all__ = ["Folder"]

_SUFFIXES = (".json", ".jsonl", ".parquet")


class Folder:
    """A folder of result or episode files."""

    name = "folder"

    def sniff(self, path: Path) -> bool:
        return path.is_dir()

    def read(self, loader: Any, path: Path) -> pa.Table:
        files = sorted(p for p in path.rglob("*")
                       if p.is_file() and p.suffix.lower() in _SUFFIXES
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
        if not files:
            raise EpisodeValidationError("folder holds no .json, .jsonl or .parquet files",
                                         source=str(path), record="(whole file)",
                                         field="(folder)")
        return loader.concat([loader.guarded(str(p), lambda p=p: loader.file(p))
                              for p in files])
