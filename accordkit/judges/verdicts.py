"""The verdict table: one row per judged item, stored as parquet.

Columns (:data:`VERDICT_COLUMNS`, dtypes in :data:`VERDICT_DTYPES`):

============== ============ ===========================================================
column         dtype        meaning
============== ============ ===========================================================
episode_id     string       the judged episode
judge          string       ``usersim_tests``, ``outcome``, ``nl_assertions``, ``gsrt``,
                            ``review``
judge_model    string       the litellm model name (or ``standin/...``)
prompt_id      string       template id (``usersim_tests.shop``, ...)
prompt_version string       template version
item           string       test id / ``pref_id``, ``product_type``, ``price`` /
                            assertion index / ``shifts`` / ``review``
turn_idx       Int32        the judged user message (``usersim_tests``), else null
verdict        string       yes/no/n/a, 1/0, met/not_met, goal-shift JSON, review JSON, or
                            ``invalid``; null when the item has no verdict (``error``)
raw            string       the judge's reply (``nl_assertions``: this assertion's result)
error          string       why there is no verdict (transport error, budget); else null
input_tokens   Int64        tokens of the call, on the first row it filled (0 on others)
output_tokens  Int64        idem
cost_usd       float64      USD of the call, same attribution; NaN when the price is
                            unknown
cached_at      datetime64   when the reply was stored (UTC); null for stand-in verdicts
============== ============ ===========================================================

The sum of ``cost_usd`` (or tokens) over a table is what obtaining it cost: a call's
tokens and cost sit on the first row it filled, and a call whose reply was reused for
several identical requests is counted once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from .parse import INVALID, gsrt_struct

__all__ = [
    "VERDICT_COLUMNS",
    "VERDICT_DTYPES",
    "VERDICT_LABELS",
    "empty_verdicts",
    "verdict_frame",
    "check_verdicts",
    "read_verdicts",
    "write_verdicts",
    "judge_costs",
    "gsrt_from_verdicts",
    "nl_verdicts_from_verdicts",
    "attach_verdicts",
    "EPISODE_FIELDS",
    "combine_verdicts",
    "MergeConflictError",
    "REQUEST_COLUMNS",
    "judge_job",
]

#: Columns that identify one judged item (one row of a verdict table).
REQUEST_COLUMNS = ("episode_id", "judge", "judge_model", "prompt_id", "prompt_version",
                   "item", "turn_idx")
#: The parquet metadata key of the judge job a verdict file belongs to (see
#: :func:`judge_job`).
JOB_METADATA_KEY = b"accordkit.judge_job"


class MergeConflictError(ValueError):
    """Two runs answered the same request differently; ``.conflicts`` lists them."""

    def __init__(self, conflicts: Sequence[str]) -> None:
        self.conflicts = list(conflicts)
        head = "\n".join(f"  - {c}" for c in self.conflicts[:10])
        more = f"\n  ... and {len(self.conflicts) - 10} more" if len(self.conflicts) > 10 else ""
        super().__init__(f"{len(self.conflicts)} conflicting verdict(s); nothing was "
                         f"merged:\n{head}{more}")


def judge_job(*, judge: str, model: str, keys: Iterable[str],
              shard: tuple[int, int] | None) -> dict[str, Any]:
    """What identifies one judge job and the share of it a run did (kept with its verdict
    table, in ``attrs["judge_job"]`` and in the parquet file's metadata).

    ``requests`` counts the job's distinct requests (all shards together) and
    ``requests_sha256`` names them (a digest of their sorted cache keys), so shards of one
    job can be told from shards of another and a merge can tell whether one is missing.

    Examples
    --------
    >>> job = judge_job(judge="gsrt", model="m", keys=["b", "a", "a"], shard=(1, 2))
    >>> job["requests"], job["shard"], len(job["requests_sha256"])
    (2, [1, 2], 16)
    """
    import hashlib

    unique = sorted(set(keys))
    digest = hashlib.sha256("\n".join(unique).encode("utf-8")).hexdigest()[:16]
    return {"judge": judge, "model": model, "requests": len(unique),
            "requests_sha256": digest, "shard": None if shard is None else list(shard)}

VERDICT_DTYPES: dict[str, str] = {
    "episode_id": "string",
    "judge": "string",
    "judge_model": "string",
    "prompt_id": "string",
    "prompt_version": "string",
    "item": "string",
    "turn_idx": "Int32",
    "verdict": "string",
    "raw": "string",
    "error": "string",
    "input_tokens": "Int64",
    "output_tokens": "Int64",
    "cost_usd": "float64",
    "cached_at": "datetime64[us, UTC]",
}
VERDICT_COLUMNS = tuple(VERDICT_DTYPES)

#: Valid verdicts per judge besides ``"invalid"`` (``gsrt``: JSON text, checked apart).
VERDICT_LABELS: dict[str, tuple[str, ...]] = {
    "usersim_tests": ("yes", "no", "n/a"),
    "outcome": ("1", "0"),
    "nl_assertions": ("met", "not_met"),
}


def empty_verdicts() -> pd.DataFrame:
    """A verdict table with no rows and the right dtypes.

    Examples
    --------
    >>> list(empty_verdicts().columns)[:3]
    ['episode_id', 'judge', 'judge_model']
    """
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in VERDICT_DTYPES.items()})


def verdict_frame(columns: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    """A verdict table from column lists (every column of :data:`VERDICT_COLUMNS`).

    Examples
    --------
    >>> verdict_frame({c: [] for c in VERDICT_COLUMNS}).dtypes["turn_idx"]
    Int32Dtype()
    """
    return _coerce(pd.DataFrame({c: list(columns[c]) for c in VERDICT_COLUMNS}))


def _coerce(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.loc[:, list(VERDICT_COLUMNS)].copy()
    for col, dtype in VERDICT_DTYPES.items():
        if col == "cached_at":
            # each value on its own ISO 8601 form (an entry may hold a date alone)
            out[col] = pd.to_datetime(out[col], utc=True, format="ISO8601").astype(dtype)
        else:
            out[col] = out[col].astype(dtype)
    return out.reset_index(drop=True)


def check_verdicts(frame: pd.DataFrame, *, where: str = "verdict table") -> pd.DataFrame:
    """Validate a verdict table and return it with the canonical dtypes.

    Checks: every column present; ``episode_id``, ``judge``, ``judge_model``, ``item``
    never null; each row has either a verdict or an error; verdicts are valid for their
    judge (``gsrt`` verdicts are readable goal-shift JSON); no duplicate
    (episode, judge, model, item, turn) rows.

    Raises
    ------
    ValueError
        Naming ``where``, the row and the column.

    Examples
    --------
    >>> check_verdicts(empty_verdicts()).shape
    (0, 14)
    """
    missing = [c for c in VERDICT_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{where}: missing column(s) {missing}")
    out = _coerce(frame)
    for col in ("episode_id", "judge", "judge_model", "item"):
        bad = out.index[out[col].isna()]
        if len(bad):
            raise ValueError(f"{where}: row {bad[0]}, column {col}: missing value")
    neither = out.index[out["verdict"].isna() & out["error"].isna()]
    if len(neither):
        raise ValueError(f"{where}: row {neither[0]}: no verdict and no error")
    for judge, labels in VERDICT_LABELS.items():
        rows = out[(out["judge"] == judge) & out["verdict"].notna()]
        bad = rows.index[~rows["verdict"].isin((*labels, INVALID))]
        if len(bad):
            raise ValueError(f"{where}: row {bad[0]}, column verdict: {out.at[bad[0], 'verdict']!r}"
                             f" is not a {judge} verdict; expected one of {(*labels, INVALID)}")
    gsrt = out[(out["judge"] == "gsrt") & out["verdict"].notna() & (out["verdict"] != INVALID)]
    for idx, text in gsrt["verdict"].items():
        try:
            gsrt_struct(text)
        except ValueError as exc:
            raise ValueError(f"{where}: row {idx}, column verdict: {exc}") from None
    reviews = out[(out["judge"] == "review") & out["verdict"].notna()
                  & (out["verdict"] != INVALID)]
    if len(reviews):
        from .review import check_verdict

        for idx, text in reviews["verdict"].items():
            try:
                check_verdict(text)
            except ValueError as exc:
                raise ValueError(f"{where}: row {idx}, column verdict: {exc}") from None
    key = ["episode_id", "judge", "judge_model", "item", "turn_idx"]
    dup = out.duplicated(key, keep=False)
    if dup.any():
        first = out[dup].iloc[0]
        raise ValueError(f"{where}: duplicate rows for episode {first['episode_id']}, judge "
                         f"{first['judge']}, model {first['judge_model']}, item {first['item']}, "
                         f"turn {first['turn_idx']}")
    return out


def write_verdicts(frame: pd.DataFrame, path: str | Path) -> Path:
    """Validate and write a verdict table as parquet (bit-identical for identical input).

    Examples
    --------
    >>> write_verdicts(empty_verdicts(), "/tmp/v.parquet").name      # doctest: +SKIP
    'v.parquet'
    """
    import pyarrow.parquet as pq

    path = Path(path)
    job = frame.attrs.get("judge_job")
    out = check_verdicts(frame, where=str(path))
    table = pa.Table.from_pandas(out, preserve_index=False)
    if job:   # which judge job (and shard of it) these verdicts are: judge merge checks it
        meta = dict(table.schema.metadata or {})
        meta[JOB_METADATA_KEY] = json.dumps(job, sort_keys=True).encode("utf-8")
        table = table.replace_schema_metadata(meta)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(path)
    return path


def _read_one(path: Path) -> pd.DataFrame:
    """One verdict file, checked, with its judge job (if it names one) in ``attrs``."""
    import pyarrow.parquet as pq

    if not path.is_file():
        raise FileNotFoundError(f"no verdict file at {path}")
    table = pq.read_table(path)
    frame = check_verdicts(table.to_pandas(), where=str(path))
    raw = (table.schema.metadata or {}).get(JOB_METADATA_KEY)
    if raw is not None:
        try:
            frame.attrs["judge_job"] = json.loads(raw)
        except ValueError:
            raise ValueError(f"{path}: its judge job metadata is not JSON") from None
    return frame


def read_verdicts(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """Read and validate one or more verdict parquet files (concatenated).

    Files that hold the same request (a first run whose calls failed and the re-run that
    answered them, overlapping shards) are combined by the rule of ``accordkit judge
    merge`` (:func:`accordkit.judges.merge_verdicts`): an answer wins over an error,
    identical rows count once, and two different answers are a conflict.

    Raises
    ------
    FileNotFoundError, ValueError
        Naming the file (:class:`~accordkit.judges.MergeConflictError` for a conflict).

    Examples
    --------
    >>> v = read_verdicts("data/sample/verdicts/usersim_tests.parquet")   # doctest: +SKIP
    """
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    frames = [_read_one(Path(p)) for p in items]
    if not frames:
        return empty_verdicts()
    if len(frames) == 1:
        return frames[0]
    both = pd.concat(frames, ignore_index=True)
    key = ["episode_id", "judge", "judge_model", "item", "turn_idx"]
    if both.duplicated(key).any():
        return combine_verdicts(frames)
    return check_verdicts(both, where="combined verdict files")


def combine_verdicts(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The rule by which verdict tables that answer the same requests combine: each item
    once, an answer over an error, identical answers once, two different answers a
    conflict. (:func:`accordkit.judges.merge_verdicts` checks first that the tables are
    the complete shards of one job.)

    Raises
    ------
    MergeConflictError
        When an item has two different verdicts.
    """
    if not frames:
        raise ValueError("nothing to merge: give at least one verdict table")
    allv = pd.concat([check_verdicts(f) for f in frames], ignore_index=True)
    keys = list(REQUEST_COLUMNS)
    answered = allv[allv["error"].isna()]
    # one number per request (a null turn, as in GSRT rows, is a value of its own)
    item = answered.groupby(keys, dropna=False, sort=True).ngroup()
    per_item = answered["verdict"].groupby(item).nunique(dropna=False)
    bad = per_item[per_item > 1]
    if len(bad):
        conflicts = []
        for number in bad.index:
            rows = answered[item == number]
            rec = rows.iloc[0]
            seen = sorted(rows["verdict"].astype(str).unique())
            turn = "none" if pd.isna(rec["turn_idx"]) else rec["turn_idx"]
            conflicts.append(f"episode {rec['episode_id']}, item {rec['item']}, turn "
                             f"{turn}, {rec['judge']} · {rec['judge_model']}: "
                             f"{' vs '.join(v[:60] for v in seen)}")
        raise MergeConflictError(conflicts)
    # answers first, then errors: drop_duplicates keeps an answer over an error
    order = allv.assign(_err=allv["error"].notna()).sort_values("_err", kind="stable")
    merged = order.drop_duplicates(keys, keep="first").drop(columns="_err")
    merged = merged.sort_values(keys, kind="stable", na_position="first")
    return check_verdicts(merged.reset_index(drop=True)[list(VERDICT_COLUMNS)])


def judge_costs(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Tokens and cost per judge and judge model (the judges' own spend, not the agents').

    Returns
    -------
    DataFrame
        ``judge``, ``judge_model``, ``n_items``, ``n_errors``, ``input_tokens``,
        ``output_tokens``, ``cost_usd`` (NaN when any call's price was unknown).

    Examples
    --------
    >>> judge_costs(empty_verdicts()).empty
    True
    """
    v = verdicts.assign(
        # a call with a verdict but no cost: its price was unknown
        _unpriced=verdicts["cost_usd"].isna() & verdicts["error"].isna())
    grouped = v.groupby(["judge", "judge_model"], sort=True)
    out = pd.DataFrame({
        "n_items": grouped.size().astype("Int64"),
        "n_errors": grouped["error"].count().astype("Int64"),
        "input_tokens": grouped["input_tokens"].sum(min_count=1).astype("Int64"),
        "output_tokens": grouped["output_tokens"].sum(min_count=1).astype("Int64"),
        "cost_usd": grouped["cost_usd"].sum(min_count=1).astype("float64"),
    })
    out.loc[grouped["_unpriced"].any(), "cost_usd"] = float("nan")
    return out.reset_index()


def gsrt_from_verdicts(verdicts: pd.DataFrame, *, judge_model: str | None = None) -> dict:
    """Canonical ``gsrt_judge`` structs by ``episode_id`` from ``gsrt`` rows with a verdict.

    The rule of :func:`attach_verdicts`: invalid and error rows are left out (the episode
    then has no judge output); rows of several judge models that disagree need
    ``judge_model``.

    Examples
    --------
    >>> gsrt_from_verdicts(empty_verdicts())
    {}
    """
    rows = _usable(verdicts, judge_model)
    rows = rows.loc[rows["judge"] == "gsrt"].sort_values("episode_id", kind="stable")
    return dict(zip(rows["episode_id"], rows["value"], strict=True))


def nl_verdicts_from_verdicts(verdicts: pd.DataFrame, *, judge_model: str | None = None,
                              assertions: dict[str, list[str]] | None = None) -> dict:
    """Canonical ``nl_verdicts`` lists by ``episode_id`` from ``nl_assertions`` rows.

    The rule of :func:`attach_verdicts`: an episode is returned only when each of its
    assertions (``assertions[episode_id]`` when given, else indices up to the largest one
    judged) has a met / not_met verdict, as upstream drops the NL channel when its judge
    fails. ``assertions`` (episode id -> assertion texts) fills the ``assertion`` field; it is
    null otherwise.

    Examples
    --------
    >>> nl_verdicts_from_verdicts(empty_verdicts())
    {}
    """
    rows = _usable(verdicts, judge_model)
    rows = rows.loc[rows["judge"] == "nl_assertions"]
    out = {}
    for eid, group in rows.groupby("episode_id", sort=True):
        by_item = _nl_items(eid, group)
        texts = (assertions or {}).get(eid)
        entries = _nl_entries(by_item, texts if texts else [None] * (max(by_item) + 1))
        if entries is not None:
            out[eid] = entries
    return out


# --------------------------------------------------------------------------- episode fields

#: Judges whose verdicts become episode fields, and the field(s) they fill.
EPISODE_FIELDS: dict[str, tuple[str, ...]] = {
    "outcome": ("preferences.satisfied", "product_type_ok", "price_ok"),
    "nl_assertions": ("nl_verdicts",),
    "gsrt": ("gsrt_judge",),
}
#: Outcome-judge items that are shop checks rather than preferences, and their fields.
CHECK_ITEMS = {"product_type": "product_type_ok", "price": "price_ok"}
_BOOL_LABELS = {"outcome": {"1": True, "0": False}, "nl_assertions": {"met": True,
                                                                        "not_met": False}}


def _usable(verdicts: pd.DataFrame, judge_model: str | None) -> pd.DataFrame:
    """The verdict rows that fill episode fields, one per (episode, judge, item), parsed.

    Columns ``episode_id``, ``judge``, ``item``, ``value`` (bool, or a ``gsrt_judge``
    struct) and ``raw``.
    """
    if not isinstance(verdicts, pd.DataFrame):
        raise TypeError(f"verdicts must be a pandas DataFrame (the verdict table of "
                        f"accordkit.judge or read_verdicts), got {type(verdicts).__name__}")
    missing = [c for c in ("episode_id", "judge", "item", "verdict") if c not in verdicts]
    if missing:
        raise ValueError(f"verdicts lack the columns {missing} (expected the judge verdict "
                         "table: episode_id, judge, item, verdict, ...)")
    verdicts = verdicts.reset_index(drop=True)  # rows are named by position
    v = verdicts.loc[verdicts["judge"].isin(list(EPISODE_FIELDS))]
    models = (v["judge_model"].astype("string") if "judge_model" in v
              else pd.Series(pd.NA, index=v.index, dtype="string"))
    if judge_model is not None:
        v, models = v.loc[models == judge_model], models.loc[models == judge_model]
    text = v["verdict"].astype("string").str.strip()
    keep = text.notna() & (text.str.lower() != INVALID)    # error rows and "invalid": missing
    rows = []
    for idx in v.index[keep.to_numpy(dtype=bool)]:
        judge, label = str(v.at[idx, "judge"]), str(text.at[idx])
        where = (f"verdicts row {idx!r} (episode {v.at[idx, 'episode_id']!r}, judge {judge}, "
                 f"item {v.at[idx, 'item']!r})")
        if judge == "gsrt":
            try:
                value: Any = gsrt_struct(label)
            except ValueError as exc:
                raise ValueError(f"{where}: {exc}") from None
            label = json.dumps(value, sort_keys=True)
        else:
            labels = _BOOL_LABELS[judge]
            if label.lower() not in labels:
                raise ValueError(f"{where}: {judge} verdict {label!r} is not one of "
                                 f"{sorted([*labels, INVALID])}")
            value = labels[label.lower()]
        rows.append((str(v.at[idx, "episode_id"]), judge, str(v.at[idx, "item"]), label, value,
                     models.at[idx], v.at[idx, "raw"] if "raw" in v else None))
    out = pd.DataFrame(rows, columns=["episode_id", "judge", "item", "label", "value",
                                      "judge_model", "raw"])
    distinct = out.drop_duplicates(["episode_id", "judge", "item", "label"])
    clash = distinct.loc[distinct.duplicated(["episode_id", "judge", "item"], keep=False)]
    if len(clash):
        first = clash.iloc[0]
        names = sorted(map(str, clash.loc[(clash["episode_id"] == first["episode_id"])
                                          & (clash["judge"] == first["judge"])
                                          & (clash["item"] == first["item"]),
                                          "judge_model"].unique()))
        versions = ""
        if "prompt_version" in verdicts:
            seen = verdicts.loc[(verdicts["episode_id"] == first["episode_id"])
                                & (verdicts["judge"] == first["judge"])
                                & (verdicts["item"] == first["item"]), "prompt_version"]
            versions = f", prompt versions {sorted(map(str, seen.dropna().unique()))}"
        raise ValueError(
            f"conflicting {first['judge']} verdicts for episode {first['episode_id']!r}, item "
            f"{first['item']!r} (judge models {names}{versions}): keep the rows of one judge "
            "model and prompt version, e.g. v[v.judge_model == ...] (attach_verdicts takes "
            "judge_model=)")
    return distinct.drop(columns=["label", "judge_model"]).reset_index(drop=True)


def _fill_outcome(table: pa.Table, rows_of: dict[str, list[int]], v: pd.DataFrame) -> pa.Table:
    prefs = table.column("preferences").to_pylist()
    checks = {c: table.column(c).to_pylist() for c in CHECK_ITEMS.values()}
    for (eid, item), value in zip(zip(v["episode_id"], v["item"], strict=True), v["value"],
                                  strict=True):
        for r in rows_of.get(eid, ()):
            if item in CHECK_ITEMS:
                col = checks[CHECK_ITEMS[item]]
                if col[r] is None:
                    col[r] = bool(value)
                continue
            matches = [p for p in prefs[r] or () if p.get("pref_id") == item]
            if not matches:
                raise ValueError(
                    f"outcome verdict for episode {eid!r} names item {item!r}, which is "
                    f"neither a pref_id of that episode nor one of {sorted(CHECK_ITEMS)}")
            for p in matches:
                if p.get("satisfied") is None:
                    p["satisfied"] = bool(value)
    table = _set(table, "preferences", prefs)
    for name, values in checks.items():
        table = _set(table, name, values)
    return table


def _fill_nl(table: pa.Table, rows_of: dict[str, list[int]], v: pd.DataFrame) -> pa.Table:
    stored = table.column("nl_verdicts").to_pylist()
    criteria = table.column("criteria").to_pylist()
    for eid, group in v.groupby("episode_id", sort=False):
        by_item = _nl_items(eid, group)
        for r in rows_of.get(eid, ()):
            texts = list((criteria[r] or {}).get("nl_assertions") or ())
            if not stored[r] and texts:  # stored verdicts win
                stored[r] = _nl_entries(by_item, texts)
    return _set(table, "nl_verdicts", stored)


def _nl_items(eid: str, group: pd.DataFrame) -> dict[int, tuple[bool, object]]:
    """Assertion index -> (met, raw reply) of one episode's usable ``nl_assertions`` rows."""
    by_item = {}
    for item, value, raw in zip(group["item"], group["value"], group["raw"], strict=True):
        try:
            by_item[int(item)] = (bool(value), raw)
        except ValueError:
            raise ValueError(f"nl_assertions verdict for episode {eid!r}: item {item!r} is "
                             "not an assertion index") from None
    return by_item


def _nl_entries(by_item: Mapping[int, tuple[bool, object]],
                texts: Sequence[str | None]) -> list[dict] | None:
    """``nl_verdicts`` entries for the assertions ``texts``; ``None`` when one has no verdict
    (an incomplete set leaves the NL channel unjudged)."""
    if any(i not in by_item for i in range(len(texts))):
        return None
    return [{"assertion": text, "met": by_item[i][0], "justification": _justification(by_item[i][1])}
            for i, text in enumerate(texts)]


def _fill_gsrt(table: pa.Table, rows_of: dict[str, list[int]], v: pd.DataFrame) -> pa.Table:
    stored = table.column("gsrt_judge").to_pylist()
    for eid, value in zip(v["episode_id"], v["value"], strict=True):
        for r in rows_of.get(eid, ()):
            if stored[r] is None:
                stored[r] = value
    return _set(table, "gsrt_judge", stored)


def _justification(raw: object) -> str | None:
    try:
        found = json.loads(raw).get("justification")  # type: ignore[arg-type]
    except (TypeError, ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def _set(table: pa.Table, name: str, values: list) -> pa.Table:
    i = table.schema.get_field_index(name)
    return table.set_column(i, table.schema.field(i), pa.array(values, type=table.schema.field(i).type))


def attach_verdicts(ds: Any, verdicts: pd.DataFrame, *, judge_model: str | None = None) -> Any:
    """Copy stored judge verdicts into the episodes' canonical fields.

    The one place where verdict rows become episode data; the metrics read only the
    canonical fields. The rule, the same for every judge:

    * **Stored values win**: a verdict fills a field only where the episode has none
      (``satisfied`` null, ``nl_verdicts`` null or empty, ``gsrt_judge`` null, ...).
    * **Missing**: rows without a verdict (``error`` rows) and ``invalid`` verdicts fill
      nothing, so the field stays missing (not judged). ``nl_verdicts`` is filled only when
      every assertion of the task has a verdict; otherwise the NL channel stays unjudged.
    * **Conflicting**: rows for the same (episode, judge, item) that agree count once; rows
      that disagree (e.g. two judge models) raise ``ValueError`` unless ``judge_model``
      names the model to use.
    * Rows of judges without an episode field (``usersim_tests``) and of episodes not in
      ``ds`` are ignored; an unknown verdict label, unreadable goal-shift JSON, an outcome
      item that is neither a ``pref_id`` of its episode nor ``product_type`` / ``price``,
      or an NL item that is not an assertion index raise ``ValueError`` naming the row.

    ============== ================================ =================================
    judge          item                             fills
    ============== ================================ =================================
    outcome        ``pref_id``                      ``preferences[].satisfied``
    outcome        ``product_type`` / ``price``     ``product_type_ok`` / ``price_ok``
    nl_assertions  assertion index                  ``nl_verdicts``
    gsrt           ``shifts``                       ``gsrt_judge``
    ============== ================================ =================================

    Parameters
    ----------
    ds : datasets.Dataset or pyarrow.Table
        Canonical episodes (:func:`accordkit.load`).
    verdicts : pandas.DataFrame
        The verdict table (:func:`accordkit.judge`, :func:`read_verdicts`); at least the
        columns ``episode_id``, ``judge``, ``item``, ``verdict``.
    judge_model : str, optional
        Use only the rows of this judge model.

    Returns
    -------
    datasets.Dataset or pyarrow.Table
        The episodes with the fields filled, of the same type as ``ds``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from accordkit.schema import EPISODE_FEATURES
    >>> table = EPISODE_FEATURES.arrow_schema.empty_table()
    >>> attach_verdicts(table, empty_verdicts()).num_rows
    0
    """
    from .._internal.arrow import arrow_table
    from ..schema.arrow import episode_dataset

    table = ds if isinstance(ds, pa.Table) else arrow_table(ds)
    v = _usable(verdicts, judge_model)
    ids = table.column("episode_id").to_pylist()
    wanted = set(v["episode_id"])
    rows_of: dict[str, list[int]] = {}
    for r, eid in enumerate(ids):
        if eid in wanted:
            rows_of.setdefault(eid, []).append(r)
    v = v.loc[v["episode_id"].isin(list(rows_of))]
    for judge, fill in (("outcome", _fill_outcome), ("nl_assertions", _fill_nl),
                        ("gsrt", _fill_gsrt)):
        part = v.loc[v["judge"] == judge]
        if len(part):
            table = fill(table, rows_of, part)
    return table if isinstance(ds, pa.Table) else episode_dataset(table)
