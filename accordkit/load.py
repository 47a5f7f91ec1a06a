"""``load``: any supported source -> one ``datasets.Dataset`` of canonical episodes.

Sources are recognised by what they contain, not by their names:

* a Hugging Face hub id (``org/name``), loaded with :func:`datasets.load_dataset`;
* a local dataset folder in hub layout (parquet files, usually with a dataset card naming
  configs), loaded the same way, so a folder and its hub copy give identical datasets;
* a parquet or JSONL file of canonical episodes (also a JSON array of them);
* a tau2-bench / AgentChangeBench results JSON file, a dir-format run
  (``results.json`` + ``simulations/``), or a folder of such files;
* a τ-bench (v1) result file (a JSON list of run records, :mod:`accordkit.ingest.formats.taubench`);
* an fsspec URL (``s3://…``) of any of these files, or of a folder of them;
* a list of any of these, loaded as one dataset.

A path that exists locally is never treated as a hub id.

Every problem becomes an :class:`~accordkit.schema.EpisodeValidationError` naming the file,
the record (simulation / episode id, or its position; ``(whole file)`` for a file that cannot
be read at all) and the field. With ``errors="skip"`` the problem records are left out and
listed instead, so that nothing is dropped silently.

The way is the loading corridor's (:mod:`accordkit.ingest`): the sources are planned into
inputs (:func:`accordkit.ingest.plan.plan`), each input is read by its reader through the
episode cache (:class:`accordkit.ingest.read.Reading`), and the parts are taken in: the report
filled and the rows joined, each episode once (:mod:`accordkit.ingest.intake`). This module is the public face: the options, their
checks and the warnings.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import datasets

from ._internal.gc import gc_paused
from .ingest.context import ReadOptions
from .ingest.formats import hub as _hub  # noqa: F401 - the built-in readers, imported with the loader
from .ingest.formats import json_text as _json_text  # noqa: F401
from .ingest.formats import parquet as _parquet  # noqa: F401
from .ingest.formats.folder import FolderRule as _FolderRule  # noqa: F401
from .ingest.formats.hub import is_hub_id
from .ingest.intake import reported, take_in
from .ingest.plan import plan_sources
from .ingest.read import Reading
from .ingest.report import (
    DuplicateEpisodesWarning,
    FileRead,
    LoadReport,
    SourceNotFoundError,
    warn_skipped,
)
from .schema.arrow import episode_dataset

__all__ = ["load", "load_with_report", "LoadReport", "FileRead", "SourceNotFoundError",
           "is_hub_id"]

# The built-in readers a load asks are imported with the loader (above), so that a load,
# cached or not, does not import them while it is timed.

Source = str | Path


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
    ctx, report = reported(errors, ReadOptions(config=config, split=split, revision=revision,
                                               metadata=metadata))
    reading = Reading(ctx, cache=cache)
    finished = False
    try:
        with gc_paused():
            planned = plan_sources(sources, options=ctx.options)
            inputs = [i for _, found in planned for i in found]
            table = reading.remembered(inputs, report)
            if table is None:
                table = take_in(reading, planned, report)
                reading.remember(inputs, report, table.num_rows)
            ds = episode_dataset(table)
        finished = True
    finally:
        reading.finish(warn=finished)
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
        :mod:`accordkit.ingest.cache`) and reuse it while the file, its path, the schema version
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
