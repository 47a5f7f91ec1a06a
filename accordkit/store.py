"""The score store: score once, analyse many times.

A store is a folder of parquet files, one subfolder per level, written by ``accordkit score
SOURCE... --out DIR`` (any engine) and read by :func:`read_scores`::

    DIR/
      manifest.json          what was scored: inputs (sha256, rows or error), modes, version
      episodes/00000-00000.parquet      one file per (input, batch): ak.score(level="episode")
      preferences/00000-00000.parquet   level="preference" (AcCoRD)
      shifts/00000-00000.parquet        level="shift" (goal-shift benchmarks)
      actions/00000-00000.parquet       level="action": the action diff (ak.action_diff)
      reviews/, review_errors/          levels "review", "review_error": stored reviews
      modes/00000-00000.parquet         ak.compare_modes of the goal-shift episodes, per
                                        source file (read with read_modes)

Every part carries the position of its rows in the inputs (``_input``, ``_batch``, ``_row``),
so reading a store gives the rows in the order ``ak.score`` gives them for the same inputs,
whatever order the workers finished in. ``manifest.json`` is written last, atomically: a
folder without it is an unfinished run and is refused, never read as if complete.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ._internal.files import atomic_write_bytes, file_sha256

__all__ = [
    "STORE_VERSION",
    "LEVEL_DIRS",
    "InputRecord",
    "IncompleteStoreError",
    "StoreIntegrityError",
    "RepeatedEpisodesError",
    "PartialStoreWarning",
    "StoreChangedWarning",
    "scored_inputs",
    "part_name",
    "write_part",
    "write_manifest",
    "read_manifest",
    "read_scores",
    "read_modes",
    "fetch_episodes",
]

#: Version of the store layout; a reader refuses a store of another version. 2: the
#: ``modes`` table, and goal-shift episode scores carry the stored reward checks.
STORE_VERSION = "accordkit.scores/2"
#: Level -> subfolder.
LEVEL_DIRS = {"episode": "episodes", "preference": "preferences", "shift": "shifts",
              "action": "actions", "review": "reviews", "review_error": "review_errors"}
#: Every table of a store -> subfolder: the score levels and ``modes``
#: (:func:`accordkit.compare_modes` per source file, which needs the whole file at once).
PART_DIRS = {**LEVEL_DIRS, "modes": "modes"}
#: Levels added after the store layout's version: a store that lists none of their parts
#: was written before them (refused for that level, never read as empty).
_LATER_LEVELS = ("action", "review", "review_error")
#: Parquet metadata key holding the pandas dtype of every column as ``ak.score`` made it.
_DTYPES_KEY = b"accordkit.dtypes"
#: Bookkeeping columns of every part (dropped by :func:`read_scores`).
ORDER_COLUMNS = ("_input", "_batch", "_row")


class IncompleteStoreError(RuntimeError):
    """The folder is not a finished score store (no manifest, or another version)."""


class PartialStoreWarning(UserWarning):
    """A finished store lacks the episodes of inputs that could not be read or scored (the
    manifest lists them with their error)."""


class StoreChangedWarning(UserWarning):
    """An input of a score store changed since it was scored."""


def scored_inputs(manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each input of a store as it was scored (its sha256 then), and whether the local file
    now differs (``changed``; a file moved away is ``present: False``, not changed: the
    scores need no transcripts).

    A file of the size and modification time it was scored at is trusted unchanged and not
    read; a file of another size has changed; any other is hashed again, once per process
    while its size and time stay the same. ``changed`` is None, with the reason in
    ``unchecked``, when the file cannot be read.
    """
    from .ingest.inputs import is_url

    out = []
    for rec in manifest.get("inputs", []):
        entry = {"source": rec["source"], "sha256": rec.get("sha256")}
        path = Path(rec["source"])
        if rec.get("sha256") and not is_url(rec["source"]):
            try:
                entry["present"] = path.is_file()
                st = path.stat() if entry["present"] else None
                if st is None:
                    entry["changed"] = False
                elif rec.get("size") == st.st_size and rec.get("mtime_ns") == st.st_mtime_ns:
                    entry["changed"] = False
                elif isinstance(rec.get("size"), int) and rec["size"] != st.st_size:
                    entry["changed"] = True
                else:
                    entry["changed"] = _sha256_now(
                        str(path), st.st_size, st.st_mtime_ns, st.st_ino) != rec["sha256"]
            except OSError as exc:
                entry["changed"] = None
                entry["unchecked"] = f"{type(exc).__name__}: {exc}"
        out.append(entry)
    return out


