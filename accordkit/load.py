"""``load``: any supported source -> one ``datasets.Dataset`` of canonical episodes.

Sources are recognised by what they contain, not by their names:

* a Hugging Face hub id (``org/name``), loaded with :func:`datasets.load_dataset`;
* a local dataset folder in hub layout (parquet files, usually with a dataset card naming
  configs), loaded the same way, so a folder and its hub copy give identical datasets;
* a parquet or JSONL file of canonical episodes (also a JSON array of them);
* a tau2-bench / AgentChangeBench results JSON file, a dir-format run
  (``results.json`` + ``simulations/``), or a folder of such files;
* a τ-bench (v1) result file (a JSON list of run records, :mod:`accordkit.ingest.formats.taubench`);
* a list of any of these, loaded as one dataset.

A path that exists locally is never treated as a hub id.

Every problem becomes an :class:`~accordkit.schema.EpisodeValidationError` naming the file,
the record (simulation / episode id, or its position; ``(whole file)`` for a file that cannot
be read at all) and the field. With ``errors="skip"`` the problem records are left out and
listed instead, so that nothing is dropped silently.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal, NamedTuple

import datasets
import numpy as np
import pyarrow as pa

from . import readers
from ._internal.gc import gc_paused
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
from .ingest.check import joined, table_part
from .ingest.context import ReadContext, ReadOptions
from .ingest.contract import parts_of
from .ingest.formats import parquet as _parquet  # noqa: F401
from .ingest.formats.hub import Hub, is_hub_id
from .ingest.inputs import Input
from .ingest.report import (
    DuplicateEpisodesWarning,
    FileRead,
    LoadReport,
    SkippedRecord,
    SourceNotFoundError,
    warn_skipped,
)
from .schema import (
    EpisodeValidationError,
)
from .schema.arrow import empty_table, episode_dataset

__all__ = ["load", "load_with_report", "LoadReport", "SourceNotFoundError", "is_hub_id"]

# The built-in readers a load asks are imported with the loader (above), so that
# readers.formats finds them imported; the registry imports them on first use otherwise.

Source = str | Path
#: Columns that say where a record was read from; not part of an episode's content.
_PROVENANCE = ("source", "config", "split")
_WHOLE_FILE = "(whole file)"
_TOP = "(top level)"


class _Reader:
    """Reads sources with one error policy, collecting skipped records in a report."""

    def __init__(self, errors: str, report: LoadReport, *, config: str | None,
                 split: str | None, revision: str | None, cache: bool = False,
                 metadata: dict[str, Any] | None = None) -> None:
        self.errors, self.report, self.cache = errors, report, cache
        self.metadata = metadata
        self.config, self.split, self.revision = config, split, revision
        #: (file, record) of every row produced so far, in row order, to name duplicates.
        self.where: list[tuple[str, str]] = []
        #: what went wrong writing cache entries, said by :meth:`finish`
        self.write_errors: list[Exception] = []
        #: the digests of the files hashed, remembered once, by :meth:`finish`
        self.memos: list[DigestNote] = []
        #: (file, entry key) of each file read through the cache, in the order read (see
        #: :meth:`remember_load`), with the entry found or made
        self.keys: list[tuple[str, str]] = []
        self.entries: dict[str, CacheEntry] = {}
        #: the entries made by this load (written by :meth:`finish`, in one cache file),
        #: the report of a clean load of several files, and the cache files read
        self.made: dict[str, tuple[str, CacheEntry]] = {}
        self.load_report: tuple[list[str], dict[str, Any]] | None = None
        self.opened: dict[str, CacheFile | None] = {}
        #: set on the reader of a read being captured for the cache (:meth:`capture`): a
        #: reader that reads a file again, rather than the bytes the key was made of, must
        #: say so (:meth:`read_again`); ``changed`` then tells whether the file differed
        self.keys_bytes = False
        self.changed = False
        #: the sources whose captured read may not be the bytes of their key: not stored
        self.unkept: set[str] = set()
        #: the file read after each file (:meth:`read_ahead`), the reads started, and the
        #: thread they run on
        self.after: dict[str, Path] = {}
        self.fetches: dict[str, Future] = {}
        self.fetcher: ThreadPoolExecutor | None = None
        #: what this load found out about each path once (see :meth:`real`,
        #: :meth:`folder_reader`)
        self.reals: dict[str, Path] = {}
        self.folder_readers: dict[str, Any] = {}

    def emit(self, ds: pa.Table, source: str,
             labels: Sequence[str]) -> pa.Table:
        """Note where the rows of a freshly read part came from; returns ``ds``."""
        self.where.extend((source, label) for label in labels)
        read = self.report.files.setdefault(source, FileRead())
        read.episodes += len(ds)
        return ds

    def problem(self, err: EpisodeValidationError) -> None:
        """Raise ``err`` or record it as skipped, by the error policy."""
        if self.errors == "raise":
            raise err
        self.report.skipped.append(SkippedRecord.from_error(err))

    def guarded(self, source: str, read: Any) -> pa.Table | None:
        """Run ``read()``; a whole-file problem is raised or recorded (then None).

        Any exception, not only :class:`EpisodeValidationError`, becomes a problem naming
        ``source``: one unreadable file never stops the others.
        """
        mark = len(self.where)
        try:
            return read()
        except EpisodeValidationError as exc:
            del self.where[mark:]
            if exc.source is None:
                exc = EpisodeValidationError(exc.reason, source=source,
                                             record=exc.record or _WHOLE_FILE, field=exc.field)
            self.problem(exc)
            return None
        except RecursionError:
            del self.where[mark:]
            self.problem(EpisodeValidationError("data nested too deeply to read", source=source,
                                                record=_WHOLE_FILE, field=_TOP))
            return None
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - nothing may cross into other files
            del self.where[mark:]
            self.problem(EpisodeValidationError(
                f"could not be read ({type(exc).__name__}: {exc})", source=source,
                record=_WHOLE_FILE, field=_TOP))
            return None

    # ----------------------------------------------------------------- picking a reader

    def source(self, src: Source) -> pa.Table | None:
        path = Path(src)
        if path.exists():
            return self.guarded(str(src), lambda: self.path(path))
        if is_hub_id(str(src)):
            hub = Input(kind="hub", name=str(src), source=str(src))
            return self.guarded(str(src), lambda: self.run(Hub(), hub))
        self.problem(SourceNotFoundError(
            "no such file or folder, and not a hub id of the form 'org/name'",
            source=str(src), record=_WHOLE_FILE, field="(path)"))
        return None

    def path(self, path: Path) -> pa.Table:
        """A local path: the first *folder* reader that knows it, else a file."""
        reader = self.folder_reader(path)
        return self.file(path) if reader is None else reader.read(self, path)

    def folder_reader(self, path: Path) -> Any:
        """The first *folder* reader that knows ``path``, else None (asked once per load:
        reading ahead asks it of the next file before that file's turn)."""
        name = str(path)
        if name not in self.folder_readers:
            self.folder_readers[name] = _folder_reader(path)
        return self.folder_readers[name]

    def real(self, path: Path) -> Path:
        """``path`` as :func:`~accordkit.cache.real_path` gives it (the name its digest and
        entry are remembered under), found once per load."""
        name = str(path)
        found = self.reals.get(name)
        if found is None:
            found = self.reals[name] = real_path(path)
        return found

    def file(self, path: Path) -> pa.Table:
        """A file: uncached readers (parquet) by its first bytes, else the cached text path."""
        source = str(path)
        fetched = self.fetched(source)
        self.fetch_after(source)
        if fetched is None:
            reader = _uncached_file_reader(path)
            if reader is not None:
                return self.run(reader, Input(name=source, path=source))
        if not self.cache:
            return self.text_file(path.read_bytes() if fetched is None else fetched.data, source)
        options = self.cache_options()
        # An unchanged file is found by its remembered digest, without reading it; any
        # other file is read once, for its digest and (on a miss) its episodes.
        real = self.real(path)
        try:
            taken: StatTaken | None = take_stat(real)
        except OSError:
            # where a link led is gone (repointed since): look again; else reading it
            # says what is wrong
            real = self.reals[source] = real_path(path)
            try:
                taken = take_stat(real)
            except OSError:
                taken = None
        known = None if taken is None else _known_key(source, real, options, taken.stat)
        entry = None if known is None else self.cached(path, known)
        key = known
        if entry is None:
            # the stat remembered with the digest is one taken before the bytes were read
            # and both are of the file ``real`` names (a symbolic link repointed meanwhile
            # is read as it was when the load found where it led)
            data, digest, taken = (real.read_bytes(), None, taken) if fetched is None \
                else fetched
            digest = remember_digest(real, data, taken, memos=self.memos, digest=digest)
            key = cache_key(None, path=source, options=options, digest=digest)
            entry = self.cached(path, key) if key != known else None
            if entry is None:
                entry = self.capture(lambda sub: sub.text_file(data, source), source)
                if source not in self.unkept:
                    self.made[key] = (source, entry)
        self.keys.append((source, key))
        self.entries[key] = entry
        return self.replay(entry, source)

    # ----------------------------------------------------------------- reading ahead

    def read_ahead(self, paths: Sequence[Path]) -> None:
        """Say that these files are read next, in this order.

        While one of them is parsed, the next one is read, and hashed when the cache is on,
        on another thread (both without the interpreter lock). Only one file is read ahead
        at a time, so memory holds at most two files' bytes. 21 result files, first load +
        score, 32 pairs of fresh processes: about 0.1x ``json.loads`` less (median paired
        differences -0.15 and -0.09 in two runs of 16).
        """
        files = [Path(p) for p in paths]
        self.after.update((str(a), b) for a, b in zip(files, files[1:], strict=False))

    def fetch_after(self, source: str) -> None:
        """Start reading the file that comes after ``source`` (see :meth:`read_ahead`).

        What :meth:`file` would ask first is asked here, on this thread (a folder or parquet
        reader takes the file: nothing to read ahead; its digest is remembered: no bytes to
        read), so that the other thread only reads and hashes.
        """
        nxt = self.after.pop(source, None)
        if nxt is None or str(nxt) in self.fetches:
            return
        try:
            if self.folder_reader(nxt) is not None or _uncached_file_reader(nxt) is not None \
                    or (self.cache and known_digest(self.real(nxt)) is not None):
                return
        except OSError:
            return  # read where it is used, where the problem is reported
        if self.fetcher is None:
            self.fetcher = ThreadPoolExecutor(max_workers=1,
                                              thread_name_prefix="accordkit-read-ahead")
        self.fetches[str(nxt)] = self.fetcher.submit(
            _read_and_hash, self.real(nxt) if self.cache else nxt, self.cache)

    def fetched(self, source: str) -> _Fetched | None:
        """The bytes (and digest) of ``source`` read ahead; None when it was not read ahead or
        the reading failed (it is then read where it is used, and its problem reported)."""
        job = self.fetches.pop(source, None)
        if job is None:
            return None
        try:
            return job.result()
        except Exception:  # noqa: BLE001 - read again by the caller, which reports it
            return None

    def cached(self, path: Path, key: str) -> CacheEntry | None:
        """The cache entry ``key`` of ``path``: stored on its own, or in the cache file of a
        load that read it with others (which the folder's digest memo names)."""
        for name in (key, remembered_entry(self.real(path), key)):
            if name is None:
                continue
            if name not in self.opened:
                self.opened[name] = read_file(name)
            found = self.opened[name]
            if found is not None and key in found.entries:
                return found.entries[key]
        return None

    def remembered_load(self, sources: Sequence[Source]) -> pa.Table | None:
        """The rows of a load of these same files, when one was stored; fills the report.

        Only a load of several files that the cached text path reads (no folder or parquet
        reader takes them) and whose digests are all remembered can be found this way (a new
        or changed file means reading it), and only a clean one was stored (see
        :meth:`remember_load`). Each key covers the file's path and bytes, so the uncached
        (parquet) reader, which knows a file by its name and first bytes, is not asked again;
        a folder reader may know a file by what lies next to it, so those are.
        """
        if not self.cache or len(sources) < 2:
            return None
        options = self.cache_options()
        keys = []
        for src in sources:
            path = Path(src)
            key = _known_key(str(path), self.real(path), options) if path.is_file() else None
            if key is None or self.folder_reader(path) is not None:
                return None
            keys.append(key)
        found = read_file(files_key(keys, sources=[str(src) for src in sources]))
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
        self.report.files.update(files)
        self.report.counts.update(counts)
        self.report.notes.extend(notes)
        return found.table

    def remember_load(self, sources: Sequence[Source], table: pa.Table) -> None:
        """Keep a clean load of several files, each read through the cache, as one cache
        file (written by :meth:`finish`): every file's entry, in order, and the load's
        report, so that the same load again is one read."""
        report = self.report
        # each source read once, through the cache, in order (its key is what was read)
        if not self.cache or len(sources) < 2 or report.skipped or report.duplicates \
                or self.unkept \
                or [f for f, _ in self.keys] != [str(Path(src)) for src in sources] \
                or len(self.where) != table.num_rows:
            return
        self.load_report = ([str(src) for src in sources], {
            "files": {src: [f.episodes, f.simulations] for src, f in report.files.items()},
            "counts": dict(report.counts), "notes": list(report.notes)})

    def store_made(self) -> None:
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
                          sources=[source for source, _ in self.made.values()])
        else:
            return
        self.write(lambda: store_file(name, entries, load=load))
        if name != entries[0][0] or len(entries) > 1:
            self.memos += [DigestNote(self.real(Path(source)),
                                      {"entry": {"file": name, "key": key}})
                           for key, (source, _) in self.made.items()]

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
        """Say what went wrong writing the cache: a folder that cannot be written gives one
        warning (the rows were read all the same); any other failure is raised, unless the
        load failed (its own error is the one to see)."""
        if self.fetcher is not None:  # reads ahead that nothing asked for after all
            self.fetcher.shutdown(wait=True, cancel_futures=True)
            self.fetcher, self.fetches, self.after = None, {}, {}
        if self.made or self.load_report is not None:
            self.store_made()
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

    def cache_options(self) -> dict[str, Any]:
        """The reader options that are part of every cache key."""
        return {"config": self.config, "split": self.split,
                "metadata": sorted((self.metadata or {}).items()),
                "readers": [[r.name, str(getattr(r, "version", ""))]
                            for r in readers.registered()]}

    def cached_files(self, source: str, listing: Any, build: Any) -> pa.Table:
        """A source made of several files (a dir-format run), cached as one entry.

        ``listing()`` gives the source's files; the key covers every file's sha256
        (remembered by stat, as for single files) and its name; ``build(reader)`` reads the
        source. The files are listed and their digests taken again after the read, and the
        entry is written only if no file was added, removed or changed meanwhile.
        """
        if not self.cache:
            return build(self)
        options = self.cache_options()

        def digest(files: Sequence[Path]) -> bytes:
            h = hashlib.sha256()
            for f in files:
                h.update(str(f.relative_to(source)).encode() + b"\0"
                         + file_digest(self.real(f), memos=self.memos))
            return h.digest()

        files = list(listing())
        before = digest(files)
        self.write(write_digests, self.memos)  # so that the second look reads no file again
        self.memos = []
        key = cache_key(None, path=source, options=options, digest=before)
        entry = read_entry(key)
        if entry is None:
            entry = self.capture(build, source)
            after = list(listing())
            if after == files and digest(after) == before and source not in self.unkept:
                write_entry(key, entry)
        return self.replay(entry, source)

    def text_file(self, data: bytes, source: str) -> pa.Table:
        """A text file's bytes -> its good records, read by the first cached *file* reader
        that recognises them (registered readers first, ``json`` last)."""
        path = Path(source)
        input = Input(name=source, path=source, data=data)
        for reader in readers.formats("file"):
            if reader.cached and reader.sniff(input):
                table = self.run(reader, input)
                if table is not None:
                    if getattr(reader, "reads_itself", False):
                        self.read_again(path, data)  # it read the file, not ``data``
                    return table
        raise EpisodeValidationError(  # pragma: no cover - the json reader takes any text
            "no reader recognises this file", source=source, record=_WHOLE_FILE, field=_TOP)

    # ----------------------------------------------------------------- cache

    def capture(self, build: Any, source: str) -> CacheEntry:
        """Read a source (``build(reader)``) with errors="skip" and keep everything the
        read reported."""
        sub = _Reader("skip", LoadReport(), config=self.config, split=self.split,
                      revision=self.revision, cache=False, metadata=self.metadata)
        sub.keys_bytes = True
        try:
            ds = build(sub)
        except EpisodeValidationError as exc:
            sub.problem(EpisodeValidationError(exc.reason, source=exc.source or source,
                                               record=exc.record or _WHOLE_FILE,
                                               field=exc.field))
            ds = empty_table()
            sub.where = []
        if sub.changed:
            self.unkept.add(source)
        read = sub.report.files.get(source)
        return CacheEntry(ds, [label for _, label in sub.where],
                          [asdict(s) for s in sub.report.skipped], list(sub.report.notes),
                          None if read is None else read.simulations)

    def replay(self, entry: CacheEntry, source: str) -> pa.Table:
        """Report what a (cached) read found, by this reader's error policy; its rows."""
        whole = False
        for item in entry.skipped:
            whole = whole or item["record"] == _WHOLE_FILE and item["source"] == source
            self.problem(EpisodeValidationError(item["reason"], source=item["source"],
                                                record=item["record"], field=item["field"]))
        self.report.notes.extend(entry.notes)
        if whole:
            return empty_table()
        ds = self.emit(_dataset(entry.table), source, entry.labels)
        self.report.files[source].simulations = entry.simulations
        return ds

    # ----------------------------------------------------------------- services for readers

    def read_again(self, path: Path, data: bytes) -> None:
        """Say that a reader read ``path`` itself instead of ``data``, the bytes its cache
        key was made of (a registered reader is given a path): when the file's bytes now
        differ (it changed since ``data`` was read, maybe on the reading-ahead thread),
        the rows may be of other bytes than the key's, and are not stored under it."""
        if self.keys_bytes and not self.changed:
            try:
                self.changed = path.read_bytes() != data
            except OSError:
                self.changed = True

    def context(self) -> ReadContext:
        """The read context of a reader of the new contract: this loader's policy, report
        and options."""
        return ReadContext(self.errors, ReadOptions(config=self.config, split=self.split,
                                                    revision=self.revision,
                                                    metadata=self.metadata),
                           skipped=self.report.skipped, notes=self.report.notes)

    @staticmethod
    def concat(parts: list[pa.Table | None]) -> pa.Table:
        """Table parts as one table (missing parts left out)."""
        return _concat([p for p in parts if p is not None])

    def run_with(self, read: Any, input: Input) -> pa.Table:
        """``read(input, ctx)`` (a format's reading function), its rows noted."""
        return self.run(_Calls(read), input)

    def run(self, reader: Any, input: Input) -> pa.Table | None:
        """Ask a reader of the new contract (``read(input, ctx)``); its rows, noted where
        they came from, or None when it says the input is not its after all."""
        ctx = self.context()
        out = reader.read(input, ctx)
        if out is None:
            return None
        parts = []
        for part in parts_of(out, ctx, input):
            name = part.name or input.name
            self.emit(part.table, name, part.labels)
            if part.simulations is not None:
                read = self.report.files[name]
                read.simulations = (read.simulations or 0) + part.simulations
            parts.append(part)
        return joined(parts)

