"""Any other folder: every ``.json``, ``.jsonl`` and ``.parquet`` file below it (hidden ones
left out), in name order, each read as an input on its own (one bad file is one problem).

:func:`folder_inputs` is the one rule for what a folder holds, used by this reader and by
the scoring plan (:func:`accordkit.engines.plan.expand_sources`): a dir-format tau2 run below
the folder is one input, its metadata file (read with its ``simulations/`` by the
``results-folder`` reader), and the files of its ``simulations/`` and ``artifacts/`` folders
are not inputs of their own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from ..schema import EpisodeValidationError
from .results import RUN_FOLDERS, has_claimant

__all__ = ["Folder", "folder_inputs", "DATA_SUFFIXES"]

#: File types read from folders (anything else there, e.g. README.md, is not an input).
DATA_SUFFIXES = (".json", ".jsonl", ".parquet")


class Folder:
    """A folder of result or episode files."""

    name = "folder"

    def sniff(self, path: Path) -> bool:
        return path.is_dir()

    def read(self, loader: Any, path: Path) -> pa.Table:
        files = folder_inputs(path)
        if not files:
            raise EpisodeValidationError("folder holds no .json, .jsonl or .parquet files",
                                         source=str(path), record="(whole file)",
                                         field="(folder)")
        # each by loader.path: a run's metadata file is known by the folder beside it
        loader.read_ahead(files)
        return loader.concat([loader.guarded(str(p), lambda p=p: loader.path(p))
                              for p in files])


def folder_inputs(path: Path) -> list[Path]:
    """The inputs below the folder ``path``, sorted by path.

    Parameters
    ----------
    path : Path
        A folder.

    Returns
    -------
    list of Path
        Every ``.json``, ``.jsonl`` and ``.parquet`` file below ``path`` (by suffix, any
        case; hidden files and folders left out), except those inside the ``simulations/``
        or ``artifacts/`` folder of a dir-format run: a folder whose ``simulations/`` is
        claimed by a metadata file beside it (see
        :func:`accordkit.readers.results.run_claimants`). The metadata file stands for the
        run; a folder with no claimant keeps its ``simulations/`` files as inputs.
    """
    claimed: dict[Path, bool] = {}

    def in_a_run(file: Path) -> bool:
        for folder in file.relative_to(path).parents:
            if folder.name in RUN_FOLDERS:
                owner = path / folder.parent
                if owner not in claimed:
                    claimed[owner] = has_claimant(owner)
                if claimed[owner]:
                    return True
        return False

    return sorted(p for p in path.rglob("*")
                  if p.is_file() and p.suffix.lower() in DATA_SUFFIXES
                  and not any(part.startswith(".") for part in p.relative_to(path).parts)
                  and not in_a_run(p))
