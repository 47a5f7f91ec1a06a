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

from .._internal.arrow import one_array
from .calls import Transcripts, arrow_to_numpy, group_starts, positions_in_runs

__all__ = ["SHIFT_COLUMNS", "shift_rows", "shift_arrays", "episode_gsrt", "gsrt_columns"]

SHIFT_COLUMNS = ["row", "shift_index", "from_goal", "to_goal", "shift_turn", "ack_turn",
                 "tool_turn", "outcome_turn", "gsrt_ack", "gsrt_tool", "gsrt_outcome",
                 "censored_ack", "censored_tool", "censored_outcome", "recovered",
                 "transferred", "shift_source", "messages_after_shift"]


def _int_or_nan(arr: pa.Array) -> np.ndarray:
    return arrow_to_numpy(pc.cast(arr, pa.float64()), np.nan).astype(float)


def shift_sources(table: pa.Table, tr: Transcripts) -> tuple[np.ndarray, np.ndarray]:
    """``shift_source`` per episode and the indices of the meta-marker messages used."""
    judge = one_array(table.column("gsrt_judge"))
    has_judge = arrow_to_numpy(judge.is_valid()).astype(bool)
    event = arrow_to_numpy(tr.message_field("event"), "")
    marker = (event == "GOAL_SHIFT") & tr.role_is("user") & ~has_judge[tr.msg_episode]
    meta_msgs = np.flatnonzero(marker)
    has_meta = np.zeros(tr.n_episodes, dtype=bool)
    has_meta[tr.msg_episode[meta_msgs]] = True
    source = np.where(has_judge, "judge", np.where(has_meta, "meta", "none")).astype(object)
    return source, meta_msgs


def _judge_shifts(table: pa.Table) -> dict[str, np.ndarray]:
    judge = one_array(table.column("gsrt_judge"))
    shifts = pc.struct_field(judge, "shifts")
    row = arrow_to_numpy(pc.list_parent_indices(shifts)).astype(np.int64)
    flat = pc.list_flatten(shifts)
    n = len(row)
    field = lambda name: pc.struct_field(flat, name)  # noqa: E731
    s = _int_or_nan(field("turn"))
    a = _int_or_nan(field("ack_turn"))
    t = _int_or_nan(field("tool_turn"))
    o = _int_or_nan(field("outcome_turn"))
    x = arrow_to_numpy(field("transferred"), False).astype(bool)
    with np.errstate(invalid="ignore"):
        recovered = ~np.isnan(a) & ~np.isnan(s) & (a > s) & ~x
        tool_ok = ~np.isnan(t) & (t > s)
        out_ok = ~np.isnan(o) & (o > s)
    known = np.ones(n, dtype=bool)
    return {
        "row": row, "shift_index": positions_in_runs(row),
        "from_goal": arrow_to_numpy(field("from_goal")), "to_goal": arrow_to_numpy(field("to_goal")),
        "shift_turn": s, "ack_turn": a, "tool_turn": t, "outcome_turn": o,
        "gsrt_ack": np.where(recovered, a - s, np.nan),
        "gsrt_tool": np.where(tool_ok, t - s, np.nan),
        "gsrt_outcome": np.where(out_ok, o - s, np.nan),
        "censored_ack": np.isnan(a), "censored_tool": np.isnan(t),
        "censored_outcome": np.isnan(o), "recovered": recovered, "transferred": x,
        "known": known, "shift_source": np.full(n, "judge", dtype=object),
    }


def _meta_shifts(tr: Transcripts, meta_msgs: np.ndarray) -> dict[str, np.ndarray]:
    row = tr.msg_episode[meta_msgs]
    n = len(row)
    details = tr.message_values("event_json", meta_msgs)
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
    unknown = np.zeros(n, dtype=bool)
    goals = np.empty((2, n), dtype=object)
    goals[0, :], goals[1, :] = from_goal, to_goal
    return {
        "row": row, "shift_index": positions_in_runs(row),
        "from_goal": goals[0], "to_goal": goals[1],
        "shift_turn": tr.msg_turn_idx[meta_msgs].astype(float), "ack_turn": na,
        "tool_turn": na, "outcome_turn": na, "gsrt_ack": na, "gsrt_tool": na,
        "gsrt_outcome": na, "censored_ack": unknown, "censored_tool": unknown,
        "censored_outcome": unknown, "recovered": unknown, "transferred": unknown,
        "known": unknown, "shift_source": np.full(n, "meta", dtype=object),
    }


#: Shift columns held as whole message indices (``Int64``: NA when unknown).
_TURN_COLUMNS = ("shift_turn", "ack_turn", "tool_turn", "outcome_turn", "messages_after_shift")
#: Shift flags (``boolean``: NA for a meta-marker shift, whose reaction is unknown).
_FLAG_COLUMNS = ("censored_ack", "censored_tool", "censored_outcome", "recovered",
                 "transferred")


