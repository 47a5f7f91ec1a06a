"""The report's output folder: one writer at a time, built beside it, swapped in whole.

``accordkit report`` never writes into ``--out`` directly. It takes a lock file beside the
folder (a second report into the same folder stops with :class:`ReportBusyError`), builds
the whole report in a hidden staging folder beside it, and only when every file was written
renames the staging folder to ``--out`` (the previous report is removed, so no stale page
survives). When writing fails (a full or read-only disk), the old report stays as it was and
the partial one is kept as ``<out>.incomplete`` with an ``INCOMPLETE.txt`` marker, and
:class:`ReportIncompleteError` is raised.

Only a folder that a report wrote is ever replaced or removed: every report folder (and its
staging and incomplete copies) holds a marker file, :data:`REPORT_MARKER`, written first. An
existing ``--out`` that holds anything without that marker (a project folder, ``.``, the
target of a symbolic link, a folder of sources, a score store) is refused with
:class:`UnsafeOutputError` and left as it was; so is an ``--out`` that holds one of the
run's inputs, or lies inside one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from .._internal.lock import held, lock_path

__all__ = ["ReportBusyError", "ReportIncompleteError", "UnsafeOutputError", "staged_output",
           "lock_path", "INCOMPLETE_MARKER", "REPORT_MARKER", "check_output_folder",
           "write_text_checked"]

INCOMPLETE_MARKER = "INCOMPLETE.txt"
#: The file that says "a report run wrote this folder": only such folders are replaced.
REPORT_MARKER = ".accordkit-report"
_MARKER_TEXT = ("This folder was written by `accordkit report`; a later report into it "
                "replaces it whole.\n")


class UnsafeOutputError(ValueError):
    """``--out`` names a folder that a report did not write, or one that holds an input."""


def _is_report_folder(folder: Path) -> bool:
    """Whether ``folder`` is a real folder a report run wrote (its marker is a plain file)."""
    marker = folder / REPORT_MARKER
    return folder.is_dir() and not folder.is_symlink() and marker.is_file() \
        and not marker.is_symlink()


def _removable(folder: Path) -> bool:
    """A folder that may be deleted: written by a report, or an empty real folder."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    return _is_report_folder(folder) or not any(folder.iterdir())


def check_output_folder(out: str | Path, *, inputs: Sequence[str | Path] = ()) -> Path:
    """The resolved report folder ``out``, after checking a report may replace it.

    Parameters
    ----------
    out : str or Path
        The ``--out`` folder as the user gave it.
    inputs : sequence of str or Path
        The run's inputs (sources, a score store, verdict files): none may lie inside
        ``out``, and ``out`` may not lie inside a folder among them (a later run would read
        the report's own files as data). Names that are not local paths are ignored.

    Raises
    ------
    UnsafeOutputError
        Naming the folder and what it holds.
    NotADirectoryError
        When ``out`` exists and is not a folder.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> keep = pathlib.Path(tempfile.mkdtemp()); _ = (keep / "notes.txt").write_text("mine")
    >>> check_output_folder(keep)
    Traceback (most recent call last):
    ...
    accordkit.report.outdir.UnsafeOutputError: --out ... holds files that no accordkit report wrote (notes.txt); a report replaces its whole --out folder, so it only writes into a new folder, an empty one, or one an earlier report wrote
    """
    given = Path(out)
    resolved = given.resolve()
    if resolved.exists() and not resolved.is_dir():
        raise NotADirectoryError(f"--out {given} exists and is not a folder")
    if resolved.is_dir() and not _removable(resolved):
        shown = sorted(p.name for p in resolved.iterdir())
        listing = ", ".join(shown[:3]) + (" ..." if len(shown) > 3 else "")
        via = f" (the target of the link {given})" if given.is_symlink() else ""
        raise UnsafeOutputError(
            f"--out {resolved}{via} holds files that no accordkit report wrote ({listing}); "
            "a report replaces its whole --out folder, so it only writes into a new folder, "
            "an empty one, or one an earlier report wrote")
    for item in inputs:
        text = str(item)
        path = Path(text[len("file://"):] if text.startswith("file://") else text)
        if not path.exists():
            continue
        real = path.resolve()
        if real == resolved or resolved in real.parents:
            raise UnsafeOutputError(
                f"--out {resolved} holds an input of this report ({item}): replacing the "
                "folder would delete it; choose another --out")
        if real.is_dir() and real in resolved.parents:
            raise UnsafeOutputError(
                f"--out {resolved} lies inside the input folder {item}: a later run would "
                "read the report's own files as data; choose an --out outside it")
    return resolved


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


def _remove_report(folder: Path) -> None:
    """Delete ``folder`` if a report wrote it (or it is empty); anything else stays."""
    if _removable(folder):
        shutil.rmtree(folder, ignore_errors=True)


def _mark_incomplete(stage: Path, out: Path, exc: BaseException) -> Path:
    target = out.parent / f"{out.name}.incomplete"
    _remove_report(target)
    try:
        if target.exists() or target.is_symlink():
            raise FileExistsError(target)   # not a report's: kept, and the stage stays
        stage.rename(target)
    except OSError:
        target = stage
    with contextlib.suppress(OSError):  # the disk may be too full even for the marker
        (target / INCOMPLETE_MARKER).write_text(
            f"This report is incomplete: writing it failed with {exc}\n", encoding="utf-8")
    return target


@contextlib.contextmanager
def staged_output(out: str | Path, *, inputs: Sequence[str | Path] = ()) -> Iterator[Path]:
    """Lock ``out``, yield a staging folder beside it, and swap it in when the body ends.

    ``out`` is checked first with :func:`check_output_folder` (``inputs`` as there), and
    again under the lock.

    Raises
    ------
    UnsafeOutputError
        When ``out`` holds anything a report did not write, or an input.
    ReportBusyError
        When another live process holds the lock of ``out``.
    ReportIncompleteError
        When the body (or the swap) raised an ``OSError``; ``out`` is left untouched and
        the partial report is kept as ``<out>.incomplete``.
    """
    out = check_output_folder(out, inputs=inputs)
    stage = out.parent / f".{out.name}.building-{os.getpid()}"
    with held(out, _busy(lock_path(out))):
        check_output_folder(out, inputs=inputs)   # as it is now that no other run writes
        # we hold the lock: staging or old copies beside ``out`` are leftovers of killed runs
        for pattern in (f".{out.name}.building-*", f".{out.name}.old-*"):
            for leftover in out.parent.glob(pattern):
                _remove_report(leftover)
        stage.mkdir()
        (stage / REPORT_MARKER).write_text(_MARKER_TEXT, encoding="utf-8")
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
            _remove_report(old)
            _remove_report(out.parent / f"{out.name}.incomplete")
        except OSError as exc:
            kept = _mark_incomplete(stage, out, exc)
            raise ReportIncompleteError(
                f"the report could not be written completely ({exc}); {out} was left as it "
                f"was and the partial report is in {kept}") from exc
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
