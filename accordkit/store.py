"""The score store: score once, analyse many times.

A store is a folder of parquet files, one subfolder per level, written by ``accordkit score
SOURCE... --out DIR`` (any engine) and read by :func:`read_scores`::

    DIR/
      manifest.json          what was scored: inputs (sha256, rows or error), modes, version
      episodes/00000-00000.parquet      one file per (input, batch): ak.score(level="episode")
      preferences/00000-00000.parquet   level="preference" (AcCoRD)
      shifts/00000-00000.parquet        level="shift" (goal-shift benchmarks)

Every part carries the position of its rows in the inputs (``_input``, ``_batch``, ``_row``),
so reading a store gives the rows in the order ``ak.score`` gives them for the same inputs,
whatever order the workers finished in. ``manifest.json`` is written last, atomically: a
folder without it is an unfinished run and is refused, never read as if complete.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "STORE_VERSION",
    "LEVEL_DIRS",
    "InputRecord",
    "IncompleteStoreError",
    "part_name",
    "write_part",
    "write_manifest",
    "read_manifest",
    "read_scores",
]

#: Version of the store layout; a reader refuses a store of another major version.
STORE_VERSION = "accordkit.scores/1"
#: Level -> subfolder.
LEVEL_DIRS = {"episode": "episodes", "preference": "preferences", "shift": "shifts"}
#: Bookkeeping columns of every part (dropped by :func:`read_scores`).
ORDER_COLUMNS = ("_input", "_batch", "_row")


class IncompleteStoreError(RuntimeError):
    """The folder is not a finished score store (no manifest, or another version)."""


@dataclass
class InputRecord:
    """One input of a store: where it came from and what became of it.

    Attributes
    ----------
    index : int
        Position among the inputs (the ``_input`` column of its rows).
    source : str
        Path or URL as given.
    sha256 : str or None
        Of the file's bytes (None for folders and hub ids).
    episodes : int
        Episodes scored from it.
    skipped : int
        Records skipped as bad (``errors="skip"``).
    batches : int
        Parts written for it.
    error : str or None
        Why the input could not be read at all (its rows are then absent, and said so).
    problems : list of str
        The first reasons records were skipped.
    """

    index: int
    source: str
    sha256: str | None = None
    episodes: int = 0
    skipped: int = 0
    batches: int = 0
    error: str | None = None
    problems: list[str] = field(default_factory=list)


def part_name(input_index: int, batch_index: int) -> str:
    """File name of one part: sorts in input order."""
    return f"{input_index:05d}-{batch_index:05d}.parquet"


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_part(out: str | Path, level: str, frame: Any, *, input_index: int,
               batch_index: int) -> Path | None:
    """Write one scored batch of one level as a parquet part (nothing when it has no rows).

    The frame gets the ordering columns; the file appears atomically (temp + rename), so a
    reader never sees half a part.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if level not in LEVEL_DIRS:
        raise ValueError(f"level must be one of {tuple(LEVEL_DIRS)}, got {level!r}")
    if frame is None or len(frame) == 0:
        return None
    frame = frame.assign(_input=input_index, _batch=batch_index, _row=range(len(frame)))
    table = pa.Table.from_pandas(frame, preserve_index=False)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    path = Path(out) / LEVEL_DIRS[level] / part_name(input_index, batch_index)
    _atomic_write_bytes(path, sink.getvalue().to_pybytes())
    return path


def write_manifest(out: str | Path, inputs: Sequence[InputRecord], *,
                   modes: Mapping[str, Any], engine: str, extra: Mapping[str, Any] | None = None,
                   ) -> Path:
    """Write ``manifest.json`` last: from then on the store is complete."""
    from . import __version__

    manifest = {
        "store_version": STORE_VERSION,
        "accordkit_version": __version__,
        "engine": engine,
        "modes": dict(modes),
        "levels": {level: sorted(p.name for p in (Path(out) / d).glob("*.parquet"))
                   for level, d in LEVEL_DIRS.items()},
        "inputs": [asdict(r) for r in inputs],
        "episodes": sum(r.episodes for r in inputs),
        "skipped": sum(r.skipped for r in inputs),
        "failed_inputs": sum(r.error is not None for r in inputs),
        **dict(extra or {}),
    }
    path = Path(out) / "manifest.json"
    _atomic_write_bytes(path, (json.dumps(manifest, indent=1) + "\n").encode("utf-8"))
    return path


def read_manifest(store: str | Path) -> dict[str, Any]:
    """The manifest of a finished store.

    Raises
    ------
    IncompleteStoreError
        When there is no manifest (a run that did not finish, or not a store) or its
        version is not one this accordkit reads.
    """
    path = Path(store) / "manifest.json"
    if not path.is_file():
        raise IncompleteStoreError(
            f"{store}: not a finished score store (no manifest.json: the scoring run did not "
            "finish, or this is not a store written by `accordkit score --out`)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise IncompleteStoreError(f"{path}: unreadable manifest ({exc})") from None
    version = str(manifest.get("store_version", ""))
    if version.split("/")[0] != STORE_VERSION.split("/")[0] or \
            version.rsplit("/", 1)[-1] != STORE_VERSION.rsplit("/", 1)[-1]:
        raise IncompleteStoreError(
            f"{path}: store version {version!r}; this accordkit reads {STORE_VERSION!r}")
    return manifest


def _parts(store: Path, level: str, manifest: Mapping[str, Any]) -> list[Path]:
    names: Iterable[str] = manifest.get("levels", {}).get(level, [])
    parts = [store / LEVEL_DIRS[level] / n for n in names]
    missing = [p for p in parts if not p.is_file()]
    if missing:
        raise IncompleteStoreError(f"{store}: {len(missing)} part(s) listed in manifest.json "
                                   f"are missing, e.g. {missing[0]}")
    return parts


def read_scores(store: str | Path, *, level: str = "episode",
                columns: Sequence[str] | None = None) -> Any:
    """Read one level of a score store as the frame ``ak.score`` would return.

    Parameters
    ----------
    store : str or Path
        The folder given to ``accordkit score --out``.
    level : {"episode", "preference", "shift"}
    columns : list of str, optional
        Read only these columns (the id columns are always read).

    Returns
    -------
    pandas.DataFrame
        Rows in input order; an empty frame with the id columns when the level has none.

    Examples
    --------
    >>> import accordkit as ak
    >>> episodes = ak.read_scores("scores/")                      # doctest: +SKIP
    >>> shifts = ak.read_scores("scores/", level="shift")         # doctest: +SKIP
    """
    import pandas as pd
    import pyarrow.parquet as pq

    from .schema import ID_COLUMNS

    if level not in LEVEL_DIRS:
        raise ValueError(f"level must be one of {tuple(LEVEL_DIRS)}, got {level!r}")
    store = Path(store)
    manifest = read_manifest(store)
    parts = _parts(store, level, manifest)
    if not parts:
        return pd.DataFrame(columns=list(ID_COLUMNS))
    want = None
    if columns is not None:
        want = list(dict.fromkeys([*ID_COLUMNS, *columns, *ORDER_COLUMNS]))
    frames = []
    for p in parts:
        table = pq.read_table(p)
        if want is not None:
            table = table.select([c for c in want if c in table.column_names])
        frames.append(table.to_pandas())
    # pandas' concat, as ak.score joins benchmark families: a column one part lacks is
    # missing (NA of the other parts' dtype) there, never coerced to another type.
    frame = pd.concat(frames, ignore_index=True, sort=False)
    frame = frame.sort_values(list(ORDER_COLUMNS), kind="stable").reset_index(drop=True)
    return frame.drop(columns=list(ORDER_COLUMNS))
