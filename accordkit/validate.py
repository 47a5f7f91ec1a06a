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
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._arrow import canonical_schema, one_array
from .schema import (
    _REQUIRED_STR,
    EPISODE_FEATURES,
    RULES,
    EpisodeValidationError,
    Rule,
    named_path,
    rule_problem,
)

__all__ = [
    "SkippedRecord",
    "SkippedRecordsWarning",
    "DuplicateEpisodesWarning",
    "FLOAT_EXACT_INT",
    "cast_table",
    "check_columns",
    "with_later_columns",
    "check_table_types",
    "record_problem",
    "table_problems",
    "warn_skipped",
]

_REQUIRED = _REQUIRED_STR  # the ids every record must carry (defined in schema.py)
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
#: The largest integer magnitude a float field takes: float64 holds every integer up to
#: ``2**53`` exactly, and Arrow refuses (rather than rounds) an integer beyond it, from JSON
#: and from a parquet integer column alike. Larger values must be written as floats.
FLOAT_EXACT_INT = 2**53


def _int_text(v: int) -> str:
    """An integer for a message: its digits, or its size when it is very long.

    Examples
    --------
    >>> _int_text(2**64)
    '18446744073709551616'
    >>> _int_text(-(10**400))
    '-1000...0000 (401 digits)'
    """
    if v.bit_length() <= 200:
        return str(v)
    digits = int(abs(v).bit_length() * math.log10(2)) + 1
    if 10 ** (digits - 1) > abs(v):
        digits -= 1
    head = "-" if v < 0 else ""
    return f"{head}{abs(v) // 10 ** (digits - 4)}...{abs(v) % 10_000:04d} ({digits} digits)"


#: ``record`` labels of a problem that is a file's, not one record's.
FILE_RECORDS = ("(whole file)", "(file header)")


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

    @property
    def concerns_the_file(self) -> bool:
        """Whether the problem is the file's (its whole text, or a results file's header),
        not one record's."""
        return self.record in FILE_RECORDS

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


#: The position a copy's file name ends with in :attr:`DuplicateEpisodesWarning.duplicates`
#: (``a.jsonl (line 3)``); copies from results files are named by their file alone.
_COPY_POSITION = re.compile(r" \(((?:line|item|row) \d+)\)$")


