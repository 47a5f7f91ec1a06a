"""The read context: all a reader sees of the load that asked it.

A reader gets the error policy (:attr:`ReadContext.errors`), where its problems and notes go
(:meth:`ReadContext.problem`, :meth:`ReadContext.note`) and the options of the load
(:attr:`ReadContext.options`). Nothing else: no loader, no cache, no registry.

Examples
--------
>>> from accordkit.schema import EpisodeValidationError
>>> ctx = ReadContext("skip")
>>> ctx.problem(EpisodeValidationError("bad", source="a.json", record="r1", field="f"))
>>> ctx.note("a.json: something odd")
>>> [str(s) for s in ctx.skipped], ctx.notes
(['file a.json, record r1, field f: bad'], ['a.json: something odd'])
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from ..schema import EpisodeValidationError
from .report import SkippedRecord

__all__ = ["ReadOptions", "ReadContext", "ERRORS"]

#: The error policies: stop at the first problem, or skip bad records and list them.
ERRORS = ("raise", "skip")


@dataclass(frozen=True)
class ReadOptions:
    """The options of a load that a reader may use.

    Attributes
    ----------
    config, split : str or None
        Only the rows of this config / split (hub datasets, dataset folders, canonical
        files); a results file has neither.
    revision : str or None
        Hub revision to pin.
    metadata : mapping or None
        What a source does not name (τ-bench files: ``agent_model``, ``domain`` ...).
    batch_rows : int
        About how many rows a reader gives in one part (tau2 results files, JSON Lines):
        the loader joins the parts, a scoring engine scores each as it comes.
    """

    config: str | None = None
    split: str | None = None
    revision: str | None = None
    metadata: Mapping[str, Any] | None = None
    batch_rows: int = 256

    def key(self) -> dict[str, Any]:
        """The options that change what is read (part of an episode cache key)."""
        return {"config": self.config, "split": self.split,
                "metadata": sorted((self.metadata or {}).items())}


@dataclass
class ReadContext:
    """Where a reader's problems and notes go, by the error policy.

    Attributes
    ----------
    errors : {"raise", "skip"}
        ``"raise"``: :meth:`problem` raises the error; ``"skip"``: it is listed in
        :attr:`skipped` and the reader goes on with the next record.
    options : ReadOptions
    skipped : list of SkippedRecord
    notes : list of str
        Oddities that did not stop a record (warnings a reader emits are notes too).
    """

    errors: Literal["raise", "skip"] = "raise"
    options: ReadOptions = field(default_factory=ReadOptions)
    skipped: list[SkippedRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.errors not in ERRORS:
            raise ValueError(f"errors must be 'raise' or 'skip', got {self.errors!r}")

    def problem(self, err: EpisodeValidationError) -> None:
        """Raise ``err`` or list it as skipped, by the error policy."""
        if self.errors == "raise":
            raise err
        self.skipped.append(SkippedRecord.from_error(err))

    def note(self, text: str) -> None:
        """Keep a note of the load (:func:`accordkit.load` emits each as a warning)."""
        self.notes.append(str(text))

    def fresh(self) -> ReadContext:
        """A context with these options that skips and keeps everything (what a read for
        the episode cache is made with, to be replayed by this one)."""
        return ReadContext("skip", self.options)

    def replay(self, skipped: list[dict[str, Any]] | list[SkippedRecord],
               notes: list[str]) -> None:
        """Report what another context (a cached read) listed, by this one's policy."""
        for item in skipped:
            if isinstance(item, SkippedRecord):
                item = {"source": item.source, "record": item.record, "field": item.field,
                        "reason": item.reason}
            self.problem(EpisodeValidationError(item["reason"], source=item["source"],
                                                record=item["record"], field=item["field"]))
        self.notes.extend(notes)

    @contextmanager
    def warnings_as_notes(self) -> Iterator[None]:
        """Keep the warnings emitted inside the block as notes (a report run stays quiet,
        and a cached load reports them again)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        # kept when the block ends normally: a file that fails as a whole has no notes
        self.notes.extend(str(w.message) for w in caught)
