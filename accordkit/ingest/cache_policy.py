"""The episode cache around one load's reads: what is looked up, kept and written, and when.

The cache's storage is :mod:`accordkit.ingest.cache`; this module is its policy for one load
(or one work item), :class:`EpisodeCache`:

* a text file is keyed by the sha256 of its bytes (remembered by stat, so an unchanged file
  is not read), its name and the load's options (:meth:`EpisodeCache.file_entry`); a
  dir-format run by every file's sha256 and its name, written only if no file changed while
  it was read (:meth:`EpisodeCache.run_entry`);
* a miss is read with a context that skips and keeps everything (:func:`capture`) and the
  entry replayed by the load's own policy (:func:`replay`), so a cached read reports the same
  problems and notes as a fresh one;
* a clean load of several files is kept as one cache file too, so that the same load again is
  one read (:meth:`EpisodeCache.remember`, :meth:`EpisodeCache.remembered`);
* the entries made and the digests taken are written between files and at the end
  (:meth:`EpisodeCache.finish`); a failure to write never stops the load.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..schema import EpisodeValidationError
from .cache import (
    CacheEntry,
    CacheFile,
    DigestNote,
    StatTaken,
    cache_key,
    file_digest,
    files_key,
    known_digest,
    read_entry,
    read_file,
    real_path,
    remember_digest,
    remembered_entry,
    store_file,
    take_stat,
    warn_unwritable,
    write_digests,
    write_entry,
)
from .check import WHOLE_FILE, Part, joined
from .context import ReadContext, ReadOptions
from .inputs import Input
from .registry import cache_key as readers_key
from .report import FileRead

__all__ = ["EpisodeCache", "capture", "replay"]


def capture(read: Callable[[ReadContext], list[Part]], ctx: ReadContext,
            name: str) -> CacheEntry:
    """Read an input for the cache: ``read(sub)``, with ``sub`` a context of ``ctx``'s
    options that skips and keeps everything; the entry keeps all the read reported (a
    problem of the whole input is one of ``name``)."""
    sub = ctx.fresh()
    try:
        parts = read(sub)
    except EpisodeValidationError as exc:
        sub.problem(EpisodeValidationError(
            exc.reason, source=exc.source or name, record=exc.record or WHOLE_FILE,
            field=exc.field))
        parts = []
    sims = [p.simulations for p in parts if p.simulations is not None]
    return CacheEntry(joined(parts), [label for p in parts for label in p.labels],
                      [asdict(s) for s in sub.skipped], list(sub.notes),
                      sum(sims) if sims else None)


def replay(entry: CacheEntry, name: str, ctx: ReadContext) -> list[Part]:
    """Report what a (cached) read of ``name`` found, by ``ctx``'s policy; its rows."""
    whole = any(item["record"] == WHOLE_FILE and item["source"] == name
                for item in entry.skipped)
    ctx.replay(entry.skipped, entry.notes)
    if whole:
        return []
    return [Part(entry.table, list(entry.labels), simulations=entry.simulations)]