def shift_arrays(table: pa.Table, tr: Transcripts) -> tuple[dict[str, np.ndarray],
                                                              np.ndarray]:
    """The shifts as plain numpy arrays, sorted (``known``: the reaction is known), and the
    ``shift_source`` of every episode."""
    source, meta_msgs = shift_sources(table, tr)
    parts = [_judge_shifts(table)]
    if len(meta_msgs):
        parts.append(_meta_shifts(tr, meta_msgs))
    cols = parts[0] if len(parts) == 1 else {
        k: np.concatenate([part[k] for part in parts]) for k in parts[0]}
    order = np.lexsort([cols["shift_index"], cols["row"]])
    if not np.array_equal(order, np.arange(len(order))):
        cols = {k: v[order] for k, v in cols.items()}
    last_turn = np.full(tr.n_episodes, -1, dtype=np.int64)
    np.maximum.at(last_turn, tr.msg_episode, tr.msg_turn_idx)
    after = last_turn[cols["row"]] - cols["shift_turn"]
    cols["messages_after_shift"] = np.where(after >= 0, after, np.nan)
    return cols, source


def _shift_frame(cols: dict[str, np.ndarray]) -> pd.DataFrame:
    """:data:`SHIFT_COLUMNS` of the shifts, each with its dtype."""
    unknown = ~cols["known"]
    out: dict[str, object] = {}
    for name in SHIFT_COLUMNS:
        value = cols[name]
        if name in _TURN_COLUMNS:
            missing = np.isnan(value)
            value = pd.arrays.IntegerArray(np.where(missing, 0, value).astype(np.int64),
                                           missing)
        elif name in _FLAG_COLUMNS:
            value = pd.arrays.BooleanArray(value.astype(bool), unknown.copy())
        elif name in ("from_goal", "to_goal"):
            value = pd.Series(value, dtype=object)
        elif name == "shift_source":
            value = pd.Series(value, dtype="str")
        elif name in ("row", "shift_index"):
            value = value.astype(np.int64)
        out[name] = value
    return pd.DataFrame(out)


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
    cols, source = shift_arrays(table, tr)
    return _shift_frame(cols), source


def _group_medians(rows: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Median of the non-NaN ``values`` of each group ``rows`` (0..n-1); NaN for none.

    >>> _group_medians(np.array([0, 0, 0, 2, 2]), np.array([3., 1., np.nan, 4., 2.]), 3).tolist()
    [2.0, nan, 3.0]
    """
    out = np.full(n, np.nan)
    ok = ~np.isnan(values)
    rows, values = rows[ok], values[ok]
    if not len(rows):
        return out
    order = np.lexsort([values, rows])
    rows, values = rows[order], values[order]
    counts = np.bincount(rows, minlength=n)
    starts = group_starts(counts)
    has = np.flatnonzero(counts)
    lo = values[starts[has] + (counts[has] - 1) // 2]
    hi = values[starts[has] + counts[has] // 2]
    out[has] = (lo + hi) / 2
    return out


def gsrt_columns(cols: dict[str, np.ndarray], source: np.ndarray) -> dict[str, object]:
    """:func:`episode_gsrt`'s columns from :func:`shift_arrays`' shifts, as arrays."""
    n = len(source)
    rows = cols["row"]
    known = cols["known"]
    n_shifts = np.bincount(rows, minlength=n).astype(float)
    n_rec = np.bincount(rows, weights=cols["recovered"] & known, minlength=n).astype(float)
    n_trn = np.bincount(rows, weights=cols["transferred"] & known, minlength=n).astype(float)
    unknown = np.zeros(n, dtype=bool)
    unknown[rows[~known]] = True
    none = source == "none"
    n_shifts[none] = np.nan
    n_rec[none | unknown] = np.nan
    n_trn[none | unknown] = np.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(n_shifts > 0, n_rec / np.where(n_shifts > 0, n_shifts, 1), np.nan)
    out: dict[str, object] = {}
    for name, counts in (("n_shifts", n_shifts), ("n_recovered", n_rec),
                         ("n_transferred", n_trn)):
        missing = np.isnan(counts)
        out[name] = pd.arrays.IntegerArray(np.where(missing, 0, counts).astype(np.int64),
                                           missing)
    out["recovery_rate"] = rate.astype(float)
    for col in ("gsrt_ack", "gsrt_tool", "gsrt_outcome"):
        out[col] = _group_medians(rows, cols[col], n)
    out["shift_source"] = source
    return out


def episode_gsrt(shifts: pd.DataFrame, source: np.ndarray) -> pd.DataFrame:
    """Per-episode shift counts, recovery rate and median GSRT times.

    Episodes with ``shift_source == "none"`` get NA counts and NaN values; an episode with
    0 shifts gets counts 0 and NaN rate and times; meta-source episodes have shift counts but
    NA recovery and transfer counts.

    Parameters
    ----------
    shifts : pandas.DataFrame
        :func:`shift_rows`' shifts.
    source : numpy.ndarray
        :func:`shift_rows`' ``shift_source`` of every episode.

    Returns
    -------
    pandas.DataFrame
        ``n_shifts``, ``n_recovered``, ``n_transferred`` (``Int64``), ``recovery_rate``,
        ``gsrt_ack``, ``gsrt_tool``, ``gsrt_outcome`` (float; medians over the episode's
        shifts with a time) and ``shift_source``.
    """
    rec = shifts["recovered"]
    cols = {"row": shifts["row"].to_numpy(dtype=np.int64),
            "known": rec.notna().to_numpy(dtype=bool),
            "recovered": rec.fillna(False).to_numpy(dtype=bool),
            "transferred": shifts["transferred"].fillna(False).to_numpy(dtype=bool)}
    for col in ("gsrt_ack", "gsrt_tool", "gsrt_outcome"):
        cols[col] = shifts[col].to_numpy(dtype=float)
    return pd.DataFrame(gsrt_columns(cols, source))
