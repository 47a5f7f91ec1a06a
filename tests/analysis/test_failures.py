"""Failure indicators and taxonomy tables, hand-computed."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from accordkit.analysis.failures import (
    FAILURE_COLUMNS,
    cell_episodes,
    failure_indicators,
    failure_taxonomy,
)
from accordkit.metrics.reviews import reviews_from_json
from accordkit.stats import DegenerateIntervalWarning


def _diff():
    rows = [("a", "matched", None), ("a", "extra", "unexpected_write"),
            ("b", "wrong_arguments", "wrong_arguments"), ("b", "missing", "wrong_arguments"),
            ("c", "matched", None)]
    frame = pd.DataFrame(rows, columns=["episode_id", "status", "divergence_reason"])
    frame["first_divergence_turn"] = pd.array([3, 3, 1, 1, None], dtype="Int64")
    # the divergence is a value of the episode: same on each of its rows
    frame.loc[frame["episode_id"] == "a", "divergence_reason"] = "unexpected_write"
    return frame


def _reviews():
    crit_user = ('{"review": {"has_errors": true, "errors": ['
                 '{"source": "user", "severity": "critical_hindered", "error_tags": '
                 '["hallucination"], "reasoning": "r"},'
                 '{"source": "agent", "severity": "minor", "error_tags": '
                 '["tool_call_argument_error"], "reasoning": "r"}]}}')
    clean = '{"review": {"has_errors": false}}'
    return reviews_from_json(["a", "b"], [crit_user, clean])


EPISODES = pd.DataFrame({"episode_id": list("abcd"), "domain": ["x", "x", "x", "y"],
                         "agent_model": ["m"] * 4, "scenario_id": list("pqrs"),
                         "success": [False, False, True, True]})


def test_indicators_by_hand():
    out = failure_indicators(EPISODES, actions=_diff(), reviews=_reviews())
    assert list(out.columns) == ["episode_id", *[c for c in FAILURE_COLUMNS
                                                 if c in out.columns]]
    row = out.set_index("episode_id")
    assert row["failed"].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert row.loc["a", "extra_write"] == 1.0 and row.loc["a", "wrong_arguments"] == 0.0
    assert row.loc["b", "wrong_arguments"] == 1.0 and row.loc["b", "missing_action"] == 1.0
    assert row.loc["c", "diverged"] == 0.0
    assert row.loc["a", "diverged_unexpected_write"] == 1.0
    assert row.loc["b", "diverged_wrong_arguments"] == 1.0
    # d has no row in the action diff and no review: unknown, not 0
    assert math.isnan(row.loc["d", "extra_write"]) and math.isnan(row.loc["d", "user_error"])
    assert row.loc["a", "critical_user_error"] == 1.0 and row.loc["a", "agent_error"] == 1.0
    assert row.loc["a", "critical_agent_error"] == 0.0
    assert row.loc["a", "fault_hallucination"] == 1.0
    assert row.loc["a", "fault_wrong_argument"] == 1.0
    assert row.loc["b", "user_error"] == 0.0 and math.isnan(row.loc["c", "user_error"])


def test_taxonomy_shares_and_cells():
    # domain y holds one episode, and some resamples of x draw none reviewed: both said
    with pytest.warns(DegenerateIntervalWarning,
                      match="fewer than two clusters|some resamples drew no rows") as caught:
        t = failure_taxonomy(EPISODES, actions=_diff(), reviews=_reviews(), by="domain",
                             n_resamples=500, method="percentile")
    said = " ".join(str(w.message) for w in caught)
    assert "'failed' in domain='y'" in said and "'agent_error' in domain='x'" in said
    x = t[t["domain"] == "x"].set_index("metric")
    assert x.loc["failed", "estimate"] == pytest.approx(2 / 3)
    assert x.loc["extra_write", "estimate"] == pytest.approx(1 / 3)
    assert x.loc["critical_user_error", "estimate"] == pytest.approx(1 / 2)
    assert x.loc["critical_user_error", "n_events"] == 2   # reviewed episodes only
    assert x["small_cell"].all()
    assert "fault_wrong_tool" in x.index   # zero, but reviews could have shown it
    ind = t.attrs["indicators"]
    assert cell_episodes(ind, "failed", {"domain": "x"}) == ["a", "b"]
    assert cell_episodes(ind, "extra_write", {"domain": "y"}) == []


def test_failed_only_and_choice_of_columns():
    t = failure_taxonomy(EPISODES, actions=_diff(), by="domain", failed_only=True,
                         failures=["failed", "extra_write", "missing_action"],
                         n_resamples=200, method="percentile")
    x = t.set_index("metric")
    assert set(t["metric"]) == {"extra_write", "missing_action"}
    assert x.loc["extra_write", "estimate"] == 0.5 and x.loc["extra_write", "n_rows"] == 2
    with pytest.raises(ValueError, match="unknown or unavailable failure column"):
        failure_taxonomy(EPISODES, failures=["fault_wrong_tool"])
    with pytest.raises(ValueError, match="lack the column"):
        failure_taxonomy(EPISODES, by="persona")
