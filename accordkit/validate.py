"""Validation of canonical episode tables, and the report of skipped records.

Records that come from canonical files (parquet, JSONL, hub datasets) are checked here in
bulk with Arrow compute, so that a 100,000-episode dataset is validated in well under a
second; raw result files are checked record by record by their adapter.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .schema import BENCHMARKS, DYNAMICS, EPISODE_FEATURES, ROLES, EpisodeValidationError

__all__ = [
    "SkippedRecord",
    "SkippedRecordsWarning",
    "DuplicateEpisodesWarning",
    "check_columns",
    "table_problems",
    "warn_skipped",
]

_REQUIRED = ("benchmark", "domain", "scenario_id", "task_id", "episode_id", "source")


@dataclass(frozen=True)
class SkippedRecord:
    """One record left out by ``errors="skip"``: where it was and why."""

    source: str | None
    record: str | None
    field: str | None
    reason: str

    @classmethod
    def from_error(cls, exc: EpisodeValidationError) -> SkippedRecord:
        return cls(exc.source, exc.record, exc.field, exc.reason)

    def __str__(self) -> str:
        return str(EpisodeValidationError(self.reason, source=self.source, record=self.record,
                                          field=self.field))


class SkippedRecordsWarning(UserWarning):
    """Records were skipped by ``errors="skip"``; ``.skipped`` lists each with its reason."""

    def __init__(self, skipped: list[SkippedRecord]) -> None:
        self.skipped = list(skipped)
        lines = "\n".join(f"  - {s}" for s in self.skipped)
        super().__init__(f"skipped {len(self.skipped)} bad record(s):\n{lines}")


class DuplicateEpisodesWarning(UserWarning):
    """The same episode was loaded more than once (e.g. two checkpoints of one run)."""


def warn_skipped(skipped: list[SkippedRecord], *, stacklevel: int = 3) -> None:
    """Emit one :class:`SkippedRecordsWarning` listing every skipped record (if any)."""
    if skipped:
        warnings.warn(SkippedRecordsWarning(skipped), stacklevel=stacklevel)


def check_columns(names: list[str], *, source: str) -> None:
    """Raise when a canonical table lacks a column or has one the schema does not know."""
    missing = [c for c in EPISODE_FEATURES if c not in names]
    extra = [c for c in names if c not in EPISODE_FEATURES]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing column(s) {missing}")
        if extra:
            parts.append(f"unknown column(s) {extra}")
        raise EpisodeValidationError(
            "not a canonical episode table: " + "; ".join(parts)
            + " (see docs/schema.md)", source=source, field=", ".join(missing + extra))


def _row_ids(table: pa.Table, rows: np.ndarray) -> list[str]:
    ids = table.column("episode_id").take(pa.array(rows, type=pa.int64())).to_pylist()
    return [str(x) if x is not None else f"row {r}" for x, r in zip(ids, rows, strict=True)]


def _list_problem(table: pa.Table, column: str, child: str, bad_mask_fn, reason_fn,
                  field_fmt: str) -> list[tuple[int, EpisodeValidationError]]:
    lists = table.column(column).combine_chunks()
    flat = pc.list_flatten(lists)
    if len(flat) == 0:
        return []
    parents = pc.list_parent_indices(lists).to_numpy()
    values = flat.field(child)
    bad = bad_mask_fn(values)
    bad_idx = np.flatnonzero(bad)
    if not len(bad_idx):
        return []
    offsets = lists.offsets.to_numpy()
    out = []
    seen: set[int] = set()
    for j in bad_idx:
        row = int(parents[j])
        if row in seen:
            continue
        seen.add(row)
        pos = int(j - offsets[row])
        out.append((row, values[int(j)].as_py(), pos))
    ids = _row_ids(table, np.array([r for r, _, _ in out]))
    return [
        (row, EpisodeValidationError(reason_fn(value), record=rid,
                                     field=field_fmt.format(pos)))
        for (row, value, pos), rid in zip(out, ids, strict=True)
    ]


def table_problems(table: pa.Table, *, source: str) -> list[tuple[int, EpisodeValidationError]]:
    """Find rows of a canonical table that break the schema's rules.

    Returns
    -------
    list of (row index, error)
        At most one error per row (the first found), in row order.
    """
    found: dict[int, EpisodeValidationError] = {}

    def add(rows: np.ndarray, reason, field: str) -> None:
        rows = np.asarray([r for r in rows if int(r) not in found], dtype=np.int64)
        if not len(rows):
            return
        for r, rid in zip(rows, _row_ids(table, rows), strict=True):
            msg = reason(int(r)) if callable(reason) else reason
            found[int(r)] = EpisodeValidationError(msg, record=rid, field=field)

    for name in _REQUIRED:
        col = table.column(name)
        bad = pc.or_kleene(pc.is_null(col), pc.equal(pc.utf8_length(col), 0))
        add(np.flatnonzero(pc.fill_null(bad, True).to_numpy(zero_copy_only=False)),
            "missing required value", name)
    bench = table.column("benchmark")
    bad = pc.invert(pc.is_in(bench, value_set=pa.array(BENCHMARKS)))
    add(np.flatnonzero(pc.fill_null(bad, False).to_numpy(zero_copy_only=False)),
        lambda r: f"unknown benchmark {bench[r].as_py()!r}; expected one of {BENCHMARKS}",
        "benchmark")
    msgs = table.column("messages")
    n_msgs = pc.fill_null(pc.list_value_length(msgs), 0)
    add(np.flatnonzero(pc.equal(n_msgs, 0).to_numpy(zero_copy_only=False)),
        "empty conversation: no messages", "messages")
    problems = _list_problem(
        table, "messages", "role",
        lambda v: pc.fill_null(pc.invert(pc.is_in(v, value_set=pa.array(ROLES))), True)
        .to_numpy(zero_copy_only=False),
        lambda v: f"unknown role {v!r}; expected one of {ROLES}", "messages[{}].role")
    problems += _list_problem(
        table, "messages", "turn_idx",
        lambda v: pc.is_null(v).to_numpy(zero_copy_only=False),
        lambda v: "missing message position (turn_idx)", "messages[{}].turn_idx")
    problems += _list_problem(
        table, "preferences", "dynamic",
        lambda v: pc.fill_null(pc.invert(pc.is_in(v, value_set=pa.array(DYNAMICS))), True)
        .to_numpy(zero_copy_only=False),
        lambda v: f"unknown dynamic {v!r}; expected one of {DYNAMICS}",
        "preferences[{}].dynamic")
    for row, err in problems:
        found.setdefault(row, err)
    out = []
    for row in sorted(found):
        err = found[row]
        err = EpisodeValidationError(err.reason, source=source, record=err.record, field=err.field)
        out.append((row, err))
    return out
