"""Combine the outputs of judge runs split with ``shard`` (``accordkit judge merge``).

Shards of one job share nothing while they run; merging their verdict files and caches
gives what one run would have given. Two answers to the same request that disagree are a
conflict and are refused, never resolved silently: a row left with a transport error in one
file and a verdict in another keeps the verdict (the error only means "not answered yet").
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .._internal.files import atomic_write_bytes
from .cache import JudgeCache, entry_is_sound

__all__ = ["merge_verdicts", "merge_caches", "MergeConflictError", "REQUEST_COLUMNS"]

#: Columns that identify one judged item (one row of a verdict table).
REQUEST_COLUMNS = ("episode_id", "judge", "judge_model", "prompt_id", "prompt_version",
                   "item", "turn_idx")


class MergeConflictError(ValueError):
    """Two runs answered the same request differently; ``.conflicts`` lists them."""

    def __init__(self, conflicts: Sequence[str]) -> None:
        self.conflicts = list(conflicts)
        head = "\n".join(f"  - {c}" for c in self.conflicts[:10])
        more = f"\n  ... and {len(self.conflicts) - 10} more" if len(self.conflicts) > 10 else ""
        super().__init__(f"{len(self.conflicts)} conflicting verdict(s); nothing was "
                         f"merged:\n{head}{more}")


def merge_verdicts(tables: Iterable[pd.DataFrame | str | Path]) -> pd.DataFrame:
    """One verdict table from several (shards of one job, or re-runs).

    Parameters
    ----------
    tables : iterable of DataFrame or path
        Verdict tables or parquet files (:func:`accordkit.judges.write_verdicts`).

    Returns
    -------
    pandas.DataFrame
        Each item once, sorted by the request columns; an item answered in one table and
        left with an error in another keeps its answer.

    Raises
    ------
    MergeConflictError
        When an item has two different verdicts.
    """
    from .verdicts import VERDICT_COLUMNS, check_verdicts, read_verdicts

    frames = [read_verdicts(t) if isinstance(t, str | Path) else check_verdicts(t)
              for t in tables]
    if not frames:
        raise ValueError("nothing to merge: give at least one verdict table")
    allv = pd.concat(frames, ignore_index=True)
    keys = list(REQUEST_COLUMNS)
    answered = allv[allv["error"].isna()]
    # one number per request (a null turn, as in GSRT rows, is a value of its own)
    item = answered.groupby(keys, dropna=False, sort=True).ngroup()
    per_item = answered["verdict"].groupby(item).nunique(dropna=False)
    bad = per_item[per_item > 1]
    if len(bad):
        conflicts = []
        for number in bad.index:
            rows = answered[item == number]
            rec = rows.iloc[0]
            seen = sorted(rows["verdict"].astype(str).unique())
            turn = "none" if pd.isna(rec["turn_idx"]) else rec["turn_idx"]
            conflicts.append(f"episode {rec['episode_id']}, item {rec['item']}, turn "
                             f"{turn}, {rec['judge']} · {rec['judge_model']}: "
                             f"{' vs '.join(v[:60] for v in seen)}")
        raise MergeConflictError(conflicts)
    # answers first, then errors: drop_duplicates keeps an answer over an error
    order = allv.assign(_err=allv["error"].notna()).sort_values("_err", kind="stable")
    merged = order.drop_duplicates(keys, keep="first").drop(columns="_err")
    merged = merged.sort_values(keys, kind="stable", na_position="first")
    return check_verdicts(merged.reset_index(drop=True)[list(VERDICT_COLUMNS)])


def _read(path: Path) -> dict[str, Any] | None:
    """A cache entry file, or None when it cannot be trusted (see ``entry_is_sound``)."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return entry if entry_is_sound(entry, path.stem) else None


def merge_caches(sources: Sequence[str | Path], into: str | Path) -> dict[str, int]:
    """Copy the finished entries of several judge caches into one.

    An entry already present with the same reply is skipped; with a different reply it is a
    conflict, and then nothing is copied at all. Returns counts: ``copied``, ``present``.

    Raises
    ------
    MergeConflictError
        When two caches hold different replies under one key.
    """
    target = JudgeCache(into)
    plan: list[tuple[Path, Path]] = []
    conflicts: list[str] = []
    present = 0
    seen: dict[Path, tuple[Path, Any]] = {}
    for src in sources:
        cache = JudgeCache(src)
        for path in cache.entries():
            rel = path.relative_to(cache.root)
            entry = _read(path)
            if entry is None:
                continue
            dest = target.root / rel
            other = seen.get(rel)
            if other is None and dest.exists():
                other = (dest, _read(dest))
                if other[1] is None:       # an unreadable target entry is replaced
                    other = None
            if other is not None:
                if other[1].get("raw") != entry.get("raw"):
                    conflicts.append(f"{rel}: {other[0]} and {path} hold different replies")
                else:
                    present += 1
                continue
            seen[rel] = (path, entry)
            plan.append((path, dest))
    if conflicts:
        raise MergeConflictError(conflicts)
    for src_path, dest in plan:
        atomic_write_bytes(dest, src_path.read_bytes(), suffix=".json")
    return {"copied": len(plan), "present": present}
