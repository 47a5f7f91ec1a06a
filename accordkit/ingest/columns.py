"""The schema checked column-wise on a whole Arrow table (parquet, hub datasets, batches of
converted records), with Arrow compute, so that a 100,000-episode dataset is validated in well
under a second: :func:`cast_table` casts the columns losslessly to the canonical types (a value
that does not fit is its row's problem), :func:`table_problems` finds the rows that break the
rules of :data:`accordkit.schema.RULES`. The checker readers call is :mod:`accordkit.ingest.check`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._internal.arrow import one_array
from ..schema import (
    EPISODE_FEATURES,
    FLOAT_EXACT_INT,
    LATER_COLUMNS,
    RULES,
    EpisodeValidationError,
    Rule,
    named_path,
    record_problem,
)
from ..schema.arrow import canonical_schema

__all__ = ["cast_table", "check_columns", "with_later_columns", "check_table_types",
           "table_problems"]


#: Columns that mark a judge verdict table (:data:`accordkit.judges.verdicts.VERDICT_COLUMNS`).
_VERDICT_MARKERS = ("episode_id", "judge", "judge_model", "prompt_id", "verdict")


def with_later_columns(table: pa.Table) -> pa.Table:
    """``table`` with every column of :data:`~accordkit.schema.LATER_COLUMNS` it lacks added
    as null (a canonical file written before the column existed)."""
    for name in LATER_COLUMNS:
        if name not in table.column_names:
            field = canonical_schema().field(name)
            table = table.append_column(field, pa.nulls(table.num_rows, field.type))
    return table


def check_columns(names: Sequence[str], *, source: str) -> None:
    """Raise when a canonical table lacks a column or has one the schema does not know
    (columns of :data:`~accordkit.schema.LATER_COLUMNS` may be absent)."""
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
    if rule.test == "in_range":
        low, high = pc.min_max(values).values() if values.null_count < n else (None, None)
        return low is not None and (low.as_py() < rule.bounds[0]
                                    or high.as_py() > rule.bounds[1])
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
    if rule.test == "in_range":
        numbers = pc.fill_null(values, rule.bounds[0]).to_numpy(zero_copy_only=False)
        return (numbers < rule.bounds[0]) | (numbers > rule.bounds[1])
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
