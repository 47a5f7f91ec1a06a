"""GSRT: per-shift rule, censoring, transfers, shift sources (judge / meta / none)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from accordkit.metrics.gsrt import SHIFT_COLUMNS, episode_gsrt, shift_rows
from accordkit.schema import EPISODE_FEATURES
from accordkit.testing import build_episode, judge_output, message


def table_of(*records):
    return pa.Table.from_pylist(list(records), schema=EPISODE_FEATURES.arrow_schema)


def talk(n):
    """n alternating user / assistant messages (positions 0 .. n-1)."""
    return [message("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(n)]


def shifts_of(*shifts, n=20, **kw):
    rec = build_episode(talk(n), gsrt_judge=judge_output(0, "a", shifts), **kw)
    frame, source = shift_rows(table_of(rec))
    return frame, source


def test_recovered_shift_times_are_message_index_differences():
    frame, source = shifts_of(dict(turn=4, from_goal="a", to_goal="b", ack_turn=5, tool_turn=7,
                                   outcome_turn=11))
    row = frame.iloc[0]
    assert list(frame.columns) == SHIFT_COLUMNS
    assert (row["shift_turn"], row["ack_turn"], row["tool_turn"], row["outcome_turn"]) == \
        (4, 5, 7, 11)
    assert (row["gsrt_ack"], row["gsrt_tool"], row["gsrt_outcome"]) == (1.0, 3.0, 7.0)
    assert bool(row["recovered"]) and not bool(row["transferred"])
    assert not row["censored_ack"] and not row["censored_outcome"]
    assert source.tolist() == ["judge"]


def test_transfer_after_a_shift_is_never_a_recovery():
    frame, _ = shifts_of(dict(turn=3, from_goal="a", to_goal="b", ack_turn=6, tool_turn=9,
                              transferred=True))
    row = frame.iloc[0]
    assert not bool(row["recovered"]) and bool(row["transferred"])
    assert math.isnan(row["gsrt_ack"])                 # only recovered shifts get an ack time
    assert row["gsrt_tool"] == 6.0                     # transfers are not excluded here
    assert math.isnan(row["gsrt_outcome"]) and bool(row["censored_outcome"])


def test_never_acknowledged_shift_is_censored_not_zero():
    frame, _ = shifts_of(dict(turn=15, from_goal="a", to_goal="b"), termination_reason="max_steps")
    row = frame.iloc[0]
    assert not bool(row["recovered"])
    for var in ("ack", "tool", "outcome"):
        assert math.isnan(row[f"gsrt_{var}"]) and bool(row[f"censored_{var}"])


def test_turns_at_or_before_the_shift_do_not_count_and_are_not_censored():
    frame, _ = shifts_of(dict(turn=9, from_goal="a", to_goal="b", ack_turn=9, tool_turn=7,
                              outcome_turn=10))
    row = frame.iloc[0]
    assert not bool(row["recovered"]) and math.isnan(row["gsrt_ack"])
    assert math.isnan(row["gsrt_tool"]) and not bool(row["censored_tool"])
    assert row["gsrt_outcome"] == 1.0


def test_per_episode_medians_counts_and_rate():
    frame, source = shifts_of(
        dict(turn=2, from_goal="a", to_goal="b", ack_turn=3, tool_turn=5),
        dict(turn=8, from_goal="b", to_goal="c", ack_turn=12, tool_turn=9),
        dict(turn=14, from_goal="c", to_goal="d", ack_turn=15, transferred=True))
    ep = episode_gsrt(frame, source).iloc[0]
    assert (ep["n_shifts"], ep["n_recovered"], ep["n_transferred"]) == (3, 2, 1)
    assert ep["recovery_rate"] == pytest.approx(2 / 3)
    assert ep["gsrt_ack"] == 2.5          # median of 1 and 4: mean of the middle two
    assert ep["gsrt_tool"] == 2.0         # median of 3 and 1
    assert math.isnan(ep["gsrt_outcome"])
    assert frame["shift_index"].tolist() == [0, 1, 2]


def test_judge_output_with_zero_shifts_wins_over_assistant_meta_tags():
    msgs = talk(6)
    msgs[3] = message("assistant", "Okay.", event="GOAL_SHIFT",
                      event_json={"event": "GOAL_SHIFT", "raw": "<meta>GOAL_SHIFT</meta>"})
    msgs[4] = message("user", "Now b.", event="GOAL_SHIFT",
                      event_json={"event": "GOAL_SHIFT", "from_": "a", "to": "b"})
    rec = build_episode(msgs, gsrt_judge=judge_output(0, "a", []))
    frame, source = shift_rows(table_of(rec))
    assert len(frame) == 0 and source.tolist() == ["judge"]
    ep = episode_gsrt(frame, source).iloc[0]
    assert ep["n_shifts"] == 0 and ep["n_recovered"] == 0
    assert math.isnan(ep["recovery_rate"]) and math.isnan(ep["gsrt_ack"])


def test_missing_judge_cache_falls_back_to_user_meta_markers_only():
    msgs = talk(8)
    msgs[1] = message("assistant", "Sure.", event="GOAL_SHIFT",
                      event_json={"event": "GOAL_SHIFT"})          # assistant: ignored
    msgs[4] = message("user", "Switching.", event="GOAL_SHIFT",
                      event_json=json.dumps({"event": "GOAL_SHIFT", "from_": "a", "to": "b"}))
    msgs[6] = message("user", "Another.", event="PARK", event_json={"event": "PARK"})
    rec = build_episode(msgs)
    frame, source = shift_rows(table_of(rec))
    assert source.tolist() == ["meta"]
    assert frame[["shift_turn", "from_goal", "to_goal"]].values.tolist() == [[4, "a", "b"]]
    assert frame["recovered"].isna().all() and frame["censored_ack"].isna().all()
    ep = episode_gsrt(frame, source).iloc[0]
    assert ep["n_shifts"] == 1 and pd.isna(ep["n_recovered"]) and pd.isna(ep["n_transferred"])
    assert math.isnan(ep["recovery_rate"])


def test_no_judge_and_no_user_markers_gives_nan_not_zero_shifts():
    msgs = talk(4)
    msgs[1] = message("assistant", "x", event="GOAL_SHIFT", event_json={"event": "GOAL_SHIFT"})
    frame, source = shift_rows(table_of(build_episode(msgs)))
    assert len(frame) == 0 and source.tolist() == ["none"]
    ep = episode_gsrt(frame, source)
    assert ep["n_shifts"].isna().all() and ep["n_recovered"].isna().all()
    assert np.isnan(ep["recovery_rate"].iloc[0])


def test_rows_refer_to_the_episode_position_and_dtypes_are_shared_conventions():
    a = build_episode(talk(6), episode_id="agentchangebench/a",
                      gsrt_judge=judge_output(0, "a", [dict(turn=2, ack_turn=3)]))
    b = build_episode(talk(6), episode_id="agentchangebench/b")
    c = build_episode(talk(10), episode_id="agentchangebench/c",
                      gsrt_judge=judge_output(0, "a", [dict(turn=2), dict(turn=6, ack_turn=9)]))
    frame, source = shift_rows(table_of(a, b, c))
    assert frame["row"].tolist() == [0, 2, 2]
    assert frame["shift_index"].tolist() == [0, 0, 1]
    assert source.tolist() == ["judge", "none", "judge"]
    assert str(frame["shift_turn"].dtype) == "Int64"
    assert str(frame["recovered"].dtype) == "boolean"
    assert frame["gsrt_ack"].dtype == "float64"