@lru_cache(maxsize=4096)
def _sha256_now(path: str, size: int, mtime_ns: int, inode: int) -> str:
    """sha256 of a file, remembered for the process while its size, time and inode stay."""
    from ._internal import files as _files

    return _files.file_sha256(Path(path))


def _warn_about_inputs(store: Path, manifest: Mapping[str, Any]) -> None:
    """Warn of the store's inputs that failed (:class:`PartialStoreWarning`) and of those
    whose file changed since it was scored (:class:`StoreChangedWarning`)."""
    import warnings

    failed = [r for r in manifest["inputs"] if r.get("error")]
    if failed:
        first = failed[0]
        warnings.warn(PartialStoreWarning(
            f"{len(failed)} of the {len(manifest['inputs'])} input(s) of the score store "
            f"{store} could not be read or scored in full, and what failed is absent (first: "
            f"{first.get('source')}: {first.get('error')}); see its manifest.json"),
            stacklevel=3)
    changed = [r["source"] for r in scored_inputs(manifest) if r.get("changed")]
    if changed:
        warnings.warn(StoreChangedWarning(
            f"{len(changed)} input(s) of the score store {store} changed since they were "
            f"scored ({', '.join(changed[:3])}{' ...' if len(changed) > 3 else ''}): its "
            "scores are those of the files as scored; score them again for scores of the "
            "files as they are"), stacklevel=3)


@dataclass
class InputRecord:
    """One input of a store: where it came from and what became of it.

    Attributes
    ----------
    index : int
        Position among the inputs (the ``_input`` column of its rows).
    source : str
        Path or URL as given.
    sha256 : str or None
        Of the file's bytes (None for folders and hub ids).
    episodes : int
        Episodes scored from it.
    skipped : int
        Records skipped as bad (``errors="skip"``).
    batches : int
        Parts written for it.
    error : str or None
        Why the input could not be read at all (its rows are then absent, and said so).
    problems : list of str
        The first reasons records were skipped.
    size, mtime_ns : int or None
        Of the local file when it was hashed: a later check may trust an unchanged size and
        time instead of reading the file again.
    notes : list of str
        The first things the loader noted while reading it (as :attr:`LoadReport.notes
        <accordkit.load.LoadReport>`: e.g. a simulation whose task the file does not list).
    same_as : int or None
        The earlier input this one repeats (the same file, e.g. named on its own and inside
        a folder also given): it is read once, as that input, and adds no rows here, as
        :func:`accordkit.load` keeps one copy of each episode.
    real : str or None
        The file ``source`` resolves to, links followed (``source`` keeps the name given).
    duplicates : int
        Episodes of this input left out as copies of one read before, of the same content
        (checkpoints of one run), when the store was scored with ``merge=True``
        (:mod:`accordkit.engines.merge`): each episode is kept once, as
        :func:`accordkit.load` keeps it.
    """

    index: int
    source: str
    sha256: str | None = None
    episodes: int = 0
    skipped: int = 0
    batches: int = 0
    error: str | None = None
    problems: list[str] = field(default_factory=list)
    size: int | None = None
    mtime_ns: int | None = None
    notes: list[str] = field(default_factory=list)
    same_as: int | None = None
    real: str | None = None
    duplicates: int = 0


def part_name(input_index: int, batch_index: int) -> str:
    """File name of one part: sorts in input order."""
    return f"{input_index:05d}-{batch_index:05d}.parquet"