# --------------------------------------------------------------------------- helpers


def _known_key(source: str, real: Path, options: dict[str, Any],
               st: os.stat_result | None = None) -> str | None:
    """The cache key of the file ``source`` (``real``: its real path; ``st``: its stat, when
    taken) whose digest is remembered (no read), else None."""
    known = known_digest(real, st)
    return None if known is None else cache_key(None, path=source, options=options,
                                                digest=known)


class _Fetched(NamedTuple):
    """A file read ahead: its bytes, when the cache is on their sha256, and its stat taken
    before the read, with its time (see :func:`~accordkit.cache.remember_digest`)."""

    data: bytes
    digest: bytes | None
    taken: StatTaken


def _read_and_hash(path: Path, cache: bool) -> _Fetched:
    """Read a file ahead (:meth:`_Reader.read_ahead`), on the reading-ahead thread."""
    taken = take_stat(path)
    data = path.read_bytes()
    return _Fetched(data, hashlib.sha256(data).digest() if cache else None, taken)


class _Calls:
    """A reading function ``read(input, ctx)`` asked as a reader."""

    def __init__(self, read: Any) -> None:
        self.read = read


def _folder_reader(path: Path) -> Any:
    """The first *folder* reader that knows ``path``, else None."""
    return next((r for r in readers.formats("folder") if r.sniff(path)), None)


