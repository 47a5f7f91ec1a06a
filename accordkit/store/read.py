"""Reading a score store back: the frames ``ak.score`` gives, every part checked against the
manifest first (:mod:`accordkit.store.format`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..benchmarks import scored_by
from .format import (
    _DTYPES_KEY,
    _LATER_LEVELS,
    LEVEL_DIRS,
    ORDER_COLUMNS,
    RepeatedEpisodesError,
    _parts,
    read_manifest,
)
from .inputs import warn_about_inputs

__all__ = ["read_scores", "read_modes"]


def _check_unique_episodes(store: Path, parts: Sequence[Path], ids: Any) -> None:
    """:class:`StoreIntegrityError` naming an episode the episode level holds twice, and
    the parts holding it (``ids``: the level's ``episode_id`` values, parts in order)."""
    import pandas as pd

    ids = pd.Series(ids)
    dup = ids.duplicated(keep=False)
    if not dup.any():
        return
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    first = ids[dup].iloc[0]
    holders = [p.name for p in parts if pc.any(pc.equal(
        pq.read_table(p, columns=["episode_id"]).column("episode_id"), first)).as_py()]
    raise RepeatedEpisodesError(
        f"score store {store}: episode {first!r} is in it more than once (parts "
        f"{', '.join(holders)}; {int(ids[dup].nunique())} episode(s) in all), and every "
        "table would count it twice: the same episode in several inputs, such as "
        "checkpoints of one run, or a manifest listing another store's parts; report from "
        "the sources instead (accordkit report --source ...), which merges the copies as "
        "ak.load does")



def read_scores(store: str | Path, *, level: str | None = "episode",
                columns: Sequence[str] | None = None, exact_dtypes: bool = True,
                categorical: bool = False, check_inputs: bool = True,
                ids: Sequence[str] | None = None) -> Any:
    """Read a score store back as the frames ``ak.score`` would return.

    Parameters
    ----------
    store : str or Path
        The folder given to ``accordkit score --out`` (or :func:`write_scores`).
    level : {"episode", "preference", "shift", "action", "review", "review_error"} or None
        One level as a frame; None gives a dict of the episode, preference and shift levels
        (the action diff and the reviews are read by name, ``level="action"`` ...).
    columns : list of str, optional
        Read only these columns (the id columns are always read).
    exact_dtypes : bool, default True
        Give text columns the Python-object dtype ``ak.score`` gives them (equal frames).
        False keeps pandas' Arrow-backed strings: the same values in a fraction of the
        memory, which is what a report over millions of rows needs.
    categorical : bool, default False
        Give every text column as a ``category`` whose categories are its distinct values
        in sorted order (implies ``exact_dtypes=False``): the same values, sorted, grouped
        and compared alike, in still less memory where values repeat. A preference frame
        of a million AcCoRD episodes (6.2 million rows) takes 0.26 GB this way against
        1.6 GB as strings. String arithmetic (``a + " / " + b``) needs ``.astype(str)``.
    ids : list of str, optional
        With ``columns``: read only these of the id columns (default: all of them;
        ``benchmark`` is always read, and ``episode_id`` at the episode level). A
        table that groups preferences by model, method and dynamic needs neither the
        episode nor the task ids: six million preference rows then read in about a quarter
        of the time and a third of the memory.
    check_inputs : bool, default True
        Warn about the store's inputs: those that could not be read or scored, and those
        whose file changed since it was scored (a file of the size and modification time
        it was scored at is not read; any other is hashed again). False when the caller
        says so itself (the report does, on its index page).

    Returns
    -------
    pandas.DataFrame or dict of str to DataFrame
        Rows in input order; an empty frame with the id columns when the level has none.

    Raises
    ------
    IncompleteStoreError
        Not a finished store, or a part missing.
    StoreIntegrityError
        The manifest and the parts disagree, whatever ``check_inputs`` says: a part name
        that is not a plain name inside the level's folder (``..``, an absolute path, a
        link; a level folder or manifest that is a link), a part listed twice or without its sha256, a part whose sha256 or row
        count differs from the manifest, an episode count other than the parts hold, or
        (:class:`RepeatedEpisodesError`) an episode in the store twice.

    Warns
    -----
    PartialStoreWarning
        With ``check_inputs``, when inputs of the store could not be read or scored: their
        episodes are absent; or when scoring left episodes out of ``level`` (the action
        diff of arguments nested too deep): they are absent from it alone.
    StoreChangedWarning
        With ``check_inputs``, when an input changed since it was scored.

    Examples
    --------
    >>> import accordkit as ak
    >>> episodes = ak.read_scores("scores/")                      # doctest: +SKIP
    >>> shifts = ak.read_scores("scores/", level="shift")         # doctest: +SKIP
    """
    if level is None:
        manifest = read_manifest(store)
        if check_inputs:
            warn_about_inputs(Path(store), manifest)
        return {lv: read_scores(store, level=lv, columns=columns, exact_dtypes=exact_dtypes,
                                categorical=categorical, check_inputs=False, ids=ids)
                for lv in LEVEL_DIRS if lv not in _LATER_LEVELS}
    import pandas as pd
    import pyarrow.parquet as pq

    from ..names import ID_COLUMNS

    if level not in LEVEL_DIRS:
        raise ValueError(f"level must be one of {tuple(LEVEL_DIRS)}, got {level!r}")
    if ids is not None:
        unknown = [c for c in ids if c not in ID_COLUMNS]
        if unknown or columns is None:
            raise ValueError(f"ids must be id columns {tuple(ID_COLUMNS)} and come with "
                             f"columns; got ids={list(ids)!r}, columns={columns!r}")
        # the benchmark orders the columns; an episode store is checked by its episode ids
        ids = list(dict.fromkeys(["benchmark", *(["episode_id"] if level == "episode" else []),
                                  *ids]))
    store = Path(store)
    manifest = read_manifest(store)
    parts = _parts(store, level, manifest)
    if check_inputs:
        warn_about_inputs(store, manifest, level)
    if not parts:
        from ..schema.arrow import empty_dataset
        from ..score import score

        frame = score(empty_dataset(), level=level)
        keep = ID_COLUMNS if ids is None else ids
        return frame if columns is None else frame[[c for c in frame.columns
                                                    if c in keep or c in columns]]
    want = None
    if columns is not None:
        want = list(dict.fromkeys([*(ID_COLUMNS if ids is None else ids), *columns,
                                   *ORDER_COLUMNS]))
    if categorical:
        frame = _read_categorical(parts, want)
        if level == "episode":
            _check_unique_episodes(store, parts, frame["episode_id"])
        return frame
    frames = []
    for p in parts:
        table = pq.read_table(p)
        if want is not None:
            table = table.select([c for c in want if c in table.column_names])
        part = table.to_pandas()
        stored = json.loads((table.schema.metadata or {}).get(_DTYPES_KEY, b"{}"))
        for col, dtype in stored.items() if exact_dtypes else ():
            if dtype == "object" and col in part.columns and part[col].dtype != object:
                # text stored by ak.score as Python objects, missing as None
                part[col] = part[col].astype(object).where(part[col].notna(), None)
        frames.append(part)
    # pandas' concat, as ak.score joins benchmark families: a column one part lacks is
    # missing (NA of the other parts' dtype) there, never coerced to another type. Parts
    # with AcCoRD rows go first, so the columns come in ak.score's order (AcCoRD's, then
    # goal-shift's) whatever the input order; the rows are put in order below.
    frames.sort(key=lambda part: not _has_accord(part["benchmark"]))
    frame = pd.concat(frames, ignore_index=True, sort=False)
    for col in frame.columns if exact_dtypes else ():
        if frame[col].dtype == object:       # a column one family lacks: None, as ak.score
            frame[col] = frame[col].where(frame[col].notna(), None)
    frame = frame.sort_values(list(ORDER_COLUMNS), kind="stable").reset_index(drop=True)
    if level == "episode":
        _check_unique_episodes(store, parts, frame["episode_id"])
    return frame.drop(columns=list(ORDER_COLUMNS))


#: The benchmarks of the metric family whose columns :func:`accordkit.score` puts first.
_FIRST_FAMILY = scored_by("accordkit.metrics.accord")


def _has_accord(benchmark: Any) -> bool:
    """Whether a part's ``benchmark`` column (pandas or Arrow) holds an AcCoRD row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(benchmark, pa.ChunkedArray | pa.Array):
        found = pc.is_in(benchmark.cast(pa.string()), value_set=pa.array(_FIRST_FAMILY))
        return bool(pc.any(found).as_py())
    return bool(benchmark.isin(_FIRST_FAMILY).any())


def _read_categorical(parts: Sequence[Path], want: Sequence[str] | None) -> Any:
    """``read_scores(categorical=True)``: the parts joined in Arrow, text as categories.

    Text columns are read dictionary-encoded, the parts' dictionaries unified, and each
    column's categories put in sorted order, so sorting, grouping and factorizing give
    the order the strings themselves would. Numbers and flags get the pandas dtypes
    ``ak.score`` gave them (recorded in every part). Parts hold their rows in order and
    are listed in input order, which is checked part by part; only if that fails are the
    rows sorted by their order columns.
    """
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables, dtypes, in_order, last = [], {}, True, (-1, -1)
    for p in parts:
        schema = pq.read_schema(p)
        names = [c for c in (want if want is not None else schema.names) if c in schema.names]
        names = list(dict.fromkeys([*names, *ORDER_COLUMNS]))
        text = [c for c in names if pa.types.is_string(schema.field(c).type)
                or pa.types.is_large_string(schema.field(c).type)]
        table = pq.read_table(p, columns=names, read_dictionary=text)
        order = [table.column(c).to_numpy() for c in ORDER_COLUMNS]
        first = (int(order[0][0]), int(order[1][0])) if table.num_rows else last
        in_order = in_order and first > last and all(
            (o == o[0]).all() for o in order[:2]) and np.array_equal(
            order[2], np.arange(table.num_rows))
        last = first
        if in_order:
            table = table.drop_columns(list(ORDER_COLUMNS))
        tables.append(table)
        for col, dtype in json.loads((schema.metadata or {}).get(_DTYPES_KEY, b"{}")).items():
            dtypes.setdefault(col, dtype)
    if not in_order:  # a store not written part by part in order: sort its rows
        tables = [pq.read_table(p, columns=list(dict.fromkeys([*t.column_names,
                                                               *ORDER_COLUMNS])),
                                read_dictionary=[f.name for f in t.schema
                                                 if pa.types.is_dictionary(f.type)])
                  for p, t in zip(parts, tables, strict=True)]
    # columns in ak.score's order (AcCoRD's first), whatever the input order
    first = sorted(tables, key=lambda t: "benchmark" not in t.column_names
                   or not _has_accord(t.column("benchmark")))
    columns = list(dict.fromkeys(c for t in first for c in t.column_names))
    table = pa.concat_tables(tables, promote_options="permissive").unify_dictionaries()
    table = table.select(columns)
    del tables, first
    if not in_order:
        keys = np.lexsort([table.column(c).to_numpy() for c in ORDER_COLUMNS[::-1]])
        table = table.take(pa.array(keys)).drop_columns(list(ORDER_COLUMNS))
    frame = table.to_pandas(self_destruct=True, split_blocks=True, ignore_metadata=True)
    del table
    for col in frame.columns:
        series = frame[col]
        if isinstance(series.dtype, pd.CategoricalDtype):
            cats = series.cat.categories
            if not cats.is_monotonic_increasing:
                frame[col] = series.cat.reorder_categories(cats.sort_values())
        elif col in dtypes and dtypes[col] != "object" and str(series.dtype) != dtypes[col]:
            target = dtypes[col]
            if series.isna().any() and (target == "bool" or target.startswith(("int", "uint"))):
                # a column some parts lack: its missing values keep a type that holds them
                # (as pandas' concat of the parts would)
                continue
            frame[col] = series.astype(target)
    return frame


def read_modes(store: str | Path) -> Any:
    """The store's :func:`accordkit.compare_modes` table (goal-shift source files).

    Computed while scoring, one source file at a time (its upstream TCRR pools the file's
    conversations), so it is there without the transcripts.

    Returns
    -------
    pandas.DataFrame
        :data:`accordkit.metrics.compare_modes.COMPARE_COLUMNS`, inputs in order (empty when
        the store has no goal-shift episodes).
    """
    import pandas as pd
    import pyarrow.parquet as pq

    from ..metrics.compare_modes import COMPARE_COLUMNS

    store = Path(store)
    parts = _parts(store, "modes", read_manifest(store))
    if not parts:
        return pd.DataFrame(columns=COMPARE_COLUMNS)
    frame = pd.concat([pq.read_table(p).to_pandas() for p in parts], ignore_index=True)
    frame = frame.sort_values(list(ORDER_COLUMNS), kind="stable").reset_index(drop=True)
    return frame.drop(columns=list(ORDER_COLUMNS))

