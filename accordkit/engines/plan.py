"""Which batches a scoring run reads: the same plan for every engine, and the loader's.

The inputs are those of :func:`accordkit.ingest.plan.plan` (the plan :func:`accordkit.load`
reads by), named as the user gave them (made absolute), each with its sha256. A parquet
input (known by its content) becomes one work item per group of row groups (about
``batch_size`` rows each); any other input one item (a results file, a JSONL file, a
dir-format tau2 run, a hub id), which the engine reads in parts of about ``batch_size``
episodes. Modes that pool over a whole file (the upstream TCRR modes) keep each file in one
item. An input that cannot be opened gets no item and its error is kept for the manifest:
nothing is left out without saying so.

A :class:`WorkItem` is a frozen ``msgspec`` struct: every engine hands it on in one form,
:meth:`WorkItem.encode` (JSON bytes), and reads it back with :meth:`WorkItem.decode`, so an
item crosses processes and Ray's pandas batches whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import msgspec

from ..ingest.context import ReadOptions
from ..ingest.formats.parquet import Parquet, open_parquet
from ..ingest.inputs import Card, Input, is_url
from ..ingest.plan import plan, read_once
from ..store import InputRecord

__all__ = ["CardPart", "WorkItem", "plan_work", "expand_sources", "is_url"]

#: What a dataset folder's card says of one of its data files (config, split, folder).
CardPart = Card


class WorkItem(msgspec.Struct, frozen=True):
    """One batch to read and score.

    Attributes
    ----------
    input_index : int
        Position of its input in the plan.
    batch_index : int
        Position of the batch within that input (the first, for an item read in parts).
    source : str
        The input's name (a path as given, made absolute; a URL; a hub id).
    kind : {"parquet", "file", "modes"}
        ``"parquet"`` reads ``row_groups`` of a canonical parquet file; ``"file"`` reads the
        whole input, in parts; ``"modes"`` computes the :func:`accordkit.compare_modes`
        table of the goal-shift episodes of all parquet inputs (``sources``), one ``source``
        group at a time across them: the upstream modes pool a whole source file, whose
        rows may lie in several shards.
    row_groups : tuple of int
        For parquet items: the row groups to read.
    rows : int
        Rows in the batch (parquet) or 0 when unknown before reading.
    sources : tuple of str
        For the modes item: the parquet inputs.
    card : Card or None
        For a data file of a dataset folder: what its card says of it.
    cards : tuple of (Card or None)
        For the modes item: the ``card`` of each of ``sources``.
    input : Input or None
        The input it reads (what the plan found: its kind, file, card).
    inputs : tuple of Input
        For the modes item: the parquet inputs.
    """

    input_index: int
    batch_index: int
    source: str
    kind: str
    row_groups: tuple[int, ...] = ()
    rows: int = 0
    sources: tuple[str, ...] = ()
    card: Card | None = None
    cards: tuple[Card | None, ...] = ()
    input: Input | None = None
    inputs: tuple[Input, ...] = ()

    def read(self) -> Input:
        """The input this item reads (one made from ``source`` and ``card`` when the item
        was built without it)."""
        if self.input is not None:
            return self.input
        return _input_of(self.source, self.card)

    def files(self) -> list[Input]:
        """The inputs the item reads: the modes item's, else its own."""
        if self.inputs:
            return list(self.inputs)
        if self.sources:
            cards = list(self.cards) or [None] * len(self.sources)
            return [_input_of(s, c) for s, c in zip(self.sources, cards, strict=True)]
        return [self.read()]

    def encode(self) -> bytes:
        """The item as JSON: the one form in which every engine hands it on."""
        return msgspec.json.encode(self)

    @classmethod
    def decode(cls, data: bytes | str) -> WorkItem:
        """The item :meth:`encode` wrote."""
        return msgspec.json.decode(data, type=cls)


def _input_of(source: str, card: Card | None) -> Input:
    return Input(name=source, path=source, card=card, origin=card.folder if card else None)


