"""Validation of canonical episodes, and the report of skipped records.

Two checks, for the two ways canonical episodes arrive:

* :func:`record_problem` walks one record (from JSON / JSONL, or built by an adapter) against
  :data:`~accordkit.schema.EPISODE_FEATURES` and names the first field whose value has the
  wrong type. Arrow itself is too lenient for this: it truncates ``1.5`` to an ``int32``,
  reads the text ``"abc"`` as the list ``["a", "b", "c"]`` and drops unknown struct keys.
* :func:`table_problems` checks a whole canonical Arrow table (parquet, hub datasets) in bulk
  with Arrow compute, so that a 100,000-episode dataset is validated in well under a second;
  :func:`check_table_types` first makes sure its column types can be cast losslessly.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._arrow import canonical_schema
from .schema import (
    _REQUIRED_STR,
    BENCHMARKS,
    DYNAMICS,
    EPISODE_FEATURES,
    JSON_OBJECT_FIELDS,
    KINDS,
    ROLES,
    EpisodeValidationError,
    json_object_problem,
    validate_episode,
)

__all__ = [
    "SkippedRecord",
    "SkippedRecordsWarning",
    "DuplicateEpisodesWarning",
    "check_columns",
    "check_table_types",
    "record_problem",
    "table_problems",
    "warn_skipped",
]

_REQUIRED = _REQUIRED_STR  # the ids every record must carry (defined in schema.py)
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class SkippedRecord:
    """One record (or whole file) left out by ``errors="skip"``: where it was and why.

    ``record`` is the simulation / episode id, a position (``line 3``, ``item 2``,
    ``row 5``, ``simulations[4]``) or ``(whole file)``; ``field`` the field path.
    """

    source: str | None
    record: str | None
    field: str | None
    reason: str

    @classmethod
    def from_error(cls, exc: EpisodeValidationError) -> SkippedRecord:
        return cls(exc.source, exc.record or "(whole file)", exc.field, exc.reason)

    def __str__(self) -> str:
        return str(EpisodeValidationError(self.reason, source=self.source, record=self.record,
                                          field=self.field))


class SkippedRecordsWarning(UserWarning):
    """Records were skipped by ``errors="skip"``; ``.skipped`` lists each with its reason."""

    def __init__(self, skipped: Sequence[SkippedRecord]) -> None:
        self.skipped = list(skipped)
        lines = "\n".join(f"  - {s}" for s in self.skipped)
        super().__init__(f"skipped {len(self.skipped)} bad record(s):\n{lines}")


class DuplicateEpisodesWarning(UserWarning):
    """The same episode was loaded more than once (e.g. two checkpoints of one run).

    ``.duplicates`` maps each such ``episode_id`` to the sources it was found in (the first
    one is the copy that was kept).
    """

    def __init__(self, duplicates: Mapping[str, Sequence[str]] | str) -> None:
        if isinstance(duplicates, str):  # plain message, as for any warning
            self.duplicates: dict[str, list[str]] = {}
            super().__init__(duplicates)
            return
        self.duplicates = {eid: list(srcs) for eid, srcs in duplicates.items()}
        groups: dict[tuple[str, ...], list[str]] = {}
        for eid, srcs in self.duplicates.items():
            groups.setdefault(tuple(dict.fromkeys(srcs)), []).append(eid)
        parts = []
        for srcs, eids in groups.items():
            shown = ", ".join(eids[:3]) + (f" and {len(eids) - 3} more" if len(eids) > 3 else "")
            parts.append(f"{len(eids)} in {' and '.join(srcs)} ({shown})")
        super().__init__(f"{len(self.duplicates)} episode(s) loaded more than once with identical "
                         "content were kept once: " + "; ".join(parts))


def warn_skipped(skipped: Sequence[SkippedRecord], *, stacklevel: int = 3) -> None:
    """Emit one :class:`SkippedRecordsWarning` listing every skipped record (if any)."""
    if skipped:
        warnings.warn(SkippedRecordsWarning(skipped), stacklevel=stacklevel)


# --------------------------------------------------------------------------- records

_Check = Callable[[Any, str], "tuple[str, str] | None"]


def _value_check(dtype: str) -> _Check:
    def check_str(v: Any, where: str) -> tuple[str, str] | None:
        if v is None or isinstance(v, str):
            return None
        return where, f"expected text, got {type(v).__name__} {v!r:.60}"

    def check_bool(v: Any, where: str) -> tuple[str, str] | None:
        if v is None or isinstance(v, bool):
            return None
        return where, f"expected true or false, got {type(v).__name__} {v!r:.60}"

    def check_int(lo: int, hi: int, what: str) -> _Check:
        def check(v: Any, where: str) -> tuple[str, str] | None:
            if v is None:
                return None
            if isinstance(v, bool) or not isinstance(v, int):
                return where, f"expected an integer, got {type(v).__name__} {v!r:.60}"
            if not lo <= v <= hi:
                return where, f"integer {v} does not fit in {what}"
            return None
        return check

    def check_float(v: Any, where: str) -> tuple[str, str] | None:
        if v is None or isinstance(v, int) and not isinstance(v, bool):
            return None
        if isinstance(v, float):
            return None if math.isfinite(v) else (where, f"expected a finite number, got {v!r}")
        return where, f"expected a number, got {type(v).__name__} {v!r:.60}"

    checks: dict[str, _Check] = {
        "string": check_str, "large_string": check_str, "bool": check_bool,
        "int32": check_int(*_INT32, "int32"), "int64": check_int(*_INT64, "int64"),
        "float64": check_float, "float32": check_float,
    }
    if dtype not in checks:  # pragma: no cover - the schema uses only the types above
        raise TypeError(f"no check for dtype {dtype}")
    return checks[dtype]


def _struct_check(fields: Mapping[str, Any]) -> _Check:
    children = {name: _compile(feature) for name, feature in fields.items()}

    def check(v: Any, where: str) -> tuple[str, str] | None:
        if v is None:
            return None
        if not isinstance(v, Mapping):
            return where, f"expected an object, got {type(v).__name__} {v!r:.60}"
        for key in v:
            if key not in children:
                return (f"{where}.{key}" if where else str(key),
                        f"unknown field {key!r}; expected one of {sorted(children)}")
        for name, child in children.items():
            found = child(v.get(name), f"{where}.{name}" if where else name)
            if found:
                return found
        return None
    return check


def _list_check(feature: Any) -> _Check:
    child = _compile(feature)

    def check(v: Any, where: str) -> tuple[str, str] | None:
        if v is None:
            return None
        if not isinstance(v, list | tuple):
            return where, f"expected a list, got {type(v).__name__} {v!r:.60}"
        for i, item in enumerate(v):
            found = child(item, f"{where}[{i}]")
            if found:
                return found
        return None
    return check


def _compile(feature: Any) -> _Check:
    if isinstance(feature, datasets.Value):
        return _value_check(feature.dtype)
    if isinstance(feature, datasets.List | datasets.LargeList):
        return _list_check(feature.feature)
    if isinstance(feature, Mapping):
        return _struct_check(feature)
    raise TypeError(f"no check for feature {feature!r}")  # pragma: no cover


_RECORD_CHECK = _struct_check(EPISODE_FEATURES)


def check_converted(rec: Any, fail: Callable[[str, str], EpisodeValidationError], *,
                    whole: str, messages_typed: bool = False) -> None:
    """Check a record an adapter built: schema types (:func:`record_problem`), then the
    episode rules (:func:`~accordkit.schema.validate_episode`).

    ``fail(reason, field)`` makes the error naming the adapter's file and record; ``whole``
    is the field named when a rule concerns the record as a whole. ``messages_typed`` says
    the messages were built from values a typed decoder already checked
    (:mod:`accordkit.adapters.tau2_format`), so their types are not walked again; the
    episode rules still see them.
    """
    problem = record_problem(dict(rec, messages=None) if messages_typed else rec)
    if problem:
        raise fail(problem[1], problem[0])
    try:
        validate_episode(rec)
    except EpisodeValidationError as exc:
        raise fail(exc.reason, exc.field or whole) from None


def record_problem(rec: Any) -> tuple[str, str] | None:
    """The first field of ``rec`` whose value does not fit the canonical schema.

    Types are checked strictly (no ``1.5`` for an integer, no ``true`` for a number, no
    text for a list); unknown keys are problems at any depth.

    Returns
    -------
    tuple of (field path, reason), or None
        None when every value fits.

    Examples
    --------
    >>> from accordkit.schema import empty_episode
    >>> rec = empty_episode()
    >>> rec["messages"] = [{"role": "user", "turn_idx": "0"}]
    >>> record_problem(rec)
    ('messages[0].turn_idx', "expected an integer, got str '0'")
    """
    return _RECORD_CHECK(rec, "")


# --------------------------------------------------------------------------- tables


def check_columns(names: Sequence[str], *, source: str) -> None:
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
            + " (see docs/schema.md)", source=source, record="(whole file)",
            field=", ".join(missing + extra))


def _type_mismatch(have: pa.DataType, want: pa.DataType, where: str) -> str | None:
    """Where ``have`` cannot stand for ``want`` (different kinds of value), or None."""
    t = pa.types
    if have == want or t.is_null(have):
        return None
    kinds = (
        (t.is_string, lambda x: t.is_string(x) or t.is_large_string(x) or t.is_string_view(x)),
        (t.is_integer, t.is_integer),
        (t.is_floating, lambda x: t.is_floating(x) or t.is_integer(x)),
        (t.is_boolean, t.is_boolean),
    )
    for is_want, accepts in kinds:
        if is_want(want):
            return None if accepts(have) else where
    if t.is_list(want):
        if not (t.is_list(have) or t.is_large_list(have) or t.is_list_view(have)):
            return where
        return _type_mismatch(have.value_type, want.value_type, f"{where}[]")
    if t.is_struct(want):
        if not t.is_struct(have):
            return where
        have_fields = {have.field(i).name: have.field(i).type for i in range(have.num_fields)}
        for i in range(want.num_fields):
            f = want.field(i)
            if f.name not in have_fields:
                return f"{where}.{f.name}"
            found = _type_mismatch(have_fields[f.name], f.type, f"{where}.{f.name}")
            if found:
                return found
        extra = [n for n in have_fields if want.get_field_index(n) < 0]
        return f"{where}.{extra[0]}" if extra else None
    return where


def check_table_types(table: pa.Table, *, source: str) -> pa.Table:
    """Cast a canonical table (columns already in schema order) to the canonical types.

    Only lossless casts are made: text stays text, integers stay integers (and must fit),
    lists stay lists, structs keep exactly the canonical fields.

    Raises
    ------
    EpisodeValidationError
        Naming the column (or nested field) whose type does not fit.
    """
    schema = canonical_schema()
    columns = []
    for field in schema:
        col = table.column(field.name)
        where = _type_mismatch(col.type, field.type, field.name)
        if where:
            raise EpisodeValidationError(
                f"column type {col.type} does not match the canonical type {field.type}",
                source=source, record="(whole file)", field=where)
        try:
            columns.append(col.cast(field.type, safe=True) if col.type != field.type else col)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            raise EpisodeValidationError(f"values do not fit the canonical type ({exc})",
                                         source=source, record="(whole file)",
                                         field=field.name) from None
    return pa.Table.from_arrays(columns, schema=schema)


def _row_ids(table: pa.Table, rows: np.ndarray) -> list[str]:
    ids = table.column("episode_id").take(pa.array(rows, type=pa.int64())).to_pylist()
    return [f"{x} (row {r})" if x else f"row {r}" for x, r in zip(ids, rows, strict=True)]


def _list_problem(table: pa.Table, column: str, child: str,
                  bad_mask_fn: Callable[[pa.Array], np.ndarray],
                  reason_fn: Callable[[Any], str],
                  field_fmt: str) -> list[tuple[int, EpisodeValidationError]]:
    lists = table.column(column).combine_chunks()
    flat = pc.list_flatten(lists)
    if len(flat) == 0:
        return []
    parents = pc.list_parent_indices(lists).to_numpy()
    values = flat.field(child)
    bad_idx = np.flatnonzero(bad_mask_fn(values))
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
        out.append((row, values[int(j)].as_py(), int(j - offsets[row])))
    ids = _row_ids(table, np.array([r for r, _, _ in out]))
    return [
        (row, EpisodeValidationError(reason_fn(value), record=rid, field=field_fmt.format(pos)))
        for (row, value, pos), rid in zip(out, ids, strict=True)
    ]


def _not_in(values: Sequence[str], *, null_ok: bool) -> Callable[[pa.Array], np.ndarray]:
    def mask(v: pa.Array) -> np.ndarray:
        bad = pc.invert(pc.fill_null(pc.is_in(v, value_set=pa.array(values)), False))
        if null_ok:
            bad = pc.and_(bad, pc.is_valid(v))
        return bad.to_numpy(zero_copy_only=False)
    return mask


def _is_null(v: pa.Array) -> np.ndarray:
    return pc.is_null(v).to_numpy(zero_copy_only=False)


def table_problems(table: pa.Table, *, source: str) -> list[tuple[int, EpisodeValidationError]]:
    """Find rows of a canonical table that break the schema's rules.

    The same rules as :func:`accordkit.schema.validate_episode`: required ids, a known
    benchmark, a non-empty conversation, known roles and kinds, message positions, named
    tool calls, named preferences with a known dynamic.

    Returns
    -------
    list of (row index, error)
        At most one error per row (the first found), in row order.
    """
    found: dict[int, EpisodeValidationError] = {}

    def add(rows: np.ndarray, reason: str | Callable[[int], str], field: str) -> None:
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
    add(np.flatnonzero(_not_in(BENCHMARKS, null_ok=True)(bench)),
        lambda r: f"unknown benchmark {bench[r].as_py()!r}; expected one of {BENCHMARKS}",
        "benchmark")
    n_msgs = pc.fill_null(pc.list_value_length(table.column("messages")), 0)
    add(np.flatnonzero(pc.equal(n_msgs, 0).to_numpy(zero_copy_only=False)),
        "empty conversation: no messages", "messages")
    problems = _list_problem(table, "messages", "role", _not_in(ROLES, null_ok=False),
                             lambda v: f"unknown role {v!r}; expected one of {ROLES}",
                             "messages[{}].role")
    problems += _list_problem(table, "messages", "turn_idx", _is_null,
                              lambda v: "missing message position (turn_idx)",
                              "messages[{}].turn_idx")
    problems += _list_problem(table, "messages", "kind", _not_in(KINDS, null_ok=True),
                              lambda v: f"unknown kind {v!r}; expected one of {KINDS} or null",
                              "messages[{}].kind")
    for row, pos, j in _rows_with_unnamed_calls(table):
        rid = _row_ids(table, np.array([row]))[0]
        problems.append((row, EpisodeValidationError(
            "a tool call needs a string name", record=rid,
            field=f"messages[{pos}].tool_calls[{j}].name")))
    problems += _list_problem(
        table, "preferences", "dynamic", _not_in(DYNAMICS, null_ok=False),
        lambda v: f"unknown dynamic {v!r}; expected one of {DYNAMICS}", "preferences[{}].dynamic")
    problems += _list_problem(table, "preferences", "name", _is_null,
                              lambda v: "a preference needs a name", "preferences[{}].name")
    problems += _nonfinite_problems(table)
    problems += _json_object_problems(table)
    for row, err in sorted(problems, key=lambda p: p[0]):
        found.setdefault(row, err)
    return [
        (row, EpisodeValidationError(found[row].reason, source=source, record=found[row].record,
                                     field=found[row].field))
        for row in sorted(found)
    ]


def _rows_with_unnamed_calls(table: pa.Table) -> list[tuple[int, int, int]]:
    """(row, message position, call position) of tool calls without a name."""
    msgs = table.column("messages").combine_chunks()
    calls = pc.list_flatten(msgs).field("tool_calls")
    flat_calls = pc.list_flatten(calls)
    if not len(flat_calls):
        return []
    bad = np.flatnonzero(_is_null(flat_calls.field("name")))
    if not len(bad):
        return []
    call_parent = pc.list_parent_indices(calls).to_numpy()
    msg_parent = pc.list_parent_indices(msgs).to_numpy()
    call_offsets = calls.offsets.to_numpy()
    msg_offsets = msgs.offsets.to_numpy()
    out = []
    for j in bad:
        m = int(call_parent[j])
        row = int(msg_parent[m])
        out.append((row, m - int(msg_offsets[row]), int(j - call_offsets[m])))
    return out



def _leaves(array: pa.Array, rows: np.ndarray, path: str,
            want: Callable[[pa.DataType], bool]) -> Iterator[tuple[pa.Array, np.ndarray, str]]:
    """Every leaf array of a type ``want`` accepts, with the table row of each value.

    List positions are not tracked (``[]`` in the path): the row and the field name are
    enough to find the value.
    """
    t = array.type
    if want(t):
        yield array, rows, path
    elif pa.types.is_struct(t):
        for i in range(t.num_fields):
            name = t.field(i).name
            child = pc.struct_field(array, [i])
            yield from _leaves(child, rows, f"{path}.{name}", want)
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        parents = pc.list_parent_indices(array).to_numpy()
        yield from _leaves(pc.list_flatten(array), rows[parents], f"{path}[]", want)


def _first_per_row(hits: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    seen: set[int] = set()
    out = []
    for row, field, reason in sorted(hits, key=lambda h: h[0]):
        if row not in seen:
            seen.add(row)
            out.append((row, field, reason))
    return out


def _errors(table: pa.Table,
            hits: list[tuple[int, str, str]]) -> list[tuple[int, EpisodeValidationError]]:
    hits = _first_per_row(hits)
    if not hits:
        return []
    ids = _row_ids(table, np.array([h[0] for h in hits]))
    return [(row, EpisodeValidationError(reason, record=rid, field=field))
            for (row, field, reason), rid in zip(hits, ids, strict=True)]


def _nonfinite_problems(table: pa.Table) -> list[tuple[int, EpisodeValidationError]]:
    """Rows holding NaN or an infinite number in any float field (at any depth)."""
    hits = []
    for name in table.column_names:
        col = table.column(name).combine_chunks()
        rows = np.arange(len(col))
        for leaf, where, path in _leaves(col, rows, name, pa.types.is_floating):
            values = pc.fill_null(leaf, 0.0).to_numpy(zero_copy_only=False).astype(float)
            bad = np.flatnonzero(~np.isfinite(values))
            hits += [(int(where[j]), path, f"expected a finite number, got {values[j]!r}")
                     for j in bad]
    return _errors(table, hits)



def _json_object_problems(table: pa.Table) -> list[tuple[int, EpisodeValidationError]]:
    """Rows whose tool-call arguments or action parameters are not a JSON object."""
    hits = []
    for name in ("messages", "criteria"):
        col = table.column(name).combine_chunks()
        for leaf, where, path in _leaves(col, np.arange(len(col)), name, pa.types.is_string):
            if path.rsplit(".", 1)[-1] not in JSON_OBJECT_FIELDS or not len(leaf):
                continue
            bad_values = {v for v in pc.unique(leaf.drop_null()).to_pylist()
                          if json_object_problem(v)}
            if not bad_values:
                continue
            values = leaf.to_pylist()
            hits += [(int(where[j]), path, str(json_object_problem(v)))
                     for j, v in enumerate(values) if v in bad_values]
    return _errors(table, hits)
