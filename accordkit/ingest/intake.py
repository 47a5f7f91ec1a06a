"""Taking in what a read gave: each input's parts into the load report, each episode once.

Every reader of inputs (:func:`accordkit.load`, :func:`~accordkit.ingest.read.load_input`,
a scoring engine's work item, a store's merged group of inputs) takes its parts in here, in
one of two forms:

* in memory (:meth:`Intake.take`, then :meth:`Intake.once`, or :func:`take_in` for a whole
  plan): every part is noted, and the rows are joined and kept once by
  :func:`~accordkit.ingest.merge.first_copies` (a copy of the same content is named in the
  report's ``duplicates``, one of other content is a problem of its record);
  :meth:`Intake.first_rows` gives the rows kept as positions, and :attr:`Intake.origin` the
  input each row came from, for a reader that attributes them to its inputs;
* streamed (:meth:`Intake.first_copies`, part by part, for an input too large to hold): the
  first copy of each episode id is kept and any later copy is a problem of its record, since
  the earlier rows are gone by then.

Both note a part the same way (:meth:`Intake.noted`): the episodes (and simulations) each file
gave, in :attr:`LoadReport.files <accordkit.ingest.report.LoadReport.files>`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ..schema import EpisodeValidationError
from .check import Part, concat, joined
from .context import ReadContext, ReadOptions
from .merge import first_copies
from .report import FileRead, LoadReport

if TYPE_CHECKING:
    from .inputs import Input
    from .read import Reading

__all__ = ["Intake", "take_in", "reported"]


def reported(errors: str, options: ReadOptions) -> tuple[ReadContext, LoadReport]:
    """A read context by the error policy ``errors`` and ``options`` whose problems and notes
    go to the load report given with it."""
    report = LoadReport()
    return ReadContext(errors, options, skipped=report.skipped,  # type: ignore[arg-type]
                       notes=report.notes), report


class Intake:
    """What one read took in: the report it fills and the first copy of each episode.

    Parameters
    ----------
    ctx : ReadContext
        The read's context: a later copy of other content is a problem by its error policy.
    report : LoadReport
        Filled as parts come: ``files`` for every part, ``duplicates`` by :meth:`once`.

    Examples
    --------
    >>> t = pa.table({"episode_id": ["a", "a"], "source": ["x", "x"]})
    >>> report = LoadReport()
    >>> intake = Intake(ReadContext("skip"), report)
    >>> rows = intake.take("x.jsonl", [Part(t, ["a (line 1)", "a (line 2)"])])
    >>> intake.once([rows]).num_rows, report.files["x.jsonl"].episodes, report.duplicates
    (1, 2, {'a': ['x.jsonl (line 1)', 'x.jsonl (line 2)']})
    """

    def __init__(self, ctx: ReadContext, report: LoadReport) -> None:
        self.ctx, self.report = ctx, report
        #: (file, record) of each row taken in memory, to name the copies of an episode
        self.where: list[tuple[str, str]] = []
        #: the input (the ``origin`` :meth:`take` was given) of each row taken in memory
        self.origin: list[int] = []
        #: the input each file was first taken from
        self.first_input: dict[str, int] = {}
        #: the episode ids streamed so far (:meth:`first_copies`)
        self.seen: set[str] = set()

    def noted(self, part: Part, name: str) -> None:
        """Count ``part`` under its file (``part.name``, else the input's ``name``)."""
        read = self.report.files.setdefault(part.name or name, FileRead())
        read.episodes += len(part)
        if part.simulations is not None:
            read.simulations = (read.simulations or 0) + part.simulations

    # ----------------------------------------------------------------- in memory

    def take(self, name: str, parts: Sequence[Part], *, origin: int = 0) -> pa.Table:
        """The parts of the input ``name`` (its rows marked ``origin``), noted, as one table
        (copies not yet dropped)."""
        for part in parts:
            file = part.name or name
            self.noted(part, name)
            self.first_input.setdefault(file, origin)
            self.where.extend((file, label) for label in part.labels)
            self.origin.extend([origin] * len(part))
        return joined(parts)

    def first_rows(self, table: pa.Table) -> np.ndarray:
        """The positions in ``table`` (the tables :meth:`take` gave, joined in order) of the
        first copy of each episode; a later copy is named in the report's ``duplicates``, or
        is a problem of its record if its content differs."""
        return first_copies(table, self.where, self.ctx, self.report.duplicates)

    def once(self, tables: Iterable[pa.Table]) -> pa.Table:
        """The tables :meth:`take` gave, in order, as one with each episode once."""
        table = concat(tables)
        keep = self.first_rows(table)
        return table if len(keep) == table.num_rows else table.take(pa.array(keep))

    # ----------------------------------------------------------------- streamed

    def first_copies(self, part: Part, name: str) -> Part:
        """``part`` without the episodes streamed before from this read (each a problem of
        its record), noted."""
        ids = part.table.column("episode_id").to_pylist()
        repeated = []
        for i, eid in enumerate(ids):  # a copy within the part too
            if eid in self.seen:
                repeated.append(i)
            self.seen.add(eid)
        if repeated:
            for i in repeated:
                self.ctx.problem(EpisodeValidationError(
                    "episode id read before from this input (the first copy was kept)",
                    source=part.name or name, record=part.labels[i], field="episode_id"))
            dropped = set(repeated)
            keep = [i not in dropped for i in range(len(ids))]
            part = Part(part.table.filter(pa.array(keep)),
                        [label for label, k in zip(part.labels, keep, strict=True) if k],
                        part.name, part.simulations)
        self.noted(part, name)
        return part


def take_in(reading: Reading, planned: Sequence[tuple[str, Sequence[Input]]],
            report: LoadReport) -> pa.Table:
    """Read every planned input in order (``(source, inputs)`` pairs) and take it in: the
    report's ``files`` and ``counts`` (the episodes each source gave, before copies were
    dropped) and ``duplicates``; one table, each episode once.

    The inputs are announced to ``reading`` first, so that the next file is read ahead.
    """
    reading.read_ahead([i for _, inputs in planned for i in inputs])
    intake = Intake(reading.ctx, report)
    tables: list[pa.Table] = []
    for source, inputs in planned:
        rows = 0
        for input in inputs:
            tables.append(intake.take(input.name, reading.parts(input), origin=len(tables)))
            rows += tables[-1].num_rows
        report.counts[source] = rows
    return intake.once(tables)
