"""tau2-bench / AgentChangeBench results: a results file, a dir-format run, a parsed object.

Three readers share the converter of :mod:`accordkit.adapters.tau2`:

* ``results-file`` (kind *file*): a file whose first byte is ``{``, decoded straight from its
  bytes by the typed decoder of :mod:`accordkit.adapters.tau2_format`; whatever that decoder
  refuses is left to the ``json`` reader (``read`` returns None), which names the problem;
* ``results-folder`` (kind *folder*): a dir-format run, given as its metadata file (see
  below) or as its folder when that holds nothing else (one holding more is read input by
  input, see :func:`accordkit.readers.folder.folder_inputs`);
* ``results`` (kind *document*): a parsed JSON object ``{info, tasks, simulations}``.

A dir-format run is a metadata file (a results object without simulations) next to a
``simulations/`` folder of one JSON file per simulation, and maybe an ``artifacts/`` folder.
A ``simulations/`` folder belongs to the folder's **metadata file**: ``results.json`` when
there is one (the name tau2 writes), else the one JSON file beside it that holds a results
object without simulations (:func:`run_claimants` lists the files that claim it,
:func:`run_owner` picks the one it belongs to). Any other claimant, e.g. one of two such
files sharing one ``simulations/`` folder, is an error naming it (record ``(whole file)``,
field ``simulations``) rather than a run of 0 episodes.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..adapters.tau2 import is_results_object, read_results_dir
from ..adapters.tau2_format import decode_results
from ..schema import EpisodeValidationError

__all__ = ["ResultsFile", "ResultsFolder", "ResultsDocument", "RUN_FOLDERS", "run_claimants",
           "run_owner", "has_claimant"]

#: The folders of a dir-format run beside its metadata file: the simulations and the audio.
RUN_FOLDERS = ("simulations", "artifacts")
#: The metadata file name tau2 writes; it owns its folder's ``simulations/`` if present.
_RESULTS_JSON = "results.json"
_WHOLE_FILE = "(whole file)"


class ResultsFile:
    """A results JSON file, by typed decoding (the fast path)."""

    name = "results-file"
    cached = True

    def sniff(self, path: Path, head: bytes) -> bool:
        return head.lstrip()[:1] == b"{"

    def read(self, loader: Any, path: Path, data: bytes) -> pa.Table | None:
        typed = decode_results(data)
        return None if typed is None else loader.results(typed, str(path))


class ResultsFolder:
    """A dir-format run: its folder (holding nothing else) or a file that claims a sibling
    ``simulations/`` folder (see the module docstring)."""

    name = "results-folder"

    def sniff(self, path: Path) -> bool:
        if path.is_dir():
            return _is_whole_run(path)
        return _claims(path)

    def read(self, loader: Any, path: Path) -> pa.Table:
        folder = path if path.is_dir() else path.parent
        meta = folder / _RESULTS_JSON if path.is_dir() else path
        _check_owner(meta)
        # a folder has one run, so the folder names it whatever its metadata file is called
        return loader.cached_files(
            str(folder), lambda: [meta, *sorted((folder / "simulations").glob("*.json"))],
            lambda reader: reader.results(_read_run(meta), str(folder)))


class ResultsDocument:
    """A parsed results object (read by the general ``json`` reader)."""

    name = "results"

    def sniff(self, obj: Any) -> bool:
        return is_results_object(obj)

    def read(self, loader: Any, obj: Any, source: str, bad_lines: list[int]) -> pa.Table:
        from .json_file import note_replaced

        table = loader.results(obj, source)
        if bad_lines:
            note_replaced(loader, source, bad_lines, table)
        return table


# --------------------------------------------------------------------------- dir-format layout


def run_claimants(folder: Path) -> list[Path]:
    """The files of ``folder`` that claim its ``simulations/`` folder, in name order.

    Parameters
    ----------
    folder : Path
        Any folder.

    Returns
    -------
    list of Path
        Empty when ``folder`` has no ``simulations/`` folder; else ``results.json`` (if
        present, whatever it holds) and every other ``.json`` file directly in ``folder``
        (suffix in any case, hidden ones left out) that holds a results object without
        simulations.
    """
    if not (folder / "simulations").is_dir():
        return []
    return [f for f in sorted(folder.iterdir()) if _claims(f)]


def has_claimant(folder: Path) -> bool:
    """Whether a file of ``folder`` claims its ``simulations/`` folder (that is, whether
    ``folder`` holds a dir-format run: see :func:`run_claimants`)."""
    if not (folder / "simulations").is_dir():
        return False
    return (folder / _RESULTS_JSON).is_file() or any(_claims(f) for f in folder.iterdir())


def _claims(path: Path) -> bool:
    """Whether the file ``path`` claims the ``simulations/`` folder beside it."""
    if path.name.startswith(".") or path.suffix.lower() != ".json" \
            or not (path.parent / "simulations").is_dir() or not path.is_file():
        return False
    return path.name == _RESULTS_JSON or _is_metadata(path)


def run_owner(folder: Path) -> Path | None:
    """The metadata file ``folder``'s ``simulations/`` belongs to, or None.

    ``results.json`` when it claims the folder, else the only claimant; None when nothing
    claims it or several files do and none is ``results.json`` (see :func:`run_claimants`).
    """
    claimants = run_claimants(folder)
    if folder / _RESULTS_JSON in claimants:
        return folder / _RESULTS_JSON
    return claimants[0] if len(claimants) == 1 else None


def _is_whole_run(folder: Path) -> bool:
    """Whether ``folder`` holds a ``results.json`` run and no other input of its own."""
    from .folder import folder_inputs

    # its only input is results.json: no other file beside simulations/ claims it
    return has_claimant(folder) and folder_inputs(folder) == [folder / _RESULTS_JSON]


def _is_metadata(path: Path) -> bool:
    """Whether ``path`` holds a results object without simulations (dir-format metadata)."""
    try:
        stat = path.stat()
    except OSError:
        return False
    return _is_metadata_cached(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4096)
def _is_metadata_cached(path: str, mtime_ns: int, size: int) -> bool:
    """:func:`_is_metadata` for one version of a file (asked by discovery, sniff and read)."""
    try:
        obj = json.loads(Path(path).read_bytes().decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return False  # read as a file of its own, whose reader names the problem
    return is_results_object(obj) and not obj.get("simulations")


def _check_owner(meta: Path) -> None:
    """Raise unless ``meta`` is the file its folder's ``simulations/`` belongs to."""
    folder = meta.parent
    owner = run_owner(folder)
    if owner == meta:
        return
    if owner is not None:
        reason = (f"dir-format metadata beside a simulations/ folder that belongs to "
                  f"{owner.name}: this file has no simulations of its own")
    else:
        names = ", ".join(f.name for f in run_claimants(folder))
        reason = (f"dir-format metadata beside a simulations/ folder claimed by several "
                  f"files ({names}): which simulations are this file's cannot be told; give "
                  f"each run its own folder (or name its metadata {_RESULTS_JSON})")
    raise EpisodeValidationError(reason, source=str(meta), record=_WHOLE_FILE,
                                 field="simulations")


def _read_run(meta: Path) -> dict[str, Any]:
    """The run of the metadata file ``meta`` and its sibling ``simulations/``, as one object
    (:func:`~accordkit.adapters.tau2.read_results_dir`, whatever the file is called)."""
    if meta.name == _RESULTS_JSON:
        return read_results_dir(meta.parent)
    return read_results_dir(meta.parent, meta=meta)
