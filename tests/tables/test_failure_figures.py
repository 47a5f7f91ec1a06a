"""The frames behind the error analysis's figures, against hand-computed values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accordkit.stats import DegenerateIntervalWarning
from accordkit.tables import cost_frontier, cost_per_success, divergence_turns


def _actions():
    # a: diverged at turn 3; b: at turn 1; c: matched all (no divergence); d: at 3
    return pd.DataFrame({"episode_id": ["a", "a", "b", "c", "d"],
                         "first_divergence_turn": pd.array([3, 3, 1, None, 3], "Int64"),
                         "divergence_reason": ["missing", "missing", "extra", None,
                                               "wrong_arguments"]})


def test_divergence_turns_count_each_groups_episodes_at_their_turn():
    eps = pd.DataFrame({"episode_id": ["a", "b", "c", "d", "e"],
                        "configuration": ["x", "x", "x", "y", "y"]})   # e: no expected action
    t = divergence_turns(_actions(), episodes=eps)
    x = t[t["configuration"] == "x"].set_index("turn")
    y = t[t["configuration"] == "y"].set_index("turn")
    assert x["episodes"].to_dict() == {0: 0, 1: 1, 2: 0, 3: 1}
    assert y["episodes"].to_dict() == {0: 0, 1: 0, 2: 0, 3: 1}
    # the denominator: the group's episodes with expected actions (3 of x, 1 of y: not e)
    assert x["n_episodes"].unique().tolist() == [3] and y["n_episodes"].unique().tolist() == [1]
    assert x.loc[3, "share"] == pytest.approx(1 / 3) and y.loc[3, "share"] == 1.0
    # bins: turns 0-1 and 2 on
    binned = divergence_turns(_actions(), episodes=eps, bins=[0, 2])
    assert binned[binned["configuration"] == "x"]["episodes"].tolist() == [1, 1]
    with pytest.raises(KeyError, match="persona"):
        divergence_turns(_actions(), episodes=eps, by="persona")


def test_cost_per_success_is_total_cost_over_successes_with_intervals():
    eps = pd.DataFrame({"configuration": ["x"] * 4 + ["y"] * 4,
                        "scenario_id": ["t1", "t1", "t2", "t2"] * 2,
                        "agent_cost": [0.1, 0.1, 0.3, 0.3, 1.0, 1.0, 1.0, np.nan],
                        "success": [True, False, True, True, False, False, False, True]})
    with pytest.warns(DegenerateIntervalWarning, match="cost_per_success"):   # y solved none
        t = cost_per_success(eps, n_resamples=200, method="percentile", seed=0)
    est = t.set_index(["configuration", "metric"])["estimate"]
    # x: 0.8 spent, 3 solved; y: 3.0 spent on the 3 episodes with a cost, none solved
    assert est[("x", "cost_per_success")] == pytest.approx(0.8 / 3)
    assert est[("x", "cost_per_episode")] == pytest.approx(0.2)
    assert est[("x", "success_rate")] == pytest.approx(0.75)
    assert np.isnan(est[("y", "cost_per_success")])   # nothing solved: no number, never 0
    assert est[("y", "success_rate")] == 0.0
    row = t[(t["configuration"] == "x") & (t["metric"] == "cost_per_success")].iloc[0]
    assert row["ci_low"] <= row["estimate"] <= row["ci_high"]
    # a run that stores no cost: an empty table, not zeros
    assert cost_per_success(eps.drop(columns="agent_cost"), n_resamples=50).empty


def test_the_frontier_keeps_what_no_other_configuration_beats_on_both():
    t = pd.DataFrame({"configuration": list("aabbccdd"),
                      "metric": ["cost_per_episode", "success_rate"] * 4,
                      "estimate": [1.0, .5, 2.0, .9, 3.0, .8, 1.0, .4],
                      "ci_low": [.9, .4, 1.8, .8, 2.9, .7, .9, .3],
                      "ci_high": [1.1, .6, 2.2, 1.0, 3.1, .9, 1.1, .5]})
    f = cost_frontier(t).set_index("configuration")
    # a: cheapest with .5; b: best; c: beaten by b (cheaper, better); d: as cheap as a, worse
    assert f["on_frontier"].to_dict() == {"a": True, "d": False, "b": True, "c": False}
    assert f.loc["b", ["cost_low", "success_high"]].tolist() == [1.8, 1.0]