def write_part(out: str | Path, level: str, frame: Any, *, input_index: int,
               batch_index: int) -> Path | None:
    """Write one scored batch of one level as a parquet part (nothing when it has no rows).

    The frame gets the ordering columns; the file appears atomically (temp + rename), so a
    reader never sees half a part.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if level not in PART_DIRS:
        raise ValueError(f"level must be one of {tuple(PART_DIRS)}, got {level!r}")
    if frame is None or len(frame) == 0:
        return None
    dtypes = {str(c): str(t) for c, t in frame.dtypes.items()}
    frame = frame.assign(_input=input_index, _batch=batch_index, _row=range(len(frame)))
    table = pa.Table.from_pandas(frame, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[_DTYPES_KEY] = json.dumps(dtypes).encode("utf-8")
    table = table.replace_schema_metadata(meta)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    path = Path(out) / PART_DIRS[level] / part_name(input_index, batch_index)
    atomic_write_bytes(path, sink.getvalue().to_pybytes())
    return path


def write_manifest(out: str | Path, inputs: Sequence[InputRecord], *,
                   modes: Mapping[str, Any], engine: str, extra: Mapping[str, Any] | None = None,
                   ) -> Path:
    """Write ``manifest.json`` last: from then on the store is complete.

    It records each part's sha256 and row count: what a reader checks the parts against
    (``episodes``, the episodes the inputs gave, must be the rows of the episode parts).

    Credentials in source URLs (user info, secret query values) are not written
    (:func:`accordkit._internal.redact.redact_sources`): a store is meant to be shared.
    """
    from . import __version__
    from ._internal.redact import redact_sources

    rows = {level: {p.name: _part_rows(p) for p in sorted((Path(out) / d).glob("*.parquet"))}
            for level, d in PART_DIRS.items()}
    manifest = {
        "store_version": STORE_VERSION,
        "accordkit_version": __version__,
        "engine": engine,
        "modes": dict(modes),
        "levels": {level: sorted(p.name for p in (Path(out) / d).glob("*.parquet"))
                   for level, d in PART_DIRS.items()},
        "sha256": {level: {p.name: file_sha256(p)
                           for p in sorted((Path(out) / d).glob("*.parquet"))}
                   for level, d in PART_DIRS.items()},
        "rows": rows,
        "inputs": [asdict(r) for r in inputs],
        "episodes": sum(r.episodes for r in inputs),
        "skipped": sum(r.skipped for r in inputs),
        "failed_inputs": sum(r.error is not None for r in inputs),
        **dict(extra or {}),
    }
    manifest = redact_sources(manifest)
    path = Path(out) / "manifest.json"
    atomic_write_bytes(path, (json.dumps(manifest, indent=1) + "\n").encode("utf-8"))
    return path


def read_manifest(store: str | Path) -> dict[str, Any]:
    """The manifest of a finished store.

    Raises
    ------
    IncompleteStoreError
        When there is no manifest (a run that did not finish, or not a store) or its
        version is not one this accordkit reads.
    """
    path = Path(store) / "manifest.json"
    if not path.is_file():
        raise IncompleteStoreError(
            f"{store}: not a finished score store (no manifest.json: the scoring run did not "
            "finish, or this is not a store written by `accordkit score --out`)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise IncompleteStoreError(f"{path}: unreadable manifest ({exc})") from None
    if not isinstance(manifest, dict):
        raise IncompleteStoreError(f"{path}: not a store manifest (expected a JSON object, "
                                   f"found {type(manifest).__name__})")
    version = str(manifest.get("store_version", ""))
    if version.split("/")[0] != STORE_VERSION.split("/")[0] or \
            version.rsplit("/", 1)[-1] != STORE_VERSION.rsplit("/", 1)[-1]:
        raise IncompleteStoreError(
            f"{path}: store version {version!r}; this accordkit reads {STORE_VERSION!r}")
    problem = _manifest_problem(manifest)
    if problem:
        raise IncompleteStoreError(f"{path}: {problem}; score again")
    return manifest


def _manifest_problem(manifest: Mapping[str, Any]) -> str | None:
    """What is wrong with the fields a reader relies on, or None.

    Examples
    --------
    >>> _manifest_problem({"levels": {"episode": []}, "inputs": [], "episodes": 0})
    >>> _manifest_problem({"levels": None, "inputs": [], "episodes": 0})
    "field 'levels': expected an object of part names, found NoneType"
    """
    levels = manifest.get("levels")
    if not isinstance(levels, dict) or not all(
            isinstance(v, list) and all(isinstance(n, str) for n in v) for v in levels.values()):
        return ("field 'levels': expected an object of part names, found "
                f"{type(levels).__name__}")
    sums = manifest.get("sha256", {})
    if not isinstance(sums, dict) or not all(isinstance(v, dict) for v in sums.values()):
        return f"field 'sha256': expected an object of digests, found {type(sums).__name__}"
    inputs = manifest.get("inputs")
    if not isinstance(inputs, list) or not all(isinstance(r, dict) for r in inputs):
        return f"field 'inputs': expected a list of inputs, found {type(inputs).__name__}"
    episodes = manifest.get("episodes")
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 0:
        return f"field 'episodes': expected a count, found {episodes!r}"
    return None


class StoreIntegrityError(IncompleteStoreError):
    """A store's manifest and its parts disagree (a damaged or hand-edited store): its rows
    would be wrong, so nothing is read. The message names the store, the part and the
    check that failed."""


class RepeatedEpisodesError(StoreIntegrityError):
    """A store holds one episode more than once: every table would count it twice."""


def _part_rows(path: Path) -> int:
    """Rows of a parquet part, from its footer (the data is not read)."""
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(path).metadata.num_rows)


@lru_cache(maxsize=8192)
def _part_facts(path: str, size: int, mtime_ns: int, inode: int) -> tuple[str, int]:
    """sha256 and row count of a part, remembered for the process while its size, time
    and inode stay the same (a store is checked on every read, and read often)."""
    return file_sha256(Path(path)), _part_rows(Path(path))


def _check_part_name(store: Path, level: str, name: Any) -> None:
    """:class:`StoreIntegrityError` unless ``name`` is a plain parquet file name (no folder,
    no ``..``, not absolute, not hidden): a part lives in its level's own folder."""
    if not isinstance(name, str) or not name or name in (".", "..") or "/" in name \
            or "\\" in name or name.startswith(".") or not name.endswith(".parquet") \
            or Path(name).is_absolute():
        raise StoreIntegrityError(
            f"score store {store}, {level} part {name!r}: not a plain part name inside "
            f"{store / PART_DIRS[level]} (a path out of the store, or not a parquet part); "
            "refused")


