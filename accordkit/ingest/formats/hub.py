"""A Hugging Face hub dataset, by id (``org/name``), read with :func:`datasets.load_dataset`.

Every config and split is read (or the ones asked for), with ``config`` and ``split`` as
columns; ``revision=`` pins a branch, tag or commit. A path that exists locally is never a
hub id.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ...schema import EpisodeValidationError
from ..check import Part, table_part
from ..context import ReadContext
from ..contract import guarded
from ..inputs import Input
from .parquet import with_card

__all__ = ["Hub", "cached_snapshot", "is_hub_id"]

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
#: File name endings that mark a path, never a hub repository name.
_FILE_SUFFIXES = (".json", ".jsonl", ".parquet")


def is_hub_id(source: str | Path) -> bool:
    """Whether ``source`` should be read from the Hugging Face hub.

    Only when it has the form ``org/name``, does not end like a file name (``.json``,
    ``.jsonl``, ``.parquet``) and no such local path exists.

    Examples
    --------
    >>> is_hub_id("org/some-dataset")
    True
    >>> is_hub_id("data/does/not/exist.json")
    False
    >>> is_hub_id("results/run.json")
    False
    """
    text = str(source)
    return (bool(_HUB_ID.match(text)) and not text.lower().endswith(_FILE_SUFFIXES)
            and not Path(text).exists())


def _path_hint(source: str) -> str:
    """A hint for a hub id that failed to load while its ``org`` is a local folder: it may
    be a mistyped path (``data/sampel`` for ``data/sample``)."""
    parent = Path(source).parent
    if parent != Path(".") and parent.is_dir():
        return (f"; a folder {str(parent)!r} exists here: if {source!r} was meant as a path "
                "in it, no such file or folder exists")
    return ""


class Hub:
    """A dataset on the Hugging Face hub (or the hub named by ``HF_ENDPOINT``)."""

    name = "hub"

    cached = False

    def sniff(self, input: Input) -> bool:
        return input.kind == "hub"

    def read(self, input: Input, ctx: ReadContext) -> Iterator[Part]:
        import datasets

        from ..._internal.arrow import arrow_table

        source, options = input.name, ctx.options
        if _offline():
            # datasets offline knows neither the configs (it asks for "default") nor the
            # revision (it serves whichever was cached last): read the snapshot of the
            # asked-for commit that huggingface_hub keeps, as a dataset folder
            snapshot = _offline_snapshot(source, options.revision)
            if snapshot is not None:
                yield from _read_snapshot(ctx, source, snapshot)
                return
            # no card naming configs (a repository of plain data files): datasets' own
            # cache serves its one "default" config

        try:
            configs = ([options.config] if options.config else
                       datasets.get_dataset_config_names(source, revision=options.revision))
        except Exception as exc:  # noqa: BLE001 - datasets raises many types here
            raise _hub_error(source, exc) from None
        for name in configs:
            try:
                loaded = datasets.load_dataset(source, name, split=options.split,
                                               revision=options.revision)
            except Exception as exc:  # noqa: BLE001
                raise _hub_error(source, exc, config=name) from None
            splits = {options.split: loaded} if options.split else dict(loaded)
            for split_name, ds in splits.items():
                table = with_card(arrow_table(ds), (name, split_name))
                where = f"{source} (config {name}, split {split_name})"
                part = table_part(table, ctx, source=where, origin=source, select=False)
                part.name = where
                yield part


def _offline() -> bool:
    """Whether the hub libraries run offline (they read the environment once, on import)."""
    import datasets.config as dconfig
    import huggingface_hub.constants as hconst

    return bool(hconst.HF_HUB_OFFLINE or dconfig.HF_HUB_OFFLINE
                or getattr(dconfig, "HF_DATASETS_OFFLINE", False))


_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def cached_snapshot(source: str, revision: str | None) -> Path:
    """The local snapshot folder of ``source`` at ``revision`` in huggingface_hub's cache.

    ``revision`` (default ``main``) is a branch or tag resolved through the cache's
    ``refs/``, or a full commit hash.

    Raises
    ------
    EpisodeValidationError
        The revision is not in the cache (the message lists what is).
    """
    from huggingface_hub import constants

    org, name = source.split("/", 1)
    root = Path(constants.HF_HUB_CACHE) / f"datasets--{org}--{name}"
    rev = revision or "main"
    ref = root / "refs" / rev
    commit = ref.read_text().strip() if ref.is_file() else (rev if _COMMIT.match(rev) else None)
    snapshot = root / "snapshots" / commit if commit else None
    if snapshot is None or not snapshot.is_dir():
        refs = sorted(p.name for p in (root / "refs").glob("*")) if root.is_dir() else []
        have = (f"the cache holds {', '.join(refs)}" if refs
                else "it was never downloaded here")
        raise EpisodeValidationError(
            f"HF_HUB_OFFLINE is set (the accordkit command sets it unless told otherwise), "
            f"and revision {rev!r} is not in the local cache ({have}); HF_HUB_OFFLINE=0 "
            f"downloads it{_path_hint(source)}", source=source, record="(whole file)",
            field="(dataset)")
    return snapshot


def _offline_snapshot(source: str, revision: str | None) -> Path | None:
    """The cached snapshot to read offline, or None to leave it to ``datasets``' cache.

    A pinned ``revision`` that is not cached is an error (``datasets`` would serve another
    one); so is a snapshot whose card names configs. Without a pin, a dataset never
    downloaded, or one whose card names no configs, is left to ``datasets``.
    """
    from .dataset_card import is_dataset_folder

    try:
        snapshot = cached_snapshot(source, revision)
    except EpisodeValidationError:
        if revision is not None:
            raise
        return None
    return snapshot if is_dataset_folder(snapshot) else None


def _read_snapshot(ctx: ReadContext, source: str, snapshot: Path) -> Iterator[Part]:
    """``source`` read offline from its cached snapshot: the files its card names, each with
    its config and split, and the hub id as the source of rows that name none (as online).
    One file that cannot be read is that file's problem; the others still load."""
    from .dataset_card import data_file_input, dataset_files, read_data_file

    files, problems = dataset_files(snapshot, config=ctx.options.config,
                                    split=ctx.options.split)
    for problem in problems:
        ctx.problem(EpisodeValidationError(
            f"{problem.reason} (in the cached snapshot {snapshot.name[:12]}: only the files "
            "downloaded before are there)", source=source, record="(whole file)",
            field="(dataset)"))
    for file in files:
        input = data_file_input(file, origin=source,
                                name=f"{source} ({file.path.relative_to(snapshot)})")
        for part in guarded(ctx, input.name, lambda input=input: read_data_file(input, ctx)):
            part.name = input.name
            yield part


def _hub_error(path: str, exc: Exception, config: str | None = None) -> EpisodeValidationError:
    hint = ""
    if _offline():
        hint = (" (HF_HUB_OFFLINE is set, as the accordkit command sets it by default: only "
                "datasets already in the local cache can be read; HF_HUB_OFFLINE=0 downloads)")
    where = f"config {config}: " if config else ""
    return EpisodeValidationError(
        f"{where}could not load the dataset: {type(exc).__name__}: {exc}{hint}"
        f"{_path_hint(path)}",
        source=path, record="(whole file)", field="(dataset)")

