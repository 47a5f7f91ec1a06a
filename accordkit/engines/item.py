"""One work item: read, scored and written into the store, in whatever process runs it
(the local engine's workers, a Ray task). Never raises for a bad input: the result says."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..ingest.formats.parquet import open_parquet
from ..store import LEVEL_DIRS, PART_DIRS, part_name, write_part
from .plan import WorkItem
from .reading import ItemReading
from .verdicts import verdict_table

__all__ = ["score_item", "write_scored", "left_out_of", "LEVELS", "MAX_PROBLEMS", "MODES_PASS_ROWS"]

LEVELS = tuple(LEVEL_DIRS)
#: Problems kept per input in the manifest (the counts are always complete).
MAX_PROBLEMS = 20


#: Source groups of a ``compare_modes`` item are read together while their rows add up to
#: no more than this, so that a row group holding rows of several groups is read once per
#: pass, not once per group (copies of a data set interleave their source files).
MODES_PASS_ROWS = 50_000


def _modes_passes(groups: list[list[tuple[int, int, Any]]], *,
                  max_rows: int) -> list[list[list[tuple[int, int, Any]]]]:
    """Consecutive source groups (lists of ``(file, row group, rows)``) in passes of at most
    ``max_rows`` rows; a larger group is a pass of its own."""
    passes: list[list[list[tuple[int, int, Any]]]] = []
    total = 0
    for pieces in groups:
        n = sum(len(rows) for _, _, rows in pieces)
        if not passes or total + n > max_rows:
            passes.append([])
            total = 0
        passes[-1].append(pieces)
        total += n
    return passes


def _goalshift_sources(opened: Sequence[Any], origins: Sequence[str],
                       ) -> dict[str, list[tuple[int, int, Any]]]:
    """``source value -> [(file, row group, rows within it)]`` of the goal-shift rows of
    opened parquet files, in order of first appearance (a pass over two small columns).

    A row with no ``source`` belongs to its file's ``origins`` entry (the file, or its
    dataset folder), as :func:`accordkit.load` fills it: the null rows of two files are
    two sources, not one.
    """
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..score import GOALSHIFT_BENCHMARKS

    where: dict[str, list[tuple[int, int, Any]]] = {}
    for f, pf in enumerate(opened):
        if not {"benchmark", "source"} <= set(pf.schema_arrow.names):
            continue
        for g in range(pf.metadata.num_row_groups):
            keys = pf.read_row_group(g, columns=["benchmark", "source"])
            goal = pc.fill_null(pc.is_in(keys.column("benchmark"),
                                         value_set=pa.array(GOALSHIFT_BENCHMARKS)), False)
            rows = np.flatnonzero(goal.to_numpy(zero_copy_only=False))
            if len(rows):
                values = pc.fill_null(keys.column("source"), origins[f]).take(pa.array(rows))
                codes, uniques = pd.factorize(np.asarray(values.to_pylist(), dtype=object))
                for k, src in enumerate(uniques):
                    where.setdefault(src, []).append((f, g, rows[codes == k]))
    return where


def _parquet_modes(item: WorkItem, *, split: str | None) -> Any:
    """:func:`accordkit.compare_modes` of the parquet inputs, one ``source`` group at a time.

    The upstream TCRR pools the conversations of a source file, so each group is scored
    whole, wherever its rows lie (shards of one data set may split a source file). A pass
    over two small columns of every file finds the groups; groups are then read in passes of
    up to :data:`MODES_PASS_ROWS` rows (each row group a pass touches read once), scored one
    at a time and freed: memory holds one pass (or one larger group) and one row group.
    Records the score batches skipped are skipped here too, without being counted again.
    """
    import pandas as pd
    import pyarrow as pa

    from ..ingest.context import ReadContext, ReadOptions
    from ..ingest.formats.parquet import read_parquet
    from ..metrics.compare_modes import COMPARE_COLUMNS, compare_modes
    from ..schema.arrow import episode_dataset

    inputs = item.files()
    opened = [open_parquet(i) for i in inputs]
    where = _goalshift_sources(opened, [i.fills for i in inputs])
    frames = []
    for groups in _modes_passes(list(where.values()), max_rows=MODES_PASS_ROWS):
        # one read of each row group the pass touches, its rows split among the groups
        wanted: dict[tuple[int, int], list[tuple[int, Any]]] = {}
        for k, pieces in enumerate(groups):
            for f, g, rows in pieces:
                wanted.setdefault((f, g), []).append((k, rows))
        parts: list[list[pa.Table]] = [[] for _ in groups]
        for f, g in sorted(wanted):
            row_group = opened[f].read_row_group(g)
            for k, rows in wanted[(f, g)]:
                parts[k].append(row_group.take(pa.array(rows)))
            del row_group
        for k, pieces in enumerate(groups):
            first = inputs[pieces[0][0]]
            # a data file of a dataset folder has its card's split (the plan chose the files
            # by split); the rows of any other file are chosen by split here
            ctx = ReadContext("skip", ReadOptions(split=None if first.card else split))
            ds = episode_dataset(read_parquet(first, ctx, table=pa.concat_tables(parts[k])).table)
            parts[k] = []
            frame = compare_modes(ds)
            if len(frame):
                frames.append(frame)
    return (pd.concat(frames, ignore_index=True) if frames
            else pd.DataFrame(columns=COMPARE_COLUMNS))


def left_out_of(frame: Any, level: str) -> list[dict[str, Any]]:
    """The episodes a scored level's frame says its analysis left out (``attrs["left_out"]``
    of :func:`accordkit.action_diff`), each with its ``level``, as the manifest lists them.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame()
    >>> frame.attrs["left_out"] = [{"source": "a.json", "record": "tau2/1", "field": None,
    ...                             "reason": "x"}]
    >>> left_out_of(frame, "action")
    [{'level': 'action', 'source': 'a.json', 'record': 'tau2/1', 'field': None, 'reason': 'x'}]
    """
    return [{"level": level, **dict(r)} for r in frame.attrs.get("left_out") or ()]


def write_scored(ds: Any, out: str | Path, *, input_index: int, batch_index: int,
                 modes: Mapping[str, Any], verdicts: Any = None,
                 with_modes: bool = True, left_out: list[dict[str, Any]] | None = None,
                 ) -> int:
    """Score ``ds`` at every level into parts of the store ``out``; returns the parts written.

    ``with_modes`` also writes its :func:`accordkit.compare_modes` table, which is right only
    when ``ds`` holds whole source files (a results file, everything loaded at once).
    ``left_out``, when given, gets the episodes an analysis left out (:func:`left_out_of`).
    """
    from ..score import score

    parts = 0
    for level in LEVELS:
        frame = score(ds, level=level, verdicts=verdicts, **dict(modes))
        if left_out is not None:
            left_out += left_out_of(frame, level)
        parts += write_part(out, level, frame, input_index=input_index,
                            batch_index=batch_index) is not None
    if with_modes:
        from ..metrics.compare_modes import compare_modes

        parts += write_part(out, "modes", compare_modes(ds), input_index=input_index,
                            batch_index=batch_index) is not None
    return parts


def score_item(item: WorkItem | bytes | str, *, out: str, modes: Mapping[str, Any],
               errors: str = "skip", metadata: Mapping[str, Any] | None = None,
               load_options: Mapping[str, Any] | None = None,
               verdicts: Sequence[str] = (), batch_size: int = 20_000,
               ) -> dict[str, Any]:
    """Read, score and store one work item; never raises for a bad input.

    ``item`` is a :class:`~accordkit.engines.plan.WorkItem` or its encoded form
    (:meth:`~accordkit.engines.plan.WorkItem.encode`). A ``"modes"`` item writes the
    :func:`accordkit.compare_modes` table of the parquet inputs; a whole input (``"file"``)
    is read in batches of about ``batch_size`` episodes (:class:`~accordkit.engines.reading.
    ItemReading`), each scored and written as a part of its own, and writes its
    :func:`accordkit.compare_modes` table with them.

    Returns
    -------
    dict
        ``input_index``, ``batch_index``, ``kind``, ``episodes``, ``skipped``, ``problems``
        (first reasons), ``notes``, ``left_out`` (episodes an analysis left out while
        scoring) and ``left_out_records`` (the first of them, :func:`left_out_of`),
        ``error`` (why the item could not be scored at all, or None), ``parts`` (files
        written) and ``batches`` (batches of scores written).
    """
    if not isinstance(item, WorkItem):
        item = WorkItem.decode(item)
    result = {"input_index": item.input_index, "batch_index": item.batch_index,
              "kind": item.kind, "episodes": 0, "skipped": 0, "problems": [], "notes": [],
              "error": None, "parts": 0, "batches": 0, "left_out": 0, "left_out_records": []}
    written: list[int] = []
    left_out: list[dict[str, Any]] = []
    try:
        if item.kind == "modes":
            frame = _parquet_modes(item, split=dict(load_options or {}).get("split"))
            if write_part(out, "modes", frame, input_index=item.input_index,
                          batch_index=item.batch_index) is not None:
                result["parts"] += 1
            return result
        reading = ItemReading(item, errors=errors, metadata=metadata,
                              load_options=load_options, batch_size=batch_size)
        table = verdict_table([str(v) for v in verdicts])
        goalshift: list[Any] = []
        for ds in reading.batches():
            if not len(ds):
                continue
            batch = item.batch_index + len(written)
            written.append(batch)
            result["parts"] += write_scored(ds, out, input_index=item.input_index,
                                            batch_index=batch, modes=modes, verdicts=table,
                                            with_modes=False, left_out=left_out)
            result["episodes"] += len(ds)
            if item.kind == "file":
                goalshift.append(_goalshift_rows(ds))
        report = reading.report
        skipped = report.skipped
        result["notes"] = [str(n) for n in report.notes[:MAX_PROBLEMS]]
        if not result["episodes"] and skipped and all(s.concerns_the_file for s in skipped):
            # nothing of the input could be read (a truncated results file, a header of the
            # wrong type): a failed input, as an unreadable parquet file is, not one
            # skipped record
            first = skipped[0]
            result["error"] = f"field {first.field}: {first.reason}"
            return result
        result["skipped"] = len(skipped)
        result["problems"] = [str(s) for s in skipped[:MAX_PROBLEMS]]
        result["left_out"] = len(left_out)
        result["left_out_records"] = left_out[:MAX_PROBLEMS]
        if item.kind == "file":
            result["parts"] += _write_modes(goalshift, out, input_index=item.input_index,
                                            batch_index=item.batch_index)
        result["batches"] = len(written)
    except Exception as exc:  # noqa: BLE001 - one bad input never stops the others
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["episodes"] = 0
        # a level written before the failure would be read as if the item had succeeded
        for batch in written or [item.batch_index]:
            for sub in PART_DIRS.values():
                (Path(out) / sub / part_name(item.input_index, batch)).unlink(missing_ok=True)
        result["parts"] = result["batches"] = 0
        result["left_out"], result["left_out_records"] = 0, []
    return result


def _goalshift_rows(ds: Any) -> Any:
    """The goal-shift rows of a batch (the only ones :func:`accordkit.compare_modes` reads)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .._internal.arrow import arrow_table
    from ..score import GOALSHIFT_BENCHMARKS

    table = arrow_table(ds)
    keep = pc.fill_null(pc.is_in(table.column("benchmark"),
                                 value_set=pa.array(GOALSHIFT_BENCHMARKS)), False)
    return table.filter(keep)


def _write_modes(tables: list[Any], out: str, *, input_index: int, batch_index: int) -> int:
    """Write the :func:`accordkit.compare_modes` table of an input's goal-shift rows (every
    batch's: the upstream modes pool a whole source file); the parts written."""
    from ..ingest.check import concat
    from ..metrics.compare_modes import compare_modes
    from ..schema.arrow import episode_dataset

    ds = episode_dataset(concat(tables))
    return int(write_part(out, "modes", compare_modes(ds), input_index=input_index,
                          batch_index=batch_index) is not None)
