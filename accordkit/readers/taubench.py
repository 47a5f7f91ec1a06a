"""τ-bench (v1) result files: a JSON list of run records (:mod:`accordkit.adapters.taubench`)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..adapters.taubench import looks_like_taubench, read_taubench
from ..schema import EpisodeValidationError

__all__ = ["TaubenchDocument"]


class TaubenchDocument:
    """A parsed τ-bench result list; ``metadata=`` of :func:`accordkit.load` fills what the
    file does not name."""

    name = "taubench"

    def sniff(self, obj: Any) -> bool:
        return looks_like_taubench(obj)

    def read(self, loader: Any, obj: Any, source: str, bad_lines: list[int]) -> pa.Table:
        from .json_file import note_replaced

        items = read_taubench(obj, source=source, errors="skip", metadata=loader.metadata)
        for err in (i for i in items if isinstance(i, EpisodeValidationError)):
            loader.problem(err)
        records = [i for i in items if isinstance(i, dict)]
        table = loader.records(records, [str(r["episode_id"]) for r in records], source)
        if bad_lines:
            note_replaced(loader, source, bad_lines, table)
        return table