def _checked_part(store: Path, level: str, name: Any, manifest: Mapping[str, Any]) -> Path:
    """The path of part ``name`` of ``level``, after checking that it is a plain file name
    inside the level's own folder, present, and of the digest and row count the manifest
    records."""
    folder = store / PART_DIRS[level]
    where = f"score store {store}, {level} part {name!r}"
    _check_part_name(store, level, name)
    path = folder / name
    try:
        real = path.resolve(strict=True)
    except OSError:
        raise StoreIntegrityError(f"{where}: listed in manifest.json but missing; score "
                                  "again") from None
    if real.parent != folder.resolve() or not real.is_file():
        raise StoreIntegrityError(f"{where}: a link or name leading out of {folder}; refused")
    digest = (manifest.get("sha256") or {}).get(level, {}).get(name)
    if not isinstance(digest, str):
        raise StoreIntegrityError(f"{where}: manifest.json records no sha256 for it, so its "
                                  "content cannot be checked; refused")
    st = real.stat()
    actual, rows = _part_facts(str(real), st.st_size, st.st_mtime_ns, st.st_ino)
    if actual != digest:
        raise StoreIntegrityError(f"{where}: sha256 differs from manifest.json (the part was "
                                  "changed or swapped after it was written); score again")
    recorded = (manifest.get("rows") or {}).get(level, {}).get(name)
    if recorded is not None and recorded != rows:
        raise StoreIntegrityError(f"{where}: holds {rows} rows, manifest.json says "
                                  f"{recorded}; refused")
    return real