class DuplicateEpisodesWarning(UserWarning):
    """The same episode was loaded more than once (e.g. two checkpoints of one run).

    ``.duplicates`` maps each such ``episode_id`` to the copies found: the file each was
    loaded from, with its line, item or row for canonical files (``eps.jsonl (line 3)``,
    ``eps.parquet (row 0)``); the first one is the copy that was kept. The message groups
    the episodes by the files they were found in.

    Examples
    --------
    >>> print(DuplicateEpisodesWarning({"e1": ["a.parquet (row 0)", "b.jsonl (line 2)"]}))
    1 episode(s) loaded more than once with identical content were kept once: 1 in a.parquet and b.jsonl (e1 at row 0, line 2)
    """

    def __init__(self, duplicates: Mapping[str, Sequence[str]] | str) -> None:
        if isinstance(duplicates, str):  # plain message, as for any warning
            self.duplicates: dict[str, list[str]] = {}
            super().__init__(duplicates)
            return
        self.duplicates = {eid: list(srcs) for eid, srcs in duplicates.items()}
        groups: dict[tuple[str, ...], list[str]] = {}
        for eid, copies in self.duplicates.items():
            files = [_COPY_POSITION.sub("", c) for c in copies]
            places = [m.group(1) for c in copies if (m := _COPY_POSITION.search(c))]
            shown = f"{eid} at {', '.join(places)}" if places else eid
            groups.setdefault(tuple(dict.fromkeys(files)), []).append(shown)
        parts = []
        for files, eids in groups.items():
            sep = "; " if any(" at " in e for e in eids) else ", "
            shown = sep.join(eids[:3]) + (f" and {len(eids) - 3} more" if len(eids) > 3 else "")
            parts.append(f"{len(eids)} in {' and '.join(files)} ({shown})")
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
                return where, f"integer {_int_text(v)} does not fit in {what}"
            return None
        return check

    def check_float(v: Any, where: str) -> tuple[str, str] | None:
        if v is None:
            return None
        if isinstance(v, int) and not isinstance(v, bool):
            if -FLOAT_EXACT_INT <= v <= FLOAT_EXACT_INT:
                return None
            return where, (f"integer {_int_text(v)} is out of range for a float field "
                           "(integers are taken up to ±2**53, what float64 holds exactly; "
                           "write a larger value as a float, e.g. 1e20)")
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
    episode rules (:data:`~accordkit.schema.RULES`).

    ``fail(reason, field)`` makes the error naming the adapter's file and record; ``whole``
    is the field named when a rule concerns the record as a whole. ``messages_typed`` says
    the messages were built from values a typed decoder already checked
    (:mod:`accordkit.adapters.tau2_format`), so their types are not walked again; the
    episode rules still see them.
    """
    problem = (record_problem(dict(rec, messages=None) if messages_typed else rec)
               or rule_problem(rec))
    if problem:
        raise fail(problem[1], problem[0] or whole)


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


#: Columns that mark a judge verdict table (:data:`accordkit.judges.verdicts.VERDICT_COLUMNS`).
_VERDICT_MARKERS = ("episode_id", "judge", "judge_model", "prompt_id", "verdict")


def with_later_columns(table: pa.Table) -> pa.Table:
    """``table`` with every column of :data:`~accordkit.schema.LATER_COLUMNS` it lacks added
    as null (a canonical file written before the column existed)."""
    from .schema import LATER_COLUMNS

    for name in LATER_COLUMNS:
        if name not in table.column_names:
            field = EPISODE_FEATURES.arrow_schema.field(name)
            table = table.append_column(field, pa.nulls(table.num_rows, field.type))
    return table


def check_columns(names: Sequence[str], *, source: str) -> None:
    """Raise when a canonical table lacks a column or has one the schema does not know
    (columns of :data:`~accordkit.schema.LATER_COLUMNS` may be absent)."""
    from .schema import LATER_COLUMNS

    missing = [c for c in EPISODE_FEATURES if c not in names and c not in LATER_COLUMNS]
    extra = [c for c in names if c not in EPISODE_FEATURES]
    if missing and set(_VERDICT_MARKERS) <= set(names):
        raise EpisodeValidationError(
            "a judge verdict table (what `accordkit judge` writes), not episodes: pass it "
            "as verdicts, `--verdicts FILE` of `accordkit score` / `report`, or "
            "`ak.score(ds, verdicts=ak.read_verdicts(FILE))`", source=source,
            record="(whole file)", field="(columns)")
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
    """Where ``have`` cannot stand for ``want`` (different kinds of value), or None.

    A dictionary-encoded type (a pandas categorical, a polars ``Categorical``) stands for
    its value type: decoding it is lossless.
    """
    t = pa.types
    if t.is_dictionary(have):
        have = have.value_type
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


_CAST_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError)


def _out_of_range_rows(array: pa.Array, want: pa.DataType) -> np.ndarray | None:
    """Rows of a flat integer ``array`` whose value does not fit ``want`` (an integer or
    float type), found with Arrow compute; None for any other kind of column."""
    t = pa.types
    if not t.is_integer(array.type):
        return None
    if t.is_integer(want):
        info = np.iinfo(want.to_pandas_dtype())
        lo, hi = int(info.min), int(info.max)
    elif t.is_floating(want):
        lo, hi = -FLOAT_EXACT_INT, FLOAT_EXACT_INT
    else:  # pragma: no cover - _type_mismatch lets integers stand only for numbers
        return None
    # compare in the column's own type; a bound it cannot hold is no bound
    info = np.iinfo(array.type.to_pandas_dtype())
    bad = pa.array(np.zeros(len(array), dtype=bool))
    if lo > int(info.min):
        bad = pc.or_(bad, pc.less(array, pa.scalar(lo, array.type)))
    if hi < int(info.max):
        bad = pc.or_(bad, pc.greater(array, pa.scalar(hi, array.type)))
    return np.flatnonzero(pc.fill_null(bad, False).to_numpy(zero_copy_only=False))


def _uncastable_rows(array: pa.Array, want: pa.DataType) -> np.ndarray:
    """Rows of ``array`` whose value cannot be cast to ``want`` without loss.

    A flat integer column is compared with the bounds directly; any other (nested) column is
    cast in halves, so that ``k`` bad rows cost about ``2 k log2(n)`` casts of ever
    smaller parts.
    """
    direct = _out_of_range_rows(array, want)
    if direct is not None:
        return direct
    found: list[int] = []
    todo = [(0, len(array))]
    while todo:
        lo, hi = todo.pop()
        try:
            # taken, not sliced: a slice of a list keeps all its child values, and a cast
            # would see them all
            array.take(pa.array(np.arange(lo, hi, dtype=np.int64))).cast(want, safe=True)
            continue
        except _CAST_ERRORS:
            pass
        if hi - lo == 1:
            found.append(lo)
        else:
            mid = (lo + hi) // 2
            todo += [(mid, hi), (lo, mid)]
    return np.array(sorted(found), dtype=np.int64)


def cast_table(table: pa.Table, *, source: str,
               ) -> tuple[pa.Table, list[tuple[int, EpisodeValidationError]]]:
    """Cast a canonical table (columns already in schema order) to the canonical types.

    Only lossless casts are made: text stays text (dictionary-encoded text is decoded),
    integers stay integers and must fit, an integer in a float column must lie within
    ±2**53 (:data:`FLOAT_EXACT_INT`), lists stay lists, structs keep exactly the canonical
    fields. A column of the wrong *kind* is a problem of the whole file; a *value* that does
    not fit is a problem of its row, named as for JSON records (``rollout``,
    ``messages[2].turn_idx``), and the other rows are kept.

    Returns
    -------
    tuple of (pyarrow.Table, list of (row index, error))
        The rows whose values all fit, cast; and one error per row left out, in row order
        (the row index is the row's position in ``table``).

    Raises
    ------
    EpisodeValidationError
        Naming the column (or nested field) whose type does not fit.
    """
    schema = canonical_schema()
    bad: dict[int, tuple[str, str]] = {}
    columns: list[Any] = []
    for field in schema:
        col = table.column(field.name)
        where = _type_mismatch(col.type, field.type, field.name)
        if where:
            raise EpisodeValidationError(
                f"column type {col.type} does not match the canonical type {field.type}",
                source=source, record="(whole file)", field=where)
        if col.type == field.type:
            columns.append(col)
            continue
        try:
            columns.append(col.cast(field.type, safe=True))
            continue
        except _CAST_ERRORS as exc:
            reason = f"value does not fit the canonical type {field.type} ({exc})"
            whole = f"values do not fit the canonical type ({exc})"
        array = one_array(col)
        rows = _uncastable_rows(array, field.type).tolist()
        if not rows:  # the column fails as a whole, no row alone: the file's problem
            raise EpisodeValidationError(whole, source=source, record="(whole file)",
                                         field=field.name)
        for r in rows:
            if r not in bad:
                found = record_problem({field.name: array[r].as_py()})
                bad[r] = found or (field.name, reason)
    problems: list[tuple[int, EpisodeValidationError]] = []
    if bad:
        rows = np.array(sorted(bad), dtype=np.int64)
        problems = [(int(r), EpisodeValidationError(bad[int(r)][1], source=source, record=rid,
                                                    field=bad[int(r)][0]))
                    for r, rid in zip(rows, _row_ids(table, rows), strict=True)]
        keep = np.ones(table.num_rows, dtype=bool)
        keep[rows] = False
        table = table.filter(pa.array(keep))
        columns = []
        for field in schema:
            col = table.column(field.name)
            try:
                columns.append(col.cast(field.type, safe=True) if col.type != field.type
                               else col)
            except _CAST_ERRORS as exc:  # a value no row check could place
                raise EpisodeValidationError(f"values do not fit the canonical type ({exc})",
                                             source=source, record="(whole file)",
                                             field=field.name) from None
    return pa.Table.from_arrays(columns, schema=schema), problems


def check_table_types(table: pa.Table, *, source: str) -> pa.Table:
    """Cast a canonical table to the canonical types (:func:`cast_table`), all or nothing.

    Raises
    ------
    EpisodeValidationError
        Naming the column (or nested field) whose type does not fit, or the first row
        holding a value that does not fit.
    """
    cast, problems = cast_table(table, source=source)
    if problems:
        err = problems[0][1]
        raise EpisodeValidationError(f"values do not fit the canonical type ({err.reason})",
                                     source=source, record=err.record, field=err.field)
    return cast


def _row_ids(table: pa.Table, rows: np.ndarray) -> list[str]:
    ids = table.column("episode_id").take(pa.array(rows, type=pa.int64())).to_pylist()
    return [f"{x} (row {r})" if x else f"row {r}" for x, r in zip(ids, rows, strict=True)]


def _reach(table: pa.Table, path: str) -> tuple[pa.Array, np.ndarray, list[np.ndarray]]:
    """The values a rule path reaches in ``table``: (values, row of each, list positions).

    ``positions`` holds one array per ``[]`` in the path: the position of each value in that
    list, so that a problem is named like ``messages[3].tool_calls[0].name``.
    """
    steps = path.split(".")
    array: pa.Array = one_array(table.column(steps[0].removesuffix("[]")))
    rows = np.arange(len(array))
    positions: list[np.ndarray] = []
    for i, step in enumerate(steps):
        if i:
            array = pc.struct_field(array, step.removesuffix("[]"))
        if step.endswith("[]"):
            parents = pc.list_parent_indices(array).to_numpy()
            offsets = array.offsets.to_numpy()
            flat = pc.list_flatten(array)
            pos = np.arange(len(flat)) - (offsets[parents] - offsets[0])
            rows, array = rows[parents], flat
            positions = [p[parents] for p in positions] + [pos]
    return array, rows, positions


def _values(table: pa.Table, path: str, reached: dict[str, pa.Array]) -> pa.Array:
    """The values a rule path reaches (as :func:`_reach`, without rows and positions);
    ``reached`` keeps every prefix, so rules under one list flatten it once."""
    if path not in reached:
        head, _, step = path.rpartition(".")
        name = step.removesuffix("[]")
        array = (pc.struct_field(_values(table, head, reached), name) if head
                 else one_array(table.column(name)))
        reached[path] = pc.list_flatten(array) if step.endswith("[]") else array
    return reached[path]


def _any_breaks(rule: Rule, values: pa.Array) -> bool:
    """Whether any of ``values`` breaks ``rule``: :func:`_rule_mask`'s ``any``, in fewer
    Arrow calls (most tables break no rule)."""
    n = len(values)
    if not n:
        return False
    if rule.test == "present":
        return values.null_count > 0
    if rule.test == "required":
        return values.null_count > 0 or pc.min(pc.utf8_length(values)).as_py() == 0
    if rule.test == "non_empty":
        return values.null_count > 0 or pc.min(pc.list_value_length(values)).as_py() == 0
    if rule.test == "one_of":
        known = pc.sum(pc.is_in(values, value_set=pa.array(rule.allowed))).as_py() or 0
        return known + (values.null_count if rule.null_ok else 0) < n
    if rule.test == "finite":
        return bool(pc.any(pc.invert(pc.is_finite(values))).as_py())
    return bool(_rule_mask(rule, values).any())


def _rule_mask(rule: Rule, values: pa.Array) -> np.ndarray:
    """Which of ``values`` break ``rule`` (the Arrow form of :meth:`Rule.fails`)."""
    if rule.test == "required":
        bad = pc.or_kleene(pc.is_null(values), pc.equal(pc.utf8_length(values), 0))
        return pc.fill_null(bad, True).to_numpy(zero_copy_only=False)
    if rule.test == "one_of":
        bad = pc.invert(pc.fill_null(pc.is_in(values, value_set=pa.array(rule.allowed)), False))
        if rule.null_ok:
            bad = pc.and_(bad, pc.is_valid(values))
        return bad.to_numpy(zero_copy_only=False)
    if rule.test == "non_empty":
        return pc.fill_null(pc.list_value_length(values), 0).to_numpy(
            zero_copy_only=False) == 0
    if rule.test == "present":
        return pc.is_null(values).to_numpy(zero_copy_only=False)
    if rule.test == "finite":
        numbers = pc.fill_null(values, 0.0).to_numpy(zero_copy_only=False).astype(float)
        return ~np.isfinite(numbers)
    if rule.test == "json_object":
        bad_values = [v for v in pc.unique(values.drop_null()).to_pylist() if rule.fails(v)]
        if not bad_values:
            return np.zeros(len(values), dtype=bool)
        return pc.fill_null(pc.is_in(values, value_set=pa.array(bad_values, values.type)),
                            False).to_numpy(zero_copy_only=False)
    raise ValueError(f"unknown rule test {rule.test!r}")  # pragma: no cover


def table_problems(table: pa.Table, *, source: str, records: Sequence[str] | None = None,
                   rules: Sequence[Rule] = RULES) -> list[tuple[int, EpisodeValidationError]]:
    """Find rows of a canonical table that break the rules of :data:`accordkit.schema.RULES`.

    The same rules, in the same order, as :func:`accordkit.schema.validate_episode` checks
    on one record, evaluated column-wise with Arrow compute: a row's problem is the first
    rule it breaks, at its first position.

    Parameters
    ----------
    table : pyarrow.Table
        Rows with the canonical columns and types.
    source : str
        The file the rows came from, named in errors.
    records : sequence of str, optional
        The name of each row in errors (e.g. a simulation id); default: its episode id and
        row number.
    rules : sequence of Rule, optional
        The rules to check, in :data:`~accordkit.schema.RULES` order; default all (an
        adapter whose records keep some by construction leaves those out).

    Returns
    -------
    list of (row index, error)
        At most one error per row, in row order.
    """
    found: dict[int, tuple[str, str]] = {}
    reached: dict[str, pa.Array] = {}
    for rule in rules:
        if not _any_breaks(rule, _values(table, rule.path, reached)):
            continue  # the common case: no row to locate
        values, rows, positions = _reach(table, rule.path)
        for j in np.flatnonzero(_rule_mask(rule, values)):
            row = int(rows[j])
            if row not in found:  # values come in row order, positions in list order
                where = named_path(rule.path, [int(p[j]) for p in positions])
                found[row] = (where, rule.reason(values[int(j)].as_py()))
    if not found:
        return []
    rows = np.array(sorted(found), dtype=np.int64)
    return [(int(r), EpisodeValidationError(found[int(r)][1], source=source, record=rid,
                                            field=found[int(r)][0]))
            for r, rid in zip(rows, _row_ids(table, rows) if records is None
                              else [records[int(r)] for r in rows], strict=True)]
