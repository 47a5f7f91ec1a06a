"""A results object's simulations, converted and checked a batch at a time.

Records are turned into Arrow :data:`BATCH` simulations at a time, so that a large file never holds all its episodes as Python
objects at once, and each batch is checked as a table (the rules of
:data:`accordkit.schema.RULES`, column-wise) rather than record by record when that is
cheaper. The rules the converter keeps by construction are not checked again
(:data:`~accordkit.ingest.formats.tau2.convert.RULES_KEPT`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from ....schema import RULES, EpisodeValidationError, record_problem, rule_problem
from ....schema.arrow import empty_table
from ...check import (
    WHOLE_FILE,
    Part,
    built_part,
    record_errors,
    table_or_none,
    table_problems,
)
from ...context import ReadContext
from .columns import TypedMessages, messages_column
from .convert import RULES_KEPT, TYPED_RULES_KEPT, converted_simulations

__all__ = ["results_parts", "checked_batch", "BATCH"]

#: Simulations of a results file converted to Arrow at a time.
BATCH = 256
#: A batch with fewer messages than this is checked record by record (``schema.rule_problem``):
#: the column-wise check costs about half a millisecond per batch whatever its size, the
#: record walk 2-5 microseconds per message (measured on the fixture files: 7 simulations of
#: 173 messages 0.75 vs 1.10 ms; 5 of 1,145 messages 4.1 vs 1.1 ms).
RECORD_CHECKS_BELOW_MESSAGES = 256
#: Records whose messages came typed leave fewer rules to check (no message rule): record
#: by record about 9 microseconds each, column-wise about half a millisecond per batch
#: (256 records: 2.4 vs 0.5 ms), so a batch of this many records or more is checked as a
#: table.
TABLE_CHECKS_FROM_RECORDS = 64
#: The rules left to check of a results file's records: those the converter does not keep
#: by construction; of records whose messages came typed, fewer still.
RESULTS_RULES = tuple(rule for rule in RULES if rule not in RULES_KEPT)
TYPED_RESULTS_RULES = tuple(rule for rule in RULES if rule not in TYPED_RULES_KEPT)


def results_parts(obj: Any, ctx: ReadContext, *, source: str) -> Iterator[Part]:
    """The checked parts of a results object (parsed JSON, a typed decoding, or a dir-format
    run read as one object), a batch of simulations each; problems go to ``ctx`` in
    simulation order. The last part says how many simulations the file holds.
    """
    if ctx.options.config is not None or ctx.options.split is not None:
        raise EpisodeValidationError(
            "config= and split= select parts of hub datasets and canonical files; a results "
            "file has neither", source=source, record=WHOLE_FILE, field="(config/split)")
    batch: list[dict[str, Any]] = []
    names: list[str] = []
    n_sims = 0

    def flush() -> Part:
        table, kept = checked_batch(batch, names, ctx, source=source)
        part = Part(table, [str(rec["episode_id"]) for rec in kept])
        batch.clear()
        names.clear()
        return part

    for name, item, _typed in converted_simulations(obj, source=source, shared_criteria=True,
                                                    columnar=True):
        n_sims += 1
        if isinstance(item, EpisodeValidationError):
            if batch:
                yield flush()  # problems are reported in simulation order
            ctx.problem(item)
            continue
        batch.append(item)
        names.append(name)
        if len(batch) == BATCH:
            yield flush()
    last = flush() if batch else Part(empty_table(), [])
    last.simulations = n_sims
    yield last


def checked_batch(records: list[dict[str, Any]], names: list[str], ctx: ReadContext, *,
                  source: str) -> tuple[pa.Table, list[dict[str, Any]]]:
    """The Arrow table of converted records that keep the rules, and those records.

    ``names`` are the records' names in errors. Types are checked by building the table
    with the canonical schema (a record that does not fit is found and named by
    :func:`~accordkit.schema.record_problem`); the rules by
    :func:`~accordkit.ingest.check.table_problems`. Problems go to ``ctx``.

    The rules the converter keeps by construction (its JSON text,
    :data:`~accordkit.ingest.formats.tau2.convert.RULES_KEPT`) are not checked again. When
    every record's messages came typed (:class:`~accordkit.ingest.formats.tau2.columns.
    TypedMessages`), the messages column is built from them column-wise, and the message
    rules, which such messages keep by construction too, are left out as well.
    """
    typed = [rec["messages"] for rec in records]
    if all(isinstance(m, TypedMessages) for m in typed):
        rules = TYPED_RESULTS_RULES
        table = _typed_table(records, typed)
    else:
        rules = RESULTS_RULES
        for rec, msgs in zip(records, typed, strict=True):
            if isinstance(msgs, TypedMessages):
                rec["messages"] = msgs.records()
        table = table_or_none(records)
    if table is None:  # a record does not fit: check each in order, as one at a time
        for rec in records:
            if isinstance(rec["messages"], TypedMessages):
                rec["messages"] = rec["messages"].records()
        problems = record_errors(records, names, source=source,
                                 check=lambda rec: record_problem(rec)
                                 or rule_problem(rec, rules=RESULTS_RULES))
    elif (len(records) < TABLE_CHECKS_FROM_RECORDS if rules is TYPED_RESULTS_RULES
          else sum(len(rec.get("messages") or ())
                   for rec in records) < RECORD_CHECKS_BELOW_MESSAGES):
        # the same rules, without the per-call cost of the column-wise check
        problems = record_errors(records, names, source=source,
                                 check=lambda rec: rule_problem(rec, rules=rules))
    else:
        problems = table_problems(table, source=source, records=names, rules=rules)
    for _, err in problems:
        ctx.problem(err)
    bad = {r for r, _ in problems}
    keep = [rec for i, rec in enumerate(records) if i not in bad]
    if table is None:
        return built_part(keep, [], source=source).table, keep
    if bad:
        table = table.filter(pa.array([i not in bad for i in range(len(records))]))
    return table, keep


def _typed_table(records: list[dict[str, Any]],
                 typed: list[TypedMessages]) -> pa.Table | None:
    """The table of records whose messages came typed, None when a record does not fit."""
    table = table_or_none([dict(rec, messages=None) for rec in records])
    if table is None:
        return None
    where = table.schema.get_field_index("messages")
    return table.set_column(where, table.schema.field(where), messages_column(typed))