def expand_sources(sources: Sequence[str], *, split: str | None = None) -> list[str]:
    """The files (and hub ids) behind ``sources``, in a stable order: each input's file (a
    dir-format run's metadata file), absolute as given; a folder with nothing to read stays
    a source, so that the plan can say so.

    The inputs are those :func:`accordkit.load` reads (:func:`accordkit.ingest.plan.plan`).
    """
    return [i.path if i.kind in ("file", "run") and i.path else i.name
            for i in plan(list(sources), options=ReadOptions(split=split), absolute=True)]


def plan_work(sources: Sequence[str], *, batch_size: int = 20_000,
              whole_files: bool = False, split: str | None = None,
              ) -> tuple[list[WorkItem], list[InputRecord]]:
    """Plan the batches of a scoring run.

    Parameters
    ----------
    sources : list of str
        Files, folders, hub ids or fsspec URLs.
    batch_size : int
        Rows per parquet batch (whole row groups are read, so a batch may hold more when a
        row group is larger).
    whole_files : bool
        One item per file whatever its size (for modes that pool over a file).
    split : str, optional
        Of a dataset folder, only the files of this split (as :func:`accordkit.load`'s
        ``split=``; other inputs are filtered by rows when read).

    Returns
    -------
    items : list of WorkItem
    inputs : list of InputRecord
        One per input, named as given (absolute) with the file it resolves to beside it
        (``real``) and its sha256, or its error when it cannot be opened; an input that
        repeats an earlier one (the same real file) has no items and names it (``same_as``).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    items: list[WorkItem] = []
    records: list[InputRecord] = []
    parquet: list[tuple[int, int, Input]] = []
    inputs = plan(list(sources), options=ReadOptions(split=split), absolute=True)
    once = read_once(inputs)
    for index, input in enumerate(inputs):
        record = InputRecord(index=index, source=_recorded(input), real=input.real)
        records.append(record)
        if input.kind == "problem":
            record.error = input.problem.reason if input.problem else "unreadable"
            continue
        if once[index] != index:
            record.same_as = once[index]
            continue
        if input.kind == "hub":
            items.append(WorkItem(index, 0, input.name, "file", input=input))
            continue
        try:
            input = input.with_digest()
            is_parquet = input.kind == "file" and Parquet().sniff(input)
        except OSError as exc:
            record.error = f"unreadable: {exc}"
            continue
        record.sha256, record.size, record.mtime_ns = input.sha256, input.size, input.mtime_ns
        if not is_parquet:
            items.append(WorkItem(index, 0, input.name, "file", card=input.card, input=input))
            continue
        try:
            meta = open_parquet(input).metadata
        except Exception as exc:  # noqa: BLE001 - any failure to open is this input's error
            record.error = f"unreadable parquet file ({type(exc).__name__}: {exc})"
            continue
        groups = [(g, meta.row_group(g).num_rows) for g in range(meta.num_row_groups)]
        for b, batch in enumerate(_batches(groups, batch_size, whole=whole_files)):
            items.append(WorkItem(index, b, input.name, "parquet",
                                  tuple(g for g, _ in batch), sum(n for _, n in batch),
                                  card=input.card, input=input))
        if groups:
            parquet.append((index, len(_batches(groups, batch_size, whole=whole_files)),
                            input))
    if parquet:
        # one item for the compare_modes table of every parquet input, named after the first
        index, batch, first = parquet[0]
        items.append(WorkItem(index, batch, first.name, "modes",
                              sources=tuple(i.name for _, _, i in parquet),
                              cards=tuple(i.card for _, _, i in parquet),
                              inputs=tuple(i for _, _, i in parquet)))
    return items, records


def _batches(groups: list[tuple[int, int]], batch_size: int, *,
             whole: bool) -> list[list[tuple[int, int]]]:
    """Consecutive row groups ``(group, rows)`` in batches of at least ``batch_size`` rows
    (the last may hold fewer); all in one with ``whole``."""
    if whole:
        return [groups] if groups else []
    batches: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    rows = 0
    for g, n in groups:
        current.append((g, n))
        rows += n
        if rows >= batch_size:
            batches.append(current)
            current, rows = [], 0
    if current:
        batches.append(current)
    return batches


def _recorded(input: Input) -> str:
    """How the manifest names an input: its file (a dir-format run's metadata file, whose
    digest the manifest keeps), as given; a URL or hub id as it is."""
    if input.kind in ("file", "run") and input.path and not is_url(input.path):
        return str(Path(input.path))
    return input.name
