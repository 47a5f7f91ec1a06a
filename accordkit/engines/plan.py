"""Which batches a scoring run reads: the same plan for every engine.

Inputs are expanded to files; a parquet file becomes one work item per group of row groups
(about ``batch_size`` rows each), any other input one item (a results file, a JSONL file, a
dir-format tau2 run, a hub id). Modes that pool over a whole file (the upstream TCRR modes)
keep each file in one item. A file that cannot be opened gets no item and its error is kept
for the manifest: nothing is left out without saying so.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .._internal.files import file_sha256, stream_sha256
from ..store import InputRecord

__all__ = ["CardPart", "WorkItem", "plan_work", "expand_sources", "is_url"]

#: File types read from folders (anything else there, e.g. README.md, is not an input).
_DATA_SUFFIXES = (".parquet", ".json", ".jsonl")


@dataclass(frozen=True)
class CardPart:
    """What a dataset folder's card says of one of its data files.

    Attributes
    ----------
    config, split : str
        The config and split the card gives the file's rows (their ``config`` and
        ``split`` columns), as :func:`accordkit.load` of the folder sets them.
    folder : str
        The dataset folder: it fills empty ``source`` values, as it does for a load of
        the folder.
    """

    config: str
    split: str
    folder: str


@dataclass(frozen=True)
class WorkItem:
    """One batch to read and score.

    Attributes
    ----------
    input_index : int
        Position of its input (file) in the plan.
    batch_index : int
        Position of the batch within that input.
    source : str
        Path or URL of the file (or hub id).
    kind : {"parquet", "file", "modes"}
        ``"parquet"`` reads ``row_groups`` of a canonical parquet file; ``"file"`` loads the
        whole source with :func:`accordkit.load`; ``"modes"`` computes the
        :func:`accordkit.compare_modes` table of the goal-shift episodes of all parquet
        inputs (``sources``), one ``source`` group at a time across them: the upstream
        modes pool a whole source file, whose rows may lie in several shards.
    row_groups : tuple of int
        For parquet items: the row groups to read.
    rows : int
        Rows in the batch (parquet) or 0 when unknown before reading.
    sources : tuple of str
        For the modes item: the parquet inputs.
    card : CardPart or None
        For a data file of a dataset folder: what its card says of it.
    cards : tuple of (CardPart or None)
        For the modes item: the ``card`` of each of ``sources``.
    """

    input_index: int
    batch_index: int
    source: str
    kind: str
    row_groups: tuple[int, ...] = ()
    rows: int = 0
    sources: tuple[str, ...] = ()
    card: CardPart | None = None
    cards: tuple[CardPart | None, ...] = ()

    def files(self) -> list[tuple[str, CardPart | None, str]]:
        """``(file, card part, origin)`` of each input the item reads: the modes item's
        ``sources``, else its ``source``. ``origin`` fills the file's empty ``source``
        values: its dataset folder, or the file itself (as :func:`accordkit.load` does)."""
        files = list(self.sources or (self.source,))
        cards = list(self.cards) or [self.card] * len(files)
        return [(f, c, c.folder if c else f) for f, c in zip(files, cards, strict=True)]


def is_url(source: str) -> bool:
    """Whether ``source`` is an fsspec URL (``s3://…``, ``gs://…``, ``memory://…``)."""
    return "://" in source and not source.startswith("file://")


def _local(source: str) -> str:
    return source[len("file://"):] if source.startswith("file://") else source


def expand_sources(sources: Sequence[str]) -> list[str]:
    """Files (and hub ids) behind ``sources``, in a stable order.

    A local folder gives the inputs :func:`accordkit.load` reads it by. A dataset folder
    (its ``README.md`` lists ``configs``) gives the data files its card names
    (:func:`accordkit.ingest.formats.dataset_card.dataset_files`). Any other folder gives what
    :func:`accordkit.ingest.formats.folder.folder_inputs` finds in it: its parquet, JSON and
    JSONL files, sorted by path, a dir-format tau2 run being one input (its metadata file,
    e.g. ``results.json``; its ``simulations/`` files are not inputs of their own). A
    folder with nothing to read stays an input, so that the plan can say so.
    """
    return [source for source, _, _ in _expand(sources)]


def _expand(sources: Sequence[str], *, split: str | None = None,
            ) -> list[tuple[str, CardPart | None, str | None]]:
    """``(input, card part, error)`` of each input behind ``sources`` (see
    :func:`expand_sources`); a dataset folder's card problems (an unknown ``split``, a
    config that matches no file) are inputs of their own, naming the folder, with the
    error."""
    out: list[tuple[str, CardPart | None, str | None]] = []
    for src in sources:
        src = str(src)
        if is_url(src):
            import fsspec

            fs, root = fsspec.core.url_to_fs(src)
            protocol = src.split("://", 1)[0]
            if fs.isdir(root):
                found = sorted(p for p in fs.find(root) if p.endswith(_DATA_SUFFIXES))
                out += [(f"{protocol}://{p}", None, None) for p in found]
            else:
                out.append((src, None, None))
            continue
        path = Path(_local(src))
        if path.exists():
            path = path.resolve()       # the manifest names inputs from anywhere
        if path.is_dir():
            from ..ingest.formats.dataset_card import dataset_files, is_dataset_folder
            from ..ingest.formats.folder import folder_inputs
            from ..schema import EpisodeValidationError

            if not is_dataset_folder(path):
                # a folder with nothing to read stays an input, so the plan can say so
                out += ([(str(p), None, None) for p in folder_inputs(path)]
                        or [(str(path), None, None)])
                continue
            try:
                files, problems = dataset_files(path, split=split)
            except EpisodeValidationError as exc:
                out.append((str(path), None, exc.reason))
                continue
            out += [(str(f.path), CardPart(f.config, f.split, str(path)), None)
                    for f in files]
            out += [(str(path), None, p.reason) for p in problems]
        else:
            out.append((str(path) if path.exists() else src, None, None))
    return out


def _read_once(expanded: Sequence[tuple[str, CardPart | None, str | None]]) -> list[int]:
    """For each input, the input that reads its file: itself, or another naming the same
    file (on its own and inside a folder given too, through a link, ...), which is read once
    so that its episodes are not scored twice.

    Of the inputs naming one file, the first that reads it through a dataset card is chosen
    (the card gives it a config and split, and ``split=`` chooses files by the card), else
    the first.

    Examples
    --------
    >>> card = CardPart("default", "train", "/d")
    >>> _read_once([("/d/a.parquet", None, None), ("/d/a.parquet", card, None),
    ...             ("/d/b.parquet", None, None), ("/d/a.parquet", None, None)])
    [1, 1, 2, 1]
    """
    keys = [source if is_url(source) or not Path(source).exists() else os.path.realpath(source)
            for source, _, _ in expanded]
    chosen: dict[str, int] = {}
    for index, ((_, card, error), key) in enumerate(zip(expanded, keys, strict=True)):
        if error is None and (key not in chosen
                              or (card is not None and expanded[chosen[key]][1] is None)):
            chosen[key] = index
    return [index if error is not None else chosen[key]
            for index, ((_, _, error), key) in enumerate(zip(expanded, keys, strict=True))]


def _sha256(source: str) -> str | None:
    """Of a file or fsspec URL's bytes; None for anything else (a hub id)."""
    if is_url(source):
        import fsspec

        with fsspec.open(source, "rb") as f:
            return stream_sha256(f)
    path = Path(source)
    return file_sha256(path) if path.is_file() else None


def _open_parquet(source: str):
    import pyarrow.parquet as pq

    if is_url(source):
        import fsspec

        fs, path = fsspec.core.url_to_fs(source)
        return pq.ParquetFile(fs.open(path, "rb"))
    return pq.ParquetFile(source)


def plan_work(sources: Sequence[str], *, batch_size: int = 20_000,
              whole_files: bool = False, split: str | None = None,
              ) -> tuple[list[WorkItem], list[InputRecord]]:
    """Plan the batches of a scoring run.

    Parameters
    ----------
    sources : list of str
        Files, folders, hub ids or fsspec URLs.
    batch_size : int
        Rows per parquet batch (whole row groups are read, so a batch may hold more when a
        row group is larger).
    whole_files : bool
        One item per file whatever its size (for modes that pool over a file).
    split : str, optional
        Of a dataset folder, only the files of this split (as :func:`accordkit.load`'s
        ``split=``; other inputs are filtered by rows when read).

    Returns
    -------
    items : list of WorkItem
    inputs : list of InputRecord
        One per expanded input, with its sha256, or its error when it cannot be opened; an
        input that repeats an earlier one has no items and names it (``same_as``).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    items: list[WorkItem] = []
    inputs: list[InputRecord] = []
    parquet: list[tuple[int, int, str, CardPart | None]] = []
    expanded = _expand(sources, split=split)
    once = _read_once(expanded)
    for index, (source, card, error) in enumerate(expanded):
        record = InputRecord(index=index, source=source)
        inputs.append(record)
        if error is not None:
            record.error = error
            continue
        if once[index] != index:
            record.same_as = once[index]
            continue
        if not is_url(source) and Path(source).is_dir():
            record.error = f"no {', '.join(_DATA_SUFFIXES)} file in this folder"
            continue
        try:
            if not is_url(source) and Path(source).is_file():
                st = Path(source).stat()
                record.size, record.mtime_ns = st.st_size, st.st_mtime_ns
            record.sha256 = _sha256(source)
        except OSError as exc:
            record.error = f"unreadable: {exc}"
            continue
        if not source.endswith(".parquet"):
            items.append(WorkItem(index, 0, source, "file", card=card))
            continue
        try:
            meta = _open_parquet(source).metadata
        except Exception as exc:  # noqa: BLE001 - any failure to open is this input's error
            record.error = f"unreadable parquet file ({type(exc).__name__}: {exc})"
            continue
        groups = [(g, meta.row_group(g).num_rows) for g in range(meta.num_row_groups)]
        if whole_files:
            batches = [groups] if groups else []
        else:
            batches, current, rows = [], [], 0
            for g, n in groups:
                current.append((g, n))
                rows += n
                if rows >= batch_size:
                    batches.append(current)
                    current, rows = [], 0
            if current:
                batches.append(current)
        for b, batch in enumerate(batches):
            items.append(WorkItem(index, b, source, "parquet",
                                  tuple(g for g, _ in batch), sum(n for _, n in batch),
                                  card=card))
        if groups:
            parquet.append((index, len(batches), source, card))
    if parquet:
        # one item for the compare_modes table of every parquet input, named after the first
        index, batch, source, _ = parquet[0]
        items.append(WorkItem(index, batch, source, "modes",
                              sources=tuple(src for _, _, src, _ in parquet),
                              cards=tuple(c for _, _, _, c in parquet)))
    return items, inputs
