"""The episode cache: the canonical table of each source file, kept as Arrow IPC.

An entry is keyed by the sha256 of the file's bytes, its path (the table names it in
``source`` and in every problem), accordkit's :data:`~accordkit.schema.SCHEMA_VERSION`
and the reader options. It holds the good rows, and, in the table's metadata, everything else
the read produced (skipped records, notes, the record label of each row), so that a cached
load reports exactly what a fresh one does. Entries are read memory-mapped.

The entries a load makes are kept together in one cache file (:func:`store_file`): under
the entry's own key when the load read one file, else under the load's key
(:func:`files_key`), with, for a clean load, the whole load's report, so the same load
again is one read. The memo of the folder of each file says which cache file holds its
entry (:func:`remembered_entry`), so each file is found on its own too.

The folder is ``ACCORDKIT_CACHE_DIR`` (default ``~/.cache/accordkit``; the Makefile points it
at the project's ``.cache/accordkit``). Writes go to a temporary file renamed into place, so
concurrent runs never see half an entry; an entry that cannot be read, or whose key does not
match, is ignored and rebuilt; a folder that cannot be written means loading without the
cache, with one warning.

Trust: every cache file ends with the sha256 of the bytes before it, checked on every read:
a file damaged, cut short, swapped for another entry or changed by anything but this
module is read again from its source, with a :class:`CacheWarning`. The folders are made
``0700``; a cache folder that another user owns, or that its group or others may write, is
not used at all (one warning; loading goes on without the cache): whoever can write the
folder could write a file and its digest alike, so only its owner may.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["cache_dir", "real_path", "cache_key", "files_key", "file_digest", "known_digest",
           "file_sha256_remembered",
           "remember_digest", "StatTaken", "take_stat",
           "remembered_entry", "write_digests", "read_entry", "read_file", "write_entry",
           "store_file", "DigestNote", "CacheFile",
           "store_entry", "warn_unwritable", "cache_info", "cache_clear",
           "CacheEntry", "CacheInfo", "CacheWarning"]

#: Format of an entry; a change makes old entries foreign (ignored and rebuilt). Also bumped
#: when the loader's rules change (3: ``reward_info_json`` must be a JSON object), since an
#: entry holds only the rows that passed them, or when adapters build different rows (4:
#: τ-bench episode ids carry a content digest; tau2 ``completed`` filled; a seed outside
#: int64 stored as null; lone surrogate escapes replaced by U+FFFD; 5: a task whose
#: ``evaluation_criteria`` is null has empty criteria, not none; 6: an integer beyond ±2**53 in
#: a float field is a problem of its record, a one-line ``.jsonl`` file's record is
#: ``line 1``, a canonical file with no row of the config / split asked for has a note; 7:
#: a cache file holds the entries of one or more files, see :func:`store_file`; 8: tau2
#: stored reviews in ``reviews_json``, and a non-list ``action_checks`` is a problem).
#: 9: every cache file ends with the sha256 of its bytes (:data:`_TRAILER`).
ENTRY_FORMAT = "accordkit.episode-cache/9"
_META = b"accordkit.cache"
_SUFFIX = ".arrow"
#: Bytes an entry is written in at a time.
_WRITE_BUFFER = 1 << 20
#: What ends every cache file: this tag, then the sha256 (hex) of every byte before the tag.
_TRAILER = b"\naccordkit.sha256:"
_TRAILER_SIZE = len(_TRAILER) + 64


class CacheWarning(UserWarning):
    """The episode cache could not be used (e.g. a read-only folder); loading went on."""


def cache_dir() -> Path:
    """The cache folder: ``$ACCORDKIT_CACHE_DIR``, else ``~/.cache/accordkit``."""
    return _cache_dir(os.environ.get("ACCORDKIT_CACHE_DIR"))


@lru_cache(maxsize=64)
def _cache_dir(env: str | None) -> Path:
    return Path(env).expanduser() if env else Path.home() / ".cache" / "accordkit"


def _entries_dir() -> Path:
    return cache_dir() / "episodes"


def _unsafe(folder: Path) -> str | None:
    """Why the cache folder ``folder`` (or its ``episodes/``, ``digests/``) must not be
    trusted: owned by another user, or writable by its group or others; None when it is
    the user's own (or does not exist yet)."""
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    for path in (folder, folder / "episodes", folder / "digests"):
        try:
            st = path.stat()
        except OSError:
            continue
        if uid is not None and st.st_uid != uid:
            return f"{path} belongs to another user (uid {st.st_uid})"
        if uid is not None and st.st_mode & 0o022:
            return f"{path} may be written by its group or others (mode {st.st_mode & 0o777:o})"
    return None