class EpisodeCache:
    """The episode cache's policy for one load's reads.

    Parameters
    ----------
    options : ReadOptions
        The load's options (part of every key, with the registered readers' versions).
    """

    def __init__(self, options: ReadOptions) -> None:
        self._load_options, self._options = options, None
        #: what went wrong writing cache entries, said by :meth:`finish`
        self.write_errors: list[Exception] = []
        #: the digests of the files hashed, remembered once, by :meth:`finish`
        self.memos: list[DigestNote] = []
        #: (input name, entry key) of each file read through the cache, in the order read
        #: (see :meth:`remember`), with the entry found or made
        self.keys: list[tuple[str, str]] = []
        self.entries: dict[str, CacheEntry] = {}
        #: the entries made (written by :meth:`finish`, in one cache file), the report of a
        #: clean load of several files, and the cache files read
        self.made: dict[str, tuple[Input, CacheEntry]] = {}
        self.load_report: tuple[list[str], dict[str, Any]] | None = None
        self.opened: dict[str, CacheFile | None] = {}
        #: the inputs whose captured read may not be the bytes of their key: not stored
        self.unkept: set[str] = set()

    def options(self) -> dict[str, Any]:
        """The options that are part of every cache key: the load's, and the registered
        readers' names and versions."""
        if self._options is None:
            self._options = {**self._load_options.key(), "readers": readers_key()}
        return self._options

    # ----------------------------------------------------------------- one input

    def file_entry(self, input: Input, fetched: tuple[bytes, bytes | None, StatTaken] | None,
                   read: Callable[[Input], CacheEntry]) -> CacheEntry:
        """The entry of the local text file ``input``: found by its remembered digest
        without reading it, else by the digest of its bytes (``fetched``: read ahead, with
        their digest and the stat taken before), else made by ``read`` (given the input
        with its bytes: see :func:`capture`) and kept to be written by :meth:`finish`."""
        name = input.name
        path = Path(str(input.path))
        options = self.options()
        real = Path(input.real) if input.real else real_path(path)
        try:
            taken: StatTaken | None = take_stat(real)
        except OSError:
            # where a link led is gone (repointed since): look again; else reading it
            # says what is wrong
            real = real_path(path)
            try:
                taken = take_stat(real)
            except OSError:
                taken = None
        sha = None if taken is None else known_digest(real, taken.stat)
        known = None if sha is None else cache_key(None, path=name, options=options,
                                                   digest=sha)
        entry = None if known is None else self._cached(real, known)
        key = known
        if entry is None:
            # the stat remembered with the digest is one taken before the bytes were read
            # and both are of the file ``real`` names (a symbolic link repointed meanwhile
            # is read as it was when the load found where it led); a digest remembered for
            # that stat (by the plan of a scoring run, say) is not taken again
            data, digest, taken = (real.read_bytes(), sha, taken) if fetched is None \
                else fetched
            digest = remember_digest(real, data, taken, memos=self.memos, digest=digest)
            key = cache_key(None, path=name, options=options, digest=digest)
            entry = self._cached(real, key) if key != known else None
            if entry is None:
                entry = read(input.with_data(data))
                if name not in self.unkept:
                    self.made[key] = (input, entry)
        self.keys.append((name, key))
        self.entries[key] = entry
        return entry

    def run_entry(self, input: Input, files_of: Callable[[Path], list[Path]],
                  read: Callable[[], CacheEntry]) -> CacheEntry:
        """The entry of the dir-format run ``input``: the key covers every file's sha256
        (``files_of(meta)`` lists them; digests remembered by stat, as for single files) and
        its name. On a miss ``read()`` makes it; the files are listed and their digests taken
        again after the read, and the entry is written only if no file was added, removed or
        changed meanwhile."""
        options = self.options()
        meta = Path(str(input.path))
        folder = meta.parent

        def digest(files: Sequence[Path]) -> bytes:
            h = hashlib.sha256()
            for f in files:
                h.update(str(f.relative_to(folder)).encode() + b"\0"
                         + file_digest(real_path(f), memos=self.memos))
            return h.digest()

        files = files_of(meta)
        before = digest(files)
        self.write(write_digests, self.memos)  # so that the second look reads no file again
        self.memos = []
        key = cache_key(None, path=input.name, options=options, digest=before)
        entry = read_entry(key)
        if entry is None:
            entry = read()
            after = files_of(meta)
            if after == files and digest(after) == before and input.name not in self.unkept:
                self.write(write_entry, key, entry)
        return entry

    def _cached(self, real: Path, key: str) -> CacheEntry | None:
        """The cache entry ``key`` of the file ``real``: stored on its own, or in the cache
        file of a load that read it with others (which the folder's digest memo names)."""
        for name in (key, remembered_entry(real, key)):
            if name is None:
                continue
            if name not in self.opened:
                self.opened[name] = read_file(name)
            found = self.opened[name]
            if found is not None and key in found.entries:
                return found.entries[key]
        return None

    # ----------------------------------------------------------------- a whole load

    def remembered(self, inputs: Sequence[Input], report: Any) -> pa.Table | None:
        """The rows of a load of these same files, when one was stored; fills ``report``.

        Only a load of several files that the cached text path reads (no dir-format run, no
        parquet file) and whose digests are all remembered can be found this way (a new or
        changed file means reading it), and only a clean one was stored (see
        :meth:`remember`). Each key covers the file's name and bytes, so the uncached
        (parquet) reader, which knows a file by its first bytes, is not asked again.
        """
        if len(inputs) < 2:
            return None
        options = self.options()
        keys = []
        for input in inputs:
            if input.kind != "file" or input.is_url or input.real is None:
                return None
            key = _known_key(input.name, Path(input.real), options)
            if key is None:
                return None
            keys.append(key)
        found = read_file(files_key(keys, sources=_load_names(inputs)))
        if found is None or found.load is None or list(found.entries) != keys \
                or any(entry.skipped for entry in found.entries.values()):
            return None
        try:
            files = {src: FileRead(int(n), None if sims is None else int(sims))
                     for src, (n, sims) in found.load["files"].items()}
            counts = {src: int(n) for src, n in found.load["counts"].items()}
            notes = [str(note) for note in found.load["notes"]]
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        report.files.update(files)
        report.counts.update(counts)
        report.notes.extend(notes)
        return found.table

    def remember(self, inputs: Sequence[Input], report: Any, rows: int) -> None:
        """Keep a clean load of several files, each read through the cache, as one cache
        file (written by :meth:`finish`): every file's entry, in order, and the load's
        report, so that the same load again is one read."""
        # each input read once, through the cache, in order (its key is what was read)
        if len(inputs) < 2 or report.skipped or report.duplicates \
                or self.unkept or [n for n, _ in self.keys] != [i.name for i in inputs] \
                or sum(f.episodes for f in report.files.values()) != rows:
            return
        self.load_report = (_load_names(inputs), {
            "files": {src: [f.episodes, f.simulations] for src, f in report.files.items()},
            "counts": dict(report.counts), "notes": list(report.notes)})

    # ----------------------------------------------------------------- writing

    def _store_made(self) -> None:
        """Write the entries this load made, in one cache file: the load's (with every
        entry it read) for a clean load of several files, else under the one entry's key,
        or the key of the files read; the folders' memos then say where each entry is."""
        if self.load_report is not None:
            sources, load = self.load_report
            entries = [(key, self.entries[key]) for _, key in self.keys]
            name = files_key([key for key, _ in entries], sources=sources)
        elif self.made:
            entries = [(key, entry) for key, (_, entry) in self.made.items()]
            load = None
            name = entries[0][0] if len(entries) == 1 else \
                files_key([key for key, _ in entries],
                          sources=[input.name for input, _ in self.made.values()])
        else:
            return
        self.write(lambda: store_file(name, entries, load=load))
        if name != entries[0][0] or len(entries) > 1:
            self.memos += [DigestNote(Path(input.real) if input.real else
                                      real_path(Path(str(input.path))),
                                      {"entry": {"file": name, "key": key}})
                           for key, (input, _) in self.made.items()]

    def write(self, fn: Any, *args: Any) -> None:
        """Write to the cache (``fn(*args)``): a failure never stops the load, and
        :meth:`finish` says it.

        Writes are made here, between files, not on a thread of their own: a writing thread
        takes the interpreter lock back after each of its system calls, and on a two-core
        machine the handovers slowed the reading of the other files by more than the
        writes cost (21 result files: a first load at 2.40x ``json.loads`` with the writing
        thread, 2.02x with the writes made here, medians of 16 fresh processes each). After
        one write fails with an ``OSError`` (a read-only folder), the others are not tried.
        """
        if any(isinstance(exc, OSError) for exc in self.write_errors):
            return
        try:
            fn(*args)
        except Exception as exc:  # noqa: BLE001 - said by finish, after the load
            self.write_errors.append(exc)

    def finish(self, *, warn: bool = True) -> None:
        """Write what the cache is to keep, and say what went wrong writing it: a folder that
        cannot be written gives one warning (the rows were read all the same); any other
        failure is raised, unless the load failed (its own error is the one to see)."""
        if self.made or self.load_report is not None:
            self._store_made()
        self.made, self.load_report, self.opened, self.entries = {}, None, {}, {}
        if self.memos:
            memos, self.memos = self.memos, []
            self.write(write_digests, memos)
        errors, self.write_errors = self.write_errors, []
        if not warn:
            return
        for exc in errors:
            if isinstance(exc, OSError):
                warn_unwritable(exc)
            else:
                raise exc


def _load_names(inputs: Sequence[Input]) -> list[str]:
    """What names a load of several files: each input's name, and the sources as given (the
    report counts episodes by them)."""
    return [i.name for i in inputs] + ["(sources given)"] + list(dict.fromkeys(
        i.source for i in inputs))


def _known_key(name: str, real: Path, options: dict[str, Any],
               st: os.stat_result | None = None) -> str | None:
    """The cache key of the file ``name`` (``real``: its real path; ``st``: its stat, when
    taken) whose digest is remembered (no read), else None."""
    known = known_digest(real, st)
    return None if known is None else cache_key(None, path=name, options=options,
                                                digest=known)