def _uncached_file_reader(path: Path) -> Any:
    """The first uncached *file* reader (parquet) that knows the file by its first bytes."""
    with path.open("rb") as fh:
        head = fh.read(readers.HEAD_BYTES)
    input = Input(name=str(path), path=str(path), data=head)
    return next((r for r in readers.formats("file") if not r.cached and r.sniff(input)),
                None)


def _dataset(table: pa.Table) -> pa.Table:
    """Parts are plain Arrow tables until :func:`load_with_report` wraps the whole once."""
    return table


def _concat(parts: list[pa.Table]) -> pa.Table:
    parts = [p for p in parts if p is not None and len(p)]
    if not parts:
        return empty_table()
    if len(parts) == 1:
        return parts[0]
    return pa.concat_tables(parts)


# --------------------------------------------------------------------------- duplicates


def _content_key(row: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in row.items() if k not in _PROVENANCE}, sort_keys=True,
                      default=str)


def _where(reader: _Reader, row: int) -> tuple[str, str]:
    """(file, record) a row was read from."""
    return reader.where[row]


def _copy_name(where: tuple[str, str], eid: str) -> str:
    """A copy of episode ``eid`` as :attr:`LoadReport.duplicates` names it: its file, and its
    line / item / row when the record label gives one.

    Examples
    --------
    >>> _copy_name(("a.jsonl", "e1 (line 3)"), "e1"), _copy_name(("run.json", "e1"), "e1")
    ('a.jsonl (line 3)', 'run.json')
    """
    file, label = where
    if label == eid:
        return file
    if label.startswith(f"{eid} (") and label.endswith(")"):
        label = label[len(eid) + 2:-1]
    return f"{file} ({label})"


