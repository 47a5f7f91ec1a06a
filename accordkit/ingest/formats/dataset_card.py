"""A dataset folder in hub layout: the data files its card names, and reading one of them.

Only a ``README.md`` whose YAML header lists ``configs`` makes a folder a dataset folder; the
folder then gives the same dataset as its copy on the hub. Each config's files are found as
:func:`datasets.load_dataset` finds them (its own pattern resolution: ``**`` matches files at
any depth, hidden files and folders and ``__pycache__``-like folders are left out unless a
pattern names them, a config with ``data_dir`` and no ``data_files`` uses the hub's default
split patterns below that folder), then read file by file: parquet with pyarrow, ``.json`` /
``.jsonl`` as canonical episode text, each file by its own format. Files are not read with
:func:`datasets.load_dataset`, whose cache would keep serving an old copy after a file in the
folder changed; one bad file is one problem.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...schema import EpisodeValidationError
from ..check import Part
from ..context import ReadContext
from ..inputs import Card, Input
from .canonical import read_canonical_text
from .parquet import read_parquet

__all__ = ["DataFile", "card_configs", "data_files", "dataset_files", "is_dataset_folder",
           "read_data_file", "data_file_input"]

_WHOLE_FILE = "(whole file)"
_CARD = "README.md"
#: Data file formats read from a dataset folder, by file name ending; a file of any other
#: format a pattern matches is left out (the hub reads one format per dataset, and leaves
#: out the files of other formats).
_READ_AS = {".parquet": "parquet", ".jsonl": "json", ".json": "json"}


@dataclass(frozen=True)
class DataFile:
    """One data file of a dataset folder, with the config and split the card gives it."""

    path: Path
    config: str
    split: str


def dataset_files(path: Path, *, config: str | None = None, split: str | None = None,
                  ) -> tuple[list[DataFile], list[EpisodeValidationError]]:
    """The data files a dataset folder's card names: the one rule for what it holds.

    Used by the plan (:mod:`accordkit.ingest.plan`) for ``accordkit.load(folder)`` and
    ``accordkit score folder`` alike, and by the hub reader offline (a cached snapshot).

    Parameters
    ----------
    path : Path
        A folder whose ``README.md`` lists ``configs``.
    config, split : str, optional
        Only the files of this config / split.

    Returns
    -------
    files : list of DataFile
        In the card's order of configs and splits, each split's files as
        :func:`data_files` orders them.
    problems : list of EpisodeValidationError
        A config or split the card names but no file matches (the rest is still read).

    Raises
    ------
    EpisodeValidationError
        ``config`` or ``split`` is not one the card names (the error lists those it does).
    """
    configs = card_configs(path)
    if config is not None and config not in configs:
        raise EpisodeValidationError(
            f"no config {config!r}; the dataset card names {sorted(configs)}",
            source=str(path), record=_WHOLE_FILE, field="(config)")
    chosen = {name: splits for name, splits in configs.items()
              if config is None or name == config}
    if split is not None:
        known = list(dict.fromkeys(s for splits in chosen.values() for s in splits))
        if split not in known:
            where = (f"config {config!r} of the dataset card has" if config
                     else "the dataset card names")
            raise EpisodeValidationError(
                f"no split {split!r}; {where} split(s) {known}", source=str(path),
                record=_WHOLE_FILE, field="(split)")
    files: list[DataFile] = []
    problems: list[EpisodeValidationError] = []
    for name, splits in chosen.items():
        if not splits:
            problems.append(EpisodeValidationError(
                f"config {name}: no data files found (no data_files, and none below its "
                "data_dir by the hub's default split names)", source=str(path),
                record=_WHOLE_FILE, field="(dataset card)"))
        for split_name, patterns in splits.items():
            if split is not None and split_name != split:
                continue
            found = data_files(path, patterns)
            if not found:
                problems.append(EpisodeValidationError(
                    f"config {name}, split {split_name}: no .parquet, .json or .jsonl file "
                    f"matches {patterns}", source=str(path), record=_WHOLE_FILE,
                    field="(dataset card)"))
            files += [DataFile(f, name, split_name) for f in found]
    return files, problems


def is_dataset_folder(path: Path) -> bool:
    """Whether ``path`` is a folder whose dataset card lists ``configs``."""
    return path.is_dir() and _card_header(path) is not None


def read_data_file(input: Input, ctx: ReadContext) -> Iterator[Part]:
    """One data file of a dataset folder (``input.card`` holds its config, split and
    folder), read by its own format, known by its name's ending."""
    if _READ_AS[_suffix(Path(str(input.path)))] == "parquet":
        yield read_parquet(input, ctx)
    else:
        yield from read_canonical_text(input, ctx)


def data_file_input(file: DataFile, *, origin: str, name: str | None = None,
                    source: str = "") -> Input:
    """The input of one data file of a dataset folder: ``origin`` (the folder, or a hub id)
    fills its rows' empty ``source`` values; ``name`` is how reports name it (default: its
    path)."""
    return Input(name=name or str(file.path), path=str(file.path), source=source or origin,
                 card=Card(file.config, file.split, origin), origin=origin)


def _suffix(path: Path) -> str:
    return path.suffix.lower()


