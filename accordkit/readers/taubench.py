"""τ-bench (v1) result files: a JSON list of run records (:mod:`accordkit.adapters.taubench`).

A τ-bench list is recognised by its content. An empty list ``[]`` has none, so it is claimed
(:meth:`TaubenchDocument.claims_empty`) only when its file name follows τ-bench ``run.py``'s
pattern, which is what ``run.py`` writes for an empty task range; it loads as 0 episodes, with
a note.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..adapters.taubench import is_run_py_name, looks_like_taubench, read_taubench
from ..schema import EpisodeValidationError

__all__ = ["TaubenchDocument"]


class TaubenchDocument:
    """A parsed τ-bench result list; ``metadata=`` of :func:`accordkit.load` fills what the
    file does not name."""

    name = "taubench"

    def sniff(self, obj: Any) -> bool:
        return looks_like_taubench(obj)

    def claims_empty(self, source: str) -> bool:
        """Whether an empty JSON list read from ``source`` is a τ-bench run (by its name)."""
        return is_run_py_name(source)

    def read(self, loader: Any, obj: Any, source: str, bad_lines: list[int]) -> pa.Table:
        from .json_file import note_replaced

        items = read_taubench(obj, source=source, errors="skip", metadata=loader.metadata)
        for err in (i for i in items if isinstance(i, EpisodeValidationError)):
            loader.problem(err)
        records = [i for i in items if isinstance(i, dict)]
        table = loader.records(records, [str(r["episode_id"]) for r in records], source)
        if not obj:
            loader.report.notes.append(
                f"{source}: an empty τ-bench result list (run.py writes [] for an empty task "
                "range or a run stopped before its first task ended): 0 episodes")
        if bad_lines:
            note_replaced(loader, source, bad_lines, table)
        return table
