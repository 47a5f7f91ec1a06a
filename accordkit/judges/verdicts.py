"""The verdict table: one row per judged item, stored as parquet.

Columns (:data:`VERDICT_COLUMNS`, dtypes in :data:`VERDICT_DTYPES`):

============== ============ ===========================================================
column         dtype        meaning
============== ============ ===========================================================
episode_id     string       the judged episode
judge          string       ``usersim_tests``, ``outcome``, ``nl_assertions``, ``gsrt``
judge_model    string       the litellm model name (or ``standin/...``)
prompt_id      string       template id (``usersim_tests.shop``, ...)
prompt_version string       template version
item           string       test id / ``pref_id``, ``product_type``, ``price`` /
                            assertion index / ``shifts``
turn_idx       Int32        the judged user message (``usersim_tests``), else null
verdict        string       yes/no/n/a, 1/0, met/not_met, goal-shift JSON, or
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
]

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
            out[col] = pd.to_datetime(out[col], utc=True).astype(dtype)
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
    path = Path(path)
    out = check_verdicts(frame, where=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    out.to_parquet(tmp, index=False, compression="zstd")
    tmp.replace(path)
    return path


def read_verdicts(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """Read and validate one or more verdict parquet files (concatenated).

    Raises
    ------
    FileNotFoundError, ValueError
        Naming the file.

    Examples
    --------
    >>> v = read_verdicts("data/sample/verdicts/usersim_tests.parquet")   # doctest: +SKIP
    """
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    frames = []
    for p in items:
        p = Path(p)
        if not p.is_file():
            raise FileNotFoundError(f"no verdict file at {p}")
        frames.append(check_verdicts(pd.read_parquet(p), where=str(p)))
    if not frames:
        return empty_verdicts()
    return check_verdicts(pd.concat(frames, ignore_index=True), where="combined verdict files")


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

    Invalid and error rows are left out (the episode then has no judge output). With rows
    from several judge models, name the one to use.

    Examples
    --------
    >>> gsrt_from_verdicts(empty_verdicts())
    {}
    """
    rows = verdicts[(verdicts["judge"] == "gsrt") & verdicts["verdict"].notna()
                    & (verdicts["verdict"] != INVALID)]
    if judge_model is not None:
        rows = rows[rows["judge_model"] == judge_model]
    elif rows["judge_model"].nunique() > 1:
        raise ValueError(f"gsrt verdicts from several judge models "
                         f"{sorted(rows['judge_model'].unique())}: pass judge_model=")
    return {eid: gsrt_struct(text) for eid, text in zip(rows["episode_id"], rows["verdict"],
                                                        strict=True)}


def nl_verdicts_from_verdicts(verdicts: pd.DataFrame, *, judge_model: str | None = None,
                              assertions: dict[str, list[str]] | None = None) -> dict:
    """Canonical ``nl_verdicts`` lists by ``episode_id`` from ``nl_assertions`` rows.

    An episode is returned only when every one of its assertions has a met / not_met
    verdict (an episode with any invalid or error row is left out, as upstream drops the NL
    channel when its judge fails). ``assertions`` (episode id -> assertion texts) fills the
    ``assertion`` field; it is null otherwise.

    Examples
    --------
    >>> nl_verdicts_from_verdicts(empty_verdicts())
    {}
    """
    rows = verdicts[verdicts["judge"] == "nl_assertions"]
    if judge_model is not None:
        rows = rows[rows["judge_model"] == judge_model]
    elif rows["judge_model"].nunique() > 1:
        raise ValueError(f"nl_assertions verdicts from several judge models "
                         f"{sorted(rows['judge_model'].unique())}: pass judge_model=")
    out = {}
    for eid, group in rows.groupby("episode_id", sort=True):
        if not group["verdict"].isin(("met", "not_met")).all():
            continue
        group = group.assign(_i=group["item"].astype(int)).sort_values("_i")
        texts = (assertions or {}).get(eid)
        entries = []
        for i, verdict, raw in zip(group["_i"], group["verdict"], group["raw"], strict=True):
            try:
                justification = json.loads(raw).get("justification")
            except (TypeError, ValueError, AttributeError):
                justification = None
            entries.append({"assertion": texts[i] if texts and i < len(texts) else None,
                            "met": verdict == "met", "justification": justification})
        out[eid] = entries
    return out
