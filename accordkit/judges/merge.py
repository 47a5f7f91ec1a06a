"""Combine the outputs of judge runs split with ``shard`` (``accordkit judge merge``).

Shards of one job share nothing while they run; merging their verdict files and caches
gives what one run would have given. Two answers to the same request that disagree are a
conflict and are refused, never resolved silently: a row left with a transport error in one
file and a verdict in another keeps the verdict (the error only means "not answered yet").

Each verdict file says which job it is a shard of (:func:`accordkit.judges.verdicts.judge_job`:
judge, model, a digest of the job's requests, ``i/n``). A merge that would not give the
whole job — a shard missing, shards of different splits, a file of another judge, model or
set of episodes, a file that names no job — is refused unless asked for
(``allow_partial``), so that a table missing a quarter of its items never passes for a
complete one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .._internal.files import atomic_write_bytes
from .cache import JudgeCache, entry_is_sound
from .verdicts import (
    REQUEST_COLUMNS,
    MergeConflictError,
    check_verdicts,
    combine_verdicts,
    read_verdicts,
)

__all__ = ["merge_verdicts", "merge_caches", "MergeConflictError", "IncompleteMergeError",
           "REQUEST_COLUMNS"]


class IncompleteMergeError(ValueError):
    """The verdict files are not the whole of one judge job (a shard missing, shards of
    different splits, or files of other jobs); ``allow_partial=True`` merges them anyway."""


def merge_verdicts(tables: Iterable[pd.DataFrame | str | Path], *,
                   allow_partial: bool = False) -> pd.DataFrame:
    """One verdict table from the shards of one judge job (or from re-runs of it).

    Parameters
    ----------
    tables : iterable of DataFrame or path
        Verdict tables or parquet files (:func:`accordkit.judges.write_verdicts`).
    allow_partial : bool
        Merge even when the tables are not the whole of one job: a shard missing, shards
        of different splits (``1/2`` with ``1/3``), files of another judge, model or set
        of episodes, or a file that does not say which job it belongs to (written by hand
        or by an older accordkit). Without it, each of these is refused.

    Returns
    -------
    pandas.DataFrame
        Each item once, sorted by the request columns; an item answered in one table and
        left with an error in another keeps its answer. When the tables are one whole job,
        ``attrs["judge_job"]`` describes it (as a single run's table does).

    Raises
    ------
    IncompleteMergeError
        When the tables are not the whole of one job and ``allow_partial`` is false.
    MergeConflictError
        When an item has two different verdicts.
    """
    frames, names = [], []
    for i, t in enumerate(tables):
        if isinstance(t, str | Path):
            frames.append(read_verdicts(t))
            names.append(str(t))
        else:
            job = t.attrs.get("judge_job")
            frame = check_verdicts(t)
            if job is not None:
                frame.attrs["judge_job"] = job
            frames.append(frame)
            names.append(f"table {i + 1}")
    if not frames:
        raise ValueError("nothing to merge: give at least one verdict table")
    whole = _whole_job(frames, names)
    if isinstance(whole, str):
        if not allow_partial:
            raise IncompleteMergeError(f"{whole}; nothing was merged (--allow-partial / "
                                       "allow_partial=True merges them anyway)")
        whole = None
    merged = combine_verdicts(frames)
    if whole is not None:
        merged.attrs["judge_job"] = whole
    return merged


def _whole_job(frames: Sequence[pd.DataFrame], names: Sequence[str]) -> dict[str, Any] | str:
    """The job that ``frames`` make whole, or why they do not."""
    jobs = [f.attrs.get("judge_job") for f in frames]
    unnamed = [n for n, job in zip(names, jobs, strict=True) if not job]
    if unnamed:
        return (f"{unnamed[0]} does not say which judge job it belongs to (written by hand "
                "or by an older accordkit), so whether the merge is complete cannot be told")
    by_id = {(j["judge"], j["model"], j["requests_sha256"]): j for j in jobs}
    if len(by_id) > 1:
        seen = sorted(f"{j['judge']} · {j['model']} ({j['requests']} requests)"
                      for j in by_id.values())
        return f"the files belong to {len(by_id)} different judge jobs: {'; '.join(seen)}"
    job = jobs[0]
    shards = [j["shard"] for j in jobs]
    whole = {**job, "shard": None}
    if any(s is None for s in shards):       # an unsharded run holds every request
        return whole
    splits = sorted({n for _, n in shards})
    if len(splits) > 1:
        return ("the files are shards of different splits of the job ("
                + ", ".join(f"{i}/{n}" for i, n in sorted(map(tuple, shards))) + ")")
    n = splits[0]
    have = {i for i, _ in shards}
    missing = [i for i in range(1, n + 1) if i not in have]
    if missing:
        got = sum(next(j.get("shard_requests", 0) for j in jobs if j["shard"][0] == i)
                  for i in have)
        return (f"shard(s) {', '.join(f'{i}/{n}' for i in missing)} of the job are missing: "
                f"the files hold {got} of its {job['requests']} requests")
    return whole


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
