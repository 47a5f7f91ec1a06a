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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ._arrow import arrow_table, empty_dataset, episode_dataset
from .adapters.tau2 import is_results_object, read_results_dir, results_to_episodes
from .adapters.taubench import looks_like_taubench, read_taubench
from .schema import EPISODE_FEATURES, EpisodeValidationError, empty_episode, validate_episode
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
    notes : list of str
        Oddities in the data that did not stop a record (e.g. a task defined twice);
        :func:`load` emits each as a ``UserWarning``.
    """

    skipped: list[SkippedRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    duplicates: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


class _Reader:
    """Reads sources with one error policy, collecting skipped records in a report."""

    def __init__(self, errors: str, report: LoadReport, *, config: str | None,
                 split: str | None, revision: str | None,
                 metadata: dict[str, Any] | None = None) -> None:
        self.errors, self.report, self.metadata = errors, report, metadata
        self.config, self.split, self.revision = config, split, revision

    def problem(self, err: EpisodeValidationError) -> None:
        """Raise ``err`` or record it as skipped, by the error policy."""
        if self.errors == "raise":
            raise err
        self.report.skipped.append(SkippedRecord.from_error(err))

    def guarded(self, source: str, read: Any) -> datasets.Dataset | None:
        """Run ``read()``; a whole-file problem is raised or recorded (then None)."""
        try:
            return read()
        except EpisodeValidationError as exc:
            if exc.source is None:
                exc = EpisodeValidationError(exc.reason, source=source,
                                             record=exc.record or _WHOLE_FILE, field=exc.field)
            self.problem(exc)
            return None

    # ----------------------------------------------------------------- sources

    def source(self, src: Source) -> datasets.Dataset | None:
        path = Path(src)
        if path.exists():
            return self.guarded(str(src), lambda: self.path(path))
        if is_hub_id(src):
            return self.guarded(str(src), lambda: self.hub(str(src)))
        self.problem(SourceNotFoundError(
            "no such file or folder, and not a hub id of the form 'org/name'",
            source=str(src), record=_WHOLE_FILE, field="(path)"))
        return None

    def path(self, path: Path) -> datasets.Dataset:
        if path.is_dir():
            if (path / "results.json").is_file() and (path / "simulations").is_dir():
                return self.results_dir(path)
            if _is_hub_folder(path):
                return self.hub(str(path))
            return self.folder(path)
        if path.name == "results.json" and (path.parent / "simulations").is_dir():
            return self.results_dir(path.parent)
        return self.file(path)

    def folder(self, path: Path) -> datasets.Dataset:
        """Every .json/.jsonl/.parquet file below ``path`` (hidden ones left out), by name."""
        files = sorted(p for p in path.rglob("*")
                       if p.is_file() and p.suffix.lower() in _FILE_SUFFIXES
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
        if not files:
            raise EpisodeValidationError("folder holds no .json, .jsonl or .parquet files",
                                         source=str(path), record=_WHOLE_FILE, field="(folder)")
        parts = [self.guarded(str(p), lambda p=p: self.file(p)) for p in files]
        return _concat([p for p in parts if p is not None])

    def file(self, path: Path) -> datasets.Dataset:
        source = str(path)
        data = path.read_bytes()
        if data[:4] == b"PAR1":
            return self.parquet(path)
        if path.suffix.lower() == ".parquet":
            raise EpisodeValidationError("not a parquet file (no PAR1 header)", source=source,
                                         record=_WHOLE_FILE, field=_TOP)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise EpisodeValidationError(
                f"not a text file: byte {exc.start} is not UTF-8 (a binary file?)",
                source=source, record=_WHOLE_FILE, field=_TOP) from None
        if "\x00" in text:
            raise EpisodeValidationError("not a text file: it holds NUL bytes (a binary file?)",
                                         source=source, record=_WHOLE_FILE, field=_TOP)
        return self.json_text(text, source)

    # ----------------------------------------------------------------- JSON

    def json_text(self, text: str, source: str) -> datasets.Dataset:
        if not text.strip():
            raise EpisodeValidationError("empty file", source=source, record=_WHOLE_FILE,
                                         field=_TOP)
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            if _looks_like_jsonl(text):
                return self.jsonl(text, source)
            raise EpisodeValidationError(
                f"invalid or truncated JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                source=source, record=_WHOLE_FILE, field=_TOP) from None
        except RecursionError:
            raise EpisodeValidationError("JSON nested too deeply", source=source,
                                         record=_WHOLE_FILE, field=_TOP) from None
        if is_results_object(obj):
            return self.results(obj, source)
        if looks_like_taubench(obj):
            items = read_taubench(obj, source=source, errors="skip", metadata=self.metadata)
            for err in (i for i in items if isinstance(i, EpisodeValidationError)):
                self.problem(err)
            return _records_to_dataset([i for i in items if isinstance(i, dict)], source=source)
        if _is_canonical(obj):
            obj = [obj]
        if isinstance(obj, list) and any(_is_canonical(o) for o in obj):
            items = ((f"item {i}", o) for i, o in enumerate(obj))
            return self.canonical(items, source)
        raise EpisodeValidationError(
            "not a results file or canonical episodes: expected a tau2/AgentChangeBench results "
            "object ({info, tasks, simulations}) or episode records with 'benchmark' and "
            f"'episode_id' (found {_describe(obj)})", source=source, record=_WHOLE_FILE,
            field=_TOP)

    def jsonl(self, text: str, source: str) -> datasets.Dataset:
        def items() -> Iterator[tuple[str, Any]]:
            for n, line in enumerate(text.splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    yield f"line {n}", json.loads(line)
                except (json.JSONDecodeError, RecursionError) as exc:
                    reason = (f"invalid JSON ({exc.msg}, column {exc.colno})"
                              if isinstance(exc, json.JSONDecodeError) else "JSON nested too deeply")
                    self.problem(EpisodeValidationError(reason, source=source,
                                                        record=f"line {n}", field=_TOP))
        return self.canonical(items(), source)

    def canonical(self, items: Iterator[tuple[str, Any]], source: str) -> datasets.Dataset:
        records = []
        for where, obj in items:
            try:
                records.append(_canonical_record(obj, source=source, where=where))
            except EpisodeValidationError as exc:
                self.problem(exc)
        return self.filtered(_records_to_dataset(records, source=source))

    def results(self, obj: Any, source: str) -> datasets.Dataset:
        if self.config is not None or self.split is not None:
            raise EpisodeValidationError(
                "config= and split= select parts of hub datasets and canonical files; a results "
                "file has neither", source=source, record=_WHOLE_FILE, field="(config/split)")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            items = results_to_episodes(obj, source=source)
        self.report.notes.extend(str(w.message) for w in caught)
        records = []
        for item in items:
            if isinstance(item, EpisodeValidationError):
                self.problem(item)
            else:
                records.append(item)
        return _records_to_dataset(records, source=source)

    def results_dir(self, path: Path) -> datasets.Dataset:
        return self.results(read_results_dir(path), str(path))

    # ----------------------------------------------------------------- tables

    def parquet(self, path: Path) -> datasets.Dataset:
        # A single canonical file is read straight into memory with pyarrow: going through
        # load_dataset would copy it into the datasets cache for no benefit.
        try:
            table = pq.read_table(path)
        except (pa.ArrowException, OSError) as exc:
            raise EpisodeValidationError(f"unreadable parquet file ({exc})", source=str(path),
                                         record=_WHOLE_FILE, field=_TOP) from None
        return self.filtered(self.table(table, source=str(path)))

    def table(self, table: pa.Table, *, source: str,
              origin: str | None = None) -> datasets.Dataset:
        """Check a canonical table; ``origin`` fills empty ``source`` values (default: source)."""
        check_columns(table.column_names, source=source)
        table = check_table_types(table.select(list(EPISODE_FEATURES)), source=source)
        src = table.column("source")
        if src.null_count:
            table = table.set_column(table.schema.get_field_index("source"), "source",
                                     pc.fill_null(src, origin or source))
        problems = table_problems(table, source=source)
        if problems:
            for _, err in problems:
                self.problem(err)
            keep = np.ones(table.num_rows, dtype=bool)
            keep[[r for r, _ in problems]] = False
            table = table.filter(pa.array(keep))
        return _dataset(table)

    def filtered(self, ds: datasets.Dataset) -> datasets.Dataset:
        """Rows of a canonical file that belong to the requested config and split."""
        if (self.config is None and self.split is None) or not len(ds):
            return ds
        table = arrow_table(ds)
        mask = pa.array(np.ones(table.num_rows, dtype=bool))
        for name, want in (("config", self.config), ("split", self.split)):
            if want is not None:
                mask = pc.and_(mask, pc.fill_null(pc.equal(table.column(name), want), False))
        return _dataset(table.filter(mask))

    def hub(self, path: str) -> datasets.Dataset:
        """Hub id or hub-layout folder: every config and split, with config/split as columns."""
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
                table = arrow_table(ds)
                for column, value in (("config", name), ("split", split_name)):
                    if column in table.column_names:
                        table = table.set_column(table.column_names.index(column), column,
                                                 pa.array([value] * table.num_rows, pa.string()))
                where = f"{path} (config {name}, split {split_name})"
                parts.append(self.table(table, source=where, origin=path))
        return _concat(parts)


# --------------------------------------------------------------------------- helpers


def _dataset(table: pa.Table) -> datasets.Dataset:
    return episode_dataset(table)


def _records_to_dataset(records: list[dict[str, Any]], *, source: str) -> datasets.Dataset:
    """Build a dataset with the canonical features from checked records."""
    if not records:
        return empty_dataset()
    try:
        table = pa.Table.from_pylist(records, schema=EPISODE_FEATURES.arrow_schema)
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
    problem = record_problem(rec)
    if problem:
        raise EpisodeValidationError(problem[1], source=source, record=record, field=problem[0])
    try:
        validate_episode(rec)
    except EpisodeValidationError as exc:
        raise EpisodeValidationError(exc.reason, source=source, record=record,
                                     field=exc.field) from None
    return rec


def _is_canonical(obj: Any) -> bool:
    return isinstance(obj, dict) and "episode_id" in obj and "benchmark" in obj


def _looks_like_jsonl(text: str) -> bool:
    """Several lines, one of the first few a whole JSON object."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    for line in lines[:5]:
        try:
            if isinstance(json.loads(line), dict):
                return True
        except (json.JSONDecodeError, RecursionError):
            continue
    return False


