"""The failure-flag table shows only the flags each benchmark can show (hand-made frames)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accordkit.tables import FAILURES, failure_benchmarks, failure_flags, failure_rates


def _scores():
    # plain tau2: 4 episodes, one with a redundant call; AgentChangeBench: 2 episodes, one
    # goal shift never recovered (and handed to a human); AcCoRD: 2 episodes, one incomplete
    return pd.DataFrame({
        "episode_id": [f"t{i}" for i in range(4)] + ["g0", "g1", "a0", "a1"],
        "benchmark": ["tau2"] * 4 + ["agentchangebench"] * 2 + ["accord"] * 2,
        "agent_model": ["m"] * 6 + [None, None], "method": "x",
        "completed": [False, True, True, True, True, True, False, True],
        "n_redundant_calls": pd.array([1, 0, 0, 0, 0, 2, None, None], dtype="Int64")})


def test_flags_apply_by_benchmark_from_the_catalogue():
    applies = failure_benchmarks()
    assert set(applies) == set(FAILURES)
    assert applies["not_completed"] == ("accord",)
    assert applies["unsatisfied_triggered"] == ("accord",)
    assert "tau2" not in applies["unrecovered_shift"] and "tau2" not in applies["transfer"]
    assert "tau2" in applies["redundant_calls"]


def test_tau2_rows_show_no_zero_for_goal_shift_flags():
    scores = _scores()
    shifts = pd.DataFrame({"episode_id": ["g1"], "recovered": [False], "transferred": [True]})
    table = failure_flags(scores, by=["benchmark", "agent_model", "method"], shifts=shifts)
    t = failure_rates(table).set_index("benchmark")
    assert t.loc["tau2", "redundant_calls"] == pytest.approx(0.25)
    # a tau2 configuration cannot miss a goal shift or be incomplete-as-failed: blank
    for name in ("unrecovered_shift", "transfer", "not_completed", "unsatisfied_triggered"):
        assert np.isnan(t.loc["tau2", name]), name
    assert t.loc["agentchangebench", "unrecovered_shift"] == pytest.approx(0.5)
    assert t.loc["agentchangebench", "transfer"] == pytest.approx(0.5)
    assert t.loc["accord", "not_completed"] == pytest.approx(0.5)
    assert t.loc["accord", "agent_model"] == "?"          # unknown agent: a group, not dropped
    assert np.isnan(t.loc["accord", "redundant_calls"])
    assert t["episodes"].to_dict() == {"accord": 2, "agentchangebench": 2, "tau2": 4}


def test_a_tau2_only_run_has_only_the_flags_that_apply():
    scores = _scores().iloc[:4]
    table = scores[["episode_id", "benchmark", "agent_model", "method"]].merge(
        failure_flags(scores))
    t = failure_rates(table)
    assert t.columns.tolist() == ["benchmark", "agent_model", "method", "episodes",
                                  "redundant_calls"]
    with pytest.raises(ValueError, match="needs 'benchmark'"):
        failure_rates(table, by=["agent_model"])


def test_flags_keep_the_by_columns_beside_each_episode():
    """``by`` carries episode columns into the flags: the same frame as joining them on."""
    scores = _scores()
    shifts = pd.DataFrame({"episode_id": ["g1"], "recovered": [False], "transferred": [True]})
    kept = failure_flags(scores, by=["benchmark", "agent_model"], shifts=shifts)
    joined = scores[["episode_id", "benchmark", "agent_model"]].merge(
        failure_flags(scores, shifts=shifts), on="episode_id")
    pd.testing.assert_frame_equal(kept.reset_index(drop=True), joined)
    assert failure_flags(scores).columns.tolist() == ["episode_id", *FAILURES]
    with pytest.raises(ValueError, match=r"failure_flags by \['persona'\]"):
        failure_flags(scores, by=["persona"])