def _drop_duplicates(ds: pa.Table, reader: _Reader) -> pa.Table:
    """Keep the first copy of each episode id; a different copy is an error."""
    table = ds
    ids = table.column("episode_id").to_numpy(zero_copy_only=False)
    uniq, counts = np.unique(ids, return_counts=True)
    if not (counts > 1).any():
        return ds
    dup_ids = set(uniq[counts > 1].tolist())
    if len(reader.where) != table.num_rows:  # pragma: no cover - a reader forgot to emit
        src = table.column("source").to_pylist()
        reader.where = [(str(s), f"row {r}") for r, s in enumerate(src)]
    rows: dict[str, list[int]] = {}
    for r, eid in enumerate(ids):
        if eid in dup_ids:
            rows.setdefault(eid, []).append(r)
    drop: list[int] = []
    for eid, where in rows.items():
        base = table.slice(where[0], 1).to_pylist()[0]
        base_key = _content_key(base)
        # the files the copies were loaded from (not the ``source`` stored in the records)
        copies = [_copy_name(_where(reader, where[0]), str(eid))]
        for r in where[1:]:
            other = table.slice(r, 1).to_pylist()[0]
            drop.append(r)
            if _content_key(other) != base_key:
                first, second = _where(reader, where[0]), _where(reader, r)
                there = f" ({first[1]})" if first[1] != str(eid) else ""
                reader.problem(EpisodeValidationError(
                    f"episode id also loaded from {first[0]}{there} with different content "
                    "(the first copy was kept)", source=second[0],
                    record=second[1], field="episode_id"))
            else:
                copies.append(_copy_name(_where(reader, r), str(eid)))
        if len(copies) > 1:
            reader.report.duplicates[str(eid)] = copies
    keep = np.setdiff1d(np.arange(table.num_rows), np.array(drop, dtype=np.int64))
    return _dataset(table.take(pa.array(keep)))


