"""Reading inputs: the reader for each, with the episode cache and the reading ahead it composes.

:class:`Reading` is one load's (or one work item's) reading of its inputs, in order. For each
:class:`~accordkit.ingest.inputs.Input` it asks the registry for the reader
(:mod:`accordkit.ingest.registry`: a registered user reader, ``parquet``, ``results-file``,
``json`` for a file; ``results-folder`` for a dir-format run; ``hub`` for a hub id), gives it
the read context, and turns what it gives into checked parts
(:func:`~accordkit.ingest.contract.parts_of`). A failure of a whole input is a problem of that
input (by the error policy) and never stops the others.

Two jobs it hands to modules of their own: the episode cache's policy around each read of a
text file or a dir-format run, and the clean load of several files kept as one cache file
(:mod:`accordkit.ingest.cache_policy`); the next local file read ahead on another thread
while one is parsed (:mod:`accordkit.ingest.prefetch`). What is done with the parts read (the
load report, each episode once) is :mod:`accordkit.ingest.intake`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..schema import EpisodeValidationError
from .cache import CacheEntry, known_digest
from .cache_policy import EpisodeCache, capture, replay
from .check import WHOLE_FILE, Part
from .context import ReadContext
from .contract import parts_of, whole_file_problem
from .inputs import Input
from .prefetch import ReadAhead
from .registry import formats

__all__ = ["Reading", "read_input", "load_input", "load_table"]


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
        #: the episode cache's policy for this load, and the files read ahead
        self.episode_cache = EpisodeCache(ctx.options)
        self.ahead = ReadAhead(cache=cache)
        #: set while a read is captured for the cache: a reader that reads its file itself
        #: (not the bytes the key was made of) may have read other bytes: ``changed`` says so
        self.capturing = False
        self.changed = False

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

    def _capture(self, read: Callable[[], list[Part]], name: str) -> CacheEntry:
        """Read an input for the cache (``read()``, with a context that skips and keeps
        everything: :func:`~accordkit.ingest.cache_policy.capture`); a read whose reader
        read the file itself and found other bytes is not kept."""
        def under(sub: ReadContext) -> list[Part]:
            outer, self.ctx = self.ctx, sub
            self.capturing, self.changed = True, False
            try:
                return read()
            finally:
                self.ctx, self.capturing = outer, False

        entry = capture(under, self.ctx, name)
        if self.changed:
            self.episode_cache.unkept.add(name)
        return entry

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
        fetched = self.ahead.take(name)
        self.ahead.start_after(name, needed=self._read_ahead)
        if fetched is None:
            reader = self._uncached_reader(input)
            if reader is not None:
                return list(parts_of(reader.read(input, self.ctx), self.ctx, input))
        if not self.cache:
            return self._text(input.with_data(Path(str(input.path)).read_bytes()
                                              if fetched is None else fetched.data))
        entry = self.episode_cache.file_entry(
            input, fetched, lambda read: self._capture(lambda: self._text(read), name))
        return replay(entry, name, self.ctx)

    def _run(self, input: Input) -> list[Part]:
        """A dir-format run, cached as one entry (see
        :meth:`~accordkit.ingest.cache_policy.EpisodeCache.run_entry`)."""
        from .formats.tau2.runs import run_files

        if not self.cache:
            return list(self.stream(input))
        entry = self.episode_cache.run_entry(
            input, run_files, lambda: self._capture(lambda: list(self.stream(input)),
                                                    input.name))
        return replay(entry, input.name, self.ctx)

    # ----------------------------------------------------------------- the load

    def read_ahead(self, inputs: Sequence[Input]) -> None:
        """Say that these inputs are read next, in this order: while one local file is
        parsed, the next is read (:mod:`accordkit.ingest.prefetch`)."""
        self.ahead.plan(inputs)

    def _read_ahead(self, input: Input, real: Path) -> bool:
        """Whether the file ``input`` is worth reading ahead: what :meth:`_file` would ask
        first (a parquet reader takes it: nothing to read; its digest is remembered: no
        bytes to read)."""
        return self._uncached_reader(input) is None \
            and not (self.cache and known_digest(real) is not None)

    def remembered(self, inputs: Sequence[Input], report: Any) -> pa.Table | None:
        """The rows of a load of these same files, when one was stored through the cache;
        fills ``report`` (:meth:`~accordkit.ingest.cache_policy.EpisodeCache.remembered`)."""
        return self.episode_cache.remembered(inputs, report) if self.cache else None

    def remember(self, inputs: Sequence[Input], report: Any, rows: int) -> None:
        """Keep a clean load of several files as one cache file
        (:meth:`~accordkit.ingest.cache_policy.EpisodeCache.remember`)."""
        if self.cache:
            self.episode_cache.remember(inputs, report, rows)

    def finish(self, *, warn: bool = True) -> None:
        """Stop reading ahead, write what the cache is to keep, and say what went wrong
        writing it (:meth:`~accordkit.ingest.cache_policy.EpisodeCache.finish`)."""
        self.ahead.close()
        self.episode_cache.finish(warn=warn)