_distrusted: set[str] = set()


def _trusted_folder() -> bool:
    """Whether the cache folder may be read and written (see :func:`_unsafe`); warns once
    per folder when it may not."""
    folder = cache_dir()
    reason = _unsafe(folder)
    if reason is None:
        return True
    if str(folder) not in _distrusted:
        _distrusted.add(str(folder))
        warnings.warn(CacheWarning(
            f"episode cache folder {folder} is not used: {reason}, so a cache file there "
            "could be anyone's; loading without the cache (make the folder your own with "
            "mode 700, or set ACCORDKIT_CACHE_DIR)"), stacklevel=3)
    return False


def _make_private(folder: Path) -> None:
    """Create ``folder`` (and the cache folder above it) readable and writable by the user
    alone (0700); folders that exist already are left as they are (and checked on use)."""
    root = cache_dir()
    for path in ([root, folder] if folder != root else [root]):
        if not path.is_dir():
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                path.mkdir(mode=0o700)
            except FileExistsError:
                continue
            os.chmod(path, 0o700)   # whatever the umask


def cache_key(data: bytes | None, *, path: str, options: dict[str, Any],
              digest: bytes | None = None) -> str:
    """The key of a file's entry: sha256 over content, path, schema version and options.

    ``digest`` is the sha256 of the content when it is known already (see
    :func:`file_digest`); then ``data`` may be None.
    """
    from ..schema import SCHEMA_VERSION

    h = hashlib.sha256()
    h.update(digest if digest is not None else hashlib.sha256(data).digest())
    h.update(json.dumps({"path": path, "schema": SCHEMA_VERSION, "format": ENTRY_FORMAT,
                         "options": options}, sort_keys=True, default=str).encode())
    return h.hexdigest()


def files_key(keys: list[str], *, sources: list[str]) -> str:
    """The key of the entry holding one load of several files, in order, from their keys
    and the sources as they were given (the report names them so).

    Such an entry is a shortcut for loads of the same files again: the rows and report of
    the whole load in one read. Each file keeps its own entry too.
    """
    h = hashlib.sha256(f"{ENTRY_FORMAT}\nfiles\n".encode())
    h.update(json.dumps([keys, sources]).encode())
    return h.hexdigest()


#: A file changed less than this many seconds before it was read may change again within
#: its modification-time resolution: its digest is not remembered ("racy" files, as in git).
_RACY_SECONDS = 2.0


class StatTaken(NamedTuple):
    """A file's stat and the wall-clock time (``time.time()``) just before it was taken.

    How recent a change is, for :data:`_RACY_SECONDS`, is judged at ``at``: the loader reads
    the next file of a load ahead, and its bytes may wait seconds (while the file before is
    parsed) before their digest is remembered; judged then, a file written just before it
    was read would look old enough to trust its stat.
    """

    stat: os.stat_result
    at: float


def take_stat(path: Path) -> StatTaken:
    """``path``'s stat, with the time it was taken (see :class:`StatTaken`)."""
    at = time.time()
    return StatTaken(Path(path).stat(), at)


def _digest_memo(folder: Path) -> Path:
    """The memo of the digests of the files of ``folder`` (one file per folder)."""
    return _memo_in(os.environ.get("ACCORDKIT_CACHE_DIR"), str(folder))


@lru_cache(maxsize=1024)
def _memo_in(env: str | None, folder: str) -> Path:
    """The memo path of ``folder`` in the cache folder that ``env`` (the environment
    variable) names: a loader asks for it several times per file."""
    return _cache_dir(env) / "digests" / f"{hashlib.sha256(folder.encode()).hexdigest()}.json"


