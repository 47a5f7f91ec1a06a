"""What a load read and left out: the report every read fills, and its warnings."""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..schema import EpisodeValidationError

__all__ = ["LoadReport", "FileRead", "SkippedRecord", "SkippedRecordsWarning",
           "DuplicateEpisodesWarning", "SourceNotFoundError", "FILE_RECORDS", "warn_skipped"]


class SourceNotFoundError(EpisodeValidationError, FileNotFoundError):
    """A source is neither an existing path nor a hub id (also a ``FileNotFoundError``)."""


SourceNotFoundError.__module__ = "accordkit.load"  # its public home


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


@dataclass
class LoadReport:
    """What :func:`accordkit.load_with_report` read.

    Attributes
    ----------
    skipped : list of SkippedRecord
        Every record (or whole file) left out by ``errors="skip"``, with the reason.
    duplicates : dict
        ``episode_id -> copies`` for episodes found more than once with identical content
        (kept once, from the first copy): the file each copy was loaded from, with its line,
        item or row for canonical files (``eps.jsonl (line 3)``).
    counts : dict
        Episodes read from each source given (before duplicates were removed).
    files : dict
        ``file -> FileRead`` for every file (or hub config / split) read: episodes kept,
        and for results files the number of simulations it holds.
    notes : list of str
        Oddities in the data that did not stop a record (e.g. a task defined twice);
        :func:`accordkit.load` emits each as a ``UserWarning``.
    """

    skipped: list[SkippedRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    duplicates: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    files: dict[str, FileRead] = field(default_factory=dict)


@dataclass
class FileRead:
    """What one file gave: ``episodes`` loaded and, for a results file, ``simulations``."""

    episodes: int = 0
    simulations: int | None = None
