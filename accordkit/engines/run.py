"""Score work items into a store with one of the engines: plan, run the items (here, in
worker processes or on Ray; :mod:`.item` scores one), merge what must be read together
(:mod:`.merge`), check the inputs and write the manifest."""

from __future__ import annotations

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
    PART_DIRS,
    IncompleteStoreError,
    InputRecord,
    write_manifest,
)
from .item import (  # noqa: F401 - score_item and its parts are importable from here too
    LEVELS,
    MAX_PROBLEMS,
    MODES_PASS_ROWS,
    _goalshift_sources,
    _modes_passes,
    _parquet_modes,
    score_item,
    write_scored,
)
from .merge import merge_repeats, with_modes_inputs
from .plan import WorkItem, plan_work
from .verdicts import verdict_table

__all__ = ["ENGINES", "score_to_store", "write_scores", "score_item", "write_scored",
           "verdict_table",
           "RayUnreachableError", "StoreBusyError", "InputsChangedError"]

ENGINES = ("local", "ray")
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



def _split_pooled_sources(items: Sequence[WorkItem], tcrr_mode: str,
                          ) -> tuple[set[int], str | None]:
    """The parquet inputs holding part of a source whose goal-shift rows lie in several
    inputs, and the message of a refusal naming the first such source (or None).

    The upstream modes pool the tool calls of a whole source file, and a store scores each
    input apart: such a source would be scored in pieces, each with a wrong TCRR.
    """
    (modes,) = [i for i in items if i.kind == "modes"] or [None]
    if modes is None or len(modes.sources) < 2:
        return set(), None
    inputs = modes.files()
    where = _goalshift_sources([open_parquet(i) for i in inputs], [i.fills for i in inputs])
    split: set[str] = set()
    message = None
    for src, pieces in where.items():
        files = sorted({inputs[f].name for f, _, _ in pieces})
        if len(files) > 1:
            split |= set(files)
            message = message or (
                f"tcrr_mode={tcrr_mode!r} pools the tool calls of a whole source file, but "
                f"the goal-shift episodes of source {src or '(none)'!r} lie in {len(files)} "
                f"inputs ({', '.join(files[:3])}); a store scores each input apart, so score "
                f"them in one load: ak.score(ak.load([...]), tcrr_mode={tcrr_mode!r}), or "
                "with merge=True")
    return {i.input_index for i in items if i.kind == "parquet" and i.source in split}, message


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
                   split: str | None = None, merge: bool = False,
                   _fail_fast: bool = False) -> dict[str, Any]:
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
    merge : bool
        Read the inputs that hold one episode more than once (checkpoints of one run) as one
        load, each episode kept once as :func:`accordkit.load` keeps it, and so too the
        parquet inputs among which a pooled TCRR mode finds a source file split
        (:mod:`accordkit.engines.merge`; memory then holds those inputs at once). The
        manifest lists them (``merged``) and each input's ``duplicates``. False: such a store
        holds the episode twice (and is refused when read), and a split source is refused
        (``SplitSourceError``).

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
                               revision=revision, split=split, merge=merge,
                               _fail_fast=_fail_fast)


def _score_to_store(sources: Sequence[str], *, out: Path, engine: str, num_proc: int,
                    batch_size: int, errors: str, modes: dict[str, Any], progress: bool,
                    metadata: Mapping[str, Any] | None, verdicts: Sequence[str],
                    revision: str | None, split: str | None, merge: bool,
                    _fail_fast: bool) -> dict[str, Any]:
    """:func:`score_to_store`, with the lock of ``out`` held."""
    _claim_store_folder(out)
    started = time.perf_counter()
    whole = modes.get("tcrr_mode") in POOLED_TCRR_MODES
    items, inputs = plan_work(sources, batch_size=batch_size, whole_files=whole, split=split)
    together: set[int] = set()    # inputs read as one load (merge=True), not item by item
    if whole:
        split_inputs, refusal = _split_pooled_sources(items, modes["tcrr_mode"])
        if refusal and not merge:
            raise SplitSourceError(refusal)
        together = with_modes_inputs(split_inputs, items)
    verdicts = tuple(str(Path(v).resolve()) if Path(v).exists() else str(v)
                     for v in verdicts)
    load_options = {k: v for k, v in (("revision", revision), ("split", split))
                    if v is not None}
    options = {"modes": modes, "errors": errors, "metadata": metadata,
               "load_options": load_options, "verdicts": verdicts, "batch_size": batch_size}
    engine_extra: dict[str, Any] = {}
    scored_items = [i for i in items
                    if not {f.input_index for f in _items_of(i, items)} & together]
    if engine == "local":
        results = _run_local(scored_items, out=str(out), num_proc=num_proc, progress=progress,
                             **options)
    else:
        from .ray_run import run_on_ray

        results, engine_extra = run_on_ray(scored_items, score=score_item, out=str(out),
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
        rec.left_out += int(res.get("left_out", 0))
        rec.left_out_records += list(res.get("left_out_records") or ())[
            :max(0, MAX_PROBLEMS - len(rec.left_out_records))]
        if res["error"]:
            msg = (f"batch {res['batch_index']}: {res['error']}"
                   if int(res["input_index"]) in batched or res.get("kind") == "modes"
                   else str(res["error"]))
            rec.error = msg if rec.error is None else f"{rec.error}; {msg}"
    merged: list[int] = []
    if merge:
        merged = merge_repeats(out, items, inputs, group=together, modes=modes, errors=errors,
                               metadata=metadata, load_options=load_options,
                               verdicts=verdicts)
        if merged:
            engine_extra["merged"] = [inputs[i].source for i in merged]
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


def _items_of(item: WorkItem, items: Sequence[WorkItem]) -> list[WorkItem]:
    """The parquet items a ``compare_modes`` item covers; any other item itself."""
    if item.kind != "modes":
        return [item]
    names = set(item.sources)
    return [i for i in items if i.kind == "parquet" and i.source in names]


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