def real_path(path: str | Path) -> Path:
    """``path`` absolute, with symlinks followed: the name a file's digest and entry are
    remembered under, so that every spelling of a file shares them.

    The functions of this module that take a file's path expect it so (the loader finds
    it once per file); given another spelling, they remember under that spelling.
    """
    return Path(os.path.realpath(path))


def _stat_key(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


#: memo file -> (its stat when read, the files it holds): read again only when it changed
_memos_read: dict[Path, tuple[tuple[int, int, int], dict[str, Any]]] = {}


def _memo_files(folder: Path) -> dict[str, Any]:
    """``{file name: {"stat": ..., "sha256": ...}}`` remembered for ``folder`` (do not
    change it: it is shared); empty when there is no memo or it cannot be read."""
    if not _trusted_folder():
        return {}
    memo = _digest_memo(folder)
    try:
        st = memo.stat()
    except OSError:
        return {}
    sig = (st.st_mtime_ns, st.st_size, st.st_ino)
    seen = _memos_read.get(memo)
    if seen is not None and seen[0] == sig:
        return seen[1]
    try:
        saved = json.loads(memo.read_text("utf-8"))
    except (OSError, ValueError):
        saved = None
    files = saved.get("files") if isinstance(saved, dict) \
        and saved.get("folder") == str(folder) else None
    files = files if isinstance(files, dict) else {}
    _memos_read[memo] = (sig, files)
    return files


def file_digest(path: Path, *, memos: list[DigestNote] | None = None) -> bytes:
    """The sha256 of a file's bytes, remembered by its stat so an unchanged file is not
    read again.

    The remembered digest is used only while size, modification and change times, inode
    and device are all the same; a file modified within :data:`_RACY_SECONDS` of being
    hashed is never remembered. Any problem with the memo means hashing the file afresh.
    ``memos`` collects what to remember instead of writing it (see :func:`remember_digest`).
    ``path`` as :func:`real_path` gives it.
    """
    path = Path(path)
    taken = take_stat(path)  # before the read (see remember_digest)
    known = known_digest(path, taken.stat)
    return known if known is not None else remember_digest(path, path.read_bytes(), taken,
                                                           memos=memos)


def file_sha256_remembered(path: str | Path) -> tuple[str, os.stat_result]:
    """The sha256 (hex) of a file's bytes, streamed, and its stat taken before the read.

    The digest is taken from the memo :func:`file_digest` keeps when the file is unchanged,
    and remembered there otherwise (unless the file is "racy" or changed while it was
    read): a load that reads the file next finds its digest without hashing it again.
    """
    from .._internal import files as _files

    real = real_path(path)
    taken = take_stat(real)
    known = known_digest(real, taken.stat)
    if known is not None:
        return known.hex(), taken.stat
    digest = _files.file_sha256(real)
    st, at = taken
    try:
        same = _stat_key(real.stat()) == _stat_key(st)
    except OSError:
        same = False
    if same and at - st.st_mtime_ns / 1e9 > _RACY_SECONDS:
        write_digests([DigestNote(real, {"stat": _stat_key(st), "sha256": digest})])
    return digest, st


def known_digest(path: Path, st: os.stat_result | None = None) -> bytes | None:
    """The remembered sha256 of an unchanged file (see :func:`file_digest`), else None.

    ``path`` as :func:`real_path` gives it; ``st`` its stat, when taken already.
    """
    path = Path(path)
    try:
        st = st or path.stat()
        saved = _memo_files(path.parent).get(path.name)
        if isinstance(saved, dict) and saved.get("stat") == _stat_key(st) \
                and isinstance(saved.get("sha256"), str):
            digest = bytes.fromhex(saved["sha256"])
            return digest if len(digest) == 32 else None
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    return None


def remember_digest(path: Path, data: bytes, taken: StatTaken | None = None, *,
                    memos: list[DigestNote] | None = None,
                    digest: bytes | None = None) -> bytes:
    """sha256 of ``data`` (the bytes of ``path``), remembered for :func:`file_digest`.

    The digests of a folder's files are remembered together, in one memo file of the
    cache's ``digests/`` folder. ``memos``, when given, collects the digest instead, to be
    written with the others by :func:`write_digests` (the loader writes a load's digests
    once, at its end: a file made for each digest cost more than hashing the bytes).
    ``digest`` is the sha256 of ``data`` when it was taken already (the loader hashes the
    next file of a load while it parses this one).

    ``taken`` is the stat of ``path`` taken *before* ``data`` was read, with its time
    (:func:`take_stat`): a change made after it changes the change time at least, so the
    memo never pairs a stat with bytes older than it; and a file modified less than
    :data:`_RACY_SECONDS` before that time is not remembered. Taken here when not given,
    which is as safe only if nothing writes the file meanwhile.
    """
    digest = hashlib.sha256(data).digest() if digest is None else digest
    path = Path(path)
    st, at = taken or take_stat(path)
    if at - st.st_mtime_ns / 1e9 > _RACY_SECONDS and st.st_size == len(data):
        note = DigestNote(path, {"stat": _stat_key(st), "sha256": digest.hex()})
        if memos is None:
            write_digests([note])
        else:
            memos.append(note)
    return digest


@dataclass(frozen=True)
class DigestNote:
    """What to remember of a file (its resolved ``path``): ``stat`` and ``sha256``, and/or
    ``entry``, where its cache entry is (``{"file": cache file key, "key": entry key}``)."""

    path: Path
    values: dict[str, Any]


def remembered_entry(path: Path, key: str) -> str | None:
    """The key of the cache file that holds the entry ``key`` of ``path``, when the folder's
    memo says so (the entry of a file read with others is kept in their one cache file).
    ``path`` as :func:`real_path` gives it."""
    path = Path(path)
    saved = _memo_files(path.parent).get(path.name)
    where = saved.get("entry") if isinstance(saved, dict) else None
    if isinstance(where, dict) and where.get("key") == key and isinstance(where.get("file"), str):
        return where["file"]
    return None


def write_digests(memos: Sequence[DigestNote]) -> None:
    """Remember what ``memos`` say of files, one memo write per folder.

    A memo is a hint, not data: renamed into place but not fsynced. Two processes writing
    one folder's memo at once may lose each other's news (those files are hashed again,
    their entries found by key or read again); files no longer there are dropped from it.
    Failures are ignored.
    """
    if not memos or not _trusted_folder():
        return
    by_folder: dict[Path, list[DigestNote]] = {}
    for note in memos:
        by_folder.setdefault(note.path.parent, []).append(note)
    for folder, notes in by_folder.items():
        files = {name: saved for name, saved in _memo_files(folder).items()
                 if (folder / name).exists() and isinstance(saved, dict)}
        for note in notes:
            files[note.path.name] = {**files.get(note.path.name, {}), **note.values}
        memo, tmp = _digest_memo(folder), None
        try:
            _make_private(memo.parent)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=memo.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"folder": str(folder), "files": files}, fh)
            os.replace(tmp, memo)
        except OSError:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)