# --------------------------------------------------------------------------- public


def load_table(table: pa.Table, *, source: str, errors: Literal["raise", "skip"] = "raise",
               config: str | None = None, split: str | None = None,
               origin: str | None = None) -> tuple[datasets.Dataset, LoadReport]:
    """Check an Arrow table of canonical episodes (a parquet batch) by the loader's rules.

    Used by the streaming engines to load one batch of a shard without reading the rest.
    Returns the good rows as a dataset and the report of what was skipped; ``config`` and
    ``split`` keep only the rows of that config / split, as :func:`load` does for a
    canonical file; ``origin`` fills empty ``source`` values (default: ``source``).
    """
    report = LoadReport()
    ctx = ReadContext(errors, ReadOptions(config=config, split=split),
                      skipped=report.skipped, notes=report.notes)
    part = table_part(table, ctx, source=source, origin=origin)
    return episode_dataset(part.table), report


def load_data_file(path: str | Path, *, folder: str | Path, config: str, split: str,
                   errors: Literal["raise", "skip"] = "raise",
                   ) -> tuple[datasets.Dataset, LoadReport]:
    """One data file of a dataset folder, read as :func:`load` of the folder reads it.

    Its rows get the ``config`` and ``split`` the folder's card gives the file, and
    ``folder`` fills their empty ``source`` values. Used by the scoring engines, which
    score a dataset folder file by file (see :func:`accordkit.engines.plan.plan_work`).
    """
    from .ingest.formats.dataset_card import DataFile, data_file_input, read_data_file

    report = LoadReport()
    reader = _Reader(errors, report, config=None, split=None, revision=None, cache=True)
    finished = False
    try:
        with gc_paused():
            input = data_file_input(DataFile(Path(path), config, split), origin=str(folder))
            part = reader.guarded(input.name, lambda: reader.run_with(read_data_file, input))
            ds = episode_dataset(_drop_duplicates(_concat([part]), reader))
        finished = True
    finally:
        reader.finish(warn=finished)
    return ds, report