def _parts(store: Path, level: str, manifest: Mapping[str, Any]) -> list[Path]:
    """The parts of ``level``, each checked (:func:`_checked_part`), listed once, and as
    many rows in all as the manifest says (:class:`StoreIntegrityError` otherwise)."""
    if level not in manifest.get("levels", {}) and level in _LATER_LEVELS:
        raise IncompleteStoreError(
            f"{store}: this store was written before the {level!r} level existed (its "
            f"manifest lists {sorted(manifest.get('levels', {}))}); score again for it")
    names = list(manifest.get("levels", {}).get(level, []))
    for name in names:
        _check_part_name(store, level, name)
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise StoreIntegrityError(f"score store {store}, {level} part {twice[0]!r}: listed "
                                  "more than once in manifest.json; refused")
    sums = (manifest.get("sha256") or {}).get(level, {})
    unlisted = sorted(set(sums) - set(names))
    if unlisted:
        raise StoreIntegrityError(
            f"score store {store}, {level} part {unlisted[0]!r}: manifest.json lists "
            f"{len(names)} {level} part(s) and the digests of {len(sums)} (a part was left "
            "out of its list, or the manifest was edited); score again")
    parts = [_checked_part(store, level, n, manifest) for n in names]
    if level == "episode":
        rows = sum(_part_facts(str(p), p.stat().st_size, p.stat().st_mtime_ns,
                               p.stat().st_ino)[1] for p in parts)
        if rows != manifest.get("episodes"):
            raise StoreIntegrityError(
                f"score store {store}, episode level: its parts hold {rows} episodes, "
                f"manifest.json says {manifest.get('episodes')}; refused")
    return parts


def _check_unique_episodes(store: Path, parts: Sequence[Path], ids: Any) -> None:
    """:class:`StoreIntegrityError` naming an episode the episode level holds twice, and
    the parts holding it (``ids``: the level's ``episode_id`` values, parts in order)."""
    import pandas as pd

    ids = pd.Series(ids)
    dup = ids.duplicated(keep=False)
    if not dup.any():
        return
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    first = ids[dup].iloc[0]
    holders = [p.name for p in parts if pc.any(pc.equal(
        pq.read_table(p, columns=["episode_id"]).column("episode_id"), first)).as_py()]
    raise RepeatedEpisodesError(
        f"score store {store}: episode {first!r} is in it more than once (parts "
        f"{', '.join(holders)}; {int(ids[dup].nunique())} episode(s) in all), and every "
        "table would count it twice: the same episode in several inputs, such as "
        "checkpoints of one run, or a manifest listing another store's parts; report from "
        "the sources instead (accordkit report --source ...), which merges the copies as "
        "ak.load does")


