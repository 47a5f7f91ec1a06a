"""The reliability notebook's tables: benchmark × domain × configuration, never pooled, and
paired differences only on identical task sets (hand-computed frames)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accordkit.tables import reliability as rv

OPTS = {"n_resamples": 200, "seed": 0, "method": "percentile"}
CHOSEN = {"tau2": "success"}


def _rows(domain, tasks, successes, *, agent="a", user="u1", method="llm_agent"):
    """One episode per value of ``successes[task]`` (a list of trials per task)."""
    rows = []
    for task, trials in zip(tasks, successes, strict=True):
        for trial, value in enumerate(trials):
            rows.append({"benchmark": "tau2", "domain": domain, "scenario_id": task,
                         "rollout": trial, "agent_model": agent, "method": method,
                         "user_model": user, "user_implementation": "user_simulator",
                         "success": bool(value)})
    return rows


def _episodes(*rows):
    frame = pd.DataFrame([r for part in rows for r in part])
    frame["success"] = frame["success"].astype("boolean")
    return rv.reliability_episodes(frame)


def test_two_domains_stay_apart():
    # airline: 2 tasks x 2 trials, successes 1,1 | 0,1 -> mean 0.75, 2 trials per task
    # telecom: 3 tasks x 1 trial, successes 1, 0, 1 -> mean 2/3, 1 trial per task
    eps = _episodes(_rows("airline", ["t1", "t2"], [[1, 1], [0, 1]]),
                    _rows("telecom", ["x1", "x2", "x3"], [[1], [0], [1]]))
    floor = rv.noise_floor_table(eps, chosen=CHOSEN).set_index("domain")
    assert list(floor.index) == ["airline", "telecom"]
    assert floor["configuration"].nunique() == 1
    assert floor.loc["airline", "n_tasks"] == 2 and floor.loc["telecom", "n_tasks"] == 3
    assert floor.loc["airline", "trials_per_task"] == 2.0
    assert floor.loc["telecom", "trials_per_task"] == 1.0
    assert floor.loc["airline", "mean"] == pytest.approx(0.75)
    assert floor.loc["telecom", "mean"] == pytest.approx(2 / 3)
    # one configuration per domain: nothing to compare, and domains are never compared
    diffs, plan = rv.differences_vs_noise(eps, floors=floor.reset_index(), chosen=CHOSEN, **OPTS)
    assert diffs.empty
    assert sorted(plan["domain"]) == ["airline", "telecom"] and not plan["comparable"].any()
    assert set(plan["reason"]) == {"the only configuration here"}


def test_different_user_simulators_stay_apart():
    # same agent, same tasks; user u1: every trial succeeds (mean 1), user u2: 1,0 | 0,0
    # (mean 0.25) -> two configurations, paired delta 0.25 - 1 = -0.75 over 2 tasks
    eps = _episodes(_rows("airline", ["t1", "t2"], [[1, 1], [1, 1]], user="u1"),
                    _rows("airline", ["t1", "t2"], [[1, 0], [0, 0]], user="u2"))
    u1 = "a (llm_agent) | user: u1 (user_simulator)"
    u2 = "a (llm_agent) | user: u2 (user_simulator)"
    floor = rv.noise_floor_table(eps, chosen=CHOSEN)
    assert list(floor["configuration"]) == [u1, u2]
    assert list(floor["mean"]) == pytest.approx([1.0, 0.25])
    assert list(floor["n_tasks"]) == [2, 2]
    diffs, plan = rv.differences_vs_noise(eps, floors=floor, chosen=CHOSEN, **OPTS)
    assert plan["comparable"].all()
    assert len(diffs) == 1
    row = diffs.iloc[0]
    assert (row["configuration"], row["baseline"]) == (u2, u1)  # tie on tasks: sort order
    assert row["delta"] == pytest.approx(-0.75) and row["n_pairs"] == 2
    plans, _ = rv.plan_trials_table(eps, chosen=CHOSEN)
    if len(plans):
        assert set(plans["configuration"]) <= {u1, u2}


@pytest.mark.parametrize("other", [["t3", "t4"], ["t2", "t3"]], ids=["disjoint", "overlap"])
def test_other_task_sets_are_not_compared(other):
    eps = _episodes(_rows("airline", ["t1", "t2"], [[1, 0], [1, 1]], agent="a"),
                    _rows("airline", other, [[0, 0], [0, 1]], agent="b"))
    floor = rv.noise_floor_table(eps, chosen=CHOSEN)
    diffs, plan = rv.differences_vs_noise(eps, floors=floor, chosen=CHOSEN, **OPTS)
    assert diffs.empty
    assert list(diffs.columns) == ["benchmark", "domain", *rv._DIFF_COLUMNS]
    row = plan.set_index("between_value").loc["b (llm_agent) | user: u1 (user_simulator)"]
    shared = len({"t1", "t2"} & set(other))
    assert not row["comparable"] and row["n_shared"] == shared
    assert row["reason"] == (f"shares {shared} task(s) with a (llm_agent) | user: u1 "
                             "(user_simulator) (ran 2 and 2): fewer than 2")


def test_unknown_agent_model_is_labelled_question_mark():
    rows = _rows("airline", ["t1", "t2"], [[1, 0], [1, 1]])
    for r in rows:
        r["agent_model"] = np.nan
    eps = _episodes(rows)
    floor = rv.noise_floor_table(eps, chosen=CHOSEN)
    assert list(floor["configuration"]) == ["? (llm_agent) | user: u1 (user_simulator)"]
    assert floor["n_tasks"].iloc[0] == 2 and floor["mean"].iloc[0] == pytest.approx(0.75)


def test_mdd_is_the_larger_of_the_two_and_unknown_when_either_is():
    eps = _episodes(_rows("airline", ["t1", "t2"], [[1, 1], [1, 1]], user="u1"),
                    _rows("airline", ["t1", "t2"], [[1, 0], [0, 0]], user="u2"))
    u1 = "a (llm_agent) | user: u1 (user_simulator)"
    u2 = "a (llm_agent) | user: u2 (user_simulator)"
    floor = pd.DataFrame({"benchmark": "tau2", "domain": "airline",
                          "configuration": [u1, u2], "mdd": [0.1, 0.3]})
    diffs, _ = rv.differences_vs_noise(eps, floors=floor, chosen=CHOSEN, **OPTS)
    assert diffs["mdd"].iloc[0] == pytest.approx(0.3)
    assert bool(diffs["exceeds_noise_floor"].iloc[0])  # |-0.75| >= 0.3
    for mdd in ([np.nan, 0.3], [0.3, np.nan]):
        diffs, _ = rv.differences_vs_noise(eps, floors=floor.assign(mdd=mdd), chosen=CHOSEN, **OPTS)
        assert np.isnan(diffs["mdd"].iloc[0])
        # unknown, not "no": the test could not be made (it asserted False before)
        assert pd.isna(diffs["exceeds_noise_floor"].iloc[0])
        assert diffs["noise_floor_note"].iloc[0] == "no noise floor"


def test_one_trial_per_task_needs_two_trials_not_no():
    """One trial per task: the noise-floor test is impossible. The difference says so
    (missing, with the reason), never exceeds_noise_floor = False; the plans say it once."""
    eps = _episodes(_rows("airline", ["t1", "t2", "t3", "t4"], [[1], [1], [1], [0]],
                          user="u1"),
                    _rows("airline", ["t1", "t2", "t3", "t4"], [[0], [0], [1], [0]],
                          user="u2"),
                    _rows("airline", ["t1", "t2", "t3", "t4"], [[0], [1], [1], [0]],
                          user="u3"))
    floor = rv.noise_floor_table(eps, chosen=CHOSEN)
    assert floor["mdd"].isna().all()
    diffs, _ = rv.differences_vs_noise(eps, floors=floor, chosen=CHOSEN, **OPTS)
    assert len(diffs) == 3          # every pair that shares tasks: u1-u2, u1-u3, u2-u3
    assert diffs["exceeds_noise_floor"].isna().all()
    assert str(diffs["exceeds_noise_floor"].dtype) == "boolean"
    assert (diffs["noise_floor_note"] == rv.NEEDS_TRIALS).all()
    assert rv.NEEDS_TRIALS == "needs ≥ 2 trials per task"
    # the delta itself is still there: 0.25 - 0.75 between u1 and u2
    assert diffs["delta"].abs().max() == pytest.approx(0.5)
    plans, notes = rv.plan_trials_table(eps, chosen=CHOSEN)
    assert plans.empty
    assert len(notes) == 1 and rv.NEEDS_TRIALS in notes[0]
    assert notes[0].startswith("3 group(s) ran one trial per task")
    assert len(rv.single_trial_groups(eps)) == 3


def test_the_noise_test_stands_where_both_sides_have_trials():
    eps = _episodes(_rows("airline", ["t1", "t2"], [[1, 1], [1, 1]], user="u1"),
                    _rows("airline", ["t1", "t2"], [[1, 0], [0, 0]], user="u2"))
    floor = pd.DataFrame({"benchmark": "tau2", "domain": "airline",
                          "configuration": ["a (llm_agent) | user: u1 (user_simulator)",
                                            "a (llm_agent) | user: u2 (user_simulator)"],
                          "mdd": [0.1, 0.3], "flag": ["", ""]})
    diffs, _ = rv.differences_vs_noise(eps, floors=floor, chosen=CHOSEN, **OPTS)
    assert diffs["exceeds_noise_floor"].tolist() == [True]
    assert diffs["noise_floor_note"].tolist() == [""]
    assert rv.single_trial_groups(eps) == []


def test_by_pools_domains_only_when_asked_and_needs_the_benchmark():
    """``by`` is every reliability table's groups: without ``domain`` the two domains' tasks
    are one pool (4 tasks per configuration); ``benchmark`` is always needed (its metric)."""
    # u1 succeeds every trial; u2: airline t1 1,0 | t2 0,0, telecom x1 0,0 | x2 0,0 ->
    # pooled mean 1/8, paired over the 4 shared tasks: delta 1/8 - 1 = -7/8 (per domain:
    # -0.75 and -1)
    eps = _episodes(_rows("airline", ["t1", "t2"], [[1, 1], [1, 1]], user="u1"),
                    _rows("airline", ["t1", "t2"], [[1, 0], [0, 0]], user="u2"),
                    _rows("telecom", ["x1", "x2"], [[1, 1], [1, 1]], user="u1"),
                    _rows("telecom", ["x1", "x2"], [[0, 0], [0, 0]], user="u2"))
    per_domain = rv.noise_floor_table(eps, chosen=CHOSEN)
    assert len(per_domain) == 4
    diffs, _ = rv.differences_vs_noise(eps, floors=per_domain, chosen=CHOSEN, **OPTS)
    assert diffs.set_index("domain")["delta"].to_dict() == pytest.approx(
        {"airline": -0.75, "telecom": -1.0})

    pooled = rv.noise_floor_table(eps, by=("benchmark", "configuration"), chosen=CHOSEN)
    assert list(pooled.columns[:3]) == ["benchmark", "configuration", "metric"]
    assert list(pooled["n_tasks"]) == [4, 4]
    assert list(pooled["mean"]) == pytest.approx([1.0, 1 / 8])
    diffs, plan = rv.differences_vs_noise(eps, floors=pooled, by=("benchmark",),
                                          chosen=CHOSEN, **OPTS)
    assert "domain" not in diffs and "domain" not in plan
    assert len(diffs) == 1 and diffs["n_pairs"].iloc[0] == 4
    assert diffs["delta"].iloc[0] == pytest.approx(-7 / 8)
    # the pooled floors are the ones looked up (u1 never fails: no floor; the note joins
    # both configurations' pooled flags)
    assert np.isnan(pooled["mdd"].iloc[0]) and np.isnan(diffs["mdd"].iloc[0])
    assert set(diffs["noise_floor_note"].iloc[0].split("; ")) == set(pooled["flag"])
    assert list(rv.discrimination_tables(eps, by=("benchmark",), chosen=CHOSEN)) == [("tau2",)]
    # the metric is chosen per benchmark when none is given
    assert rv.noise_floor_table(eps).equals(per_domain)

    with pytest.raises(ValueError, match="noise_floor_table needs 'benchmark' among `by`"):
        rv.noise_floor_table(eps, by=("domain", "configuration"))
    with pytest.raises(ValueError, match=r"floors lack the columns \['domain'\]"):
        rv.differences_vs_noise(eps, floors=pooled, chosen=CHOSEN, **OPTS)