@dataclass
class CacheEntry:
    """What one read of a file produced (the rows and everything reported about them)."""

    table: pa.Table
    labels: list[str]
    skipped: list[dict[str, Any]]
    notes: list[str]
    simulations: int | None
    #: for an entry of several files (:func:`files_key`): what each file gave,
    #: ``{"files": {source: [episodes, simulations]}, "counts": {source: rows}}``
    files: dict[str, Any] | None = None


@dataclass
class CacheFile:
    """One file of the cache: the entries of one or more files, their rows one after the
    other in one table.

    Attributes
    ----------
    entries : dict
        Entry key -> :class:`CacheEntry` (its rows a zero-copy slice), in order.
    table : pyarrow.Table
        Every entry's rows, in order.
    load : dict or None
        For the entries of a clean load of several files, that load's report
        (``files`` and ``counts``, as :attr:`CacheEntry.files`, and its ``notes``).
    """

    entries: dict[str, CacheEntry]
    table: pa.Table
    load: dict[str, Any] | None = None


def _path_for(key: str) -> Path:
    return _entries_dir() / f"{key}{_SUFFIX}"


_damaged_warned: set[str] = set()


def _warn_damaged(path: Path, why: str) -> None:
    """Warn, once per cache file and process, that it is not trusted and why."""
    if str(path) not in _damaged_warned:
        _damaged_warned.add(str(path))
        warnings.warn(CacheWarning(
            f"episode cache file {path}: {why}; it is not used, the source is read again "
            "and the entry rebuilt"), stacklevel=4)


