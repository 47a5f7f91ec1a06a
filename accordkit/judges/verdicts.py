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

How verdict rows fill the episodes' fields (:func:`attach_verdicts`,
:func:`gsrt_from_verdicts`, :func:`nl_verdicts_from_verdicts`) lives in
:mod:`accordkit.verdicts.attach`, below the metrics that use it; the names are re-exported
here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from ..verdicts.attach import (  # noqa: F401 - their public home was here
    CHECK_ITEMS,
    EPISODE_FIELDS,
    attach_verdicts,
    gsrt_from_verdicts,
    nl_verdicts_from_verdicts,
)
from ..verdicts.parse import INVALID, gsrt_struct

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
