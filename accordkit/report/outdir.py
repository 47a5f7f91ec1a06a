"""The report's output folder: one writer at a time, built beside it, swapped in whole.

``accordkit report`` never writes into ``--out`` directly. It takes a lock file beside the
folder (a second report into the same folder stops with :class:`ReportBusyError`), builds
the whole report in a hidden staging folder beside it, and only when every file was written
renames the staging folder to ``--out`` (the previous report is removed, so no stale page
survives). When writing fails (a full or read-only disk), the old report stays as it was and
the partial one is kept as ``<out>.incomplete`` with an ``INCOMPLETE.txt`` marker, and
:class:`ReportIncompleteError` is raised.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from .._internal.lock import held, lock_path

__all__ = ["ReportBusyError", "ReportIncompleteError", "staged_output", "lock_path",
           "INCOMPLETE_MARKER", "write_text_checked"]

INCOMPLETE_MARKER = "INCOMPLETE.txt"


class ReportBusyError(RuntimeError):
    """Another report is being written into the same output folder."""


class ReportIncompleteError(OSError):
    """Writing the report failed; the partial report was kept aside and marked."""


def write_text_checked(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) and make sure every byte reached the disk.

    Raises
    ------
    OSError
        When the disk is full or read-only, or fewer bytes were written than given.
    """
    data = text.encode("utf-8")
    with Path(path).open("wb") as fh:
        written = fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    if written != len(data):
        raise OSError(f"{path}: wrote {written} of {len(data)} bytes")


def _busy(lock: Path) -> Callable[[int], ReportBusyError]:
    def busy(owner: int) -> ReportBusyError:
        if not owner:
            return ReportBusyError(f"could not take the report lock {lock}")
        return ReportBusyError(
            f"another accordkit report (process {owner}) is writing "
            f"{lock.parent / lock.name[1:-5]}; wait for it or choose another --out "
            f"(lock file {lock})")
    return busy


def _mark_incomplete(stage: Path, out: Path, exc: BaseException) -> Path:
    target = out.parent / f"{out.name}.incomplete"
    shutil.rmtree(target, ignore_errors=True)
    try:
        stage.rename(target)
    except OSError:
        target = stage
    with contextlib.suppress(OSError):  # the disk may be too full even for the marker
        (target / INCOMPLETE_MARKER).write_text(
            f"This report is incomplete: writing it failed with {exc}\n", encoding="utf-8")
    return target


@contextlib.contextmanager
def staged_output(out: str | Path) -> Iterator[Path]:
    """Lock ``out``, yield a staging folder beside it, and swap it in when the body ends.

    Raises
    ------
    ReportBusyError
        When another live process holds the lock of ``out``.
    ReportIncompleteError
        When the body (or the swap) raised an ``OSError``; ``out`` is left untouched and
        the partial report is kept as ``<out>.incomplete``.
    """
    out = Path(out).resolve()
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"--out {out} exists and is not a folder")
    stage = out.parent / f".{out.name}.building-{os.getpid()}"
    with held(out, _busy(lock_path(out))):
        # we hold the lock: staging or old copies beside ``out`` are leftovers of killed runs
        for pattern in (f".{out.name}.building-*", f".{out.name}.old-*"):
            for leftover in out.parent.glob(pattern):
                shutil.rmtree(leftover, ignore_errors=True)
        stage.mkdir()
        try:
            yield stage
            old = out.parent / f".{out.name}.old-{os.getpid()}"
            if out.exists():
                out.rename(old)
            try:
                stage.rename(out)
            except OSError:
                if old.exists():
                    old.rename(out)
                raise
            shutil.rmtree(old, ignore_errors=True)
            shutil.rmtree(out.parent / f"{out.name}.incomplete", ignore_errors=True)
        except OSError as exc:
            kept = _mark_incomplete(stage, out, exc)
            raise ReportIncompleteError(
                f"the report could not be written completely ({exc}); {out} was left as it "
                f"was and the partial report is in {kept}") from exc
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