def _older_format(data: Any) -> bool:
    """Whether ``data`` (a whole file without a trailer) is a cache file of an earlier
    format: ignored without a word, as an upgrade leaves them."""
    import pyarrow as pa

    try:
        schema = pa.ipc.open_file(data).schema
        found = json.loads((schema.metadata or {})[_META]).get("format")
    except (pa.ArrowException, KeyError, TypeError, ValueError, AttributeError, OSError):
        return False
    return isinstance(found, str) and found.startswith("accordkit.episode-cache/") \
        and found != ENTRY_FORMAT


def read_file(key: str) -> CacheFile | None:
    """The cache file under ``key``, memory-mapped; None when absent, unreadable or foreign.

    Its trailing sha256 is checked over every byte first: a file whose bytes are not
    those written with it (damaged, cut short, another entry's, changed by hand), or whose
    stored key is not ``key``, is not used and a :class:`CacheWarning` says so (an
    earlier format's file is ignored silently). So is every file of a cache folder that
    others may write (:func:`_unsafe`).
    """
    import pyarrow as pa

    from ..schema.arrow import canonical_schema

    path = _path_for(key)
    if not path.is_file() or not _trusted_folder():
        return None
    try:
        with pa.memory_map(str(path)) as source:
            whole = source.read_buffer()
        size = whole.size
        body = whole.slice(0, max(size - _TRAILER_SIZE, 0))
        tail = whole.slice(body.size).to_pybytes()
        if size < _TRAILER_SIZE or not tail.startswith(_TRAILER):
            if not _older_format(whole):
                _warn_damaged(path, "it does not end with the digest of its content (cut "
                                    "short, or not written by accordkit)")
            return None
        if hashlib.sha256(memoryview(body)).hexdigest().encode("ascii") != \
                tail[len(_TRAILER):]:
            _warn_damaged(path, "its content does not match the sha256 stored with it "
                                "(damaged, or changed after it was written)")
            return None
        table = pa.ipc.open_file(body).read_all()
        meta = json.loads((table.schema.metadata or {})[_META])
        if meta.get("format") != ENTRY_FORMAT:
            return None
        if meta.get("key") != key:
            _warn_damaged(path, f"it holds the entry {str(meta.get('key'))[:16]}..., not "
                                "the one its name says (a cache file moved or copied)")
            return None
        schema = canonical_schema()
        if table.schema.remove_metadata() != schema.remove_metadata():
            return None
        table = table.replace_schema_metadata(schema.metadata)
        entries, start = {}, 0
        for part in meta["entries"]:
            rows = int(part["rows"])
            if len(part["labels"]) != rows or rows < 0:
                return None
            entries[str(part["key"])] = CacheEntry(
                table.slice(start, rows), list(part["labels"]), list(part["skipped"]),
                list(part["notes"]), part["simulations"])
            start += rows
        if start != table.num_rows:
            return None
        load = meta.get("load")
        return CacheFile(entries, table, load if isinstance(load, dict) else None)
    except (OSError, pa.ArrowException, KeyError, TypeError, ValueError, AttributeError):
        _warn_damaged(path, "it cannot be read as a cache file")
        return None


def read_entry(key: str) -> CacheEntry | None:
    """The entry stored on its own under ``key``; None when absent, unreadable or foreign."""
    found = read_file(key)
    return None if found is None else found.entries.get(key)


_warned: set[str] = set()


def write_entry(key: str, entry: CacheEntry) -> bool:
    """Store ``entry`` atomically (temp file + rename); False (with one warning) on failure."""
    try:
        store_entry(key, entry)
    except OSError as exc:
        warn_unwritable(exc)
        return False
    return True


def store_entry(key: str, entry: CacheEntry) -> None:
    """Store ``entry`` on its own under ``key`` (see :func:`store_file`)."""
    store_file(key, [(key, entry)])