def _describe(obj: Any) -> str:
    if isinstance(obj, dict):
        keys = list(obj)[:6]
        return f"an object with keys {keys}" + (" ..." if len(obj) > 6 else "")
    if isinstance(obj, list):
        return f"a list of {len(obj)} item(s)"
    return f"{type(obj).__name__} {obj!r:.40}"


def _is_hub_folder(path: Path) -> bool:
    """A dataset card with configs, or parquet files and no JSON: read with ``datasets``."""
    card = path / "README.md"
    if card.is_file():
        head = card.read_text("utf-8", errors="replace")
        if head.startswith("---") and re.search(r"^configs:", head.split("\n---", 1)[0],
                                                flags=re.MULTILINE):
            return True
    files = [p.suffix.lower() for p in path.rglob("*") if p.is_file()]
    return ".parquet" in files and ".json" not in files and ".jsonl" not in files


def _hub_error(path: str, exc: Exception, config: str | None = None) -> EpisodeValidationError:
    import os

    hint = ""
    if os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "TRUE", "ON", "YES"):
        hint = " (HF_HUB_OFFLINE is set: only datasets already in the local cache can be read)"
    where = f"config {config}: " if config else ""
    return EpisodeValidationError(
        f"{where}could not load the dataset: {type(exc).__name__}: {exc}{hint}",
        source=path, record=_WHOLE_FILE, field="(dataset)")


