"""The one checker: what readers give, checked against the schema, as :class:`Part` s.

Readers hand over episodes in one of three forms, and each has one function here:

* canonical records read from text (``(position, object)``; JSON, JSON Lines, a user
  reader's records): :func:`records_parts` checks each record's fields (unknown fields, types:
  :func:`accordkit.schema.record_problem`; rules: :func:`accordkit.schema.rule_problem`);
* records an adapter built and checked itself: :func:`built_part`;
* a canonical Arrow table (parquet, hub datasets): :func:`table_part`, column-wise
  (:mod:`accordkit.ingest.columns`).

Every problem goes to the read context (:meth:`~accordkit.ingest.context.ReadContext.problem`)
by its error policy, naming file, record and field. The rows of a load that asked for one
``config`` / ``split`` are chosen here too (:func:`selected`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..schema import EPISODE_FEATURES, EpisodeValidationError, empty_episode, record_problem
from ..schema import rule_problem as _rule_problem
from ..schema.arrow import empty_table, records_table
from .columns import (
    cast_table,
    check_columns,
    check_table_types,
    table_problems,
    with_later_columns,
)
from .context import ReadContext, ReadOptions

__all__ = ["Part", "records_parts", "built_part", "table_part", "selected", "note_unmatched",
           "canonical_record", "record_errors", "table_or_none", "describe", "concat", "joined",
           "cast_table", "check_columns", "check_table_types", "table_problems",
           "WHOLE_FILE", "TOP"]

WHOLE_FILE = "(whole file)"
TOP = "(top level)"


@dataclass
class Part:
    """Checked canonical rows a reader gave, with a name for each.

    Attributes
    ----------
    table : pyarrow.Table
        Rows with the canonical schema that kept every rule.
    labels : list of str
        Each row's record name (``e1 (line 3)``, a simulation id, ``e1 (row 2)``): the load
        names the copies of a duplicated episode by them.
    name : str or None
        The file the rows are reported under, when not the input's own name (a hub
        dataset's config and split, a dataset folder's file).
    simulations : int or None
        For a tau2 results file: the simulations it holds (read or not).
    """

    table: pa.Table
    labels: list[str]
    name: str | None = None
    simulations: int | None = None

    def __len__(self) -> int:
        return self.table.num_rows


def describe(obj: Any) -> str:
    """A short description of a parsed JSON value, for messages.

    Examples
    --------
    >>> describe({"a": 1}), describe([1, 2]), describe(3)
    ("an object with keys ['a']", 'a list of 2 item(s)', 'int 3')
    """
    if isinstance(obj, dict):
        keys = list(obj)[:6]
        return f"an object with keys {keys}" + (" ..." if len(obj) > 6 else "")
    if isinstance(obj, list):
        return f"a list of {len(obj)} item(s)"
    return f"{type(obj).__name__} {obj!r:.40}"


def concat(tables: Iterable[pa.Table | None]) -> pa.Table:
    """Canonical tables as one (missing and empty ones left out)."""
    parts = [t for t in tables if t is not None and t.num_rows]
    if not parts:
        return empty_table()
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts)


#: Parts of one input averaging fewer rows than this (bad records split a file into many
#: small parts) are joined into one chunk when there are more than :data:`FEW_PARTS`.
SMALL_PART_ROWS = 64
FEW_PARTS = 8


def joined(parts: Sequence[Part]) -> pa.Table:
    """The rows of one input's parts as one table; many small parts (a file whose bad
    records split it) become one chunk, so later column reads do not walk hundreds."""
    table = concat(p.table for p in parts)
    if len(parts) > FEW_PARTS and table.num_rows < len(parts) * SMALL_PART_ROWS:
        table = table.combine_chunks()
    return table


# --------------------------------------------------------------------------- records


def canonical_record(obj: Any, *, source: str, where: str) -> dict[str, Any]:
    """Check one canonical record read from text; ``where`` is its position in the file.

    Raises
    ------
    EpisodeValidationError
        Naming the record (its ``episode_id`` and position) and the first field at fault:
        not an object, an unknown field, a value of the wrong type, a broken rule.
    """
    if not isinstance(obj, dict):
        raise EpisodeValidationError(f"expected an episode object, got {describe(obj)}",
                                     source=source, record=where, field=TOP)
    eid = obj.get("episode_id")
    record = f"{eid} ({where})" if isinstance(eid, str) and eid else where
    unknown = [k for k in obj if k not in EPISODE_FEATURES]
    if unknown:
        raise EpisodeValidationError(f"unknown field(s) {unknown} (see docs/schema.md)",
                                     source=source, record=record, field=str(unknown[0]))
    rec = empty_episode()
    rec.update(obj)
    if rec.get("source") is None:
        rec["source"] = source
    problem = record_problem(rec) or _rule_problem(rec)
    if problem:
        raise EpisodeValidationError(problem[1], source=source, record=record, field=problem[0])
    return rec


def _label(rec: dict[str, Any], where: str) -> str:
    eid = rec.get("episode_id")
    return f"{eid} ({where})" if isinstance(eid, str) and eid else where


def records_parts(items: Iterable[tuple[str, Any]], ctx: ReadContext, *, source: str,
                  batch: int | None = None) -> Iterator[Part]:
    """Canonical records ``(position, object)`` read from text -> checked parts.

    A record that fails is a problem of its own (by ``ctx``'s policy); the others are kept
    and turned into Arrow ``batch`` records at a time (default: all at once), so that a
    large file never holds all its records as Python objects. Rows of another ``config`` /
    ``split`` than the load asked for are left out (:func:`selected`). Yields at least one
    part (maybe empty).
    """
    size = batch or 0
    records: list[dict[str, Any]] = []
    labels: list[str] = []
    given = False
    for where, obj in items:
        try:
            records.append(canonical_record(obj, source=source, where=where))
        except EpisodeValidationError as exc:
            ctx.problem(exc)
        except RecursionError:
            ctx.problem(EpisodeValidationError("data nested too deeply", source=source,
                                               record=where, field=TOP))
        else:
            labels.append(_label(records[-1], where))
            if size and len(records) >= size:
                yield selected(Part(_records_table(records, source=source), labels), ctx.options)
                records, labels, given = [], [], True
    if records or not given:
        yield selected(Part(_records_table(records, source=source), labels), ctx.options)


def built_part(records: list[dict[str, Any]], labels: list[str], *, source: str) -> Part:
    """Records an adapter built and checked (``labels``: their names) -> a part."""
    return Part(_records_table(records, source=source), list(labels))


def _records_table(records: list[dict[str, Any]], *, source: str) -> pa.Table:
    """The canonical table of checked records."""
    if not records:
        return empty_table()
    try:
        return records_table(records)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
        # Records are type-checked before they get here; name the culprit if one slipped by.
        for rec in records:
            problem = record_problem(rec)
            if problem:
                raise EpisodeValidationError(problem[1], source=source,
                                             record=str(rec.get("episode_id")),
                                             field=problem[0]) from None
        raise EpisodeValidationError(f"could not build the dataset ({exc})", source=source,
                                     record=WHOLE_FILE) from None


def table_or_none(records: list[dict[str, Any]]) -> pa.Table | None:
    """The canonical table of ``records``, None when a value does not fit its column."""
    try:
        return records_table(records)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None


def record_errors(records: Sequence[dict[str, Any]], names: Sequence[str], *, source: str,
                  check: Callable[[dict[str, Any]], tuple[str, str] | None],
                  ) -> list[tuple[int, EpisodeValidationError]]:
    """``(position, error)`` of each record ``check`` finds a (field, reason) problem in;
    ``names`` are the records' names in errors."""
    out = []
    for i, (rec, name) in enumerate(zip(records, names, strict=True)):
        found = check(rec)
        if found:
            out.append((i, EpisodeValidationError(found[1], source=source, record=name,
                                                  field=found[0] or "(simulation)")))
    return out


# --------------------------------------------------------------------------- tables


def table_part(table: pa.Table, ctx: ReadContext, *, source: str, origin: str | None = None,
               select: bool = True) -> Part:
    """A canonical Arrow table (parquet, hub) -> its good rows, checked as a whole.

    Columns must be the canonical ones (else a problem of the whole file); a value that does
    not fit its column (rollout 2**31) or a row that breaks a rule is a problem of its row,
    named by its episode id and row. ``origin`` fills empty ``source`` values (default:
    ``source``). With ``select``, only the rows of the ``config`` / ``split`` asked for.
    """
    check_columns(table.column_names, source=source)
    table = with_later_columns(table)   # a file written before a column was added
    table, cast_problems = cast_table(table.select(list(EPISODE_FEATURES)), source=source)
    rows = np.arange(table.num_rows + len(cast_problems))
    names = None
    if cast_problems:
        rows = np.setdiff1d(rows, np.array([r for r, _ in cast_problems], dtype=np.int64))
        ids = table.column("episode_id").to_pylist()
        names = [f"{e} (row {r})" if e else f"row {r}"
                 for e, r in zip(ids, rows.tolist(), strict=True)]
    src = table.column("source")
    if src.null_count:
        table = table.set_column(table.schema.get_field_index("source"), "source",
                                 pc.fill_null(src, origin or source))
    problems = table_problems(table, source=source, records=names)
    # every problem in row order, as the rows stand in the file
    found = sorted([(int(rows[r]), err) for r, err in problems] + cast_problems,
                   key=lambda item: item[0])
    for _, err in found:
        ctx.problem(err)
    if problems:
        keep = np.ones(table.num_rows, dtype=bool)
        keep[[r for r, _ in problems]] = False
        table = table.filter(pa.array(keep))
        rows = rows[keep]
    ids = table.column("episode_id").to_pylist()
    part = Part(table, [f"{e} (row {r})" for e, r in zip(ids, rows, strict=True)])
    return selected(part, ctx.options) if select else part


def selected(part: Part, options: ReadOptions) -> Part:
    """The rows of a canonical part that belong to the ``config`` and ``split`` asked for."""
    if (options.config is None and options.split is None) or not len(part):
        return part
    table = part.table
    mask = pa.array(np.ones(table.num_rows, dtype=bool))
    for name, want in (("config", options.config), ("split", options.split)):
        if want is not None:
            mask = pc.and_(mask, pc.fill_null(pc.equal(table.column(name), want), False))
    keep = mask.to_numpy(zero_copy_only=False)
    return Part(table.filter(mask), list(itertools.compress(part.labels, keep)), part.name,
                part.simulations)


def note_unmatched(ctx: ReadContext, source: str, seen: Iterable[tuple[Any, Any]]) -> None:
    """Note that no record of a canonical file is of the ``config=`` / ``split=`` asked for.

    ``seen`` holds the (config, split) of the file's records; an empty file, or a load that
    asks for no config or split, gets no note. The note (a ``UserWarning`` of
    :func:`accordkit.load`) names the configs and splits the file holds, so that a
    misspelled split does not pass for a file without episodes.

    Examples
    --------
    >>> ctx = ReadContext(options=ReadOptions(split="test"))
    >>> note_unmatched(ctx, "eps.jsonl", {("c1", "train"), (None, None)})
    >>> print(ctx.notes[0])
    eps.jsonl: no record has split 'test', so none was loaded (the file holds config None, split None; config 'c1', split 'train')
    """
    want = {"config": ctx.options.config, "split": ctx.options.split}
    if all(v is None for v in want.values()):
        return
    seen = set(seen)
    if not seen or any((want["config"] is None or c == want["config"])
                       and (want["split"] is None or s == want["split"]) for c, s in seen):
        return
    asked = " and ".join(f"{k} {v!r}" for k, v in want.items() if v is not None)
    held = sorted(seen, key=lambda cs: (str(cs[0]), str(cs[1])))
    shown = "; ".join(f"config {c!r}, split {s!r}" for c, s in held[:5])
    more = f" and {len(held) - 5} more" if len(held) > 5 else ""
    ctx.note(f"{source}: no record has {asked}, so none was loaded (the file holds "
             f"{shown}{more})")