def store_file(key: str, entries: Sequence[tuple[str, CacheEntry]], *,
               load: dict[str, Any] | None = None) -> None:
    """Store entries (``(entry key, entry)``, in order) as one cache file under ``key``,
    atomically (temp file + rename), raising ``OSError`` on failure.

    The loader keeps all the entries it made in one load in one file (and, for a clean
    load of several files, that load's report as ``load``): a file is slow to create on
    some disks (0.4 ms here), more than writing a few hundred kilobytes. The table is
    written through a native Arrow file, in 1 MB buffered writes.
    """
    import pyarrow as pa

    from ..schema.arrow import empty_table

    path = _path_for(key)
    meta: dict[str, Any] = {
        "format": ENTRY_FORMAT, "key": key,
        "entries": [{"key": k, "rows": e.table.num_rows, "labels": e.labels,
                     "skipped": e.skipped, "notes": e.notes, "simulations": e.simulations}
                    for k, e in entries],
    }
    if load is not None:
        meta["load"] = load
    tables = [e.table for _, e in entries]
    table = (pa.concat_tables(tables) if tables else empty_table()
             ).replace_schema_metadata({_META: json.dumps(meta).encode()})
    tmp = None
    if not _trusted_folder():   # said once; nothing is written where others may write
        return
    try:
        _make_private(path.parent)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=_SUFFIX, dir=path.parent)
        os.close(fd)
        try:
            # buffered: Arrow writes each column buffer on its own, and unbuffered small
            # writes made an entry of a few episodes cost 1.1-1.4 ms instead of 0.6-0.7 ms
            with pa.OSFile(tmp, "wb") as raw, \
                    pa.BufferedOutputStream(raw, _WRITE_BUFFER) as sink, \
                    pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
        except pa.ArrowException as exc:  # Arrow reports a failed write (e.g. a full disk)
            raise OSError(str(exc)) from exc
        _append_digest(Path(tmp))
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise


def _append_digest(path: Path) -> None:
    """End the file ``path`` with :data:`_TRAILER` and the sha256 of its bytes."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(_WRITE_BUFFER), b""):
            h.update(block)
    with path.open("ab") as fh:
        fh.write(_TRAILER + h.hexdigest().encode("ascii"))


def warn_unwritable(exc: OSError) -> None:
    """Warn, once per cache folder, that an entry could not be written."""
    folder = str(cache_dir())
    if folder not in _warned:
        _warned.add(folder)
        warnings.warn(CacheWarning(
            f"episode cache folder {folder} cannot be written ({exc.strerror or exc}); "
            "loading without the cache (set ACCORDKIT_CACHE_DIR, or pass cache=False)"),
            stacklevel=3)


@dataclass(frozen=True)
class CacheInfo:
    """Where the cache is and what it holds."""

    folder: Path
    exists: bool
    entries: int
    size_bytes: int


def _files() -> list[Path]:
    """Every entry file (and stray temporary file), also those of the older layout, one
    subfolder per first two characters of the key, which a load no longer reads."""
    root = _entries_dir()
    if not root.is_dir():
        return []
    return sorted([*root.glob(f"*{_SUFFIX}"), *root.glob(f"*/*{_SUFFIX}")])


def cache_info() -> CacheInfo:
    """The cache folder, whether it exists, its number of entries and their size."""
    files = [f for f in _files() if not f.name.startswith(".tmp-")]
    return CacheInfo(cache_dir(), cache_dir().is_dir(), len(files),
                     sum(f.stat().st_size for f in files))


def cache_clear() -> tuple[int, int]:
    """Remove every entry (and stray temporary files); returns (entries removed, bytes freed)."""
    removed = freed = 0
    for f in _files():
        size = f.stat().st_size
        f.unlink(missing_ok=True)
        if not f.name.startswith(".tmp-"):
            removed += 1
        freed += size
    digests = cache_dir() / "digests"
    for f in sorted(digests.glob("*.json")) if digests.is_dir() else []:
        freed += f.stat().st_size
        f.unlink(missing_ok=True)
    root = _entries_dir()
    for folder in sorted(root.glob("*/")) if root.is_dir() else []:  # the older layout's
        with contextlib.suppress(OSError):
            folder.rmdir()
    return removed, freed
