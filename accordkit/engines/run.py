"""Score work items into a store with one of the engines."""

from __future__ import annotations

import functools
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .._internal.lock import held, lock_path
from .._internal.pool import stop_pool
from .._internal.ray_cluster import RayUnreachableError
from ..ingest.formats.parquet import open_parquet
from ..store import (
    LEVEL_DIRS,
    PART_DIRS,
    IncompleteStoreError,
    InputRecord,
    part_name,
    write_manifest,
    write_part,
)
from .plan import WorkItem, plan_work
from .reading import ItemReading

__all__ = ["ENGINES", "score_to_store", "write_scores", "score_item", "write_scored",
           "verdict_table",
           "RayUnreachableError", "StoreBusyError", "InputsChangedError"]

ENGINES = ("local", "ray")
LEVELS = tuple(LEVEL_DIRS)
#: Problems kept per input in the manifest (the counts are always complete).
MAX_PROBLEMS = 20
#: Modes that pool redundant calls over a whole source file: such files are never split.
POOLED_TCRR_MODES = ("upstream", "upstream_a6a9157", "upstream_b2cc83c")


class SplitSourceError(ValueError):
    """A pooled TCRR mode, and one source's goal-shift rows lie in several inputs."""


class StoreBusyError(RuntimeError):
    """Another scoring run is writing the same store folder."""


class InputsChangedError(IncompleteStoreError):
    """Inputs changed while they were scored: the store could not say which bytes its
    scores are of, so it was not finished (no manifest)."""


def _check_unchanged(inputs: Sequence[InputRecord]) -> None:
    """Raise :class:`InputsChangedError` when a local input file differs from the one hashed
    when the run was planned (a results file a benchmark run is still writing, say)."""
    from ..store import scored_inputs

    read = [asdict(r) for r in inputs if r.error is None and r.same_as is None]
    changed = [r["source"] for r in scored_inputs({"inputs": read}) if r.get("changed")]
    if changed:
        raise InputsChangedError(
            f"{len(changed)} input(s) changed while they were scored ({', '.join(changed[:3])}"
            f"{' ...' if len(changed) > 3 else ''}), so the store cannot say which bytes its "
            "scores are of and was left unfinished; score again once they no longer change")


def _store_busy(out: Path) -> Any:
    def busy(owner: int) -> StoreBusyError:
        held_by = f" (process {owner})" if owner else ""
        return StoreBusyError(
            f"another accordkit run{held_by} is writing {out}; wait for it or choose "
            f"another --out (lock file {lock_path(out)})")
    return busy


