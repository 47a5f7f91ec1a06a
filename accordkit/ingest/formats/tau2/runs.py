"""Dir-format tau2 runs: which files make a run, and reading one as one results object.

A dir-format run is a metadata file (a results object without simulations) next to a
``simulations/`` folder of one JSON file per simulation, and maybe an ``artifacts/`` folder.
A ``simulations/`` folder belongs to the folder's **metadata file**: ``results.json`` when
there is one (the name tau2 writes), else the one JSON file beside it that holds a results
object without simulations (:func:`run_claimants` lists the files that claim it,
:func:`run_owner` picks the one it belongs to). Any other claimant, e.g. one of two such
files sharing one ``simulations/`` folder, is an error naming it (record ``(whole file)``,
field ``simulations``) rather than a run of 0 episodes (:func:`check_owner`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from ....schema import EpisodeValidationError
from ..text import LONE_SURROGATES, replace_lone_surrogates, replaced_note
from .convert import is_results_object

__all__ = ["RUN_FOLDERS", "RESULTS_JSON", "run_claimants", "run_owner", "has_claimant",
           "claims", "check_owner", "run_files", "read_run", "read_results_dir"]

#: The folders of a dir-format run beside its metadata file: the simulations and the audio.
RUN_FOLDERS = ("simulations", "artifacts")
#: The metadata file name tau2 writes; it owns its folder's ``simulations/`` if present.
RESULTS_JSON = "results.json"
_WHOLE_FILE = "(whole file)"


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
    return [f for f in sorted(folder.iterdir()) if claims(f)]


def has_claimant(folder: Path) -> bool:
    """Whether a file of ``folder`` claims its ``simulations/`` folder (that is, whether
    ``folder`` holds a dir-format run: see :func:`run_claimants`)."""
    if not (folder / "simulations").is_dir():
        return False
    return (folder / RESULTS_JSON).is_file() or any(claims(f) for f in folder.iterdir())


def claims(path: Path) -> bool:
    """Whether the file ``path`` claims the ``simulations/`` folder beside it."""
    if path.name.startswith(".") or path.suffix.lower() != ".json" \
            or not (path.parent / "simulations").is_dir() or not path.is_file():
        return False
    return path.name == RESULTS_JSON or _is_metadata(path)


def run_owner(folder: Path) -> Path | None:
    """The metadata file ``folder``'s ``simulations/`` belongs to, or None.

    ``results.json`` when it claims the folder, else the only claimant; None when nothing
    claims it or several files do and none is ``results.json`` (see :func:`run_claimants`).
    """
    claimants = run_claimants(folder)
    if folder / RESULTS_JSON in claimants:
        return folder / RESULTS_JSON
    return claimants[0] if len(claimants) == 1 else None


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


def check_owner(meta: Path) -> None:
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
                  f"each run its own folder (or name its metadata {RESULTS_JSON})")
    raise EpisodeValidationError(reason, source=str(meta), record=_WHOLE_FILE,
                                 field="simulations")


def run_files(meta: Path) -> list[Path]:
    """The files of the run whose metadata file is ``meta``: it, then its simulations."""
    return [meta, *sorted((meta.parent / "simulations").glob("*.json"))]


def read_run(meta: Path) -> dict[str, Any]:
    """The run of the metadata file ``meta`` and its sibling ``simulations/``, as one object
    (:func:`read_results_dir`, whatever the file is called)."""
    if meta.name == RESULTS_JSON:
        return read_results_dir(meta.parent)
    return read_results_dir(meta.parent, meta=meta)


# --------------------------------------------------------------------------- reading a run


class _DirResults(dict):
    """A dir-format run as one results object, with the notes its reading left (``notes``)."""

    notes: list[str]


def _read_json(path: Path, *, record: str, notes: list[str]) -> Any:
    """Parse one JSON file; problems become an error naming the file.

    Lone surrogate escapes are replaced by U+FFFD (as for a single results file), each file
    that held one adding a note to ``notes``.
    """
    try:
        text, lines = replace_lone_surrogates(path.read_bytes().decode("utf-8-sig"))
        obj = json.loads(text)
    except UnicodeDecodeError as exc:
        reason = f"not a text file: byte {exc.start} is not UTF-8 (a binary file?)"
    except json.JSONDecodeError as exc:
        reason = f"invalid or truncated JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
    except RecursionError:
        reason = "JSON nested too deeply"
    else:
        if lines:
            hit = [] if record == "(whole file)" else [record]  # results.json: any simulation
            notes.append(replaced_note(str(path), lines, hit, what=LONE_SURROGATES))
        return obj
    raise EpisodeValidationError(reason, source=str(path), record=record, field="(top level)")


def read_results_dir(path: Path, *, meta: Path | None = None) -> dict[str, Any]:
    """Read a dir-format tau2 run (``results.json`` + ``simulations/*.json``) into one object.

    ``meta`` is the run's metadata file when it is not ``path / "results.json"`` (a run's
    metadata may have another name: see the module docstring).

    A simulation file that cannot be parsed is put in ``simulations`` as the
    :class:`~accordkit.schema.EpisodeValidationError` describing it (its record is the file
    name, which is the simulation id), so that :func:`results_to_episodes` can report it
    alone while the other simulations load.

    Lone surrogate escapes are replaced by U+FFFD; the notes saying where are kept in the
    returned object's ``notes`` attribute, and :func:`converted_simulations` emits each as a
    warning (which the loader turns into a note of the load).

    Raises
    ------
    EpisodeValidationError
        When ``results.json`` cannot be read, or ``simulation_index`` and the simulation
        files disagree.
    """
    notes: list[str] = []
    meta = path / "results.json" if meta is None else meta
    obj = _read_json(meta, record="(whole file)", notes=notes)
    if not is_results_object(obj):
        raise EpisodeValidationError(
            f"not a tau2 {meta.name}: expected a JSON object with 'info'",
            source=str(meta), record="(whole file)", field="(top level)")
    sims: list[Any] = []
    for sim_path in sorted((path / "simulations").glob("*.json")):
        try:
            sims.append(_read_json(sim_path, record=sim_path.stem, notes=notes))
        except EpisodeValidationError as exc:
            sims.append(exc)
    index = obj.get("simulation_index")
    if isinstance(index, list):
        want = {str(e.get("id")) for e in index if isinstance(e, Mapping)}
        have = {str(s.get("id")) if isinstance(s, Mapping) else str(s.record) for s in sims
                if not isinstance(s, EpisodeValidationError)}
        have |= {str(s.record) for s in sims if isinstance(s, EpisodeValidationError)}
        if want != have:
            missing, extra = sorted(want - have), sorted(have - want)
            raise EpisodeValidationError(
                f"simulation_index and simulations/ disagree: missing {missing[:5]}, "
                f"extra {extra[:5]}", source=str(path), record="(whole file)",
                field="simulation_index")
    out = _DirResults(obj)
    out["simulations"] = sims
    out.notes = notes
    return out