def load_with_report(
    source: Source | Sequence[Source],
    *,
    config: str | None = None,
    split: str | None = None,
    revision: str | None = None,
    errors: Literal["raise", "skip"] = "raise",
    cache: bool = True,
    metadata: dict[str, Any] | None = None,
) -> tuple[datasets.Dataset, LoadReport]:
    """Like :func:`load`, but return a :class:`LoadReport` instead of emitting warnings.

    Examples
    --------
    >>> import accordkit as ak
    >>> ds, report = ak.load_with_report(["a.json", "b.json"], errors="skip")  # doctest: +SKIP
    >>> [str(s) for s in report.skipped]                                       # doctest: +SKIP
    """
    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', got {errors!r}")
    sources = [source] if isinstance(source, str | Path) else list(source)
    if not sources:
        raise ValueError("no source given")
    for src in sources:
        if not isinstance(src, str | Path):
            raise TypeError(f"a source is a path or hub id, got {type(src).__name__}")
    report = LoadReport()
    reader = _Reader(errors, report, config=config, split=split, revision=revision,
                     cache=cache, metadata=metadata)
    parts = []
    finished = False
    try:
        with gc_paused():
            table = reader.remembered_load(sources)
            if table is None:
                reader.read_ahead([Path(src) for src in sources if Path(src).is_file()])
                for src in sources:
                    part = reader.source(src)
                    report.counts[str(src)] = 0 if part is None else part.num_rows
                    if part is not None:
                        parts.append(part)
                table = _drop_duplicates(_concat(parts), reader)
                reader.remember_load(sources, table)
            ds = episode_dataset(table)
        finished = True
    finally:
        reader.finish(warn=finished)
    return ds, report


