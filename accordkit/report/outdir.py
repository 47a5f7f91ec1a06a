"""The report's output folder: one writer at a time, built beside it, swapped in whole.

``accordkit report`` never writes into ``--out`` directly. It takes a lock file beside the
folder (a second report into the same folder stops with :class:`ReportBusyError`), builds
the whole report in a hidden staging folder beside it, and only when every file was written
renames the staging folder to ``--out`` (the previous report is removed, so no stale page
survives). When writing fails (a full or read-only disk), the old report stays as it was and
the partial one is kept as ``<out>.incomplete`` with an ``INCOMPLETE.txt`` marker, and
:class:`ReportIncompleteError` is raised.

Only what a report wrote is ever replaced or removed. Every report folder holds a marker
file, :data:`REPORT_MARKER`, that lists each file and folder the run wrote with the SHA-256
digest of each file; it is written last, once the pages are complete. An existing ``--out``
is replaced only when it holds exactly what its marker lists, unchanged: a file someone
added (notes beside the pages, a project a report was copied into) or a page someone edited
makes the folder foreign, and it is refused with :class:`UnsafeOutputError` naming those
files and left as it was; so is a folder with no marker (a project folder, ``.``, the
target of a symbolic link, a folder of sources, a score store), and an ``--out`` that holds
one of the run's inputs, or lies inside one. The staging folder carries a "building"
marker from its first moment (only a leftover staging folder of a killed run, found under
its own hidden name beside ``--out``, is removed on that marker alone); a kept
``<out>.incomplete`` gets a listing of what it holds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
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
_MARKER_NOTE = ("This folder was written by `accordkit report`. A later report into it "
                "replaces it only while it holds exactly the files listed here, unchanged.")
_MARKER_FORMAT = 1


class UnsafeOutputError(ValueError):
    """``--out`` names a folder that a report did not write, or one that holds an input."""


def _digest(path: Path) -> str:
    """The SHA-256 digest of the file ``path`` (read in blocks)."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _walk(folder: Path) -> tuple[list[str], list[str], list[str]]:
    """The files, folders and links under ``folder`` as relative POSIX paths (no link followed).

    Anything that is neither a plain file nor a plain folder (a link, a socket) is a "link":
    a report never writes one, so it is foreign wherever it is.
    """
    files: list[str] = []
    dirs: list[str] = []
    others: list[str] = []
    for root, subdirs, names in os.walk(folder, followlinks=False):
        base = Path(root)
        for name in [*subdirs, *names]:
            path = base / name
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                others.append(rel)
            elif path.is_dir():
                dirs.append(rel)
            elif path.is_file():
                files.append(rel)
            else:
                others.append(rel)
        subdirs[:] = [d for d in subdirs if not (base / d).is_symlink()]
    return sorted(files), sorted(dirs), sorted(others)


def _write_marker(folder: Path, *, state: str) -> None:
    """Write the marker of ``folder``: for ``"building"`` no listing, else every file's digest."""
    body: dict[str, object] = {"accordkit_report": _MARKER_FORMAT, "state": state,
                               "note": _MARKER_NOTE}
    if state != "building":
        files, dirs, _ = _walk(folder)
        body["folders"] = dirs
        body["files"] = {rel: _digest(folder / rel) for rel in files if rel != REPORT_MARKER}
    (folder / REPORT_MARKER).write_text(json.dumps(body, indent=1, sort_keys=True) + "\n",
                                        encoding="utf-8")


def _read_marker(folder: Path) -> dict | None:
    """The marker of ``folder`` as written by :func:`_write_marker`, or ``None``."""
    marker = folder / REPORT_MARKER
    if marker.is_symlink() or not marker.is_file():
        return None
    try:
        if marker.stat().st_size > 64 << 20:
            return None
        body = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(body, dict) or body.get("accordkit_report") != _MARKER_FORMAT:
        return None
    return body


