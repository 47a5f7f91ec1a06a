"""Inputs that must be read together, merged as :func:`accordkit.load` merges them.

A store scores each input apart. Two cases need some inputs read as one load instead:

* the same episode in several inputs (checkpoints of one run; a file given twice under
  other names): :func:`accordkit.load` keeps the first copy of each episode and makes a later
  copy of different content a problem of its record (:func:`accordkit.ingest.merge.
  first_copies`); a store of the inputs scored apart would hold the episode twice;
* a pooled TCRR mode (the upstream modes pool the tool calls of a whole source file) and a
  source file whose goal-shift episodes lie in several parquet inputs.

With ``score_to_store(merge=True)`` such inputs form a group: their parts (if scored) are
removed, the group is read through the loading corridor in input order and taken in as a
load takes its inputs (:class:`~accordkit.ingest.intake.Intake`), each episode kept once,
scored at once (so pooled modes see the whole source file), and each kept episode's scores
are written back under the input it came from, so the store reads in the order
``ak.score(ak.load(sources))`` gives. Memory holds the group, not the whole data set.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..store import LEVEL_DIRS, PART_DIRS, InputRecord, write_part
from .plan import WorkItem

__all__ = ["repeated_inputs", "with_modes_inputs", "merge_repeats", "merge_group"]

#: Problems kept per input in the manifest (as :data:`accordkit.engines.run.MAX_PROBLEMS`).
MAX_PROBLEMS = 20


def repeated_inputs(out: str | Path) -> set[int]:
    """The inputs whose episode parts in ``out`` hold an episode id the store holds more than
    once (within one input, or across inputs).

    Examples
    --------
    >>> repeated_inputs("no/such/store")
    set()
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    parts = sorted((Path(out) / LEVEL_DIRS["episode"]).glob("*.parquet"))
    if not parts:
        return set()
    table = pa.concat_tables([pq.read_table(p, columns=["episode_id", "_input"])
                              for p in parts])
    counts = pc.value_counts(table.column("episode_id"))
    twice = counts.field("values").filter(pc.greater(counts.field("counts"), 1))
    if not len(twice):
        return set()
    held = table.filter(pc.is_in(table.column("episode_id"), value_set=twice))
    return {int(i) for i in pc.unique(held.column("_input")).to_pylist()}


def with_modes_inputs(group: Iterable[int], items: Sequence[WorkItem]) -> set[int]:
    """``group``, and all the parquet inputs of the ``compare_modes`` item when it holds one
    of them (that item pools source files across the parquet inputs: it is made again from
    the merged group)."""
    group = set(group)
    modes = [i for i in items if i.kind == "modes"]
    if modes and group & _modes_inputs(modes[0], items):
        group |= _modes_inputs(modes[0], items)
    return group


def _modes_inputs(modes: WorkItem, items: Sequence[WorkItem]) -> set[int]:
    names = set(modes.sources) or {i.name for i in modes.inputs}
    return {i.input_index for i in items if i.kind == "parquet" and i.source in names}


def merge_repeats(out: str | Path, items: Sequence[WorkItem], records: Sequence[InputRecord],
                  *, group: Iterable[int] = (), **options: Any) -> list[int]:
    """Merge ``group`` (inputs not scored yet) and every input holding a repeated episode;
    the inputs merged, in order.

    The group grows until the store holds each episode once (a merged group may repeat an
    episode of another input); ``options`` are :func:`merge_group`'s.
    """
    merged: set[int] = set()
    pending = set(group)
    while True:
        pending = with_modes_inputs(pending | repeated_inputs(out), items)
        if pending <= merged:
            return sorted(merged)
        merged |= pending
        merge_group(sorted(merged), out=out, items=items, records=records, **options)
        pending = set()