def read_scores(store: str | Path, *, level: str | None = "episode",
                columns: Sequence[str] | None = None, exact_dtypes: bool = True,
                categorical: bool = False, check_inputs: bool = True) -> Any:
    """Read a score store back as the frames ``ak.score`` would return.

    Parameters
    ----------
    store : str or Path
        The folder given to ``accordkit score --out`` (or :func:`write_scores`).
    level : {"episode", "preference", "shift", "action", "review", "review_error"} or None
        One level as a frame; None gives a dict of the episode, preference and shift levels
        (the action diff and the reviews are read by name, ``level="action"`` ...).
    columns : list of str, optional
        Read only these columns (the id columns are always read).
    exact_dtypes : bool, default True
        Give text columns the Python-object dtype ``ak.score`` gives them (equal frames).
        False keeps pandas' Arrow-backed strings: the same values in a fraction of the
        memory, which is what a report over millions of rows needs.
    categorical : bool, default False
        Give every text column as a ``category`` whose categories are its distinct values
        in sorted order (implies ``exact_dtypes=False``): the same values, sorted, grouped
        and compared alike, in still less memory where values repeat. A preference frame
        of a million AcCoRD episodes (6.2 million rows) takes 0.26 GB this way against
        1.6 GB as strings. String arithmetic (``a + " / " + b``) needs ``.astype(str)``.
    check_inputs : bool, default True
        Warn about the store's inputs: those that could not be read or scored, and those
        whose file changed since it was scored (a file of the size and modification time
        it was scored at is not read; any other is hashed again). False when the caller
        says so itself (the report does, on its index page).

    Returns
    -------
    pandas.DataFrame or dict of str to DataFrame
        Rows in input order; an empty frame with the id columns when the level has none.

    Raises
    ------
    IncompleteStoreError
        Not a finished store, or a part missing.
    StoreIntegrityError
        The manifest and the parts disagree, whatever ``check_inputs`` says: a part name
        that is not a plain name inside the level's folder (``..``, an absolute path, a
        link out), a part listed twice or without its sha256, a part whose sha256 or row
        count differs from the manifest, an episode count other than the parts hold, or
        (:class:`RepeatedEpisodesError`) an episode in the store twice.

    Warns
    -----
    PartialStoreWarning
        With ``check_inputs``, when inputs of the store could not be read or scored: their
        episodes are absent.
    StoreChangedWarning
        With ``check_inputs``, when an input changed since it was scored.

    Examples
    --------
    >>> import accordkit as ak
    >>> episodes = ak.read_scores("scores/")                      # doctest: +SKIP
    >>> shifts = ak.read_scores("scores/", level="shift")         # doctest: +SKIP
    """
    if level is None:
        manifest = read_manifest(store)
        if check_inputs:
            _warn_about_inputs(Path(store), manifest)
        return {lv: read_scores(store, level=lv, columns=columns, exact_dtypes=exact_dtypes,
                                categorical=categorical, check_inputs=False)
                for lv in LEVEL_DIRS if lv not in _LATER_LEVELS}
    import pandas as pd
    import pyarrow.parquet as pq

    from .names import ID_COLUMNS

    if level not in LEVEL_DIRS:
        raise ValueError(f"level must be one of {tuple(LEVEL_DIRS)}, got {level!r}")
    store = Path(store)
    manifest = read_manifest(store)
    parts = _parts(store, level, manifest)
    if check_inputs:
        _warn_about_inputs(store, manifest)
    if not parts:
        from .schema.arrow import empty_dataset
        from .score import score

        frame = score(empty_dataset(), level=level)
        return frame if columns is None else frame[[c for c in frame.columns
                                                    if c in ID_COLUMNS or c in columns]]
    want = None
    if columns is not None:
        want = list(dict.fromkeys([*ID_COLUMNS, *columns, *ORDER_COLUMNS]))
    if categorical:
        frame = _read_categorical(parts, want)
        if level == "episode":
            _check_unique_episodes(store, parts, frame["episode_id"])
        return frame
    frames = []
    for p in parts:
        table = pq.read_table(p)
        if want is not None:
            table = table.select([c for c in want if c in table.column_names])
        part = table.to_pandas()
        stored = json.loads((table.schema.metadata or {}).get(_DTYPES_KEY, b"{}"))
        for col, dtype in stored.items() if exact_dtypes else ():
            if dtype == "object" and col in part.columns and part[col].dtype != object:
                # text stored by ak.score as Python objects, missing as None
                part[col] = part[col].astype(object).where(part[col].notna(), None)
        frames.append(part)
    # pandas' concat, as ak.score joins benchmark families: a column one part lacks is
    # missing (NA of the other parts' dtype) there, never coerced to another type. Parts
    # with AcCoRD rows go first, so the columns come in ak.score's order (AcCoRD's, then
    # goal-shift's) whatever the input order; the rows are put in order below.
    frames.sort(key=lambda part: not _has_accord(part["benchmark"]))
    frame = pd.concat(frames, ignore_index=True, sort=False)
    for col in frame.columns if exact_dtypes else ():
        if frame[col].dtype == object:       # a column one family lacks: None, as ak.score
            frame[col] = frame[col].where(frame[col].notna(), None)
    frame = frame.sort_values(list(ORDER_COLUMNS), kind="stable").reset_index(drop=True)
    if level == "episode":
        _check_unique_episodes(store, parts, frame["episode_id"])
    return frame.drop(columns=list(ORDER_COLUMNS))


