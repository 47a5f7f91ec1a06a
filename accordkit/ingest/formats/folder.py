"""What a local path holds: the plan's rules (:mod:`accordkit.ingest.plan`), asked in order.

Each rule has ``name``, ``sniff(path)`` and ``inputs(path, ...)``: the inputs the path
stands for.

:func:`folder_inputs` is the one rule for what a plain folder holds: every ``.json``,
``.jsonl``, ``.parquet`` and ``.eval`` (Inspect) file below it (hidden ones left out), in name order, a dir-format
tau2 run below the folder being one input, its metadata file (read with its ``simulations/``
by the ``results-folder`` reader), and the files of its ``simulations/`` and ``artifacts/``
folders not inputs of their own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from ...schema import EpisodeValidationError
from ..context import ReadOptions
from ..inputs import Input, Problem
from .dataset_card import data_file_input, dataset_files, is_dataset_folder
from .tau2.runs import RESULTS_JSON, RUN_FOLDERS, claims, has_claimant

__all__ = ["folder_inputs", "DATA_SUFFIXES", "RunRule", "DatasetFolderRule", "FolderRule",
           "is_whole_run"]

#: File types read from folders (anything else there, e.g. README.md, is not an input).
DATA_SUFFIXES = (".json", ".jsonl", ".parquet", ".eval")


def folder_inputs(path: Path) -> list[Path]:
    """The inputs below the folder ``path``, sorted by path.

    Parameters
    ----------
    path : Path
        A folder.

    Returns
    -------
    list of Path
        Every ``.json``, ``.jsonl``, ``.parquet`` and ``.eval`` file below ``path`` (by suffix, any
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
    sibling ``simulations/`` folder. One input, read by the ``results-folder`` reader and
    named by the run's folder, whatever its metadata file is called."""

    name = "results-folder"

    def sniff(self, path: Path) -> bool:
        if path.is_dir():
            return is_whole_run(path)
        return claims(path)

    def inputs(self, path: Path, *, source: str, **_: Any) -> list[Input]:
        folder = path if path.is_dir() else path.parent
        meta = folder / RESULTS_JSON if path.is_dir() else path
        return [Input(kind="run", name=str(folder), path=str(meta),
                      real=os.path.realpath(meta), source=source)]


class DatasetFolderRule:
    """A folder whose dataset card names configs: the card's problems (a config or split
    that matches no file), then the data files the card names, each an input with the
    config and split the card gives it (:mod:`.dataset_card`)."""

    name = "dataset-folder"

    def sniff(self, path: Path) -> bool:
        return is_dataset_folder(path)

    def inputs(self, path: Path, *, options: ReadOptions, source: str, **_: Any) -> list[Input]:

        try:
            files, problems = dataset_files(path, config=options.config, split=options.split)
        except EpisodeValidationError as exc:   # an unknown config or split, a bad card
            return [Input.for_problem(exc, name=str(path), source=source)]
        out = [Input.for_problem(p, name=str(path), source=source) for p in problems]
        for file in files:
            input = data_file_input(file, origin=str(path), source=source)
            out.append(msgspec.structs.replace(input, real=os.path.realpath(file.path)))
        return out


class FolderRule:
    """Any other folder: every ``.json``, ``.jsonl``, ``.parquet`` and ``.eval`` file below it (hidden
    ones left out), in name order, each an input of its own (one bad file is one problem;
    a run's metadata file is known by the folder beside it)."""

    name = "folder"

    def sniff(self, path: Path) -> bool:
        return path.is_dir()

    def inputs(self, path: Path, *, source: str, plan_path: Any, **_: Any) -> list[Input]:
        files = folder_inputs(path)
        if not files:
            return [Input(kind="problem", name=str(path), source=source, problem=Problem(
                "no .parquet, .json, .jsonl file in this folder", "(whole file)", "(folder)"))]
        return [i for f in files for i in plan_path(f)]
