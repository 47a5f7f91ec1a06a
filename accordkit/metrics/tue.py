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
import pyarrow.compute as pc

from ._calls import Transcripts

__all__ = ["PARAM_ERROR_KEYWORDS", "TUE_WEIGHTS", "call_outcomes", "tue_counts", "tue_from_counts",
           "tue_points"]

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
    is_tool = tr.role_is("tool")
    tool_rows = np.flatnonzero(is_tool)
    ids = tr.message_field("tool_call_id").take(pa.array(tool_rows))
    errors = pc.fill_null(tr.message_field("error").take(pa.array(tool_rows)), False)
    err = errors.to_numpy(zero_copy_only=False).astype(bool)
    bad = np.zeros(len(tool_rows), dtype=bool)
    err_pos = np.flatnonzero(err)
    if len(err_pos):
        texts = tr.message_field("content").take(pa.array(tool_rows[err_pos])).to_pylist()
        bad[err_pos] = [_is_param_error(t) for t in texts]
    results = pd.DataFrame({"ep": tr.msg_episode[tool_rows], "id": ids.to_pandas(),
                            "error": err, "bad": bad})
    results = results[results["id"].notna()].drop_duplicates(["ep", "id"], keep="last")
    calls = pd.DataFrame({"ep": tr.call_episode, "id": tr.call_field("id").to_pandas()})
    merged = calls.merge(results, on=["ep", "id"], how="left", sort=False)
    matched = merged["error"].notna().to_numpy()
    error = merged["error"].fillna(False).to_numpy(dtype=bool)
    badp = merged["bad"].fillna(False).to_numpy(dtype=bool)
    return pd.DataFrame({"row": tr.call_episode,
                         "correct": ~(matched & error),
                         "params_valid": ~(matched & badp)})


def tue_from_counts(n_calls: np.ndarray, n_correct: np.ndarray, n_valid: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """T, P and TUE from counts; NaN where there is no call."""
    n = np.asarray(n_calls, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(n > 0, np.asarray(n_correct, float) / np.where(n > 0, n, 1), np.nan)
        p = np.where(n > 0, np.asarray(n_valid, float) / np.where(n > 0, n, 1), np.nan)
    return t, p, tue_points(t, p)


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
    out = call_outcomes(table, transcripts=tr)
    n = tr.n_episodes
    total = np.bincount(out["row"], minlength=n).astype(np.int64)
    correct = np.bincount(out["row"], weights=out["correct"], minlength=n).astype(np.int64)
    valid = np.bincount(out["row"], weights=out["params_valid"], minlength=n).astype(np.int64)
    t, p, tue = tue_from_counts(total, correct, valid)
    return pd.DataFrame({
        "tue": tue, "tool_correctness": t, "param_validity": p,
        "n_tool_calls": pd.array(total, dtype="Int64"),
        "n_correct_calls": pd.array(correct, dtype="Int64"),
        "n_valid_param_calls": pd.array(valid, dtype="Int64"),
    })
