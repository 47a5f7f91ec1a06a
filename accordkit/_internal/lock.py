"""One writer per output folder: a lock file beside the folder, naming its process.

``accordkit report --out DIR`` and ``accordkit score --out DIR`` each take the lock of
``DIR`` (``.DIR.lock`` in the same parent folder, holding the writer's process id) before
they touch it, and remove it when they are done. A second run into the same folder stops at
once with the caller's error instead of mixing its files with the first's. A lock whose
process no longer runs (a run that was killed) is taken over.

Taking the lock (looking at a lock file, removing one whose process is gone, creating one
and writing this process's id in it) is done holding an advisory lock (``flock``) on the
parent folder, so two runs starting together never both see a lock as free or as stale: one
wins, the other is told the winner's process id. The lock file itself is created with
``O_EXCL`` too, for systems without ``flock``. A process id is checked on this machine only:
two machines writing one network folder are not told apart.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["lock_path", "pid_alive", "acquire", "held"]


def lock_path(out: Path) -> Path:
    """The lock file guarding output folder ``out`` (beside it, so the folder itself is not
    touched before the lock is held)."""
    return out.parent / f".{out.name}.lock"


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def _one_at_a_time(folder: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``folder`` (held for microseconds by whoever takes a
    lock in it); nothing where ``flock`` is missing or refused (some network folders)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - the lock file's creation says what is wrong
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # pragma: no cover - a file system without flock
            pass
        yield
    finally:
        os.close(fd)  # releases the flock


def acquire(lock: Path, busy: Callable[[int], Exception]) -> None:
    """Create ``lock`` holding this process's id.

    Raises
    ------
    Exception
        ``busy(pid)`` when the process ``pid`` that holds the lock still runs (or ``pid`` 0
        when the lock could not be taken over twice in a row).
    """
    with _one_at_a_time(lock.parent):
        for _ in range(2):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                try:
                    owner = int(lock.read_text(encoding="utf-8").strip() or "0")
                except (OSError, ValueError):
                    owner = 0
                if owner and pid_alive(owner):
                    raise busy(owner) from None
                lock.unlink(missing_ok=True)  # left by a process that no longer runs
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(str(os.getpid()))
            return
    raise busy(0)


@contextlib.contextmanager
def held(out: Path, busy: Callable[[int], Exception]) -> Iterator[Path]:
    """Hold the lock of folder ``out`` for the body (see :func:`acquire`); yields the lock
    file. The folder's parent is created if needed."""
    out.parent.mkdir(parents=True, exist_ok=True)
    lock = lock_path(out)
    acquire(lock, busy)
    try:
        yield lock
    finally:
        lock.unlink(missing_ok=True)