def data_files(folder: Path, patterns: list[str]) -> list[Path]:
    """The data files of a dataset folder that ``patterns`` name, as the hub finds them.

    Patterns are resolved by :func:`datasets.data_files.resolve_pattern` (relative to
    ``folder``): ``*`` matches within a folder name, ``**`` any depth; hidden files and
    folders, ``__``-folders and the card itself are left out unless a pattern names them.
    Only ``.parquet``, ``.json`` and ``.jsonl`` files are kept. Files come in the order of
    the patterns, each pattern's matches sorted, each file once.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for name in ("data/a/x.parquet", "data/y.jsonl", "data/.cache/z.parquet", "notes.txt"):
    ...     (root / name).parent.mkdir(parents=True, exist_ok=True)
    ...     (root / name).touch()
    >>> [str(p.relative_to(root)) for p in data_files(root, ["data/**"])]
    ['data/a/x.parquet', 'data/y.jsonl']
    """
    from datasets.data_files import resolve_pattern

    found: dict[Path, None] = {}
    for pattern in patterns:
        try:
            matched = resolve_pattern(pattern, base_path=folder.as_posix())
        except FileNotFoundError:
            continue
        for name in sorted(matched):
            f = Path(name)
            if _suffix(f) in _READ_AS and f.is_file():
                found.setdefault(f, None)
    return list(found)


def _card_header(path: Path) -> str | None:
    """The YAML header of a folder's dataset card when it lists ``configs``, else None."""
    card = path / _CARD
    if not card.is_file():
        return None
    # utf-8-sig: a card saved with a byte-order mark is a card all the same
    head = card.read_text("utf-8-sig", errors="replace")
    if not head.startswith("---"):
        return None
    header = head[3:].split("\n---", 1)[0]
    if not re.search(r"^configs:", header, flags=re.MULTILINE):
        return None
    return header


def card_configs(path: Path) -> dict[str, dict[str, list[str]]]:
    """``config -> split -> path patterns`` from a folder's dataset card (empty: no card).

    Only a ``README.md`` whose YAML header lists ``configs`` makes a folder a dataset folder;
    any other folder is read file by file. Patterns are relative to the folder: a config's
    ``data_dir`` is put before its ``data_files``, and a config with ``data_dir`` (or
    neither) and no ``data_files`` gets the hub's default split patterns
    (:func:`datasets.data_files.get_data_patterns`: ``train`` / ``test`` / ... by file name)
    for that folder.
    """
    header = _card_header(path)
    if header is None:
        return {}
    import yaml

    card = path / _CARD
    try:
        meta = yaml.safe_load(header)
    except yaml.YAMLError as exc:
        raise EpisodeValidationError(f"dataset card header is not valid YAML ({exc})",
                                     source=str(card), record=_WHOLE_FILE,
                                     field="configs") from None
    configs: dict[str, dict[str, list[str]]] = {}
    entries = meta.get("configs") if isinstance(meta, dict) else None
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        entry = entry if isinstance(entry, dict) else {}
        name, files, data_dir = (entry.get("config_name"), entry.get("data_files"),
                                 entry.get("data_dir"))
        if not isinstance(name, str) or (data_dir is not None and not isinstance(data_dir, str)):
            raise EpisodeValidationError("a config needs config_name, and data_files or data_dir",
                                         source=str(card), record=_WHOLE_FILE,
                                         field=f"configs[{i}]")
        prefix = data_dir.strip("/") + "/" if data_dir and data_dir.strip("/") else ""
        if data_dir is not None and (Path(data_dir).is_absolute() or ".." in Path(data_dir).parts):
            raise EpisodeValidationError("data_dir must be a folder inside the dataset folder",
                                         source=str(card), record=_WHOLE_FILE,
                                         field=f"configs[{i}].data_dir")
        splits = (_default_splits(path / prefix) if files is None
                  else _card_splits(files, card=card, i=i))
        configs[name] = {split: [prefix + p for p in patterns]
                         for split, patterns in splits.items()}
    return configs


def _card_splits(files: Any, *, card: Path, i: int) -> dict[str, list[str]]:
    """``split -> patterns`` of a config's ``data_files`` (a pattern, a list of patterns, or a
    list of ``{split, path}``; a pattern without a split is ``train``)."""
    splits: dict[str, list[str]] = {}
    if isinstance(files, dict):
        files = [{"split": k, "path": v} for k, v in files.items()]
    for item in files if isinstance(files, list) else [files]:
        if isinstance(item, str):
            splits.setdefault("train", []).append(item)
            continue
        if not isinstance(item, dict) or not isinstance(item.get("path"), str | list):
            raise EpisodeValidationError("data_files entries need a split and a path",
                                         source=str(card), record=_WHOLE_FILE,
                                         field=f"configs[{i}].data_files")
        paths = item["path"] if isinstance(item["path"], list) else [item["path"]]
        splits.setdefault(str(item.get("split", "train")), []).extend(map(str, paths))
    return splits


def _default_splits(base: Path) -> dict[str, list[str]]:
    """The hub's default ``split -> patterns`` for the files below ``base`` (none: empty)."""
    from datasets.data_files import EmptyDatasetError, get_data_patterns

    if not base.is_dir():
        return {}
    try:
        return {str(split): list(patterns)
                for split, patterns in get_data_patterns(base.as_posix()).items()}
    except (EmptyDatasetError, FileNotFoundError):
        return {}
