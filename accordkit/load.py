"""``load``: any supported source -> one ``datasets.Dataset`` of canonical episodes.

Sources are recognised by what they contain, not by their names:

* a Hugging Face hub id (``org/name``), loaded with :func:`datasets.load_dataset`;
* a local dataset folder in hub layout (parquet files and a dataset card naming configs),
  loaded the same way, so a folder and its hub copy give identical datasets;
* a parquet or JSONL file of canonical episodes;
* a tau2-bench / AgentChangeBench results JSON file, a dir-format run
  (``results.json`` + ``simulations/``), or a folder of result files;
* a list of any of these, loaded as one dataset.

A path that exists locally is never treated as a hub id.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ._arrow import arrow_table, empty_dataset
from .adapters.tau2 import is_results_object, read_results_dir, results_to_episodes
from .schema import EPISODE_FEATURES, EpisodeValidationError, empty_episode, validate_episode
from .validate import (
    DuplicateEpisodesWarning,
    SkippedRecord,
    check_columns,
    table_problems,
    warn_skipped,
)

__all__ = ["load", "load_with_report", "LoadReport", "is_hub_id"]

Source = str | Path
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
#: Columns that say where a record was read from; not part of an episode's content.
_PROVENANCE = ("source", "config", "split")


def is_hub_id(source: Source) -> bool:
    """Whether ``source`` should be read from the Hugging Face hub.

    Only when it has the form ``org/name`` and no such local path exists.

    Examples
    --------
    >>> is_hub_id("org/some-dataset")
    True
    >>> is_hub_id("data/does/not/exist.json")
    False
    """
    text = str(source)
    return bool(_HUB_ID.match(text)) and not Path(text).exists()


class LoadReport:
    """What :func:`load_with_report` read: per-source counts and every skipped record."""

    def __init__(self) -> None:
        self.skipped: list[SkippedRecord] = []
        self.duplicates: list[tuple[str, list[str]]] = []
        self.counts: dict[str, int] = {}


# --------------------------------------------------------------------------- helpers


def _records_to_dataset(records: list[dict[str, Any]], *, source: str) -> datasets.Dataset:
    """Build a dataset with the canonical features; name the record when Arrow refuses one."""
    if not records:
        return empty_dataset()
    try:
        return datasets.Dataset.from_list(records, features=EPISODE_FEATURES)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
        for rec in records:  # find the culprit for a precise message
            try:
                datasets.Dataset.from_list([rec], features=EPISODE_FEATURES)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as inner:
                raise EpisodeValidationError(
                    f"value does not fit the canonical schema ({inner})", source=source,
                    record=str(rec.get("episode_id")), field=_guess_field(rec)) from None
        raise EpisodeValidationError(f"could not build the dataset ({exc})",
                                     source=source) from None


def _guess_field(rec: dict[str, Any]) -> str | None:
    for name, feature in EPISODE_FEATURES.items():
        try:
            datasets.Dataset.from_list([{name: rec.get(name)}],
                                       features=datasets.Features({name: feature}))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
            return name
    return None


def _canonical_record(obj: Any, *, source: str, index: int) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise EpisodeValidationError(f"expected a JSON object, got {type(obj).__name__}",
                                     source=source, record=f"line {index + 1}")
    unknown = [k for k in obj if k not in EPISODE_FEATURES]
    if unknown:
        raise EpisodeValidationError(f"unknown field(s) {unknown} (see docs/schema.md)",
                                     source=source, record=str(obj.get("episode_id",
                                                                       f"line {index + 1}")),
                                     field=unknown[0])
    rec = empty_episode()
    rec.update(obj)
    if rec.get("source") is None:
        rec["source"] = source
    validate_episode(rec)
    return rec


def _is_canonical(obj: Any) -> bool:
    return isinstance(obj, dict) and "episode_id" in obj and "benchmark" in obj


def _split_records(items: Iterable[dict[str, Any] | EpisodeValidationError],
                   errors: str, report: LoadReport) -> list[dict[str, Any]]:
    good = []
    for item in items:
        if isinstance(item, EpisodeValidationError):
            if errors == "raise":
                raise item
            report.skipped.append(SkippedRecord.from_error(item))
        else:
            good.append(item)
    return good


# --------------------------------------------------------------------------- readers


def _read_json_file(path: Path, errors: str, report: LoadReport) -> datasets.Dataset:
    source = str(path)
    text = path.read_text("utf-8")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        if not text.strip():
            raise EpisodeValidationError("empty file", source=source, field="(top level)") from None
        return _read_jsonl_text(text, source, errors, report, whole_file_error=exc)
    if is_results_object(obj):
        items = results_to_episodes(obj, source=source)
        return _records_to_dataset(_split_records(items, errors, report), source=source)
    if _is_canonical(obj):
        obj = [obj]
    if isinstance(obj, list) and all(_is_canonical(o) for o in obj):
        return _canonical_list(obj, source, errors, report)
    raise EpisodeValidationError(
        "not a results file or canonical episodes: expected a tau2/AgentChangeBench results "
        "object ({info, tasks, simulations}) or episode records with 'benchmark' and "
        "'episode_id'", source=source, field="(top level)")


def _canonical_list(objs: list[Any], source: str, errors: str,
                    report: LoadReport) -> datasets.Dataset:
    items: list[dict[str, Any] | EpisodeValidationError] = []
    for i, obj in enumerate(objs):
        try:
            items.append(_canonical_record(obj, source=source, index=i))
        except EpisodeValidationError as exc:
            items.append(exc)
    return _records_to_dataset(_split_records(items, errors, report), source=source)


def _read_jsonl_text(text: str, source: str, errors: str, report: LoadReport,
                     *, whole_file_error: json.JSONDecodeError) -> datasets.Dataset:
    """Read JSON lines; a file whose first line is not a JSON object is broken JSON."""
    lines = [(i, line) for i, line in enumerate(text.splitlines()) if line.strip()]
    try:
        first = json.loads(lines[0][1]) if len(lines) > 1 else None
    except json.JSONDecodeError:
        first = None
    if not isinstance(first, dict):
        err = whole_file_error
        raise EpisodeValidationError(
            f"invalid or truncated JSON at line {err.lineno}, column {err.colno}: {err.msg}",
            source=source, field="(top level)")
    if not _is_canonical(first):
        raise EpisodeValidationError(
            "not canonical episodes: JSON lines need 'benchmark' and 'episode_id'",
            source=source, record="line 1", field="(top level)")
    objs: list[Any] = []
    for i, line in lines:
        try:
            objs.append(json.loads(line))
        except json.JSONDecodeError as exc:
            bad = EpisodeValidationError(f"invalid JSON ({exc.msg}, column {exc.colno})",
                                         source=source, record=f"line {i + 1}")
            if errors == "raise":
                raise bad from None
            report.skipped.append(SkippedRecord.from_error(bad))
    return _canonical_list(objs, source, errors, report)


def _from_table(table: pa.Table, *, source: str, errors: str, report: LoadReport,
                keep_source: bool = True) -> datasets.Dataset:
    check_columns(table.column_names, source=source)
    table = table.select(list(EPISODE_FEATURES))
    try:
        table = table.cast(EPISODE_FEATURES.arrow_schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise EpisodeValidationError(f"column types do not match the canonical schema ({exc})",
                                     source=source) from None
    problems = table_problems(table, source=source)
    if problems:
        if errors == "raise":
            raise problems[0][1]
        report.skipped.extend(SkippedRecord.from_error(e) for _, e in problems)
        keep = np.ones(table.num_rows, dtype=bool)
        keep[[r for r, _ in problems]] = False
        table = table.filter(pa.array(keep))
    return datasets.Dataset(table, info=datasets.DatasetInfo(features=EPISODE_FEATURES))


def _read_parquet(path: Path, errors: str, report: LoadReport) -> datasets.Dataset:
    # A single canonical file is read straight into memory with pyarrow: going through
    # load_dataset would copy it into the datasets cache for no benefit.
    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise EpisodeValidationError(f"unreadable parquet file ({exc})", source=str(path),
                                     field="(top level)") from None
    return _from_table(table, source=str(path), errors=errors, report=report)


def _read_hub(path: str, *, config: str | None, split: str | None, revision: str | None,
              errors: str, report: LoadReport) -> datasets.Dataset:
    """Hub id or hub-layout folder: every config and split, with config/split as columns."""
    try:
        configs = [config] if config else datasets.get_dataset_config_names(path,
                                                                            revision=revision)
    except Exception as exc:  # noqa: BLE001 - datasets raises many types here
        raise _hub_error(path, exc) from None
    parts = []
    for name in configs:
        try:
            loaded = datasets.load_dataset(path, name, split=split, revision=revision)
        except Exception as exc:  # noqa: BLE001
            raise _hub_error(path, exc, config=name) from None
        splits = {split: loaded} if split else dict(loaded)
        for split_name, ds in splits.items():
            table = arrow_table(ds)
            table = table.set_column(table.column_names.index("config"), "config",
                                     pa.array([name] * table.num_rows, pa.string()))
            table = table.set_column(table.column_names.index("split"), "split",
                                     pa.array([split_name] * table.num_rows, pa.string()))
            parts.append(_from_table(table, source=path, errors=errors, report=report))
    return _concat(parts)


def _hub_error(path: str, exc: Exception, config: str | None = None) -> EpisodeValidationError:
    import os

    hint = ""
    if os.environ.get("HF_HUB_OFFLINE") in ("1", "true", "True", "ON", "YES"):
        hint = " (HF_HUB_OFFLINE is set: only datasets already in the local cache can be read)"
    where = f"config {config}: " if config else ""
    return EpisodeValidationError(f"{where}could not load the dataset: {exc}{hint}",
                                  source=path, field="(dataset)")


def _is_hub_folder(path: Path) -> bool:
    return (path / "README.md").is_file() or any(path.rglob("*.parquet"))


def _read_results_folder(path: Path, errors: str, report: LoadReport) -> list[datasets.Dataset]:
    files = sorted(p for p in path.rglob("*") if p.suffix in (".json", ".jsonl", ".parquet"))
    if not files:
        raise EpisodeValidationError("folder holds no .json, .jsonl or .parquet files",
                                     source=str(path), field="(folder)")
    return [_read_path(p, errors=errors, report=report) for p in files]


def _read_path(path: Path, *, errors: str, report: LoadReport, config: str | None = None,
               split: str | None = None, revision: str | None = None) -> datasets.Dataset:
    if path.is_dir():
        if (path / "results.json").is_file() and (path / "simulations").is_dir():
            obj = read_results_dir(path)
            items = results_to_episodes(obj, source=str(path))
            return _records_to_dataset(_split_records(items, errors, report), source=str(path))
        if _is_hub_folder(path):
            return _read_hub(str(path), config=config, split=split, revision=revision,
                             errors=errors, report=report)
        return _concat(_read_results_folder(path, errors, report))
    if path.suffix == ".parquet":
        return _read_parquet(path, errors, report)
    if (path.parent / "simulations").is_dir() and path.name == "results.json":
        return _read_path(path.parent, errors=errors, report=report)
    return _read_json_file(path, errors, report)


def _concat(parts: list[datasets.Dataset]) -> datasets.Dataset:
    parts = [p for p in parts if p is not None]
    if not parts:
        return empty_dataset()
    if len(parts) == 1:
        return parts[0]
    return datasets.concatenate_datasets(parts)


# --------------------------------------------------------------------------- duplicates


def _content_key(row: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in row.items() if k not in _PROVENANCE}, sort_keys=True,
                      default=str)


def _drop_duplicates(ds: datasets.Dataset, *, errors: str,
                     report: LoadReport) -> datasets.Dataset:
    ids = arrow_table(ds).column("episode_id").to_numpy(zero_copy_only=False)
    uniq, first, counts = np.unique(ids, return_index=True, return_counts=True)
    if not (counts > 1).any():
        return ds
    drop: list[int] = []
    for eid in uniq[counts > 1]:
        rows = np.flatnonzero(ids == eid)
        base = ds[int(rows[0])]
        base_key = _content_key(base)
        sources = [base["source"]]
        for r in rows[1:]:
            other = ds[int(r)]
            if _content_key(other) != base_key:
                err = EpisodeValidationError(
                    f"episode id also loaded from {base['source']} with different content",
                    source=other["source"], record=str(eid), field="episode_id")
                if errors == "raise":
                    raise err
                report.skipped.append(SkippedRecord.from_error(err))
            else:
                sources.append(other["source"])
            drop.append(int(r))
        report.duplicates.append((str(eid), sources))
    if report.duplicates:
        shown = "; ".join(f"{eid} in {', '.join(dict.fromkeys(srcs))}"
                          for eid, srcs in report.duplicates[:5])
        more = len(report.duplicates) - 5
        warnings.warn(DuplicateEpisodesWarning(
            f"{len(report.duplicates)} episode(s) loaded more than once were kept once: {shown}"
            + (f" and {more} more" if more > 0 else "")), stacklevel=3)
    keep = np.setdiff1d(np.arange(len(ds)), np.array(drop, dtype=np.int64))
    return ds.select(keep).flatten_indices()


# --------------------------------------------------------------------------- public


def load_with_report(
    source: Source | Sequence[Source],
    *,
    config: str | None = None,
    split: str | None = None,
    revision: str | None = None,
    errors: Literal["raise", "skip"] = "raise",
) -> tuple[datasets.Dataset, LoadReport]:
    """Like :func:`load`, but also return a :class:`LoadReport` instead of warning."""
    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', got {errors!r}")
    sources = [source] if isinstance(source, str | Path) else list(source)
    if not sources:
        raise ValueError("no source given")
    report = LoadReport()
    parts = []
    for src in sources:
        path = Path(src)
        if path.exists():
            try:
                part = _read_path(path, errors=errors, report=report, config=config,
                                  split=split, revision=revision)
            except EpisodeValidationError as exc:
                if errors == "raise" or exc.source is None:
                    raise
                report.skipped.append(SkippedRecord(exc.source, exc.record or "(whole file)",
                                                    exc.field, exc.reason))
                continue
            except UnicodeDecodeError as exc:
                err = EpisodeValidationError(f"not a text file ({exc.reason})", source=str(path),
                                             field="(top level)")
                if errors == "raise":
                    raise err from None
                report.skipped.append(SkippedRecord.from_error(err))
                continue
        elif is_hub_id(src):
            part = _read_hub(str(src), config=config, split=split, revision=revision,
                             errors=errors, report=report)
        else:
            raise FileNotFoundError(f"{src}: no such file or folder, and not a hub id "
                                    "of the form 'org/name'")
        report.counts[str(src)] = len(part)
        parts.append(part)
    ds = _drop_duplicates(_concat(parts), errors=errors, report=report)
    return ds, report


def load(
    source: Source | Sequence[Source],
    *,
    config: str | None = None,
    split: str | None = None,
    revision: str | None = None,
    errors: Literal["raise", "skip"] = "raise",
) -> datasets.Dataset:
    """Load episodes from one or more sources into one canonical ``datasets.Dataset``.

    Parameters
    ----------
    source : str, Path or list of them
        Hub id, local dataset folder, parquet/JSONL file of canonical episodes, tau2 or
        AgentChangeBench results file or folder; a list is loaded as one dataset.
    config, split : str, optional
        For hub ids and dataset folders: only this config / split. None reads all, and
        the ``config`` and ``split`` columns say where each row came from.
    revision : str, optional
        Hub revision (branch, tag or commit) to pin.
    errors : {"raise", "skip"}
        ``"raise"`` stops at the first bad record with an
        :class:`~accordkit.schema.EpisodeValidationError` naming file, record and field.
        ``"skip"`` loads the good records and emits one
        :class:`~accordkit.SkippedRecordsWarning` listing every skipped record.

    Returns
    -------
    datasets.Dataset
        One row per episode, with the columns of :data:`accordkit.schema.EPISODE_FEATURES`.
        An episode found in several sources with identical content is kept once (with a
        :class:`~accordkit.validate.DuplicateEpisodesWarning`); different content under one
        ``episode_id`` is an error.

    Examples
    --------
    >>> import accordkit as ak
    >>> ds = ak.load("data/sample/goalshift")             # doctest: +SKIP
    >>> ds = ak.load(["run_a.json", "run_b.json"], errors="skip")  # doctest: +SKIP
    """
    ds, report = load_with_report(source, config=config, split=split, revision=revision,
                                  errors=errors)
    warn_skipped(report.skipped, stacklevel=3)
    return ds
