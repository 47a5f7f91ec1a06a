"""Which batches a scoring run reads: the same plan for every engine.

Inputs are expanded to files; a parquet file becomes one work item per group of row groups
(about ``batch_size`` rows each), any other input one item (a results file, a JSONL file, a
dir-format tau2 run, a hub id). Modes that pool over a whole file (the upstream TCRR modes)
keep each file in one item. A file that cannot be opened gets no item and its error is kept
for the manifest: nothing is left out without saying so.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..store import InputRecord

__all__ = ["WorkItem", "plan_work", "expand_sources", "is_url"]

#: File types read from folders (anything else there, e.g. README.md, is not an input).
_DATA_SUFFIXES = (".parquet", ".json", ".jsonl")


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
    """

    input_index: int
    batch_index: int
    source: str
    kind: str
    row_groups: tuple[int, ...] = ()
    rows: int = 0
    sources: tuple[str, ...] = ()


def is_url(source: str) -> bool:
    """Whether ``source`` is an fsspec URL (``s3://…``, ``gs://…``, ``memory://…``)."""
    return "://" in source and not source.startswith("file://")


def _local(source: str) -> str:
    return source[len("file://"):] if source.startswith("file://") else source


def expand_sources(sources: Sequence[str]) -> list[str]:
    """Files (and hub ids) behind ``sources``, in a stable order.

    A local folder gives the inputs :func:`accordkit.readers.folder.folder_inputs` finds
    in it, the same rule :func:`accordkit.load` reads a folder by: its parquet, JSON and
    JSONL files, sorted by path, a dir-format tau2 run being one input (its metadata file,
    e.g. ``results.json``; its ``simulations/`` files are not inputs of their own). A
    folder with nothing to read stays an input, so that the plan can say so.
    """
    out: list[str] = []
    for src in sources:
        src = str(src)
        if is_url(src):
            import fsspec

            fs, root = fsspec.core.url_to_fs(src)
            protocol = src.split("://", 1)[0]
            if fs.isdir(root):
                found = sorted(p for p in fs.find(root) if p.endswith(_DATA_SUFFIXES))
                out += [f"{protocol}://{p}" for p in found]
            else:
                out.append(src)
            continue
        path = Path(_local(src))
        if path.exists():
            path = path.resolve()       # the manifest names inputs from anywhere
        if path.is_dir():
            from ..readers.folder import folder_inputs

            # a folder with nothing to read stays an input, so the plan can say so
            out += [str(p) for p in folder_inputs(path)] or [str(path)]
        else:
            out.append(str(path) if path.exists() else src)
    return out


def _sha256(source: str) -> str | None:
    h = hashlib.sha256()
    if is_url(source):
        import fsspec

        with fsspec.open(source, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    path = Path(source)
    if not path.is_file():
        return None
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _open_parquet(source: str):
    import pyarrow.parquet as pq

    if is_url(source):
        import fsspec

        fs, path = fsspec.core.url_to_fs(source)
        return pq.ParquetFile(fs.open(path, "rb"))
    return pq.ParquetFile(source)


def plan_work(sources: Sequence[str], *, batch_size: int = 20_000,
              whole_files: bool = False) -> tuple[list[WorkItem], list[InputRecord]]:
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

    Returns
    -------
    items : list of WorkItem
    inputs : list of InputRecord
        One per expanded input, with its sha256, or its error when it cannot be opened.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    items: list[WorkItem] = []
    inputs: list[InputRecord] = []
    parquet: list[tuple[int, int, str]] = []
    for index, source in enumerate(expand_sources(sources)):
        record = InputRecord(index=index, source=source)
        inputs.append(record)
        if not is_url(source) and Path(source).is_dir():
            record.error = f"no {', '.join(_DATA_SUFFIXES)} file in this folder"
            continue
        try:
            record.sha256 = _sha256(source)
        except OSError as exc:
            record.error = f"unreadable: {exc}"
            continue
        if not source.endswith(".parquet"):
            items.append(WorkItem(index, 0, source, "file"))
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
                                  tuple(g for g, _ in batch), sum(n for _, n in batch)))
        if groups:
            parquet.append((index, len(batches), source))
    if parquet:
        # one item for the compare_modes table of every parquet input, named after the first
        index, batch, source = parquet[0]
        items.append(WorkItem(index, batch, source, "modes",
                              sources=tuple(src for _, _, src in parquet)))
    return items, inputs
