"""Reading inputs: the reader for each, the episode cache around each read, the next file read
ahead.

:class:`Reading` is one load's (or one work item's) reading of its inputs, in order. For each
:class:`~accordkit.ingest.inputs.Input` it asks the registry for the reader
(:mod:`accordkit.ingest.registry`: a registered user reader, ``parquet``, ``results-file``,
``json`` for a file; ``results-folder`` for a dir-format run; ``hub`` for a hub id), gives it
the read context, and turns what it gives into checked parts
(:func:`~accordkit.ingest.contract.parts_of`). A failure of a whole input is a problem of that
input (by the error policy) and never stops the others.

The episode cache (:mod:`accordkit.ingest.cache`) is wrapped around one input's read: a text
file or a dir-format run is keyed by the sha256 of its bytes (remembered by stat, so an
unchanged file is not read), its name and the load's options; a cached read reports the same
problems and notes as a fresh one. A clean load of several files is kept as one cache file
too, so that the same load again is one read (:meth:`Reading.remembered`). While one file is
parsed, the next is read (and hashed) on another thread.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any, NamedTuple

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
from .context import ReadContext
from .contract import parts_of, whole_file_problem
from .inputs import Input
from .registry import cache_key as readers_key
from .registry import formats
from .report import FileRead

__all__ = ["Reading", "read_input", "load_input", "load_table"]


class _Fetched(NamedTuple):
    """A file read ahead: its bytes, when the cache is on their sha256, and its stat taken
    before the read, with its time (see :func:`~accordkit.ingest.cache.remember_digest`)."""

    data: bytes
    digest: bytes | None
    taken: StatTaken


def read_input(input: Input, ctx: ReadContext, *, cache: bool = False) -> list[Part]:
    """The checked parts of one input, problems to ``ctx`` (none when it fails as a whole).

    Examples
    --------
    >>> from accordkit.ingest.plan import plan
    >>> ctx = ReadContext("skip")
    >>> read_input(plan("no/such.json")[0], ctx), [s.field for s in ctx.skipped]
    ([], ['(path)'])
    """
    reading = Reading(ctx, cache=cache)
    try:
        return reading.parts(input)
    finally:
        reading.finish()


def load_input(input: Input, *, errors: str = "skip", options: Any = None,
               cache: bool = True) -> tuple[Any, Any]:
    """One input read as :func:`accordkit.load` reads it: its episodes (each once, as a
    ``datasets.Dataset``) and the :class:`~accordkit.ingest.report.LoadReport` of the read.

    What a scoring engine reads of an input it scores whole (a results file, a dataset
    folder's data file, a dir-format run, a hub id).
    """
    from ..schema.arrow import episode_dataset
    from .context import ReadOptions
    from .intake import reported, take_in

    ctx, report = reported(errors, options or ReadOptions())
    reading = Reading(ctx, cache=cache)
    finished = False
    try:
        table = take_in(reading, [(input.source or input.name, [input])], report)
        ds = episode_dataset(table)
        finished = True
    finally:
        reading.finish(warn=finished)
    return ds, report


def load_table(table: pa.Table, *, source: str, errors: str = "raise",
               config: str | None = None, split: str | None = None,
               origin: str | None = None) -> tuple[Any, Any]:
    """Check an Arrow table of canonical episodes (a parquet batch) by the loader's rules.

    Returns the good rows as a dataset and the report of what was skipped; ``config`` and
    ``split`` keep only the rows of that config / split, as :func:`accordkit.load` does for
    a canonical file; ``origin`` fills empty ``source`` values (default: ``source``).
    """
    from ..schema.arrow import episode_dataset
    from .check import table_part
    from .context import ReadOptions
    from .intake import reported

    ctx, report = reported(errors, ReadOptions(config=config, split=split))
    part = table_part(table, ctx, source=source, origin=origin)
    return episode_dataset(part.table), report


class Reading:
    """The reads of one load: each input's parts, through the episode cache.

    Parameters
    ----------
    ctx : ReadContext
        The error policy, the problems and notes, the options.
    cache : bool
        Read text files and dir-format runs through the episode cache.
    """

    def __init__(self, ctx: ReadContext, *, cache: bool = True) -> None:
        self.ctx, self.cache = ctx, cache
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
        #: set while a read is captured for the cache: a reader that reads its file itself
        #: (not the bytes the key was made of) may have read other bytes: ``changed`` says so
        self.capturing = False
        self.changed = False
        #: the inputs whose captured read may not be the bytes of their key: not stored
        self.unkept: set[str] = set()
        #: the file read after each file (:meth:`read_ahead`), the reads started, and the
        #: thread they run on
        self.after: dict[str, Input] = {}
        self.fetches: dict[str, Future] = {}
        self.fetcher: ThreadPoolExecutor | None = None
        self._options: dict[str, Any] | None = None

    # ----------------------------------------------------------------- one input

    def parts(self, input: Input) -> list[Part]:
        """The checked parts of ``input``; when it fails as a whole, its problem goes to the
        context and no part is given (any exception: one input never stops the others)."""
        try:
            return self._read(input)
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - nothing may cross into other inputs
            self.ctx.problem(whole_file_problem(exc, input.name))
            return []

    def stream(self, input: Input) -> Iterator[Part]:
        """The checked parts of ``input`` as they are read, without the cache (a large
        input read in bounded memory: a scoring engine scores each part as it comes).
        Exceptions are the caller's (see :func:`~accordkit.ingest.contract.whole_file_problem`)."""
        if input.kind == "problem":
            self.ctx.problem(input.error())
            return
        reader, out = self._pick(input)
        if out is not None:
            yield from parts_of(out, self.ctx, input)

    def _read(self, input: Input) -> list[Part]:
        if input.kind == "problem":
            self.ctx.problem(input.error())
            return []
        if input.kind == "run":
            return self._run(input)
        if input.kind == "file" and not input.is_url:
            return self._file(input)
        return list(self.stream(input))

    def _pick(self, input: Input, *, cached: bool | None = None) -> tuple[Any, Any]:
        """The first reader of ``input``'s kind that takes it, and what its ``read`` gave
        (readers that say "not mine after all" are passed over); ``cached`` chooses among
        file readers by whether they go through the cache."""
        kind = input.kind if input.kind in ("run", "hub") else "file"
        for reader in formats(kind):
            if cached is not None and bool(getattr(reader, "cached", True)) != cached:
                continue
            if not reader.sniff(input):
                continue
            out = reader.read(input, self.ctx)
            if out is not None:
                if getattr(reader, "reads_itself", False) and self.capturing:
                    self._read_again(input)
                return reader, out
        raise EpisodeValidationError(  # pragma: no cover - the json reader takes any text
            "no reader recognises this input", source=input.name, record=WHOLE_FILE,
            field="(top level)")

    def _read_again(self, input: Input) -> None:
        """A reader read the file itself instead of ``input.data``, the bytes the cache key
        was made of: when the file's bytes now differ (it changed since they were read, maybe
        on the reading-ahead thread), the rows may be of other bytes than the key's, and are
        not stored under it."""
        if self.changed or input.data is None or input.local is None:
            return
        try:
            self.changed = input.local.read_bytes() != input.data
        except OSError:
            self.changed = True

    # ----------------------------------------------------------------- files

    def _uncached_reader(self, input: Input) -> Any:
        """The first reader that takes the file without the cache (parquet), by its first
        bytes, or None."""
        probe = input if input.data is not None else input.with_data(input.head())
        return next((r for r in formats("file")
                     if not getattr(r, "cached", True) and r.sniff(probe)), None)

    def _text(self, input: Input) -> list[Part]:
        """A text file (``input.data`` holding its bytes) read by the first cached file
        reader that takes it (registered readers first, ``json`` last)."""
        _, out = self._pick(input, cached=True)
        return list(parts_of(out, self.ctx, input))

    def _file(self, input: Input) -> list[Part]:
        """A local file: an uncached reader (parquet) by its first bytes, else the text
        readers, through the cache when it is on."""
        name = input.name
        fetched = self._fetched(name)
        self._fetch_after(name)
        path = Path(str(input.path))
        if fetched is None:
            reader = self._uncached_reader(input)
            if reader is not None:
                return list(parts_of(reader.read(input, self.ctx), self.ctx, input))
        if not self.cache:
            return self._text(input.with_data(path.read_bytes() if fetched is None
                                              else fetched.data))
        options = self.options()
        # An unchanged file is found by its remembered digest, without reading it; any
        # other file is read once, for its digest and (on a miss) its episodes.
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
                read = input.with_data(data)
                entry = self._capture(lambda: self._text(read), name)
                if name not in self.unkept:
                    self.made[key] = (input, entry)
        self.keys.append((name, key))
        self.entries[key] = entry
        return self._replay(entry, name)

    def _run(self, input: Input) -> list[Part]:
        """A dir-format run, cached as one entry: the key covers every file's sha256
        (remembered by stat, as for single files) and its name. The files are listed and
        their digests taken again after the read, and the entry is written only if no file
        was added, removed or changed meanwhile."""
        from .formats.tau2.runs import run_files

        if not self.cache:
            return list(self.stream(input))
        options = self.options()
        meta = Path(str(input.path))
        folder = meta.parent

        def digest(files: Sequence[Path]) -> bytes:
            h = hashlib.sha256()
            for f in files:
                h.update(str(f.relative_to(folder)).encode() + b"\0"
                         + file_digest(real_path(f), memos=self.memos))
            return h.digest()

        files = run_files(meta)
        before = digest(files)
        self._write(write_digests, self.memos)  # so that the second look reads no file again
        self.memos = []
        key = cache_key(None, path=input.name, options=options, digest=before)
        entry = read_entry(key)
        if entry is None:
            entry = self._capture(lambda: list(self.stream(input)), input.name)
            after = run_files(meta)
            if after == files and digest(after) == before and input.name not in self.unkept:
                self._write(write_entry, key, entry)
        return self._replay(entry, input.name)

    # ----------------------------------------------------------------- the cache

    def options(self) -> dict[str, Any]:
        """The options that are part of every cache key: the load's, and the registered
        readers' names and versions."""
        if self._options is None:
            self._options = {**self.ctx.options.key(), "readers": readers_key()}
        return self._options

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

    def _capture(self, read: Any, name: str) -> CacheEntry:
        """Read an input (``read()``, with a context that skips and keeps everything) and
        keep all the read reported."""
        outer, self.ctx = self.ctx, self.ctx.fresh()
        self.capturing, self.changed = True, False
        try:
            try:
                parts = read()
            except EpisodeValidationError as exc:
                self.ctx.problem(EpisodeValidationError(
                    exc.reason, source=exc.source or name, record=exc.record or WHOLE_FILE,
                    field=exc.field))
                parts = []
            sub = self.ctx
        finally:
            self.ctx, self.capturing = outer, False
        if self.changed:
            self.unkept.add(name)
        sims = [p.simulations for p in parts if p.simulations is not None]
        return CacheEntry(joined(parts), [label for p in parts for label in p.labels],
                          [asdict(s) for s in sub.skipped], list(sub.notes),
                          sum(sims) if sims else None)

    def _replay(self, entry: CacheEntry, name: str) -> list[Part]:
        """Report what a (cached) read found, by this reading's policy; its rows."""
        whole = any(item["record"] == WHOLE_FILE and item["source"] == name
                    for item in entry.skipped)
        self.ctx.replay(entry.skipped, entry.notes)
        if whole:
            return []
        return [Part(entry.table, list(entry.labels), simulations=entry.simulations)]

    def remembered(self, inputs: Sequence[Input], report: Any) -> pa.Table | None:
        """The rows of a load of these same files, when one was stored; fills ``report``.

        Only a load of several files that the cached text path reads (no dir-format run, no
        parquet file) and whose digests are all remembered can be found this way (a new or
        changed file means reading it), and only a clean one was stored (see
        :meth:`remember`). Each key covers the file's name and bytes, so the uncached
        (parquet) reader, which knows a file by its first bytes, is not asked again.
        """
        if not self.cache or len(inputs) < 2:
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
        if not self.cache or len(inputs) < 2 or report.skipped or report.duplicates \
                or self.unkept or [n for n, _ in self.keys] != [i.name for i in inputs] \
                or sum(f.episodes for f in report.files.values()) != rows:
            return
        self.load_report = (_load_names(inputs), {
            "files": {src: [f.episodes, f.simulations] for src, f in report.files.items()},
            "counts": dict(report.counts), "notes": list(report.notes)})

    def _store_made(self) -> None:
        """Write the entries this reading made, in one cache file: the load's (with every
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
        self._write(lambda: store_file(name, entries, load=load))
        if name != entries[0][0] or len(entries) > 1:
            self.memos += [DigestNote(Path(input.real) if input.real else
                                      real_path(Path(str(input.path))),
                                      {"entry": {"file": name, "key": key}})
                           for key, (input, _) in self.made.items()]

    def _write(self, fn: Any, *args: Any) -> None:
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
        if self.fetcher is not None:  # reads ahead that nothing asked for after all
            self.fetcher.shutdown(wait=True, cancel_futures=True)
            self.fetcher, self.fetches, self.after = None, {}, {}
        if self.made or self.load_report is not None:
            self._store_made()
        self.made, self.load_report, self.opened, self.entries = {}, None, {}, {}
        if self.memos:
            memos, self.memos = self.memos, []
            self._write(write_digests, memos)
        errors, self.write_errors = self.write_errors, []
        if not warn:
            return
        for exc in errors:
            if isinstance(exc, OSError):
                warn_unwritable(exc)
            else:
                raise exc

    # ----------------------------------------------------------------- reading ahead

    def read_ahead(self, inputs: Sequence[Input]) -> None:
        """Say that these inputs are read next, in this order.

        While one local file is parsed, the next one is read, and hashed when the cache is
        on, on another thread (both without the interpreter lock). Only one file is read
        ahead at a time, so memory holds at most two files' bytes. 21 result files, first
        load + score, 32 pairs of fresh processes: about 0.1x ``json.loads`` less (median
        paired differences -0.15 and -0.09 in two runs of 16).
        """
        files = [i for i in inputs if i.kind == "file" and not i.is_url]
        self.after.update((a.name, b) for a, b in zip(files, files[1:], strict=False))

    def _fetch_after(self, name: str) -> None:
        """Start reading the file that comes after ``name`` (see :meth:`read_ahead`).

        What :meth:`_file` would ask first is asked here, on this thread (a parquet reader
        takes the file: nothing to read ahead; its digest is remembered: no bytes to read),
        so that the other thread only reads and hashes.
        """
        nxt = self.after.pop(name, None)
        if nxt is None or nxt.name in self.fetches:
            return
        real = Path(nxt.real) if nxt.real else Path(str(nxt.path))
        try:
            if self._uncached_reader(nxt) is not None \
                    or (self.cache and known_digest(real) is not None):
                return
        except OSError:
            return  # read where it is used, where the problem is reported
        if self.fetcher is None:
            self.fetcher = ThreadPoolExecutor(max_workers=1,
                                              thread_name_prefix="accordkit-read-ahead")
        self.fetches[nxt.name] = self.fetcher.submit(
            _read_and_hash, real if self.cache else Path(str(nxt.path)), self.cache)

    def _fetched(self, name: str) -> _Fetched | None:
        """The bytes (and digest) of ``name`` read ahead; None when it was not read ahead or
        the reading failed (it is then read where it is used, and its problem reported)."""
        job = self.fetches.pop(name, None)
        if job is None:
            return None
        try:
            return job.result()
        except Exception:  # noqa: BLE001 - read again by the caller, which reports it
            return None


def _read_and_hash(path: Path, cache: bool) -> _Fetched:
    """Read a file ahead (:meth:`Reading.read_ahead`), on the reading-ahead thread."""
    taken = take_stat(path)
    data = path.read_bytes()
    return _Fetched(data, hashlib.sha256(data).digest() if cache else None, taken)


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