def verdict_table(paths: Sequence[str]) -> Any:
    """Stored judge verdicts, read once per worker process while the files are unchanged."""
    if not paths:
        return None
    stamps = []
    for p in paths:
        try:
            st = os.stat(p)
            stamps.append((str(p), st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError:
            stamps.append((str(p), None, None, None))    # read_verdicts names the problem
    return _read_verdicts(tuple(stamps))


@functools.lru_cache(maxsize=1)
def _read_verdicts(stamps: tuple[tuple[Any, ...], ...]) -> Any:
    from ..judges.verdicts import read_verdicts

    return read_verdicts([s[0] for s in stamps])


#: Source groups of a ``compare_modes`` item are read together while their rows add up to
#: no more than this, so that a row group holding rows of several groups is read once per
#: pass, not once per group (copies of a data set interleave their source files).
MODES_PASS_ROWS = 50_000


def _modes_passes(groups: list[list[tuple[int, int, Any]]], *,
                  max_rows: int) -> list[list[list[tuple[int, int, Any]]]]:
    """Consecutive source groups (lists of ``(file, row group, rows)``) in passes of at most
    ``max_rows`` rows; a larger group is a pass of its own."""
    passes: list[list[list[tuple[int, int, Any]]]] = []
    total = 0
    for pieces in groups:
        n = sum(len(rows) for _, _, rows in pieces)
        if not passes or total + n > max_rows:
            passes.append([])
            total = 0
        passes[-1].append(pieces)
        total += n
    return passes


def _goalshift_sources(opened: Sequence[Any], origins: Sequence[str],
                       ) -> dict[str, list[tuple[int, int, Any]]]:
    """``source value -> [(file, row group, rows within it)]`` of the goal-shift rows of
    opened parquet files, in order of first appearance (a pass over two small columns).

    A row with no ``source`` belongs to its file's ``origins`` entry (the file, or its
    dataset folder), as :func:`accordkit.load` fills it: the null rows of two files are
    two sources, not one.
    """
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..score import GOALSHIFT_BENCHMARKS

    where: dict[str, list[tuple[int, int, Any]]] = {}
    for f, pf in enumerate(opened):
        if not {"benchmark", "source"} <= set(pf.schema_arrow.names):
            continue
        for g in range(pf.metadata.num_row_groups):
            keys = pf.read_row_group(g, columns=["benchmark", "source"])
            goal = pc.fill_null(pc.is_in(keys.column("benchmark"),
                                         value_set=pa.array(GOALSHIFT_BENCHMARKS)), False)
            rows = np.flatnonzero(goal.to_numpy(zero_copy_only=False))
            if len(rows):
                values = pc.fill_null(keys.column("source"), origins[f]).take(pa.array(rows))
                codes, uniques = pd.factorize(np.asarray(values.to_pylist(), dtype=object))
                for k, src in enumerate(uniques):
                    where.setdefault(src, []).append((f, g, rows[codes == k]))
    return where


def _check_pooled_sources(items: Sequence[WorkItem], tcrr_mode: str) -> None:
    """Refuse a pooled TCRR mode when one source's goal-shift rows lie in several inputs.

    The upstream modes pool the tool calls of a whole source file, and a store scores each
    input apart: such a source would be scored in pieces, each with a wrong TCRR.
    """
    (modes,) = [i for i in items if i.kind == "modes"] or [None]
    if modes is None or len(modes.sources) < 2:
        return
    inputs = modes.files()
    where = _goalshift_sources([open_parquet(i) for i in inputs], [i.fills for i in inputs])
    for src, pieces in where.items():
        files = sorted({inputs[f].name for f, _, _ in pieces})
        if len(files) > 1:
            raise SplitSourceError(
                f"tcrr_mode={tcrr_mode!r} pools the tool calls of a whole source file, but "
                f"the goal-shift episodes of source {src or '(none)'!r} lie in {len(files)} "
                f"inputs ({', '.join(files[:3])}); a store scores each input apart, so score "
                f"them in one load: ak.score(ak.load([...]), tcrr_mode={tcrr_mode!r})")


def _parquet_modes(item: WorkItem, *, split: str | None) -> Any:
    """:func:`accordkit.compare_modes` of the parquet inputs, one ``source`` group at a time.

    The upstream TCRR pools the conversations of a source file, so each group is scored
    whole, wherever its rows lie (shards of one data set may split a source file). A pass
    over two small columns of every file finds the groups; groups are then read in passes of
    up to :data:`MODES_PASS_ROWS` rows (each row group a pass touches read once), scored one
    at a time and freed: memory holds one pass (or one larger group) and one row group.
    Records the score batches skipped are skipped here too, without being counted again.
    """
    import pandas as pd
    import pyarrow as pa

    from ..ingest.context import ReadContext, ReadOptions
    from ..ingest.formats.parquet import read_parquet
    from ..metrics.compare_modes import COMPARE_COLUMNS, compare_modes
    from ..schema.arrow import episode_dataset

    inputs = item.files()
    opened = [open_parquet(i) for i in inputs]
    where = _goalshift_sources(opened, [i.fills for i in inputs])
    frames = []
    for groups in _modes_passes(list(where.values()), max_rows=MODES_PASS_ROWS):
        # one read of each row group the pass touches, its rows split among the groups
        wanted: dict[tuple[int, int], list[tuple[int, Any]]] = {}
        for k, pieces in enumerate(groups):
            for f, g, rows in pieces:
                wanted.setdefault((f, g), []).append((k, rows))
        parts: list[list[pa.Table]] = [[] for _ in groups]
        for f, g in sorted(wanted):
            row_group = opened[f].read_row_group(g)
            for k, rows in wanted[(f, g)]:
                parts[k].append(row_group.take(pa.array(rows)))
            del row_group
        for k, pieces in enumerate(groups):
            first = inputs[pieces[0][0]]
            # a data file of a dataset folder has its card's split (the plan chose the files
            # by split); the rows of any other file are chosen by split here
            ctx = ReadContext("skip", ReadOptions(split=None if first.card else split))
            ds = episode_dataset(read_parquet(first, ctx, table=pa.concat_tables(parts[k])).table)
            parts[k] = []
            frame = compare_modes(ds)
            if len(frame):
                frames.append(frame)
    return (pd.concat(frames, ignore_index=True) if frames
            else pd.DataFrame(columns=COMPARE_COLUMNS))


def write_scored(ds: Any, out: str | Path, *, input_index: int, batch_index: int,
                 modes: Mapping[str, Any], verdicts: Any = None,
                 with_modes: bool = True) -> int:
    """Score ``ds`` at every level into parts of the store ``out``; returns the parts written.

    ``with_modes`` also writes its :func:`accordkit.compare_modes` table, which is right only
    when ``ds`` holds whole source files (a results file, everything loaded at once).
    """
    from ..score import score

    parts = 0
    for level in LEVELS:
        frame = score(ds, level=level, verdicts=verdicts, **dict(modes))
        parts += write_part(out, level, frame, input_index=input_index,
                            batch_index=batch_index) is not None
    if with_modes:
        from ..metrics.compare_modes import compare_modes

        parts += write_part(out, "modes", compare_modes(ds), input_index=input_index,
                            batch_index=batch_index) is not None
    return parts


def score_item(item: WorkItem | bytes | str, *, out: str, modes: Mapping[str, Any],
               errors: str = "skip", metadata: Mapping[str, Any] | None = None,
               load_options: Mapping[str, Any] | None = None,
               verdicts: Sequence[str] = (), batch_size: int = 20_000,
               ) -> dict[str, Any]:
    """Read, score and store one work item; never raises for a bad input.

    ``item`` is a :class:`~accordkit.engines.plan.WorkItem` or its encoded form
    (:meth:`~accordkit.engines.plan.WorkItem.encode`). A ``"modes"`` item writes the
    :func:`accordkit.compare_modes` table of the parquet inputs; a whole input (``"file"``)
    is read in batches of about ``batch_size`` episodes (:class:`~accordkit.engines.reading.
    ItemReading`), each scored and written as a part of its own, and writes its
    :func:`accordkit.compare_modes` table with them.

    Returns
    -------
    dict
        ``input_index``, ``batch_index``, ``kind``, ``episodes``, ``skipped``, ``problems``
        (first reasons), ``notes``, ``error`` (why the item could not be scored at all, or
        None), ``parts`` (files written) and ``batches`` (batches of scores written).
    """
    if not isinstance(item, WorkItem):
        item = WorkItem.decode(item)
    result = {"input_index": item.input_index, "batch_index": item.batch_index,
              "kind": item.kind, "episodes": 0, "skipped": 0, "problems": [], "notes": [],
              "error": None, "parts": 0, "batches": 0}
    written: list[int] = []
    try:
        if item.kind == "modes":
            frame = _parquet_modes(item, split=dict(load_options or {}).get("split"))
            if write_part(out, "modes", frame, input_index=item.input_index,
                          batch_index=item.batch_index) is not None:
                result["parts"] += 1
            return result
        reading = ItemReading(item, errors=errors, metadata=metadata,
                              load_options=load_options, batch_size=batch_size)
        table = verdict_table([str(v) for v in verdicts])
        goalshift: list[Any] = []
        for ds in reading.batches():
            if not len(ds):
                continue
            batch = item.batch_index + len(written)
            written.append(batch)
            result["parts"] += write_scored(ds, out, input_index=item.input_index,
                                            batch_index=batch, modes=modes, verdicts=table,
                                            with_modes=False)
            result["episodes"] += len(ds)
            if item.kind == "file":
                goalshift.append(_goalshift_rows(ds))
        report = reading.report
        skipped = report.skipped
        result["notes"] = [str(n) for n in report.notes[:MAX_PROBLEMS]]
        if not result["episodes"] and skipped and all(s.concerns_the_file for s in skipped):
            # nothing of the input could be read (a truncated results file, a header of the
            # wrong type): a failed input, as an unreadable parquet file is, not one
            # skipped record
            first = skipped[0]
            result["error"] = f"field {first.field}: {first.reason}"
            return result
        result["skipped"] = len(skipped)
        result["problems"] = [str(s) for s in skipped[:MAX_PROBLEMS]]
        if item.kind == "file":
            result["parts"] += _write_modes(goalshift, out, input_index=item.input_index,
                                            batch_index=item.batch_index)
        result["batches"] = len(written)
    except Exception as exc:  # noqa: BLE001 - one bad input never stops the others
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["episodes"] = 0
        # a level written before the failure would be read as if the item had succeeded
        for batch in written or [item.batch_index]:
            for sub in PART_DIRS.values():
                (Path(out) / sub / part_name(item.input_index, batch)).unlink(missing_ok=True)
        result["parts"] = result["batches"] = 0
    return result


def _goalshift_rows(ds: Any) -> Any:
    """The goal-shift rows of a batch (the only ones :func:`accordkit.compare_modes` reads)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .._internal.arrow import arrow_table
    from ..score import GOALSHIFT_BENCHMARKS

    table = arrow_table(ds)
    keep = pc.fill_null(pc.is_in(table.column("benchmark"),
                                 value_set=pa.array(GOALSHIFT_BENCHMARKS)), False)
    return table.filter(keep)


def _write_modes(tables: list[Any], out: str, *, input_index: int, batch_index: int) -> int:
    """Write the :func:`accordkit.compare_modes` table of an input's goal-shift rows (every
    batch's: the upstream modes pool a whole source file); the parts written."""
    from ..ingest.check import concat
    from ..metrics.compare_modes import compare_modes
    from ..schema.arrow import episode_dataset

    ds = episode_dataset(concat(tables))
    return int(write_part(out, "modes", compare_modes(ds), input_index=input_index,
                          batch_index=batch_index) is not None)


def _run_local(items: Sequence[WorkItem], *, out: str, num_proc: int, progress: bool,
               **options: Any) -> list[dict[str, Any]]:
    """Score every item here (one process) or in ``num_proc`` spawned worker processes;
    ``options`` are :func:`score_item`'s."""
    from tqdm.auto import tqdm

    bar = tqdm(total=len(items), desc="scoring", unit="batch", disable=not progress)
    results = []
    if num_proc <= 1:
        for item in items:
            results.append(score_item(item, out=out, **options))
            bar.update()
    else:
        import multiprocessing as mp

        # the compare_modes item reads and scores every goal-shift row of the parquet
        # inputs: the longest single item, so it starts first, beside the batches
        ordered = sorted(items, key=lambda item: item.kind != "modes")
        pool = ProcessPoolExecutor(max_workers=num_proc, mp_context=mp.get_context("spawn"))
        try:
            futures = [pool.submit(score_item, item, out=out, **options) for item in ordered]
            for fut in as_completed(futures):
                results.append(fut.result())
                bar.update()
        except BaseException:
            # interrupted (Ctrl-C, or SIGTERM from a scheduler, see accordkit.cli): stop the
            # workers too, or they outlive this process and keep writing parts
            stop_pool(pool)
            raise
        pool.shutdown()
    bar.close()
    return results


#: Written first into a store's folder: it marks the folder's part folders as a store's, so
#: that a rerun after an interruption may clear them (and never a folder of the user's).
STORE_MARKER = ".accordkit-store"


def _claim_store_folder(out: Path) -> None:
    """Make ``out`` ready for a new store: new, empty, or the leftovers of an unfinished one.

    Raises
    ------
    FileExistsError
        ``out`` holds a finished store (its manifest), is a file, or is a folder with files
        that no store run wrote (nothing in it is touched).
    """
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"--out {out} exists and is not a folder")
    if (out / "manifest.json").exists():
        raise FileExistsError(f"{out} already holds a finished score store; remove it or "
                              "choose another --out")
    if out.exists() and any(out.iterdir()):
        if not (out / STORE_MARKER).exists():
            raise FileExistsError(
                f"--out {out} is a folder with files that are not a score store's; choose a "
                "new or empty folder (nothing in it was touched)")
        # leftovers of an unfinished run: start clean so no stale part is read
        for sub in PART_DIRS.values():
            shutil.rmtree(out / sub, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / STORE_MARKER).write_text("a score store being written by accordkit score\n")


def score_to_store(sources: Sequence[str], *, out: str | Path, engine: str = "local",
                   num_proc: int = 1, batch_size: int = 20_000, errors: str = "skip",
                   modes: Mapping[str, Any] | None = None, progress: bool = True,
                   metadata: Mapping[str, Any] | None = None,
                   verdicts: Sequence[str] = (), revision: str | None = None,
                   split: str | None = None, _fail_fast: bool = False,
                   ) -> dict[str, Any]:
    """Score ``sources`` batch by batch into a score store at ``out``.

    Parameters
    ----------
    sources : list of str
        Files, folders (parquet shards, result files), hub ids or fsspec URLs.
    out : str or Path
        Folder of the store: new, empty, or the leftovers of an interrupted run (which are
        cleared); a finished store or a folder of other files is refused.
    engine : {"local", "ray"}
        Where batches are scored (see :mod:`accordkit.engines`).
    num_proc : int
        Worker processes (local) or CPUs of a Ray started here.
    batch_size : int
        Rows per parquet batch; memory per worker grows with it, not with the data set.
    errors : {"skip", "raise"}
        Bad records are skipped and listed in the manifest (``"skip"``) or make their
        whole batch fail (``"raise"``; the batch is listed with its error).
    modes : mapping, optional
        Keyword options of :func:`accordkit.score` (``tcrr_mode``, ``action_mode``,
        ``shop_type_gate``). Modes that pool over a file keep files whole.
    progress : bool
        Show a progress bar.
    metadata : mapping, optional
        Passed to :func:`accordkit.load` for files that are loaded whole (τ-bench runs
        whose names do not say the model or domain).
    verdicts : list of str, optional
        Stored judge verdict files (parquet), attached where the episodes hold none
        (:func:`accordkit.score`'s ``verdicts``); listed in the manifest.
    revision, split : str, optional
        :func:`accordkit.load`'s options: the hub revision; only the rows of this split
        (canonical files, dataset folders and hub ids).

    Returns
    -------
    dict
        The manifest (also in ``out/manifest.json``).

    Raises
    ------
    StoreBusyError
        Another run is writing a store into ``out`` (its lock file, ``.OUT.lock`` beside
        ``out``, names a process that still runs).
    FileExistsError
        ``out`` holds a finished store, is a file, or holds files of no store run.
    InputsChangedError
        An input file changed while it was scored (the store is left unfinished).
    """
    from ..store import read_manifest  # noqa: F401 - documents the pair

    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if errors not in ("skip", "raise"):
        raise ValueError(f"errors must be 'skip' or 'raise', got {errors!r}")
    modes = dict(modes or {})
    from ..score import check_options

    check_options(modes)  # before any work: a bad mode would fail every batch
    out = Path(out).resolve()  # one lock whatever the spelling (a link, ..)
    with held(out, _store_busy(out)):
        # one run at a time: a second run would take the first's parts for leftovers
        return _score_to_store(sources, out=out, engine=engine, num_proc=num_proc,
                               batch_size=batch_size, errors=errors, modes=modes,
                               progress=progress, metadata=metadata, verdicts=verdicts,
                               revision=revision, split=split, _fail_fast=_fail_fast)


def _score_to_store(sources: Sequence[str], *, out: Path, engine: str, num_proc: int,
                    batch_size: int, errors: str, modes: dict[str, Any], progress: bool,
                    metadata: Mapping[str, Any] | None, verdicts: Sequence[str],
                    revision: str | None, split: str | None, _fail_fast: bool,
                    ) -> dict[str, Any]:
    """:func:`score_to_store`, with the lock of ``out`` held."""
    _claim_store_folder(out)
    started = time.perf_counter()
    whole = modes.get("tcrr_mode") in POOLED_TCRR_MODES
    items, inputs = plan_work(sources, batch_size=batch_size, whole_files=whole, split=split)
    if whole:
        _check_pooled_sources(items, modes["tcrr_mode"])
    verdicts = tuple(str(Path(v).resolve()) if Path(v).exists() else str(v)
                     for v in verdicts)
    load_options = {k: v for k, v in (("revision", revision), ("split", split))
                    if v is not None}
    options = {"modes": modes, "errors": errors, "metadata": metadata,
               "load_options": load_options, "verdicts": verdicts, "batch_size": batch_size}
    engine_extra: dict[str, Any] = {}
    if engine == "local":
        results = _run_local(items, out=str(out), num_proc=num_proc, progress=progress,
                             **options)
    else:
        from .ray_run import run_on_ray

        results, engine_extra = run_on_ray(items, score=score_item, out=str(out),
                                           num_proc=num_proc,
                                           progress=progress, **options)
    by_input: dict[int, InputRecord] = {r.index: r for r in inputs}
    # an error names its batch only when the input was read in several
    batched = {i.input_index for i in items if i.kind == "parquet" and i.batch_index > 0}
    for res in sorted(results, key=lambda r: (r["input_index"], r["batch_index"])):
        rec = by_input[int(res["input_index"])]
        if res.get("kind") != "modes":
            rec.batches += int(res.get("batches", 1))
        rec.episodes += int(res["episodes"])
        rec.skipped += int(res["skipped"])
        room = MAX_PROBLEMS - len(rec.problems)
        if room > 0:
            rec.problems += list(res["problems"])[:room]
        rec.notes += [n for n in res.get("notes") or ()
                      if n not in rec.notes][:max(0, MAX_PROBLEMS - len(rec.notes))]
        if res["error"]:
            msg = (f"batch {res['batch_index']}: {res['error']}"
                   if int(res["input_index"]) in batched or res.get("kind") == "modes"
                   else str(res["error"]))
            rec.error = msg if rec.error is None else f"{rec.error}; {msg}"
    if _fail_fast:
        failed = [r for r in inputs if r.error]
        if failed:
            raise ValueError(f"{failed[0].source}: {failed[0].error}")
    _check_unchanged(inputs)
    seconds = time.perf_counter() - started
    write_manifest(out, inputs, modes=modes, engine=engine,
                   extra={"num_proc": num_proc, "batch_size": batch_size, "errors": errors,
                          "verdicts": list(verdicts), **load_options,
                          "seconds": round(seconds, 3), **engine_extra})
    from ..store import read_manifest as _read

    return _read(out)


def write_scores(sources: str | Path | Sequence[str | Path], out: str | Path, *,
                 errors: str = "raise", tcrr_mode: str = "episode",
                 action_mode: str = "best_match", shop_type_gate: bool = False,
                 metadata: Mapping[str, Any] | None = None) -> Path:
    """Score ``sources`` into a store at ``out`` in this process; return the manifest path.

    The in-memory face of ``accordkit score --out`` (for many or large inputs use
    :func:`accordkit.engines.score_to_store` with ``num_proc`` or ``engine="ray"``).

    Parameters
    ----------
    sources : path, hub id or list of them
    out : str or Path
        Folder to write; must not hold a finished store.
    errors : {"raise", "skip"}
        ``"raise"``: the first input that cannot be read fully raises ``ValueError`` naming
        it (the unfinished store has no manifest). ``"skip"``: bad records are skipped and
        listed per input in the manifest.
    tcrr_mode, action_mode, shop_type_gate
        Scoring modes (:func:`accordkit.score`), recorded in the manifest.
    metadata : mapping, optional
        Passed to :func:`accordkit.load` (τ-bench files).
    """
    if isinstance(sources, str | Path):
        sources = [sources]
    modes = {"tcrr_mode": tcrr_mode, "action_mode": action_mode,
             "shop_type_gate": shop_type_gate}
    manifest = score_to_store([str(s) for s in sources], out=out, errors=errors, modes=modes,
                              metadata=metadata, progress=False,
                              _fail_fast=errors == "raise")
    del manifest
    return Path(out) / "manifest.json"
