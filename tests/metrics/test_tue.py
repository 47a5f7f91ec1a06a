"""TUE: T (ran without error), P (no parameter error), per episode and from counts."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from accordkit.metrics.tue import call_outcomes, tue_counts, tue_from_counts
from accordkit.schema import EPISODE_FEATURES
from accordkit.testing import build_episode, message


def table_of(*records):
    return pa.Table.from_pylist(list(records), schema=EPISODE_FEATURES.arrow_schema)


def call(cid, name="pay"):
    return message("assistant", calls=[(name, {"amount": 5}, cid)])


def result(cid, text, error):
    return message("tool", text, tool_call_id=cid, error=error)


def test_no_tool_calls_is_nan_not_zero():
    out = tue_counts(table_of(build_episode([message("assistant", "Hi")])))
    for col in ("tue", "tool_correctness", "param_validity"):
        assert out[col].dtype == "float64" and np.isnan(out[col].iloc[0])
    for col in ("n_tool_calls", "n_correct_calls", "n_valid_param_calls"):
        assert out[col].dtype == "Int64" and out[col].iloc[0] == 0


def test_errors_and_parameter_keywords():
    msgs = [
        call("ok"), result("ok", '{"status": "done"}', False),
        call("err"), result("err", "Error: account frozen", True),            # wrong, valid
        call("par"), result("par", "Error: Invalid Argument 'amount'", True),  # wrong, invalid
        call("empty"), result("empty", "", True),                                # wrong, valid
        call("lost"),                                    # no tool message: correct and valid
    ]
    out = call_outcomes(table_of(build_episode(msgs)))
    assert out["correct"].tolist() == [True, False, False, False, True]
    assert out["params_valid"].tolist() == [True, True, False, True, True]
    row = tue_counts(table_of(build_episode(msgs))).iloc[0].astype(float)
    assert (row["n_tool_calls"], row["n_correct_calls"], row["n_valid_param_calls"]) == (5, 2, 4)
    assert row["tool_correctness"] == pytest.approx(2 / 5)
    assert row["param_validity"] == pytest.approx(4 / 5)
    assert row["tue"] == pytest.approx(0.6 * 2 / 5 + 0.4 * 4 / 5)


def test_last_tool_message_with_an_id_wins_and_user_calls_count():
    msgs = [call("c1"), result("c1", "Error: timeout", True), result("c1", "{}", False),
            message("user", calls=[("toggle_airplane_mode", {}, "u1")]),
            result("u1", "Error: missing parameter 'state'", True)]
    out = call_outcomes(table_of(build_episode(msgs)))
    assert out["correct"].tolist() == [True, False]
    assert out["params_valid"].tolist() == [True, False]


def test_results_are_matched_within_their_own_episode():
    a = build_episode([call("c1"), result("c1", "Error: x", True)], episode_id="agentchangebench/a")
    b = build_episode([call("c1")], episode_id="agentchangebench/b")
    out = tue_counts(table_of(a, b))
    assert out["n_correct_calls"].tolist() == [0, 1]


def test_from_counts_is_a_ratio_of_sums():
    t, p, tue = tue_from_counts(np.array([4, 0]), np.array([3, 0]), np.array([4, 0]))
    assert t[0] == 0.75 and p[0] == 1.0 and tue[0] == pytest.approx(0.85)
    assert np.isnan(t[1]) and np.isnan(tue[1])
