"""The judges' own on-disk cache: one small JSON file per request, written atomically.

litellm's response cache cannot be used (its disk cache was removed in 1.109 and a cache
hit needs the proxy's extra dependencies), so accordkit keeps its own:

* the key is the SHA-256 of the judge, prompt id and version, model, rendered messages and
  request parameters (:func:`cache_key`), the messages taken with their fence code (random
  per run) replaced by a fixed slot, so a resumed run finds the replies of an earlier one;
* a reply is stored the moment it arrives, as ``<dir>/<judge>/<key[:2]>/<key>.json``,
  written to a temporary file in the same folder, flushed and renamed over the final name
  (``os.replace``), so an interrupted run leaves either the whole entry or none;
* only successful replies are stored (malformed ones too: they are verdicts, ``invalid``);
  transport errors are not, so they are retried on the next run;
* entries hold the reply text, token counts and cost, never credentials (every string
  field is scrubbed of credential values found in the environment before it is written);
* before a run sends anything, :meth:`JudgeCache.check_writable` proves the folder takes a
  file, and temporary files left by a killed run (``.tmp-*`` older than
  :data:`STALE_TEMP_SECONDS`) are removed (:meth:`JudgeCache.remove_stale_temp`);
* runs sharing one cache folder at once pay for each request once: before sending a
  request a run *claims* it (``<key>.claim``, created exclusively, naming its process), and
  a run finding a request claimed by another live run waits for that run's answer instead
  of asking again (:meth:`JudgeCache.claim`). A claim whose process is gone (on this
  machine), or older than :data:`CLAIM_STALE_SECONDS` (another machine), is taken over.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import socket
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from .._internal.files import atomic_write_bytes
from .calls import JudgeCall

__all__ = ["JudgeCache", "CacheNotWritableError", "cache_key", "default_cache_dir",
           "entry_is_sound", "CACHE_ENV", "STALE_TEMP_SECONDS", "CLAIM_STALE_SECONDS", "live_run"]

CACHE_ENV = "ACCORDKIT_JUDGE_CACHE"
#: A ``.tmp-*`` file older than this is a leftover of a killed run (a write takes
#: milliseconds; the margin spares the files of another run writing at the same time).
STALE_TEMP_SECONDS = 60.0
#: A claim made on another machine (whose process cannot be looked up) is taken over once
#: this old: a request, retries included, takes minutes at most.
CLAIM_STALE_SECONDS = 900.0
#: The runs of this process that may hold claims now (a claim of this process by a run not
#: listed here was left by an interrupted run, e.g. in a notebook kernel, and is stale).
_LIVE_RUNS: set[str] = set()


class CacheNotWritableError(OSError):
    """The cache folder cannot take a file; raised before any request is sent."""


def default_cache_dir() -> Path:
    """``$ACCORDKIT_JUDGE_CACHE``, else ``.cache/judges`` under the working directory."""
    return Path(os.environ.get(CACHE_ENV) or Path.cwd() / ".cache" / "judges")


def cache_key(call: JudgeCall, *, model: str, params: Mapping[str, Any]) -> str:
    """SHA-256 (hex) identifying one request.

    Examples
    --------
    >>> from accordkit.judges.calls import JudgeCall
    >>> c = JudgeCall("gsrt", "gsrt", "1", (("user", "hi"),), ())
    >>> cache_key(c, model="m", params={}) == cache_key(c, model="m", params={})
    True
    >>> cache_key(c, model="m", params={}) == cache_key(c, model="n", params={})
    False
    """
    blob = json.dumps({"judge": call.judge, "prompt_id": call.prompt_id,
                       "prompt_version": call.prompt_version, "model": model,
                       "messages": call.chat_for_key(), "params": dict(params)},
                      sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


#: The largest token count taken as real (2**53: exact as a float, and as an Int64 in the
#: verdict table); a server reporting more is reporting nonsense.
MAX_TOKENS = 2**53


def _count_ok(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool)
                             and 0 <= value <= MAX_TOKENS)


def entry_is_sound(entry: Any, key: str | None = None) -> bool:
    """Whether a stored entry can be trusted as a reply: a JSON object under ``key`` (any key
    when None) with a reply text, whole non-negative token counts (or none), a finite
    non-negative cost (or none) and an ISO ``cached_at`` (or none).

    Anything else (an edited or half-written file that still parses) is not a verdict: it
    is requested again rather than kept as a permanent ``invalid`` or crashing the run.

    Examples
    --------
    >>> entry_is_sound({"key": "k", "raw": "yes", "input_tokens": 12, "cost_usd": 0.1}, "k")
    True
    >>> entry_is_sound({"key": "k", "raw": None}, "k"), entry_is_sound({"key": "k",
    ...     "raw": "yes", "input_tokens": "12k"}, "k")
    (False, False)
    """
    if not isinstance(entry, dict) or (key is not None and entry.get("key") != key):
        return False
    if not isinstance(entry.get("raw"), str):
        return False
    if not (_count_ok(entry.get("input_tokens")) and _count_ok(entry.get("output_tokens"))):
        return False
    cost = entry.get("cost_usd")
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float)
                             or not math.isfinite(cost) or cost < 0):
        return False
    stamp = entry.get("cached_at")
    if stamp is not None:
        try:
            datetime.fromisoformat(stamp)
        except (TypeError, ValueError):
            return False
    return True


@contextlib.contextmanager
def live_run() -> Iterator[str]:
    """A token naming one judge run of this process while it may hold claims."""
    token = uuid.uuid4().hex
    _LIVE_RUNS.add(token)
    try:
        yield token
    finally:
        _LIVE_RUNS.discard(token)


class JudgeCache:
    """Directory-backed cache of judge replies.

    Parameters
    ----------
    root : str or Path
        Cache folder (created on first write).

    Examples
    --------
    >>> cache = JudgeCache("/tmp/judge-cache-doc")                 # doctest: +SKIP
    >>> cache.put("gsrt", "ab" * 32, {"raw": "..."})               # doctest: +SKIP
    >>> cache.get("gsrt", "ab" * 32)["raw"]                        # doctest: +SKIP
    '...'
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path(self, judge: str, key: str) -> Path:
        return self.root / judge / key[:2] / f"{key}.json"

    def get(self, judge: str, key: str) -> dict[str, Any] | None:
        """The stored entry, or ``None`` (also for an unreadable file, which is re-requested)."""
        try:
            with open(self.path(judge, key), encoding="utf-8") as fh:
                entry = json.load(fh)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except (OSError, ValueError):
            return None
        return entry if entry_is_sound(entry, key) else None

    def put(self, judge: str, key: str, entry: Mapping[str, Any]) -> Path:
        """Store ``entry`` under ``key`` atomically (temp file + ``os.replace``)."""
        final = self.path(judge, key)
        data = json.dumps({**entry, "key": key}, ensure_ascii=False, sort_keys=True)
        atomic_write_bytes(final, data.encode("utf-8"), suffix=".json")
        return final

    def claim_path(self, judge: str, key: str) -> Path:
        return self.root / judge / key[:2] / f"{key}.claim"

    def claim(self, judge: str, key: str, *, run: str) -> bool:
        """Claim request ``key`` for run ``run`` (registered with :func:`live_run`); False
        when another live run holds it.

        The claim file is created exclusively; a claim whose run is over (its process no
        longer runs on this machine, or it is a finished run of this process) or older than
        :data:`CLAIM_STALE_SECONDS` (another machine) is renamed aside first, which only
        one taker can do, then claimed anew.
        """
        path = self.claim_path(judge, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        me = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "run": run,
                         "at": time.time()}).encode("utf-8")
        for _ in range(3):
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if not self._claim_is_stale(path):
                    return False
                try:     # only one of several runs seeing it stale moves it aside
                    os.rename(path, path.with_name(f"{path.name}.stale-{os.getpid()}"))
                    path.with_name(f"{path.name}.stale-{os.getpid()}").unlink()
                except FileNotFoundError:
                    pass
                continue
            with os.fdopen(fd, "wb") as fh:
                fh.write(me)
            return True
        return False

    def release(self, judge: str, key: str, *, run: str) -> None:
        """Drop run ``run``'s claim of ``key`` (after its answer was stored, or failed)."""
        path = self.claim_path(judge, key)
        try:
            holder = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if holder.get("run") == run and holder.get("host") == socket.gethostname():
            path.unlink(missing_ok=True)

    @staticmethod
    def _claim_is_stale(path: Path) -> bool:
        from .._internal.lock import pid_alive

        try:
            holder = json.loads(path.read_text(encoding="utf-8"))
            age = time.time() - path.stat().st_mtime
        except FileNotFoundError:
            return True
        except (OSError, ValueError):
            # being written this instant, or damaged: stale once clearly old
            try:
                return time.time() - path.stat().st_mtime > STALE_TEMP_SECONDS
            except OSError:
                return True
        if not isinstance(holder, dict):
            return age > STALE_TEMP_SECONDS
        if holder.get("host") == socket.gethostname() and isinstance(holder.get("pid"), int):
            if holder["pid"] == os.getpid():
                return holder.get("run") not in _LIVE_RUNS
            return not pid_alive(holder["pid"])
        return age > CLAIM_STALE_SECONDS

    def check_writable(self) -> None:
        """Create the folder and write, flush and delete a probe file in it.

        Raises
        ------
        CacheNotWritableError
            The folder cannot be created or written (read-only, full, not a folder).
        """
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-probe-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write("{}" * 512)
                    fh.flush()
                    os.fsync(fh.fileno())
            finally:
                Path(tmp).unlink(missing_ok=True)
        except OSError as exc:
            raise CacheNotWritableError(
                f"judge cache folder {str(self.root)!r} is not writable "
                f"({exc.strerror or type(exc).__name__}); nothing was sent. Free space, fix "
                f"the permissions or choose another folder (--cache / cache_dir / "
                f"${CACHE_ENV})") from exc

    def remove_stale_temp(self, *, older_than: float = STALE_TEMP_SECONDS) -> int:
        """Delete ``.tmp-*`` files older than ``older_than`` seconds; returns how many."""
        if not self.root.is_dir():
            return 0
        now, n = time.time(), 0
        for pattern in (".tmp-*", "*/*/.tmp-*"):
            for p in self.root.glob(pattern):
                try:
                    if now - p.stat().st_mtime > older_than:
                        p.unlink()
                        n += 1
                except OSError:
                    continue        # gone already, or not ours to delete: harmless
        return n

    def __len__(self) -> int:
        return sum(1 for _ in self.entries())

    def entries(self) -> list[Path]:
        """Paths of the finished entries (temp files of a write in progress left out)."""
        if not self.root.is_dir():
            return []
        return [p for p in self.root.glob("*/*/*.json") if not p.name.startswith(".tmp-")]
