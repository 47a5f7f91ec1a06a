"""A local dataset folder in hub layout: parquet files named by the configs of its card.

Only a ``README.md`` whose YAML header lists ``configs`` makes a folder a dataset folder; the
folder then gives the same dataset as its copy on the hub. Files are read with pyarrow
rather than :func:`datasets.load_dataset`, whose cache would keep serving an old copy after a
file in the folder changed; one bad file is one problem.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..schema import EpisodeValidationError
from .parquet import read_parquet

__all__ = ["DatasetFolder", "card_configs"]

_WHOLE_FILE = "(whole file)"


class DatasetFolder:
    """A folder whose dataset card names configs and their files."""

    name = "dataset-folder"

    def sniff(self, path: Path) -> bool:
        return path.is_dir() and bool(card_configs(path))

    def read(self, loader: Any, path: Path) -> pa.Table:
        configs = card_configs(path)
        if loader.config is not None and loader.config not in configs:
            raise EpisodeValidationError(
                f"no config {loader.config!r}; the dataset card names {sorted(configs)}",
                source=str(path), record=_WHOLE_FILE, field="(config)")
        parts = []
        for name, splits in configs.items():
            if loader.config is not None and name != loader.config:
                continue
            for split_name, patterns in splits.items():
                if loader.split is not None and split_name != loader.split:
                    continue
                files = sorted({f for pattern in patterns for f in path.glob(pattern)
                                if f.is_file()})
                if not files:
                    loader.problem(EpisodeValidationError(
                        f"config {name}, split {split_name}: no file matches {patterns}",
                        source=str(path), record=_WHOLE_FILE, field="(dataset card)"))
                for f in files:
                    parts.append(loader.guarded(
                        str(f), lambda f=f, n=name, s=split_name: read_parquet(
                            loader, f, origin=str(path), parts=(n, s))))
        return loader.concat(parts)


def card_configs(path: Path) -> dict[str, dict[str, list[str]]]:
    """``config -> split -> path patterns`` from a folder's dataset card (empty: no card).

    Only a ``README.md`` whose YAML header lists ``configs`` makes a folder a dataset folder;
    any other folder is read file by file.
    """
    card = path / "README.md"
    if not card.is_file():
        return {}
    head = card.read_text("utf-8", errors="replace")
    if not head.startswith("---"):
        return {}
    header = head[3:].split("\n---", 1)[0]
    if not re.search(r"^configs:", header, flags=re.MULTILINE):
        return {}
    import yaml

    try:
        meta = yaml.safe_load(header)
    except yaml.YAMLError as exc:
        raise EpisodeValidationError(f"dataset card header is not valid YAML ({exc})",
                                     source=str(card), record=_WHOLE_FILE,
                                     field="configs") from None
    configs: dict[str, dict[str, list[str]]] = {}
    for i, entry in enumerate(meta.get("configs") or []):
        name = entry.get("config_name") if isinstance(entry, dict) else None
        files = entry.get("data_files") if isinstance(entry, dict) else None
        if not isinstance(name, str) or files is None:
            raise EpisodeValidationError("a config needs config_name and data_files",
                                         source=str(card), record=_WHOLE_FILE,
                                         field=f"configs[{i}]")
        splits: dict[str, list[str]] = {}
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
        configs[name] = splits
    return configs
