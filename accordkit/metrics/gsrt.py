"""GSRT, goal-shift recovery time, and recovery per goal shift.

Spec ``agentchangebench.md`` §3.4. Shifts come from the stored goal-shift judge output
(``gsrt_judge``) whenever an episode has it, even when it lists no shift; only episodes
without judge output fall back to ``GOAL_SHIFT`` event markers on **user** messages
(``shift_source`` ``"judge"``, ``"meta"`` or ``"none"``).

Per shift, with ``s`` the shift's message index and ``a``, ``t``, ``o`` the judge's
acknowledgement, first relevant tool and outcome indices:

* ``recovered`` = ``a`` is known, ``a > s`` and the shift was not transferred to a human;
* ``gsrt_ack = a - s`` for recovered shifts only; ``gsrt_tool = t - s`` when ``t > s``;
  ``gsrt_outcome = o - s`` when ``o > s``; units are message indices (all roles count);
* a time whose turn is missing was not reached within the episode: NaN with
  ``censored_* = True`` (never 0);
* ``messages_after_shift`` = the last message index of the episode minus ``s``: the longest
  time that could have been observed, i.e. the right-censoring time of a shift whose event
  never came (used by :mod:`accordkit.stats.survival`).

A meta marker tells where a shift happened but not how the agent reacted: those shifts have
``shift_turn`` and goals, and NA acknowledgement, tool, outcome, recovery and transfer.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import one_array
from ._calls import Transcripts

__all__ = ["SHIFT_COLUMNS", "shift_rows", "episode_gsrt"]

SHIFT_COLUMNS = ["row", "shift_index", "from_goal", "to_goal", "shift_turn", "ack_turn",
                 "tool_turn", "outcome_turn", "gsrt_ack", "gsrt_tool", "gsrt_outcome",
                 "censored_ack", "censored_tool", "censored_outcome", "recovered",
                 "transferred", "shift_source", "messages_after_shift"]


def _np(arr: pa.Array, fill=None) -> np.ndarray:
    if fill is not None:
        arr = pc.fill_null(arr, fill)
    return arr.to_numpy(zero_copy_only=False)


def _int_or_nan(arr: pa.Array) -> np.ndarray:
    return _np(pc.cast(arr, pa.float64()), np.nan).astype(float)


def shift_sources(table: pa.Table, tr: Transcripts) -> tuple[np.ndarray, np.ndarray]:
    """``shift_source`` per episode and the indices of the meta-marker messages used."""
    judge = one_array(table.column("gsrt_judge"))
    has_judge = _np(judge.is_valid()).astype(bool)
    event = _np(tr.message_field("event"), "")
    marker = (event == "GOAL_SHIFT") & tr.role_is("user") & ~has_judge[tr.msg_episode]
    meta_msgs = np.flatnonzero(marker)
    has_meta = np.zeros(tr.n_episodes, dtype=bool)
    has_meta[tr.msg_episode[meta_msgs]] = True
    source = np.where(has_judge, "judge", np.where(has_meta, "meta", "none")).astype(object)
    return source, meta_msgs


def _judge_shifts(table: pa.Table) -> pd.DataFrame:
    judge = one_array(table.column("gsrt_judge"))
    shifts = pc.struct_field(judge, "shifts")
    row = _np(pc.list_parent_indices(shifts)).astype(np.int64)
    flat = pc.list_flatten(shifts)
    n = len(row)
    starts = np.r_[0, np.flatnonzero(row[1:] != row[:-1]) + 1] if n else np.zeros(0, np.int64)
    sizes = np.diff(np.r_[starts, n]) if n else np.zeros(0, np.int64)
    index = np.arange(n) - np.repeat(starts, sizes)
    field = lambda name: pc.struct_field(flat, name)  # noqa: E731
    s = _int_or_nan(field("turn"))
    a = _int_or_nan(field("ack_turn"))
    t = _int_or_nan(field("tool_turn"))
    o = _int_or_nan(field("outcome_turn"))
    x = _np(field("transferred"), False).astype(bool)
    with np.errstate(invalid="ignore"):
        recovered = ~np.isnan(a) & ~np.isnan(s) & (a > s) & ~x
        tool_ok = ~np.isnan(t) & (t > s)
        out_ok = ~np.isnan(o) & (o > s)
    return pd.DataFrame({
        "row": row, "shift_index": index,
        "from_goal": field("from_goal").to_pandas(), "to_goal": field("to_goal").to_pandas(),
        "shift_turn": s, "ack_turn": a, "tool_turn": t, "outcome_turn": o,
        "gsrt_ack": np.where(recovered, a - s, np.nan),
        "gsrt_tool": np.where(tool_ok, t - s, np.nan),
        "gsrt_outcome": np.where(out_ok, o - s, np.nan),
        "censored_ack": np.isnan(a), "censored_tool": np.isnan(t),
        "censored_outcome": np.isnan(o),
        "recovered": recovered, "transferred": x, "shift_source": "judge",
    })


def _meta_shifts(tr: Transcripts, meta_msgs: np.ndarray) -> pd.DataFrame:
    row = tr.msg_episode[meta_msgs]
    n = len(row)
    starts = np.r_[0, np.flatnonzero(row[1:] != row[:-1]) + 1] if n else np.zeros(0, np.int64)
    sizes = np.diff(np.r_[starts, n]) if n else np.zeros(0, np.int64)
    details = tr.message_field("event_json").take(pa.array(meta_msgs, type=pa.int64()))
    from_goal, to_goal = [], []
    for text in details.to_pylist():
        try:
            info = json.loads(text) if text else {}
        except json.JSONDecodeError:
            info = {}
        info = info if isinstance(info, dict) else {}
        from_goal.append(info.get("from_", info.get("from")))
        to_goal.append(info.get("to"))
    na = np.full(n, np.nan)
    unknown = pd.array([pd.NA] * n, dtype="boolean")
    return pd.DataFrame({
        "row": row, "shift_index": np.arange(n) - np.repeat(starts, sizes),
        "from_goal": pd.array(from_goal, dtype=object), "to_goal": pd.array(to_goal,
                                                                            dtype=object),
        "shift_turn": tr.msg_turn_idx[meta_msgs].astype(float), "ack_turn": na,
        "tool_turn": na, "outcome_turn": na, "gsrt_ack": na, "gsrt_tool": na,
        "gsrt_outcome": na, "censored_ack": unknown, "censored_tool": unknown,
        "censored_outcome": unknown, "recovered": unknown, "transferred": unknown,
        "shift_source": "meta",
    })


def shift_rows(table: pa.Table, *, transcripts: Transcripts | None = None
               ) -> tuple[pd.DataFrame, np.ndarray]:
    """One row per goal shift, and the ``shift_source`` of every episode.

    Returns
    -------
    shifts : pandas.DataFrame
        Columns :data:`SHIFT_COLUMNS`, sorted by ``row`` then ``shift_index``; turns are
        ``Int64``, times float (NaN = censored or not applicable), flags ``boolean``.
    source : ndarray of str
        ``"judge"``, ``"meta"`` or ``"none"`` per row of ``table``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from accordkit.schema import EPISODE_FEATURES
    >>> from accordkit.testing import build_episode, judge_output, message
    >>> msgs = [message("user", "a"), message("assistant", "b"), message("user", "c"),
    ...         message("assistant", "d")]
    >>> rec = build_episode(msgs, gsrt_judge=judge_output(0, "x", [
    ...     dict(turn=2, from_goal="x", to_goal="y", ack_turn=3)]))
    >>> table = pa.Table.from_pylist([rec], schema=EPISODE_FEATURES.arrow_schema)
    >>> shifts, source = shift_rows(table)
    >>> float(shifts["gsrt_ack"].iloc[0]), bool(shifts["recovered"].iloc[0]), source.tolist()
    (1.0, True, ['judge'])
    """
    tr = transcripts if transcripts is not None else Transcripts(table)
    source, meta_msgs = shift_sources(table, tr)
    parts = [_judge_shifts(table)]
    if len(meta_msgs):
        parts.append(_meta_shifts(tr, meta_msgs))
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    frame = frame.sort_values(["row", "shift_index"], kind="stable").reset_index(drop=True)
    last_turn = np.full(tr.n_episodes, -1, dtype=np.int64)
    np.maximum.at(last_turn, tr.msg_episode, tr.msg_turn_idx)
    after = last_turn[frame["row"].to_numpy(dtype=np.int64)] - frame["shift_turn"].to_numpy(float)
    frame["messages_after_shift"] = np.where(after >= 0, after, np.nan)
    for col in ("shift_turn", "ack_turn", "tool_turn", "outcome_turn", "messages_after_shift"):
        frame[col] = pd.array(frame[col].to_numpy(dtype=float), dtype="Float64").astype("Int64")
    for col in ("censored_ack", "censored_tool", "censored_outcome", "recovered",
                "transferred"):
        frame[col] = frame[col].astype("boolean")
    for col in ("from_goal", "to_goal"):
        frame[col] = frame[col].astype(object).where(frame[col].notna(), None)
    frame["row"] = frame["row"].astype(np.int64)
    frame["shift_index"] = frame["shift_index"].astype(np.int64)
    return frame[SHIFT_COLUMNS], source


def episode_gsrt(shifts: pd.DataFrame, source: np.ndarray) -> pd.DataFrame:
    """Per-episode shift counts, recovery rate and median GSRT times.

    Episodes with ``shift_source == "none"`` get NA counts and NaN values; an episode with
    0 shifts gets counts 0 and NaN rate and times; meta-source episodes have shift counts but
    NA recovery and transfer counts.

    Returns
    -------
    pandas.DataFrame
        ``n_shifts``, ``n_recovered``, ``n_transferred`` (``Int64``), ``recovery_rate``,
        ``gsrt_ack``, ``gsrt_tool``, ``gsrt_outcome`` (float; medians over the episode's
        shifts with a time) and ``shift_source``.
    """
    n = len(source)
    rows = shifts["row"].to_numpy()
    n_shifts = np.bincount(rows, minlength=n).astype(float)
    rec = shifts["recovered"]
    trn = shifts["transferred"]
    n_rec = np.bincount(rows, weights=rec.fillna(False).to_numpy(dtype=float),
                        minlength=n).astype(float)
    n_trn = np.bincount(rows, weights=trn.fillna(False).to_numpy(dtype=float),
                        minlength=n).astype(float)
    unknown = np.zeros(n, dtype=bool)
    unknown[rows[rec.isna().to_numpy()]] = True
    none = source == "none"
    n_shifts[none] = np.nan
    n_rec[none | unknown] = np.nan
    n_trn[none | unknown] = np.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(n_shifts > 0, n_rec / np.where(n_shifts > 0, n_shifts, 1), np.nan)
    out = pd.DataFrame({
        "n_shifts": pd.array(n_shifts, dtype="Float64").astype("Int64"),
        "n_recovered": pd.array(n_rec, dtype="Float64").astype("Int64"),
        "n_transferred": pd.array(n_trn, dtype="Float64").astype("Int64"),
        "recovery_rate": rate.astype(float),
    })
    for col in ("gsrt_ack", "gsrt_tool", "gsrt_outcome"):
        med = shifts[col].groupby(rows).median() if len(rows) else pd.Series(dtype=float)
        values = np.full(n, np.nan)
        values[med.index.to_numpy(dtype=np.int64)] = med.to_numpy(dtype=float)
        out[col] = values
    out["shift_source"] = source
    return out