def _foreign(folder: Path) -> tuple[list[str], list[str]]:
    """What in ``folder`` no report run wrote: ``(foreign files, files edited since)``.

    Both lists are empty only for a folder whose marker lists exactly what it holds, each
    file with its digest unchanged, or for an empty folder. A folder without a valid
    finished marker has every entry foreign.
    """
    files, dirs, others = _walk(folder)
    body = _read_marker(folder)
    if body is None or body.get("state") == "building":
        return sorted([*files, *dirs, *others]), []
    listed = body.get("files")
    listed_dirs = body.get("folders")
    if not isinstance(listed, dict) or not isinstance(listed_dirs, list):
        return sorted([*files, *dirs, *others]), []
    foreign = [*others, *(d for d in dirs if d not in set(listed_dirs))]
    changed: list[str] = []
    for rel in files:
        if rel == REPORT_MARKER:
            continue
        want = listed.get(rel)
        if want is None:
            foreign.append(rel)
        elif _digest(folder / rel) != want:
            changed.append(rel)
    return sorted(foreign), sorted(changed)


def _removable(folder: Path, *, building: bool = False) -> bool:
    """A folder that may be deleted: exactly what a report wrote, or an empty real folder.

    With ``building``, a staging folder left by a killed run (its marker says "building",
    its files are not listed yet) is removable too.
    """
    if folder.is_symlink() or not folder.is_dir():
        return False
    if building:
        body = _read_marker(folder)
        if body is not None and body.get("state") == "building":
            return True
    foreign, changed = _foreign(folder)
    return not foreign and not changed


def _shown(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def check_output_folder(out: str | Path, *, inputs: Sequence[str | Path] = (),
                        contents: bool = True) -> Path:
    """The resolved report folder ``out``, after checking a report may replace it.

    Parameters
    ----------
    out : str or Path
        The ``--out`` folder as the user gave it.
    inputs : sequence of str or Path
        The run's inputs (sources, a score store, verdict files): none may lie inside
        ``out``, and ``out`` may not lie inside a folder among them (a later run would read
        the report's own files as data). Names that are not local paths are ignored.
    contents : bool, default True
        Check what the folder holds against its marker (every file hashed); False checks
        only the rest, for a first look that is repeated in full later.

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
    accordkit.report.outdir.UnsafeOutputError: --out ... holds files that no accordkit report wrote (notes.txt); a report replaces its whole --out folder, so it only writes into a new folder, an empty one, or one an earlier report wrote and nobody changed since (move those files away or choose another --out)
    """
    given = Path(out)
    resolved = given.resolve()
    if resolved.exists() and not resolved.is_dir():
        raise NotADirectoryError(f"--out {given} exists and is not a folder")
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
    if contents and resolved.is_dir():
        foreign, changed = _foreign(resolved)
        if foreign or changed:
            what = []
            if foreign:
                what.append(f"holds files that no accordkit report wrote ({_shown(foreign)})")
            if changed:
                what.append(f"holds files changed since the report wrote them "
                            f"({_shown(changed)})")
            via = f" (the target of the link {given})" if given.is_symlink() else ""
            raise UnsafeOutputError(
                f"--out {resolved}{via} {' and '.join(what)}; a report replaces its whole "
                "--out folder, so it only writes into a new folder, an empty one, or one an "
                "earlier report wrote and nobody changed since (move those files away or "
                "choose another --out)")
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


def _remove_report(folder: Path, *, building: bool = False) -> None:
    """Delete ``folder`` if a report wrote exactly it (or it is empty); anything else stays."""
    if _removable(folder, building=building):
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
        _write_marker(target, state="incomplete")
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
    out = check_output_folder(out, inputs=inputs, contents=False)   # in full under the lock
    stage = out.parent / f".{out.name}.building-{os.getpid()}"
    with held(out, _busy(lock_path(out))):
        check_output_folder(out, inputs=inputs)   # as it is now that no other run writes
        # we hold the lock: staging or old copies beside ``out`` are leftovers of killed runs
        for leftover in out.parent.glob(f".{out.name}.building-*"):
            _remove_report(leftover, building=True)
        for leftover in out.parent.glob(f".{out.name}.old-*"):
            _remove_report(leftover)
        stage.mkdir()
        _write_marker(stage, state="building")
        try:
            yield stage
            _write_marker(stage, state="complete")   # last: lists every file the run wrote
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