def _concat(parts: list[datasets.Dataset]) -> datasets.Dataset:
    parts = [p for p in parts if p is not None and len(p)]
    if not parts:
        return empty_dataset()
    if len(parts) == 1:
        return parts[0]
    return _dataset(pa.concat_tables([arrow_table(p) for p in parts]))


# --------------------------------------------------------------------------- duplicates


def _content_key(row: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in row.items() if k not in _PROVENANCE}, sort_keys=True,
                      default=str)


def _drop_duplicates(ds: datasets.Dataset, reader: _Reader) -> datasets.Dataset:
    """Keep the first copy of each episode id; a different copy is an error."""
    table = arrow_table(ds)
    ids = table.column("episode_id").to_numpy(zero_copy_only=False)
    uniq, counts = np.unique(ids, return_counts=True)
    if not (counts > 1).any():
        return ds
    dup_ids = set(uniq[counts > 1].tolist())
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
                reader.problem(EpisodeValidationError(
                    f"episode id also loaded from {base['source']} with different content "
                    "(the first copy was kept)", source=other["source"], record=str(eid),
                    field="episode_id"))
            else:
                sources.append(other["source"])
        if len(sources) > 1:
            reader.report.duplicates[str(eid)] = sources
    keep = np.setdiff1d(np.arange(table.num_rows), np.array(drop, dtype=np.int64))
    return _dataset(table.take(pa.array(keep)))


# --------------------------------------------------------------------------- public


def load_with_report(
    source: Source | Sequence[Source],
    *,
    config: str | None = None,
    split: str | None = None,
    revision: str | None = None,
    errors: Literal["raise", "skip"] = "raise",
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
                     metadata=metadata)
    parts = []
    for src in sources:
        part = reader.source(src)
        report.counts[str(src)] = 0 if part is None else len(part)
        if part is not None:
            parts.append(part)
    ds = _drop_duplicates(_concat(parts), reader)
    return ds, report


def load(
    source: Source | Sequence[Source],
    *,
    config: str | None = None,
    split: str | None = None,
    revision: str | None = None,
    errors: Literal["raise", "skip"] = "raise",
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
                                  errors=errors, metadata=metadata)
    for note in report.notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    if report.duplicates:
        warnings.warn(DuplicateEpisodesWarning(report.duplicates), stacklevel=2)
    warn_skipped(report.skipped, stacklevel=3)
    return ds
