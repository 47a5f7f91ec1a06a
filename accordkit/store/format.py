"""The score store's format: score once, analyse many times.

A store is a folder of parquet files, one subfolder per level, written by ``accordkit score
SOURCE... --out DIR`` (any engine) and read by :func:`~accordkit.store.read.read_scores`::

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
folder without it is an unfinished run and is refused, never read as if complete. This module
writes parts and the manifest and checks parts against it; reading the tables back is
:mod:`accordkit.store.read`.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .._internal.files import atomic_write_bytes, file_sha256

__all__ = ["STORE_VERSION", "LEVEL_DIRS", "PART_DIRS", "ORDER_COLUMNS", "InputRecord",
           "IncompleteStoreError", "StoreIntegrityError", "RepeatedEpisodesError",
           "part_name", "write_part", "write_manifest", "read_manifest"]

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
    left_out : int
        Episodes of this input an analysis left out while scoring (``errors="skip"`` of
        :func:`accordkit.action_diff`: its other scores stand), counted in full.
    left_out_records : list of dict
        The first of them: ``level`` (the store level they are missing from), ``source``,
        ``record`` (the episode id), ``field`` (or None) and ``reason``.
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
    left_out: int = 0
    left_out_records: list[dict[str, Any]] = field(default_factory=list)


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
    frame.attrs = {}   # what an analysis noted (its episodes left out) is the manifest's
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
    from .. import __version__
    from .._internal.redact import redact_sources

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
        "left_out": sum(r.left_out for r in inputs),
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
    if path.is_symlink():
        raise StoreIntegrityError(
            f"score store {store}: manifest.json is a link (to {os.readlink(path)}); a store's "
            "files are its own, so a link is refused")
    if not path.is_file():
        raise IncompleteStoreError(
            f"{store}: not a finished score store (no manifest.json: the scoring run did not "
            "finish, or this is not a store written by `accordkit score --out`)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise IncompleteStoreError(f"{path}: unreadable manifest ({exc})") from None
    except RecursionError:   # JSON nested deeper than the parser's stack: no manifest's shape
        raise StoreIntegrityError(
            f"{path}: the manifest nests too deep to read (a manifest is a few levels "
            "deep; this one was crafted or damaged); refused") from None
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


#: A file changed within this long before it was hashed may keep its ctime through another
#: write (the kernel stamps times from a clock that ticks every few milliseconds, and some
#: file systems keep whole seconds): such a memo entry is "racy" and the file is hashed
#: again, as git treats a racily clean index entry (and as the episode cache does).
_RACY_NS = 2_000_000_000


class _StatMemo:
    """A per-process memo of what a file holds, keyed by everything ``stat`` says of it.

    The key is the path, device, inode, size, modification time and change time (ctime).
    ``os.utime`` can put a file's modification time back after it was rewritten in place,
    but not its ctime: the kernel sets ctime to the current time on every write and on
    ``utime`` itself, and only a change of the system clock (root) can choose it. An entry
    whose file changed less than :data:`_RACY_NS` before it was hashed proves nothing (a
    write in the same clock tick keeps the ctime) and is computed again until it is older.
    """

    def __init__(self, compute: Callable[[Path], Any], *, maxsize: int) -> None:
        self._compute = compute
        self._maxsize = maxsize
        self._entries: dict[tuple, tuple[Any, int]] = {}
        self._lock = threading.Lock()

    def __call__(self, path: str | Path) -> Any:
        path = Path(path)
        st = path.stat()
        key = (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        with self._lock:
            hit = self._entries.get(key)
        if hit is not None and st.st_ctime_ns + _RACY_NS < hit[1]:
            return hit[0]
        started = time.time_ns()
        value = self._compute(path)
        with self._lock:
            if len(self._entries) >= self._maxsize:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = (value, started)
        return value

    def cache_clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()


def _facts_now(path: Path) -> tuple[str, int]:
    return file_sha256(path), _part_rows(path)


#: sha256 and row count of a part, remembered for the process while ``stat`` says the file
#: is the same (a store is checked on every read, and read often).
_part_facts = _StatMemo(_facts_now, maxsize=8192)


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
    if folder.is_symlink():
        raise StoreIntegrityError(
            f"score store {store}: its {level} folder {PART_DIRS[level]}/ is a link (to "
            f"{os.readlink(folder)}), so its parts could be another store's; refused")
    path = folder / name
    if path.is_symlink():
        raise StoreIntegrityError(f"{where}: a link or name leading out of {folder} (a link, "
                                  f"to {os.readlink(path)}); refused")
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
    actual, rows = _part_facts(real)
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
        rows = sum(_part_rows(p) for p in parts)   # footers only: the parts were hashed above
        if rows != manifest.get("episodes"):
            raise StoreIntegrityError(
                f"score store {store}, episode level: its parts hold {rows} episodes, "
                f"manifest.json says {manifest.get('episodes')}; refused")
    return parts

