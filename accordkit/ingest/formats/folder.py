"""What a folder holds: the plan's rules for local paths.

:func:`folder_inputs` is the one rule for what a plain folder holds: every ``.json``,
``.jsonl`` and ``.parquet`` file below it (hidden ones left out), in name order, a dir-format
tau2 run below the folder being one input, its metadata file (read with its ``simulations/``
by the ``results-folder`` reader), and the files of its ``simulations/`` and ``artifacts/``
folders not inputs of their own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .tau2.runs import RESULTS_JSON, RUN_FOLDERS, claims, has_claimant, run_files

__all__ = ["folder_inputs", "DATA_SUFFIXES", "RunRule", "DatasetFolderRule", "FolderRule",
           "is_whole_run"]

#: File types read from folders (anything else there, e.g. README.md, is not an input).
DATA_SUFFIXES = (".json", ".jsonl", ".parquet")


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
        :func:`accordkit.ingest.formats.tau2.runs.run_claimants`). The metadata file stands
        for the run; a folder with no claimant keeps its ``simulations/`` files as inputs.
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


def is_whole_run(folder: Path) -> bool:
    """Whether ``folder`` holds a ``results.json`` run and no other input of its own."""
    # its only input is results.json: no other file beside simulations/ claims it
    return has_claimant(folder) and folder_inputs(folder) == [folder / RESULTS_JSON]


class RunRule:
    """A dir-format tau2 run: its folder (holding nothing else) or a file that claims a
    sibling ``simulations/`` folder. One input, read by the ``results-folder`` reader."""

    name = "results-folder"

    def sniff(self, path: Path) -> bool:
        if path.is_dir():
            return is_whole_run(path)
        return claims(path)

    @staticmethod
    def run(path: Path) -> tuple[Path, Path]:
        """The run's folder (its name) and metadata file."""
        folder = path if path.is_dir() else path.parent
        return folder, (folder / RESULTS_JSON if path.is_dir() else path)

    def read(self, loader: Any, path: Path) -> Any:
        from ...ingest.inputs import Input
        from .tau2 import ResultsRun

        folder, meta = self.run(path)
        run = Input(kind="run", name=str(folder), path=str(meta))
        return loader.cached_files(str(folder), lambda: run_files(meta),
                                   lambda reader: reader.run(ResultsRun(), run))


class DatasetFolderRule:
    """A folder whose dataset card names configs: the data files the card names, each an
    input with the config and split the card gives it (:mod:`.dataset_card`)."""

    name = "dataset-folder"

    def sniff(self, path: Path) -> bool:
        from .dataset_card import is_dataset_folder

        return is_dataset_folder(path)

    def read(self, loader: Any, path: Path) -> Any:
        from .dataset_card import data_file_input, dataset_files, read_data_file

        files, problems = dataset_files(path, config=loader.config, split=loader.split)
        for problem in problems:
            loader.problem(problem)
        tables = []
        for file in files:
            input = data_file_input(file, origin=str(path))
            tables.append(loader.guarded(
                input.name, lambda input=input: loader.run_with(read_data_file, input)))
        return loader.concat(tables)


class FolderRule:
    """Any other folder: every ``.json``, ``.jsonl`` and ``.parquet`` file below it (hidden
    ones left out), in name order, each an input of its own (one bad file is one problem)."""

    name = "folder"

    def sniff(self, path: Path) -> bool:
        return path.is_dir()

    def read(self, loader: Any, path: Path) -> Any:
        from ...schema import EpisodeValidationError

        files = folder_inputs(path)
        if not files:
            raise EpisodeValidationError("no .parquet, .json, .jsonl file in this folder",
                                         source=str(path), record="(whole file)",
                                         field="(folder)")
        # each by loader.path: a run's metadata file is known by the folder beside it
        loader.read_ahead(files)
        return loader.concat([loader.guarded(str(p), lambda p=p: loader.path(p))
                              for p in files])