def merge_group(group: Sequence[int], *, out: str | Path, items: Sequence[WorkItem],
                records: Sequence[InputRecord], modes: Mapping[str, Any], errors: str,
                metadata: Mapping[str, Any] | None, load_options: Mapping[str, Any],
                verdicts: Sequence[str]) -> None:
    """Read the inputs ``group`` as one load (each episode once), score them at once and
    write each episode's scores under the input it came from; their records say what each
    gave (``episodes`` kept, ``duplicates`` of an earlier copy, ``skipped``, ``problems``).
    """
    import numpy as np
    import pyarrow as pa

    from ..ingest.check import concat
    from ..ingest.context import ReadContext, ReadOptions
    from ..ingest.intake import Intake
    from ..ingest.read import Reading
    from ..ingest.report import LoadReport
    from ..schema.arrow import episode_dataset

    by_index = {r.index: r for r in records}
    inputs = {i.input_index: i.read() for i in items if i.kind != "modes"}
    for index in group:
        _remove_parts(out, index)
        rec = by_index[index]
        rec.episodes = rec.skipped = rec.batches = rec.duplicates = rec.left_out = 0
        rec.error, rec.problems, rec.notes, rec.left_out_records = None, [], [], []
    ctx = ReadContext(errors, ReadOptions(  # type: ignore[arg-type]
        split=load_options.get("split"), revision=load_options.get("revision"),
        metadata=dict(metadata) if metadata else None))
    reading = Reading(ctx, cache=True)
    intake = Intake(ctx, LoadReport())   # the records, not a load report, say what each gave
    tables: list[pa.Table] = []
    finished = False
    try:
        for index in group:
            rec, input = by_index[index], inputs[index]
            seen = len(ctx.skipped), len(ctx.notes)
            try:
                parts = reading.parts(input)
            except Exception as exc:  # noqa: BLE001 - errors="raise": this input failed
                rec.error = f"{type(exc).__name__}: {exc}"
                continue
            skipped, notes = ctx.skipped[seen[0]:], ctx.notes[seen[1]:]
            rec.notes = [str(n) for n in notes[:MAX_PROBLEMS]]
            rows = sum(len(p) for p in parts)
            if not rows and skipped and all(s.concerns_the_file for s in skipped):
                rec.error = f"field {skipped[0].field}: {skipped[0].reason}"
                continue
            _count_skipped(rec, skipped)
            tables.append(intake.take(input.name, parts, origin=index))
        table = concat(tables)
        seen = len(ctx.skipped)
        keep = intake.first_rows(table)
        conflicts = dict.fromkeys(group, 0)
        for problem in ctx.skipped[seen:]:   # a copy of other content: its input's problem
            index = intake.first_input.get(str(problem.source), group[0])
            conflicts[index] += 1
            _count_skipped(by_index[index], [problem])
        origin_all = np.asarray(intake.origin, dtype=np.int64)
        kept_origin = origin_all[keep]
        size = max(group) + 1
        dropped = np.bincount(origin_all, minlength=size) - np.bincount(kept_origin,
                                                                         minlength=size)
        for index in group:   # copies of an episode kept from an earlier record
            by_index[index].duplicates = int(dropped[index]) - conflicts[index]
        ds = episode_dataset(table.take(pa.array(keep)))
        _write_group(ds, kept_origin, group, out=out, modes=modes, verdicts=verdicts,
                     records=by_index)
        finished = True
    except Exception as exc:
        # the group could not be scored at all (errors="raise" and a copy of other content):
        # each of its inputs failed, and none leaves a part that would be read as complete
        for index in group:
            _remove_parts(out, index)
            rec = by_index[index]
            rec.episodes = rec.batches = rec.left_out = 0
            rec.left_out_records = []
            rec.error = rec.error or f"{type(exc).__name__}: {exc}"
    finally:
        reading.finish(warn=finished)


def _count_skipped(rec: InputRecord, skipped: Sequence[Any]) -> None:
    rec.skipped += len(skipped)
    room = MAX_PROBLEMS - len(rec.problems)
    rec.problems += [str(s) for s in skipped[:max(0, room)]]


def _write_group(ds: Any, origin: Any, group: Sequence[int], *, out: str | Path,
                 modes: Mapping[str, Any], verdicts: Sequence[str],
                 records: Mapping[int, InputRecord]) -> None:
    """Score ``ds`` (the merged group) at every level at once and write each input's rows as
    its part; the ``compare_modes`` table of the group under its first input."""
    import numpy as np

    from ..metrics.compare_modes import compare_modes
    from ..score import score
    from .item import left_out_of
    from .verdicts import verdict_table

    table = verdict_table([str(v) for v in verdicts])
    of_episode = dict(zip(ds["episode_id"], origin.tolist(), strict=True))
    for index, n in zip(*np.unique(origin, return_counts=True), strict=True):
        records[int(index)].episodes = int(n)
        records[int(index)].batches = 1
    for level in LEVEL_DIRS:
        frame = score(ds, level=level, verdicts=table, **dict(modes))
        for left in left_out_of(frame, level):   # each under the input it came from
            rec = records[of_episode.get(left["record"], group[0])]
            rec.left_out += 1
            if len(rec.left_out_records) < MAX_PROBLEMS:
                rec.left_out_records.append(left)
        if not len(frame):
            continue
        rows = frame["episode_id"].map(of_episode).to_numpy()
        for index in group:
            part = frame[rows == index].reset_index(drop=True)
            write_part(out, level, part, input_index=index, batch_index=0)
    write_part(out, "modes", compare_modes(ds), input_index=group[0], batch_index=0)


def _remove_parts(out: str | Path, index: int) -> None:
    """Remove every part of input ``index`` (all its batches, every table)."""
    for sub in PART_DIRS.values():
        for path in (Path(out) / sub).glob(f"{index:05d}-*.parquet"):
            path.unlink(missing_ok=True)