def load(
    source: Source | Sequence[Source],
    *,
    config: str | None = None,
    split: str | None = None,
    revision: str | None = None,
    errors: Literal["raise", "skip"] = "raise",
    cache: bool = True,
    metadata: dict[str, Any] | None = None,
) -> datasets.Dataset:
    """Load episodes from one or more sources into one canonical ``datasets.Dataset``.

    Parameters
    ----------
    source : str, Path or list of them
        Hub id, local dataset folder, parquet/JSONL file of canonical episodes, tau2 or
        AgentChangeBench results file or folder; a list is loaded as one dataset.
    config, split : str, optional
        For hub ids, dataset folders and canonical files: only this config / split. None
        reads all, and the ``config`` and ``split`` columns say where each row came from.
    revision : str, optional
        Hub revision (branch, tag or commit) to pin; ignored for local paths.
    errors : {"raise", "skip"}
        ``"raise"`` stops at the first problem with an
        :class:`~accordkit.schema.EpisodeValidationError` naming file, record and field.
        ``"skip"`` loads the good records and emits one
        :class:`~accordkit.SkippedRecordsWarning` whose ``.skipped`` lists every record
        (or whole file) left out and why.
    cache : bool
        Keep the canonical table of each JSON / JSONL file in the episode cache
        (``ACCORDKIT_CACHE_DIR``, default ``~/.cache/accordkit``; see
        :mod:`accordkit.cache`) and reuse it while the file, its path, the schema version
        and the options are unchanged. A cached load reports the same problems and notes.
        False reads everything afresh and writes nothing.
    metadata : dict, optional
        For sources that do not name them (τ-bench v1 files): ``agent_model``, ``method``
        (agent strategy), ``user_model``, ``user_implementation``, ``domain``, ``split``.
        Given values win over what the file name and content suggest.

    Returns
    -------
    datasets.Dataset
        One row per episode, with the columns of :data:`accordkit.schema.EPISODE_FEATURES`.
        An episode found in several sources with identical content (checkpoints of one run)
        is kept once, with a :class:`~accordkit.DuplicateEpisodesWarning` naming the
        sources; different content under one ``episode_id`` is an error.

    Raises
    ------
    EpisodeValidationError
        With ``errors="raise"``, on the first problem. A source that is neither a path nor
        a hub id raises :class:`SourceNotFoundError` (also a ``FileNotFoundError``).

    Examples
    --------
    >>> import accordkit as ak
    >>> ds = ak.load("data/sample/goalshift")             # doctest: +SKIP
    >>> ds = ak.load(["run_a.json", "run_b.json"], errors="skip")  # doctest: +SKIP
    """
    ds, report = load_with_report(source, config=config, split=split, revision=revision,
                                  errors=errors, cache=cache, metadata=metadata)
    for note in report.notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    if report.duplicates:
        warnings.warn(DuplicateEpisodesWarning(report.duplicates), stacklevel=2)
    warn_skipped(report.skipped, stacklevel=3)
    return ds
