"""TUE, tool-use efficiency: T (calls that ran without error), P (calls with valid parameters).

Spec ``agentchangebench.md`` §3.2. Every tool call on any message is looked up by its id
among the episode's tool messages (the last tool message with that id wins, as upstream):

* *correct* = the matching tool message has no error flag; a call with no tool message
  (e.g. the conversation ended) counts as correct;
* *params valid* = false only when the matching tool message is an error whose lowercased
  text contains one of :data:`PARAM_ERROR_KEYWORDS`.

``T = correct / calls``, ``P = valid / calls``, ``TUE = 0.6 T + 0.4 P``. Per episode they are
NaN when there is no call (upstream reports 0); file-level values are ratios of the summed
counts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from .calls import Transcripts, arrow_to_numpy, join_positions, last_positions, text_codes

__all__ = ["PARAM_ERROR_KEYWORDS", "TUE_WEIGHTS", "call_outcomes", "tue_columns", "tue_counts",
           "tue_from_counts", "tue_points"]

PARAM_ERROR_KEYWORDS = ("invalid parameter", "missing parameter", "parameter error",
                        "bad parameter", "invalid argument", "missing argument")
#: Weights of T and P in TUE (the one place they are written).
TUE_WEIGHTS = (0.6, 0.4)


def tue_points(correct, valid):
    """``TUE_WEIGHTS`` applied to (T, P), or to (correct, valid) counts.

    On rates this is TUE; on counts it is the TUE points whose sum over a group, divided
    by the group's calls, is the group's TUE. Works on scalars, arrays and Series.

    Examples
    --------
    >>> round(tue_points(0.5, 1.0), 6)
    0.7
    """
    return TUE_WEIGHTS[0] * correct + TUE_WEIGHTS[1] * valid


def _is_param_error(text: str | None) -> bool:
    if not text:
        return False
    low = text.lower()
    return any(k in low for k in PARAM_ERROR_KEYWORDS)


def _outcome_arrays(tr: Transcripts) -> tuple[np.ndarray, np.ndarray]:
    """``correct`` and ``params_valid`` of every tool call of ``tr``, in call order."""
    tool_rows = np.flatnonzero(tr.role_is("tool"))
    err = arrow_to_numpy(tr.message_values("error", tool_rows), fill=False).astype(bool)
    bad = np.zeros(len(tool_rows), dtype=bool)
    err_pos = np.flatnonzero(err)
    if len(err_pos):
        texts = tr.message_values("content", tool_rows[err_pos]).to_pylist()
        bad[err_pos] = [_is_param_error(t) for t in texts]
    (result_id, call_id), _ = text_codes(tr.message_values("tool_call_id", tool_rows),
                                         tr.call_field("id"))
    n_ids = int(max(result_id.max(initial=-1), call_id.max(initial=-1))) + 1
    # (episode, id) as one integer; the last tool message of a pair answers its calls
    result_key = tr.msg_episode[tool_rows] * n_ids + result_id
    answers = last_positions(result_key[result_id >= 0])
    answers = np.flatnonzero(result_id >= 0)[answers]
    call_key = np.where(call_id >= 0, tr.call_episode * n_ids + call_id, -1)
    calls, found = join_positions(call_key, result_key[answers])
    failed = np.zeros(len(call_key), dtype=bool)
    invalid = np.zeros(len(call_key), dtype=bool)
    failed[calls] = err[answers[found]]
    invalid[calls] = bad[answers[found]]
    return ~failed, ~invalid


def call_outcomes(table: pa.Table, *, transcripts: Transcripts | None = None) -> pd.DataFrame:
    """Per tool call: ``row``, ``correct`` and ``params_valid`` (numpy bool arrays in a frame).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from accordkit.schema import EPISODE_FEATURES
    >>> from accordkit.testing import build_episode, message
    >>> rec = build_episode([message("assistant", calls=[("pay", {"amount": 5}, "c1")]),
    ...                      message("tool", "Error: missing argument 'to'", tool_call_id="c1",
    ...                              error=True)])
    >>> table = pa.Table.from_pylist([rec], schema=EPISODE_FEATURES.arrow_schema)
    >>> call_outcomes(table)[["correct", "params_valid"]].iloc[0].tolist()
    [False, False]
    """
    tr = transcripts if transcripts is not None else Transcripts(table)
    correct, valid = _outcome_arrays(tr)
    return pd.DataFrame({"row": tr.call_episode, "correct": correct, "params_valid": valid})


def tue_from_counts(n_calls: np.ndarray, n_correct: np.ndarray, n_valid: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """T, P and TUE from counts; NaN where there is no call."""
    n = np.asarray(n_calls, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(n > 0, np.asarray(n_correct, float) / np.where(n > 0, n, 1), np.nan)
        p = np.where(n > 0, np.asarray(n_valid, float) / np.where(n > 0, n, 1), np.nan)
    return t, p, tue_points(t, p)


def tue_columns(tr: Transcripts) -> dict[str, object]:
    """:func:`tue_counts`' columns, as arrays (one row per episode of ``tr``)."""
    correct, valid = _outcome_arrays(tr)
    n = tr.n_episodes
    row = tr.call_episode
    total = np.bincount(row, minlength=n).astype(np.int64)
    n_correct = np.bincount(row, weights=correct, minlength=n).astype(np.int64)
    n_valid = np.bincount(row, weights=valid, minlength=n).astype(np.int64)
    t, p, tue = tue_from_counts(total, n_correct, n_valid)
    none = np.zeros(n, dtype=bool)
    return {
        "tue": tue, "tool_correctness": t, "param_validity": p,
        "n_tool_calls": pd.arrays.IntegerArray(total, none.copy()),
        "n_correct_calls": pd.arrays.IntegerArray(n_correct, none.copy()),
        "n_valid_param_calls": pd.arrays.IntegerArray(n_valid, none),
    }


def tue_counts(table: pa.Table, *, transcripts: Transcripts | None = None) -> pd.DataFrame:
    """Per-episode TUE, T, P and their counts.

    Returns
    -------
    pandas.DataFrame
        ``tue``, ``tool_correctness``, ``param_validity`` (float, NaN without calls) and
        ``n_tool_calls``, ``n_correct_calls``, ``n_valid_param_calls`` (``Int64``).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from accordkit.schema import EPISODE_FEATURES
    >>> from accordkit.testing import build_episode, message
    >>> rec = build_episode([message("assistant", "Hi, no tools needed.")])
    >>> table = pa.Table.from_pylist([rec], schema=EPISODE_FEATURES.arrow_schema)
    >>> out = tue_counts(table)
    >>> float(out["tue"].iloc[0]), int(out["n_tool_calls"].iloc[0])
    (nan, 0)
    """
    tr = transcripts if transcripts is not None else Transcripts(table)
    return pd.DataFrame(tue_columns(tr))
