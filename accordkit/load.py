"""``load``: any supported source -> one ``datasets.Dataset`` of canonical episodes.

Sources are recognised by what they contain, not by their names:

* a Hugging Face hub id (``org/name``), loaded with :func:`datasets.load_dataset`;
* a local dataset folder in hub layout (parquet files, usually with a dataset card naming
  configs), loaded the same way, so a folder and its hub copy give identical datasets;
* a parquet or JSONL file of canonical episodes (also a JSON array of them);
* a tau2-bench / AgentChangeBench results JSON file, a dir-format run
  (``results.json`` + ``simulations/``), or a folder of such files;
* a τ-bench (v1) result file (a JSON list of run records, :mod:`accordkit.adapters.taubench`);
* a list of any of these, loaded as one dataset.

A path that exists locally is never treated as a hub id.

Every problem becomes an :class:`~accordkit.schema.EpisodeValidationError` naming the file,
the record (simulation / episode id, or its position; ``(whole file)`` for a file that cannot
be read at all) and the field. With ``errors="skip"`` the problem records are left out and
listed instead, so that nothing is dropped silently.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from . import readers
from ._arrow import arrow_table, canonical_schema, episode_dataset
from .adapters.tau2 import is_results_object, iter_episodes, read_results_dir
from .adapters.tau2_format import decode_results
from .adapters.taubench import looks_like_taubench, read_taubench
from .cache import CacheEntry, cache_key, known_digest, read_entry, remember_digest, write_entry
from .schema import (
    EPISODE_FEATURES,
    EpisodeValidationError,
    empty_episode,
    rule_problem,
)
from .validate import (
    DuplicateEpisodesWarning,
    SkippedRecord,
    check_columns,
    check_table_types,
    record_problem,
    table_problems,
    warn_skipped,
)

__all__ = ["load", "load_with_report", "LoadReport", "SourceNotFoundError", "is_hub_id"]

Source = str | Path
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
#: File name endings that mark a path, never a hub repository name.
_FILE_SUFFIXES = (".json", ".jsonl", ".parquet")
#: Columns that say where a record was read from; not part of an episode's content.
_PROVENANCE = ("source", "config", "split")
_WHOLE_FILE = "(whole file)"
#: Simulations of a results file converted to Arrow at a time.
_RESULTS_BATCH = 256
_TOP = "(top level)"


class SourceNotFoundError(EpisodeValidationError, FileNotFoundError):
    """A source is neither an existing path nor a hub id (also a ``FileNotFoundError``)."""


def is_hub_id(source: Source) -> bool:
    """Whether ``source`` should be read from the Hugging Face hub.

    Only when it has the form ``org/name``, does not end like a file name (``.json``,
    ``.jsonl``, ``.parquet``) and no such local path exists.

    Examples
    --------
    >>> is_hub_id("org/some-dataset")
    True
    >>> is_hub_id("data/does/not/exist.json")
    False
    >>> is_hub_id("results/run.json")
    False
    """
    text = str(source)
    return (bool(_HUB_ID.match(text)) and not text.lower().endswith(_FILE_SUFFIXES)
            and not Path(text).exists())


@dataclass
class LoadReport:
    """What :func:`load_with_report` read.

    Attributes
    ----------
    skipped : list of SkippedRecord
        Every record (or whole file) left out by ``errors="skip"``, with the reason.
    duplicates : dict
        ``episode_id -> sources`` for episodes found more than once with identical content
        (kept once, from the first source).
    counts : dict
        Episodes read from each source given (before duplicates were removed).
    files : dict
        ``file -> FileRead`` for every file (or hub config / split) read: episodes kept,
        and for results files the number of simulations it holds.
    notes : list of str
        Oddities in the data that did not stop a record (e.g. a task defined twice);
        :func:`load` emits each as a ``UserWarning``.
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

    # ----------------------------------------------------------------- sources

    def source(self, src: Source) -> pa.Table | None:
        path = Path(src)
        if path.exists():
            return self.guarded(str(src), lambda: self.path(path))
        if is_hub_id(src):
            return self.guarded(str(src), lambda: self.hub(str(src)))
        self.problem(SourceNotFoundError(
            "no such file or folder, and not a hub id of the form 'org/name'",
            source=str(src), record=_WHOLE_FILE, field="(path)"))
        return None

    def path(self, path: Path) -> pa.Table:
        if path.is_dir():
            if (path / "results.json").is_file() and (path / "simulations").is_dir():
                return self.results_dir(path)
            configs = _card_configs(path)
            if configs:
                return self.dataset_folder(path, configs)
            return self.folder(path)
        if path.name == "results.json" and (path.parent / "simulations").is_dir():
            return self.results_dir(path.parent)
        return self.file(path)

    def folder(self, path: Path) -> pa.Table:
        """Every .json/.jsonl/.parquet file below ``path`` (hidden ones left out), by name."""
        files = sorted(p for p in path.rglob("*")
                       if p.is_file() and p.suffix.lower() in _FILE_SUFFIXES
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
        if not files:
            raise EpisodeValidationError("folder holds no .json, .jsonl or .parquet files",
                                         source=str(path), record=_WHOLE_FILE, field="(folder)")
        parts = [self.guarded(str(p), lambda p=p: self.file(p)) for p in files]
        return _concat([p for p in parts if p is not None])

    def file(self, path: Path) -> pa.Table:
        source = str(path)
        with path.open("rb") as fh:
            magic = fh.read(4)
        if magic == b"PAR1":
            return self.parquet(path)
        if path.suffix.lower() == ".parquet":
            raise EpisodeValidationError("not a parquet file (no PAR1 header)", source=source,
                                         record=_WHOLE_FILE, field=_TOP)
        if not self.cache:
            return self.text_file(path.read_bytes(), source)
        options = {"config": self.config, "split": self.split,
                   "metadata": sorted((self.metadata or {}).items()),
                   "readers": [r.name for r in readers.registered()]}
        # An unchanged file is found by its remembered digest, without reading it; any
        # other file is read once, for its digest and (on a miss) its episodes.
        known = known_digest(path)
        entry = None if known is None else read_entry(
            cache_key(None, path=source, options=options, digest=known))
        if entry is None:
            data = path.read_bytes()
            digest = remember_digest(path, data)
            key = cache_key(None, path=source, options=options, digest=digest)
            entry = read_entry(key) if digest != known else None
            if entry is None:
                entry = self.capture(data, source)
                write_entry(key, entry)
        return self.replay(entry, source)

    def text_file(self, data: bytes, source: str) -> pa.Table:
        """A JSON or JSONL file's bytes (or a registered reader's format) -> its good records."""
        head = data[:readers.HEAD_BYTES]
        for reader in readers.registered():
            if reader.sniff(Path(source), head):
                return self.registered_format(reader, Path(source))
        if head.lstrip()[:1] == b"{":
            # The typed decoder reads a results file straight from the bytes; anything it
            # refuses (another format, a type problem, bytes that are not UTF-8) is read
            # the general way below, which names what is wrong.
            typed = decode_results(data)
            if typed is not None:
                return self.results(typed, source)
        text, bad_lines = _decode_text(data, source=source)
        return self.json_text(text, source, bad_lines=bad_lines)

    def registered_format(self, reader: readers.Reader, path: Path) -> pa.Table:
        """Read ``path`` with a registered reader; its records get every usual check."""
        source = str(path)
        records, labels = [], []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            items = list(reader.read(path, source=source))
        self.report.notes.extend(str(w.message) for w in caught)
        for i, item in enumerate(items):
            if isinstance(item, EpisodeValidationError):
                self.problem(item)
                continue
            where = f"item {i}"
            try:
                rec = _canonical_record(item, source=source, where=where)
            except EpisodeValidationError as exc:
                self.problem(exc)
                continue
            records.append(rec)
            labels.append(_label(rec, where))
        ds, labels = self.filtered(_records_to_dataset(records, source=source), labels)
        return self.emit(ds, source, labels)

    def capture(self, data: bytes, source: str) -> CacheEntry:
        """Read a text file with errors="skip" and keep everything the read reported."""
        sub = _Reader("skip", LoadReport(), config=self.config, split=self.split,
                      revision=self.revision, cache=False, metadata=self.metadata)
        try:
            ds = sub.text_file(data, source)
        except EpisodeValidationError as exc:
            sub.problem(EpisodeValidationError(exc.reason, source=exc.source or source,
                                               record=exc.record or _WHOLE_FILE,
                                               field=exc.field))
            ds = _empty()
            sub.where = []
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
            return _empty()
        ds = self.emit(_dataset(entry.table), source, entry.labels)
        self.report.files[source].simulations = entry.simulations
        return ds

    # ----------------------------------------------------------------- JSON

    def json_text(self, text: str, source: str, *,
                  bad_lines: Sequence[int] = ()) -> pa.Table:
        if not text.strip():
            raise EpisodeValidationError("empty file", source=source, record=_WHOLE_FILE,
                                         field=_TOP)
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            if _looks_like_jsonl(text):
                return self.jsonl(text, source, bad_lines=bad_lines)
            raise EpisodeValidationError(
                f"invalid or truncated JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                source=source, record=_WHOLE_FILE, field=_TOP) from None
        except RecursionError:
            raise EpisodeValidationError("JSON nested too deeply", source=source,
                                         record=_WHOLE_FILE, field=_TOP) from None
        if is_results_object(obj):
            ds = self.results(obj, source)
            if bad_lines:
                self.note_replaced(source, bad_lines, _records_with_replacement(ds))
            return ds
        if looks_like_taubench(obj):
            items = read_taubench(obj, source=source, errors="skip", metadata=self.metadata)
            for err in (i for i in items if isinstance(i, EpisodeValidationError)):
                self.problem(err)
            return _records_to_dataset([i for i in items if isinstance(i, dict)], source=source)
        if _is_canonical(obj):
            obj = [obj]
        if isinstance(obj, list) and any(_is_canonical(o) for o in obj):
            items = ((f"item {i}", o) for i, o in enumerate(obj))
            ds = self.canonical(items, source)
            if bad_lines:
                self.note_replaced(source, bad_lines, _records_with_replacement(ds))
            return ds
        raise EpisodeValidationError(
            "not a results file or canonical episodes: expected a tau2/AgentChangeBench results "
            "object ({info, tasks, simulations}) or episode records with 'benchmark' and "
            f"'episode_id' (found {_describe(obj)})", source=source, record=_WHOLE_FILE,
            field=_TOP)

    def note_replaced(self, source: str, lines: Sequence[int], records: Sequence[str]) -> None:
        """Report bytes that were not UTF-8 (decoded as U+FFFD) with the records they hit."""
        where = ", ".join(f"line {n}" for n in lines[:5]) + (" ..." if len(lines) > 5 else "")
        hit = (f"; record(s) affected: {', '.join(records[:5])}"
               + (f" and {len(records) - 5} more" if len(records) > 5 else "")) if records else ""
        self.report.notes.append(
            f"{source}: bytes that are not UTF-8 were replaced by U+FFFD ({where}){hit}")

    def jsonl(self, text: str, source: str, *,
              bad_lines: Sequence[int] = ()) -> pa.Table:
        # Records are split on "\n" only: U+2028, U+0085 and the like are valid inside JSON
        # strings and str.splitlines() would cut a record there.
        bad = set(bad_lines)
        replaced: list[str] = []

        def items() -> Iterator[tuple[str, Any]]:
            for n, line in enumerate(text.split("\n"), start=1):
                if not line.strip():
                    continue
                if n in bad:
                    replaced.append(f"line {n}")
                try:
                    yield f"line {n}", json.loads(line)
                except (json.JSONDecodeError, RecursionError) as exc:
                    reason = (f"invalid JSON ({exc.msg}, column {exc.colno})"
                              if isinstance(exc, json.JSONDecodeError) else "JSON nested too deeply")
                    self.problem(EpisodeValidationError(reason, source=source,
                                                        record=f"line {n}", field=_TOP))
        ds = self.canonical(items(), source)
        if bad:
            self.note_replaced(source, sorted(bad), replaced)
        return ds

    def canonical(self, items: Iterator[tuple[str, Any]], source: str) -> pa.Table:
        records, labels = [], []
        for where, obj in items:
            try:
                records.append(_canonical_record(obj, source=source, where=where))
            except EpisodeValidationError as exc:
                self.problem(exc)
            except RecursionError:
                self.problem(EpisodeValidationError("data nested too deeply", source=source,
                                                    record=where, field=_TOP))
            else:
                labels.append(_label(records[-1], where))
        ds, labels = self.filtered(_records_to_dataset(records, source=source), labels)
        return self.emit(ds, source, labels)

    def results(self, obj: Any, source: str) -> pa.Table:
        if self.config is not None or self.split is not None:
            raise EpisodeValidationError(
                "config= and split= select parts of hub datasets and canonical files; a results "
                "file has neither", source=source, record=_WHOLE_FILE, field="(config/split)")
        # Records are turned into Arrow a batch at a time, so that a large file never holds
        # all its episodes as Python objects at once.
        parts: list[pa.Table] = []
        labels: list[str] = []
        batch: list[dict[str, Any]] = []
        n_sims = 0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for item in iter_episodes(obj, source=source):
                n_sims += 1
                if isinstance(item, EpisodeValidationError):
                    self.problem(item)
                    continue
                batch.append(item)
                labels.append(str(item["episode_id"]))
                if len(batch) == _RESULTS_BATCH:
                    parts.append(_records_to_dataset(batch, source=source))
                    batch = []
        self.report.notes.extend(str(w.message) for w in caught)
        parts.append(_records_to_dataset(batch, source=source))
        ds = _concat(parts) if labels else _empty()
        self.emit(ds, source, labels)
        self.report.files[source].simulations = n_sims
        return ds

    def results_dir(self, path: Path) -> pa.Table:
        return self.results(read_results_dir(path), str(path))

    # ----------------------------------------------------------------- tables

    def parquet(self, path: Path, *, origin: str | None = None,
                parts: tuple[str, str] | None = None) -> pa.Table:
        """A canonical parquet file; ``parts`` = (config, split) of a dataset folder."""
        try:
            table = pq.read_table(path)
        except (pa.ArrowException, OSError) as exc:
            raise EpisodeValidationError(f"unreadable parquet file ({exc})", source=str(path),
                                         record=_WHOLE_FILE, field=_TOP) from None
        if parts is not None:
            table = _with_parts(table, *parts)
        ds, labels = self.table(table, source=str(path), origin=origin)
        ds, labels = self.filtered(ds, labels)
        return self.emit(ds, str(path), labels)

    def table(self, table: pa.Table, *, source: str,
              origin: str | None = None) -> tuple[pa.Table, list[str]]:
        """Check a canonical table; ``origin`` fills empty ``source`` values (default: source).

        Returns the good rows and a label (episode id and row) for each.
        """
        check_columns(table.column_names, source=source)
        table = check_table_types(table.select(list(EPISODE_FEATURES)), source=source)
        src = table.column("source")
        if src.null_count:
            table = table.set_column(table.schema.get_field_index("source"), "source",
                                     pc.fill_null(src, origin or source))
        problems = table_problems(table, source=source)
        keep = np.ones(table.num_rows, dtype=bool)
        if problems:
            for _, err in problems:
                self.problem(err)
            keep[[r for r, _ in problems]] = False
            table = table.filter(pa.array(keep))
        ids = table.column("episode_id").to_pylist()
        rows = np.flatnonzero(keep)
        return _dataset(table), [f"{e} (row {r})" for e, r in zip(ids, rows, strict=True)]

    def filtered(self, ds: pa.Table,
                 labels: list[str]) -> tuple[pa.Table, list[str]]:
        """Rows of a canonical file that belong to the requested config and split."""
        if (self.config is None and self.split is None) or not len(ds):
            return ds, labels
        table = ds
        mask = pa.array(np.ones(table.num_rows, dtype=bool))
        for name, want in (("config", self.config), ("split", self.split)):
            if want is not None:
                mask = pc.and_(mask, pc.fill_null(pc.equal(table.column(name), want), False))
        keep = mask.to_numpy(zero_copy_only=False)
        return _dataset(table.filter(mask)), [lb for lb, k in zip(labels, keep, strict=True) if k]

    def dataset_folder(self, path: Path, configs: dict[str, dict[str, list[str]]]
                       ) -> pa.Table:
        """A local folder in hub layout, read file by file as its dataset card says.

        Read with pyarrow rather than :func:`datasets.load_dataset`, whose cache would keep
        serving an old copy after a file in the folder changed; one bad file is one problem.
        """
        if self.config is not None and self.config not in configs:
            raise EpisodeValidationError(
                f"no config {self.config!r}; the dataset card names {sorted(configs)}",
                source=str(path), record=_WHOLE_FILE, field="(config)")
        parts = []
        for name, splits in configs.items():
            if self.config is not None and name != self.config:
                continue
            for split_name, patterns in splits.items():
                if self.split is not None and split_name != self.split:
                    continue
                files = sorted({f for pattern in patterns for f in path.glob(pattern)
                                if f.is_file()})
                if not files:
                    self.problem(EpisodeValidationError(
                        f"config {name}, split {split_name}: no file matches {patterns}",
                        source=str(path), record=_WHOLE_FILE, field="(dataset card)"))
                for f in files:
                    parts.append(self.guarded(str(f), lambda f=f, n=name, s=split_name:
                                              self.parquet(f, origin=str(path), parts=(n, s))))
        return _concat([p for p in parts if p is not None])

    def hub(self, path: str) -> pa.Table:
        """Hub id: every config and split, with config/split as columns."""
        revision = self.revision if is_hub_id(path) else None
        try:
            configs = ([self.config] if self.config else
                       datasets.get_dataset_config_names(path, revision=revision))
        except Exception as exc:  # noqa: BLE001 - datasets raises many types here
            raise _hub_error(path, exc) from None
        parts = []
        for name in configs:
            try:
                loaded = datasets.load_dataset(path, name, split=self.split, revision=revision)
            except Exception as exc:  # noqa: BLE001
                raise _hub_error(path, exc, config=name) from None
            splits = {self.split: loaded} if self.split else dict(loaded)
            for split_name, ds in splits.items():
                table = _with_parts(arrow_table(ds), name, split_name)
                where = f"{path} (config {name}, split {split_name})"
                part, labels = self.table(table, source=where, origin=path)
                parts.append(self.emit(part, where, labels))
        return _concat(parts)


# --------------------------------------------------------------------------- helpers


def _dataset(table: pa.Table) -> pa.Table:
    """Parts are plain Arrow tables until :func:`load_with_report` wraps the whole once."""
    return table


def _empty() -> pa.Table:
    return canonical_schema().empty_table()


def _records_to_dataset(records: list[dict[str, Any]], *, source: str) -> pa.Table:
    """Build a dataset with the canonical features from checked records."""
    if not records:
        return _empty()
    try:
        table = pa.Table.from_pylist(records, schema=canonical_schema())
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
        # Records are type-checked before they get here; name the culprit if one slipped by.
        for rec in records:
            problem = record_problem(rec)
            if problem:
                raise EpisodeValidationError(problem[1], source=source,
                                             record=str(rec.get("episode_id")),
                                             field=problem[0]) from None
        raise EpisodeValidationError(f"could not build the dataset ({exc})", source=source,
                                     record=_WHOLE_FILE) from None
    return _dataset(table)


def _canonical_record(obj: Any, *, source: str, where: str) -> dict[str, Any]:
    """Check one canonical record read from JSON; ``where`` is its position in the file."""
    if not isinstance(obj, dict):
        raise EpisodeValidationError(f"expected an episode object, got {_describe(obj)}",
                                     source=source, record=where, field=_TOP)
    eid = obj.get("episode_id")
    record = f"{eid} ({where})" if isinstance(eid, str) and eid else where
    unknown = [k for k in obj if k not in EPISODE_FEATURES]
    if unknown:
        raise EpisodeValidationError(f"unknown field(s) {unknown} (see docs/schema.md)",
                                     source=source, record=record, field=str(unknown[0]))
    rec = empty_episode()
    rec.update(obj)
    if rec.get("source") is None:
        rec["source"] = source
    problem = record_problem(rec) or rule_problem(rec)
    if problem:
        raise EpisodeValidationError(problem[1], source=source, record=record, field=problem[0])
    return rec


def _is_canonical(obj: Any) -> bool:
    return isinstance(obj, dict) and "episode_id" in obj and "benchmark" in obj


def _looks_like_jsonl(text: str) -> bool:
    """Several lines, one of them a whole JSON object starting in the first column.

    Every line is tried, so a JSONL file whose first lines are broken is still read as
    JSONL (with those lines reported); lines are split on "\\n" only, as :meth:`jsonl`
    does. Indented lines are left out: they are the inside of a pretty-printed document.
    """
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < 2:
        return False
    for line in lines:
        if not line.startswith("{"):
            continue
        try:
            if isinstance(json.loads(line), dict):
                return True
        except (json.JSONDecodeError, RecursionError):
            continue
    return False


#: Share of bytes that may be invalid UTF-8 before a file is taken for a binary file.
_MAX_BAD_BYTES = 0.01


def _decode_text(data: bytes, *, source: str) -> tuple[str, list[int]]:
    """UTF-8 text of a JSON / JSONL file and the lines that held bytes that are not UTF-8.

    A few stray bytes are replaced by U+FFFD (and reported by the caller with the records
    they hit) instead of losing the whole file; NUL bytes or many bad bytes mean a binary
    file, which is an error.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8-sig", errors="surrogateescape")
        bad = [m.start() for m in _ESCAPED.finditer(text)]
        if b"\x00" in data or len(bad) > max(1, _MAX_BAD_BYTES * len(data)):
            raise EpisodeValidationError(
                f"not a text file: byte {exc.start} is not UTF-8 (a binary file?)",
                source=source, record=_WHOLE_FILE, field=_TOP) from None
        lines = sorted({text.count("\n", 0, pos) + 1 for pos in bad})
        return _ESCAPED.sub("\ufffd", text), lines
    if "\x00" in text:
        raise EpisodeValidationError("not a text file: it holds NUL bytes (a binary file?)",
                                     source=source, record=_WHOLE_FILE, field=_TOP)
    return text, []


_ESCAPED = re.compile("[\udc80-\udcff]")


def _records_with_replacement(ds: pa.Table) -> list[str]:
    """Episode ids whose text holds U+FFFD (after bytes that were not UTF-8 were replaced)."""
    if not len(ds):
        return []
    out = []
    for row in ds.to_pylist():
        if "\ufffd" in json.dumps(row, ensure_ascii=False, default=str):
            out.append(str(row["episode_id"]))
    return out


def _label(rec: dict[str, Any], where: str) -> str:
    eid = rec.get("episode_id")
    return f"{eid} ({where})" if isinstance(eid, str) and eid else where


def _with_parts(table: pa.Table, config: str, split: str) -> pa.Table:
    """``table`` with its ``config`` and ``split`` columns set (when it has them)."""
    for column, value in (("config", config), ("split", split)):
        if column in table.column_names:
            table = table.set_column(table.column_names.index(column), column,
                                     pa.array([value] * table.num_rows, pa.string()))
    return table


def _describe(obj: Any) -> str:
    if isinstance(obj, dict):
        keys = list(obj)[:6]
        return f"an object with keys {keys}" + (" ..." if len(obj) > 6 else "")
    if isinstance(obj, list):
        return f"a list of {len(obj)} item(s)"
    return f"{type(obj).__name__} {obj!r:.40}"


def _card_configs(path: Path) -> dict[str, dict[str, list[str]]]:
    """``config -> split -> path patterns`` from a folder's dataset card (empty: no card).

    Only a ``README.md`` whose YAML header lists ``configs`` makes a folder a dataset folder;
    any other folder is read file by file.
    """
    card = path / "README.md"
    if not card.is_file():
        return {}
    head = card.read_text("utf-8", errors="replace")
    if not head.startswith("---"):
        return {}
    header = head[3:].split("\n---", 1)[0]
    if not re.search(r"^configs:", header, flags=re.MULTILINE):
        return {}
    import yaml

    try:
        meta = yaml.safe_load(header)
    except yaml.YAMLError as exc:
        raise EpisodeValidationError(f"dataset card header is not valid YAML ({exc})",
                                     source=str(card), record=_WHOLE_FILE,
                                     field="configs") from None
    configs: dict[str, dict[str, list[str]]] = {}
    for i, entry in enumerate(meta.get("configs") or []):
        name = entry.get("config_name") if isinstance(entry, dict) else None
        files = entry.get("data_files") if isinstance(entry, dict) else None
        if not isinstance(name, str) or files is None:
            raise EpisodeValidationError("a config needs config_name and data_files",
                                         source=str(card), record=_WHOLE_FILE,
                                         field=f"configs[{i}]")
        splits: dict[str, list[str]] = {}
        for item in files if isinstance(files, list) else [files]:
            if isinstance(item, str):
                splits.setdefault("train", []).append(item)
                continue
            if not isinstance(item, dict) or not isinstance(item.get("path"), str | list):
                raise EpisodeValidationError("data_files entries need a split and a path",
                                             source=str(card), record=_WHOLE_FILE,
                                             field=f"configs[{i}].data_files")
            paths = item["path"] if isinstance(item["path"], list) else [item["path"]]
            splits.setdefault(str(item.get("split", "train")), []).extend(map(str, paths))
        configs[name] = splits
    return configs


def _hub_error(path: str, exc: Exception, config: str | None = None) -> EpisodeValidationError:
    import os

    hint = ""
    if os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "TRUE", "ON", "YES"):
        hint = " (HF_HUB_OFFLINE is set: only datasets already in the local cache can be read)"
    where = f"config {config}: " if config else ""
    return EpisodeValidationError(
        f"{where}could not load the dataset: {type(exc).__name__}: {exc}{hint}",
        source=path, record=_WHOLE_FILE, field="(dataset)")


def _concat(parts: list[pa.Table]) -> pa.Table:
    parts = [p for p in parts if p is not None and len(p)]
    if not parts:
        return _empty()
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
        sources = [base["source"]]
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
                sources.append(other["source"])
        if len(sources) > 1:
            reader.report.duplicates[str(eid)] = sources
    keep = np.setdiff1d(np.arange(table.num_rows), np.array(drop, dtype=np.int64))
    return _dataset(table.take(pa.array(keep)))


# --------------------------------------------------------------------------- public


def load_table(table: pa.Table, *, source: str, errors: Literal["raise", "skip"] = "raise",
               ) -> tuple[datasets.Dataset, LoadReport]:
    """Check an Arrow table of canonical episodes (a parquet batch) by the loader's rules.

    Used by the streaming engines to load one batch of a shard without reading the rest.
    Returns the good rows as a dataset and the report of what was skipped.
    """
    report = LoadReport()
    reader = _Reader(errors, report, config=None, split=None, revision=None)
    good, _ = reader.table(table, source=source)
    return episode_dataset(good), report


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
    for src in sources:
        part = reader.source(src)
        report.counts[str(src)] = 0 if part is None else part.num_rows
        if part is not None:
            parts.append(part)
    ds = episode_dataset(_drop_duplicates(_concat(parts), reader))
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