def _has_accord(benchmark: Any) -> bool:
    """Whether a part's ``benchmark`` column (pandas or Arrow) holds an AcCoRD row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(benchmark, pa.ChunkedArray | pa.Array):
        return bool(pc.any(pc.equal(benchmark.cast(pa.string()), "accord")).as_py())
    return bool((benchmark == "accord").any())


def _read_categorical(parts: Sequence[Path], want: Sequence[str] | None) -> Any:
    """``read_scores(categorical=True)``: the parts joined in Arrow, text as categories.

    Text columns are read dictionary-encoded, the parts' dictionaries unified, and each
    column's categories put in sorted order, so sorting, grouping and factorizing give
    the order the strings themselves would. Numbers and flags get the pandas dtypes
    ``ak.score`` gave them (recorded in every part). Parts hold their rows in order and
    are listed in input order, which is checked part by part; only if that fails are the
    rows sorted by their order columns.
    """
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables, dtypes, in_order, last = [], {}, True, (-1, -1)
    for p in parts:
        schema = pq.read_schema(p)
        names = [c for c in (want if want is not None else schema.names) if c in schema.names]
        names = list(dict.fromkeys([*names, *ORDER_COLUMNS]))
        text = [c for c in names if pa.types.is_string(schema.field(c).type)
                or pa.types.is_large_string(schema.field(c).type)]
        table = pq.read_table(p, columns=names, read_dictionary=text)
        order = [table.column(c).to_numpy() for c in ORDER_COLUMNS]
        first = (int(order[0][0]), int(order[1][0])) if table.num_rows else last
        in_order = in_order and first > last and all(
            (o == o[0]).all() for o in order[:2]) and np.array_equal(
            order[2], np.arange(table.num_rows))
        last = first
        if in_order:
            table = table.drop_columns(list(ORDER_COLUMNS))
        tables.append(table)
        for col, dtype in json.loads((schema.metadata or {}).get(_DTYPES_KEY, b"{}")).items():
            dtypes.setdefault(col, dtype)
    if not in_order:  # a store not written part by part in order: sort its rows
        tables = [pq.read_table(p, columns=list(dict.fromkeys([*t.column_names,
                                                               *ORDER_COLUMNS])),
                                read_dictionary=[f.name for f in t.schema
                                                 if pa.types.is_dictionary(f.type)])
                  for p, t in zip(parts, tables, strict=True)]
    # columns in ak.score's order (AcCoRD's first), whatever the input order
    first = sorted(tables, key=lambda t: "benchmark" not in t.column_names
                   or not _has_accord(t.column("benchmark")))
    columns = list(dict.fromkeys(c for t in first for c in t.column_names))
    table = pa.concat_tables(tables, promote_options="permissive").unify_dictionaries()
    table = table.select(columns)
    del tables, first
    if not in_order:
        keys = np.lexsort([table.column(c).to_numpy() for c in ORDER_COLUMNS[::-1]])
        table = table.take(pa.array(keys)).drop_columns(list(ORDER_COLUMNS))
    frame = table.to_pandas(self_destruct=True, split_blocks=True, ignore_metadata=True)
    del table
    for col in frame.columns:
        series = frame[col]
        if isinstance(series.dtype, pd.CategoricalDtype):
            cats = series.cat.categories
            if not cats.is_monotonic_increasing:
                frame[col] = series.cat.reorder_categories(cats.sort_values())
        elif col in dtypes and dtypes[col] != "object" and str(series.dtype) != dtypes[col]:
            target = dtypes[col]
            if series.isna().any() and (target == "bool" or target.startswith(("int", "uint"))):
                # a column some parts lack: its missing values keep a type that holds them
                # (as pandas' concat of the parts would)
                continue
            frame[col] = series.astype(target)
    return frame


def read_modes(store: str | Path) -> Any:
    """The store's :func:`accordkit.compare_modes` table (goal-shift source files).

    Computed while scoring, one source file at a time (its upstream TCRR pools the file's
    conversations), so it is there without the transcripts.

    Returns
    -------
    pandas.DataFrame
        :data:`accordkit.metrics.compare_modes.COMPARE_COLUMNS`, inputs in order (empty when
        the store has no goal-shift episodes).
    """
    import pandas as pd
    import pyarrow.parquet as pq

    from .metrics.compare_modes import COMPARE_COLUMNS

    store = Path(store)
    parts = _parts(store, "modes", read_manifest(store))
    if not parts:
        return pd.DataFrame(columns=COMPARE_COLUMNS)
    frame = pd.concat([pq.read_table(p).to_pandas() for p in parts], ignore_index=True)
    frame = frame.sort_values(list(ORDER_COLUMNS), kind="stable").reset_index(drop=True)
    return frame.drop(columns=list(ORDER_COLUMNS))


def _warn_if_changed(store: Path, manifest: Mapping[str, Any], indexes: Sequence[int]) -> None:
    """Warn (:class:`StoreChangedWarning`) of each of these inputs whose file is not the one
    scored (its sha256 differs from the manifest's), before its transcripts are shown."""
    import warnings

    checked = {r["index"]: c for r, c in zip(manifest["inputs"], scored_inputs(manifest),
                                                strict=True)}
    changed = [checked[i]["source"] for i in indexes if checked.get(i, {}).get("changed")]
    if changed:
        warnings.warn(StoreChangedWarning(
            f"{len(changed)} input(s) of the score store {store} are not the file(s) it scored "
            f"(their sha256 differs from manifest.json: {', '.join(changed[:3])}"
            f"{' ...' if len(changed) > 3 else ''}): the conversations shown are read from "
            "the files as they are now, and may not be the ones the scores describe"),
            stacklevel=3)


def fetch_episodes(store: str | Path, episode_ids: Sequence[str]) -> Any:
    """The canonical episodes with these ids, read from the inputs the store was scored from.

    Only the inputs that hold them are read, and from parquet inputs only the matching rows
    (a filter pushed down to the parquet reader): a report page that shows three
    conversations out of a million episodes reads three episodes' worth of transcripts.

    Before an input's transcripts are read, its file is checked against the sha256 the
    store recorded (a file of the same size and time is trusted, any other hashed once per
    process): a file that changed, or a manifest pointing at another file, is said with a
    :class:`StoreChangedWarning`.

    Returns
    -------
    datasets.Dataset
        In the order of ``episode_ids`` (ids not in the store are left out).

    Warns
    -----
    StoreChangedWarning
        When an input read is not the file that was scored.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from .ingest.read import load_table
    from .load import load

    store = Path(store)
    manifest = read_manifest(store)
    wanted = list(dict.fromkeys(str(e) for e in episode_ids))
    where: dict[int, list[str]] = {}
    for part in _parts(store, "episode", manifest):
        table = pq.read_table(part, columns=["episode_id", "_input"])
        mask = pc.is_in(table.column("episode_id"), value_set=pa.array(wanted, pa.string()))
        hits = table.filter(mask)
        for eid, idx in zip(hits.column("episode_id").to_pylist(),
                            hits.column("_input").to_pylist(), strict=True):
            where.setdefault(int(idx), []).append(eid)
    sources = {r["index"]: r["source"] for r in manifest["inputs"]}
    _warn_if_changed(store, manifest, sorted(where))
    tables = []
    for idx, ids in sorted(where.items()):
        src = sources[idx]
        if src.endswith(".parquet"):
            table = pq.read_table(src, filters=[("episode_id", "in", ids)])
            ds, _ = load_table(table, source=src, errors="skip")
        else:
            full = load(src, errors="skip", cache=True)
            keep = pc.is_in(pa.array(full["episode_id"], pa.string()),
                            value_set=pa.array(ids, pa.string()))
            ds = full.select(keep.to_numpy(zero_copy_only=False).nonzero()[0])
        tables.append(ds)
    if not tables:
        from .schema.arrow import empty_dataset

        return empty_dataset()
    import datasets

    joined = datasets.concatenate_datasets(tables) if len(tables) > 1 else tables[0]
    order = {eid: i for i, eid in enumerate(joined["episode_id"])}
    return joined.select([order[e] for e in wanted if e in order])
