"""tau2-bench / AgentChangeBench results: a results file, a dir-format run, a parsed object.

Three readers share the converter of :mod:`accordkit.adapters.tau2`:

* ``results-file`` (kind *file*): a file whose first byte is ``{``, decoded straight from its
  bytes by the typed decoder of :mod:`accordkit.adapters.tau2_format`; whatever that decoder
  refuses is left to the ``json`` reader (``read`` returns None), which names the problem;
* ``results-folder`` (kind *folder*): ``results.json`` + ``simulations/<id>.json`` (a folder
  holding nothing else: one holding more is read input by input, see
  :func:`accordkit.readers.folder.folder_inputs`), or the ``results.json`` of such a folder;
* ``results`` (kind *document*): a parsed JSON object ``{info, tasks, simulations}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from ..adapters.tau2 import is_results_object, read_results_dir
from ..adapters.tau2_format import decode_results

__all__ = ["ResultsFile", "ResultsFolder", "ResultsDocument", "RUN_FOLDERS", "has_claimant"]

#: The folders of a dir-format run beside its metadata file: the simulations and the audio.
RUN_FOLDERS = ("simulations", "artifacts")


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
    """A dir-format run: ``results.json`` next to a ``simulations/`` folder."""

    name = "results-folder"

    def sniff(self, path: Path) -> bool:
        if path.is_dir():
            return _is_whole_run(path)
        return path.name == "results.json" and has_claimant(path.parent)

    def read(self, loader: Any, path: Path) -> pa.Table:
        folder = path if path.is_dir() else path.parent
        files = [folder / "results.json", *sorted((folder / "simulations").glob("*.json"))]
        return loader.cached_files(
            str(folder), files,
            lambda reader: reader.results(read_results_dir(folder), str(folder)))


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


def has_claimant(folder: Path) -> bool:
    """Whether ``folder`` holds a dir-format run: ``results.json`` beside ``simulations/``."""
    return (folder / "results.json").is_file() and (folder / "simulations").is_dir()


def _is_whole_run(folder: Path) -> bool:
    """Whether ``folder`` holds a ``results.json`` run and no other input of its own."""
    from .folder import folder_inputs

    return has_claimant(folder) and folder_inputs(folder) == [folder / "results.json"]
