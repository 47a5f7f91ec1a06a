"""pass^k / pass@k: hand-computed multi-trial cases, k range, exclusions, intervals, the two
trial rules, grouping by domain x configuration, empty inputs, tau2 and τ-bench files."""

from __future__ import annotations

import json
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import accordkit as ak
from accordkit.metrics.passk import pass_hat_k_tasks
from accordkit.score import score
from accordkit.stats import BCaFallbackWarning
from accordkit.tables.passk import pass_hat_k

from ..conftest import FIXTURES, _need


def trials(**tasks):
    """Frame with one row per trial: ``task=[True, False, ...]``."""
    rows = [{"scenario_id": t, "success": s} for t, outcomes in tasks.items() for s in outcomes]
    return pd.DataFrame(rows)


def test_several_trials_per_task_hand_computed():
    # a: 3/3, b: 2/3, c: 0/3
    frame = trials(a=[True] * 3, b=[True, True, False], c=[False] * 3)
    out = pass_hat_k(frame)
    assert out["k"].tolist() == [1, 2, 3]
    # pass^1 = (1 + 2/3 + 0)/3; pass^2 = (1 + C(2,2)/C(3,2) + 0)/3; pass^3 = (1 + 0 + 0)/3
    assert out["pass_hat_k"].tolist() == pytest.approx([5 / 9, (1 + 1 / 3) / 3, 1 / 3])
    # pass@1 = pass^1; pass@2 = (1 + 1 + 0)/3 (b: 1 - C(1,2)/C(3,2) = 1)
    assert out["pass_at_k"].tolist() == pytest.approx([5 / 9, 2 / 3, 2 / 3])
    assert out["n_tasks"].tolist() == [3, 3, 3]
    assert out["n_episodes"].tolist() == [9, 9, 9]


def test_k_is_capped_by_the_smallest_task_and_the_declared_trials():
    frame = trials(a=[True] * 4, b=[True, False])
    assert pass_hat_k(frame)["k"].tolist() == [1, 2]
    frame["num_trials"] = 4
    with pytest.warns(UserWarning, match="fewer than the declared 4; k is capped at 2"):
        out = pass_hat_k(frame)
    assert out["k"].tolist() == [1, 2]
    frame = trials(a=[True] * 4, b=[True] * 4).assign(num_trials=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pass_hat_k(frame)["k"].tolist() == [1, 2, 3]


def test_explicit_ks_skip_tasks_with_too_few_trials():
    frame = trials(a=[True] * 4, b=[True, False])
    out = pass_hat_k(frame, ks=[1, 3])
    assert out["n_tasks"].tolist() == [2, 1]
    assert out["pass_hat_k"].tolist() == pytest.approx([0.75, 1.0])
    assert pass_hat_k(frame, ks=2)["pass_hat_k"].tolist() == [0.5]


def test_infrastructure_errors_and_missing_success_are_excluded_and_counted():
    frame = trials(a=[True, True, False], b=[True, False, True])
    frame["termination_reason"] = ["user_stop"] * 5 + ["infrastructure_error"]
    frame["success"] = frame["success"].astype("boolean")
    frame.loc[0, "success"] = pd.NA
    out = pass_hat_k(frame)
    assert out["n_excluded"].tolist() == [2, 2] and out["n_episodes"].tolist() == [4, 4]
    # a: 1/2 trials, b: 1/2 trials
    assert out["pass_hat_k"].tolist() == pytest.approx([0.5, 0.0])


def test_groups_and_column_names():
    frame = pd.concat([trials(a=[True, True], b=[False, True]).assign(agent_model="m1"),
                       trials(a=[False, False], b=[True, True]).assign(agent_model="m2")])
    frame = frame.rename(columns={"scenario_id": "task", "success": "ok"})
    out = pass_hat_k(frame, by="agent_model", success="ok", task="task")
    assert out[["agent_model", "k", "pass_hat_k"]].values.tolist() == [
        ["m1", 1, 0.75], ["m1", 2, 0.5], ["m2", 1, 0.5], ["m2", 2, 0.5]]


def test_interval_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(3)
    frame = trials(**{f"t{i}": list(rng.random(3) < 0.6) for i in range(30)})
    one = pass_hat_k(frame, ci=True, n_resamples=2000, seed=7)
    two = pass_hat_k(frame, ci=True, n_resamples=2000, seed=7)
    pd.testing.assert_frame_equal(one, two)
    assert (one["ci_low"] <= one["pass_hat_k"]).all()
    assert (one["pass_hat_k"] <= one["ci_high"]).all()
    assert (one["ci_high"] - one["ci_low"] > 0.05).all()
    assert set(one["ci_method"]) == {"bca"}
    assert not one["small_cell"].any()                      # 30 tasks
    few = pass_hat_k(trials(a=[True, False], b=[True, True], c=[False, False]), ci=True,
                     n_resamples=200)
    assert few["small_cell"].all()                          # 3 tasks: flagged, as summarize does
    other = pass_hat_k(frame, ci=True, n_resamples=2000, seed=8, confidence=0.8)
    assert (other["ci_high"] - other["ci_low"] <= one["ci_high"] - one["ci_low"]).all()
    assert not np.allclose(one[["ci_low", "ci_high"]], other[["ci_low", "ci_high"]])
    # Identical tasks: every resample gives the same mean (BCa falls back to percentile).
    with pytest.warns(UserWarning, match="BCa interval undefined"):
        flat = pass_hat_k(trials(a=[True, False], b=[True, False]), ci=True, n_resamples=50)
    assert (flat["ci_low"] == flat["pass_hat_k"]).all() and (flat["ci_high"] ==
                                                               flat["pass_hat_k"]).all()


def test_validation_messages():
    frame = trials(a=[True])
    with pytest.raises(ValueError, match="column 'success_tsr' not in the frame"):
        pass_hat_k(frame, success="success_tsr")
    with pytest.raises(ValueError, match="ci must be True, False or None"):
        pass_hat_k(frame, ci="bca")
    with pytest.raises(ValueError, match="rule must be one of"):
        pass_hat_k(frame, rule="upstream")
    with pytest.raises(ValueError, match="column 'rollout' not in the frame"):
        pass_hat_k(frame, rule="taubench")
    with pytest.raises(ValueError, match="ks must be positive integers"):
        pass_hat_k(frame, ks=[0])


def test_tau2_fixture_values(tau2_dir):
    airline = score(ak.load(tau2_dir / "airline_grok-3_4tasks_4trials.json"))
    out = pass_hat_k(airline)
    assert out["k"].tolist() == [1, 2, 3, 4]
    assert out["pass_hat_k"].tolist() == pytest.approx([0.4375, 0.25, 0.25, 0.25], abs=1e-12)
    assert airline["reward"].mean() == pytest.approx(0.4375)
    telecom = score(ak.load(tau2_dir / "telecom_grok-3_5tasks_1trial.json"))
    out = pass_hat_k(telecom)
    assert out["k"].tolist() == [1] and out["pass_hat_k"].iloc[0] == pytest.approx(0.8)


def test_pass_hat_k_agrees_with_tau2_to_rounding_and_keeps_its_own_order(tau2_dir):
    """Issue 32: accordkit averages tasks in task-id order, tau2 in its own order, which
    moved one public file's pass^2 by one unit in the last place (5.6e-17). The numbers
    agree to rounding (1e-12, the fixture's README values), and accordkit's own order
    makes them the same bits whatever the order of the rows."""
    readme = (tau2_dir / "README.md").read_text(encoding="utf-8")
    number = r"(\d+(?:\.\d+)?)"
    airline = re.search(", ".join(rf"pass\^{k} = {number}" for k in range(1, 5)), readme)
    telecom = re.search(rf"avg_reward = pass\^1 = {number}", readme)
    scores = score(ak.load(tau2_dir / "airline_grok-3_4tasks_4trials.json"))
    got = pass_hat_k(scores)["pass_hat_k"].to_numpy()
    want = np.array([float(v) for v in airline.groups()])
    assert np.max(np.abs(got - want)) <= 1e-12
    shuffled = scores.sample(frac=1.0, random_state=3).reset_index(drop=True)
    assert pass_hat_k(shuffled)["pass_hat_k"].to_numpy().tobytes() == got.tobytes()
    one = pass_hat_k(score(ak.load(tau2_dir / "telecom_grok-3_5tasks_1trial.json")))
    assert abs(one["pass_hat_k"].iloc[0] - float(telecom.group(1))) <= 1e-12


def test_interval_comes_from_summarize_on_the_per_task_values():
    rng = np.random.default_rng(5)
    frame = trials(**{f"t{i}": list(rng.random(4) < 0.5) for i in range(25)})
    out = pass_hat_k(frame, ci=True, method="percentile", confidence=0.9, n_resamples=999,
                     seed=3)
    per_task = pass_hat_k_tasks(frame)
    want = ak.summarize(per_task, "pass_hat_k", by="k", cluster="scenario_id",
                        method="percentile", confidence=0.9, n_resamples=999, seed=3)
    assert out["ci_low"].tolist() == want["ci_low"].tolist()
    assert out["ci_high"].tolist() == want["ci_high"].tolist()
    assert out["pass_hat_k"].tolist() == pytest.approx(want["estimate"].tolist(), abs=1e-12)
    assert set(out["ci_method"]) == {"percentile"}


def test_old_ci_spelling_still_works_with_a_deprecation_warning():
    frame = trials(a=[True, False, True], b=[True, True, False], c=[False, True, True])
    # three tasks: the k=3 cell is constant, so each interval falls back (and says so)
    bca = pytest.warns(BCaFallbackWarning, match="'pass_hat_k' in k=3")
    with pytest.warns(DeprecationWarning, match="ci=True"), bca:
        old = pass_hat_k(frame, ci="bootstrap", n_resamples=200)
    with pytest.warns(BCaFallbackWarning, match="'pass_hat_k' in k=3"):
        new = pass_hat_k(frame, ci=True, n_resamples=200)
    pd.testing.assert_frame_equal(old, new)


def test_per_task_rows_hand_computed():
    frame = pd.concat([trials(a=[True, True, False], b=[False, False, True]).assign(domain="d1"),
                       trials(a=[True, True]).assign(domain="d2")])
    out = pass_hat_k_tasks(frame)
    assert list(out.columns) == ["domain", "scenario_id", "k", "n_trials", "n_successes",
                                 "pass_hat_k", "pass_at_k"]
    d1 = out[out["domain"] == "d1"]
    assert d1[["scenario_id", "k"]].values.tolist() == [["a", 1], ["a", 2], ["a", 3],
                                                         ["b", 1], ["b", 2], ["b", 3]]
    # a: c=2 of n=3 -> pass^2 = C(2,2)/C(3,2) = 1/3; b: c=1 -> pass@2 = 1 - C(2,2)/C(3,2) = 2/3
    assert d1["pass_hat_k"].tolist() == pytest.approx([2 / 3, 1 / 3, 0, 1 / 3, 0, 0])
    assert d1["pass_at_k"].tolist() == pytest.approx([2 / 3, 1, 1, 1 / 3, 2 / 3, 1])
    d2 = out[out["domain"] == "d2"]
    assert d2["k"].tolist() == [1, 2] and d2["n_trials"].tolist() == [2, 2]
    # The group table is the mean of these rows.
    table = pass_hat_k(frame)
    assert table[table["domain"] == "d1"]["pass_hat_k"].tolist() == pytest.approx(
        [0.5, 1 / 6, 0.0])


def test_taubench_rule_divides_every_task_by_the_trials_of_the_whole_group():
    # Task a ran 4 trials (3 successes); task b only 2 (both successes): T = 4.
    frame = trials(a=[True, True, True, False], b=[True, True])
    frame["rollout"] = [0, 1, 2, 3, 0, 1]
    tau = pass_hat_k(frame, rule="taubench")
    assert tau["k"].tolist() == [1, 2, 3, 4]
    # by hand: mean over tasks of C(c, k) / C(4, k)
    want = [(math.comb(3, k) + math.comb(2, k)) / math.comb(4, k) / 2 for k in range(1, 5)]
    assert tau["pass_hat_k"].tolist() == pytest.approx(want)
    # the per-task rule uses each task's own n and stops at the smallest n
    own = pass_hat_k(frame)
    assert own["k"].tolist() == [1, 2]
    assert own["pass_hat_k"].tolist() == pytest.approx([(3 / 4 + 1) / 2, (3 / 6 + 1) / 2])
    # with every task at T trials the two rules agree
    full = trials(a=[True, False, True], b=[False, False, True]).assign(rollout=[0, 1, 2] * 2)
    pd.testing.assert_frame_equal(pass_hat_k(full), pass_hat_k(full, rule="taubench"))


def test_default_grouping_is_domain_by_configuration_and_keeps_missing_values():
    base = trials(a=[True, False], b=[True, True])
    frame = pd.concat([
        base.assign(domain="airline", agent_model="m", method="tool-calling"),
        base.assign(domain="retail", agent_model="m", method="tool-calling"),
        base.assign(domain="airline", agent_model="m", method="react"),
        base.assign(domain="airline", agent_model="m", method=None),
    ], ignore_index=True)
    out = pass_hat_k(frame, ks=1)
    assert list(out.columns[:3]) == ["domain", "agent_model", "method"]
    assert len(out) == 4                      # method None is its own configuration
    assert out["method"].isna().sum() == 1
    assert (out["n_episodes"] == 4).all()
    with pytest.warns(UserWarning, match="pools 2 domains"):
        pooled = pass_hat_k(frame, ks=1, by="agent_model")
    assert pooled["n_episodes"].tolist() == [16]
    assert pass_hat_k(frame, ks=1, by=[])["n_episodes"].tolist() == [16]


def test_empty_frames_give_empty_typed_tables():
    empty = trials().assign(success=pd.Series(dtype="boolean"),
                            scenario_id=pd.Series(dtype=object))
    for ci in (None, True):
        out = pass_hat_k(empty, ci=ci)
        assert out.empty and out["k"].dtype == np.int64 and out["pass_hat_k"].dtype == float
    assert pass_hat_k_tasks(empty).empty


def test_header_only_file_gives_an_empty_pass_hat_k():
    path = _need(FIXTURES / "agentchangebench" / "retail_gpt-4.1_header-only_0sims.json")
    episodes = ak.score(ak.load(path))
    assert episodes.empty and episodes["success"].dtype == "boolean"
    assert episodes["reward"].dtype == float
    out = ak.pass_hat_k(episodes)
    assert out.empty
    assert list(out.columns) == ["domain", "agent_model", "method", "user_model",
                                 "user_implementation", "k", "pass_hat_k", "pass_at_k",
                                 "n_tasks", "n_episodes", "n_excluded"]
    assert out["n_tasks"].dtype == np.int64 and out["pass_at_k"].dtype == float


def _taubench_by_hand(records, ks):
    """τ-bench run.py display_metrics, written out: T = distinct trials in the file."""
    big_t = len({r["trial"] for r in records})
    per_task = {}
    for r in records:
        per_task.setdefault(r["task_id"], 0)
        per_task[r["task_id"]] += int(1 - 1e-6 <= r["reward"] <= 1 + 1e-6)
    return {k: sum(math.comb(c, k) / math.comb(big_t, k) for c in per_task.values())
            / len(per_task) for k in ks}


def test_taubench_fixture_reproduces_taubench_numbers():
    path = _need(FIXTURES / "taubench" / "airline_gpt-4o_3tasks_4trials.json")
    records = json.loads(path.read_text())
    with pytest.warns(UserWarning, match="does not say the agent model"):
        episodes = ak.score(ak.load(path))
    assert episodes["reward"].mean() == pytest.approx(
        sum(r["reward"] for r in records) / len(records))
    want = _taubench_by_hand(records, range(1, 5))
    for rule in ("taubench", "per_task"):     # every task has all T = 4 trials here
        out = ak.pass_hat_k(episodes, rule=rule)
        assert out["k"].tolist() == [1, 2, 3, 4]
        assert out["pass_hat_k"].tolist() == pytest.approx([want[k] for k in range(1, 5)],
                                                           abs=1e-15)
    # README: successes 0/4, 1/4, 1/4 -> pass^1 = 1/6
    assert want[1] == pytest.approx(1 / 6)
    # Drop two trials of task 2 (its success stays): T stays 4 under τ-bench's rule only.
    short = [r for r in records if not (r["task_id"] == 2 and r["trial"] in (0, 3))]
    kept = episodes[~((episodes["task_id"] == "2") & episodes["rollout"].isin([0, 3]))]
    want = _taubench_by_hand(short, range(1, 5))
    tau = ak.pass_hat_k(kept, rule="taubench")
    assert tau["pass_hat_k"].tolist() == pytest.approx([want[k] for k in range(1, 5)],
                                                       abs=1e-15)
    assert want[1] == pytest.approx((0 + 1 / 4 + 1 / 4) / 3)
    with pytest.warns(UserWarning, match="k is capped at 2"):
        own = ak.pass_hat_k(kept)
    assert own["pass_hat_k"].iloc[0] == pytest.approx((0 + 1 / 4 + 1 / 2) / 3)


def _binary_runs(rewards_by_task):
    rows = []
    for task, rewards in rewards_by_task.items():
        for trial, r in enumerate(rewards):
            rows.append({"domain": "airline", "configuration": "c", "scenario_id": task,
                         "rollout": trial, "reward": float(r), "success": r == 1})
    return pd.DataFrame(rows)


def test_one_interval_for_mean_reward_and_pass1():
    """0/1 rewards on equal trials: mean reward and pass^1 are one number and show one
    interval; a partial reward or unequal trials make them two quantities."""
    import warnings

    from accordkit.stats import BCaFallbackWarning
    from accordkit.tables.tau2 import one_interval, pass_k_table, reward_table

    opts = {"n_resamples": 400, "seed": 0, "method": "percentile"}
    group = ["domain", "configuration"]

    def both(frame):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BCaFallbackWarning)
            reward = reward_table(frame, by=group, cluster="scenario_id", **opts)
            passk = pass_k_table(frame, by=group, **opts)
        reward = reward[reward["metric"] == "mean reward"]
        return reward, one_interval(passk, reward=reward, frame=frame, by=group)

    # 12 tasks x 2 trials, rewards 0/1: mean = pass^1 = 13/24
    frame = _binary_runs({f"t{i}": ([1, 1] if i < 5 else [1, 0] if i < 8 else [0, 0])
                          for i in range(12)})
    reward, passk = both(frame)
    one = passk[passk["k"] == 1].iloc[0]
    assert one["pass_hat_k"] == pytest.approx(reward["estimate"].iloc[0]) \
        == pytest.approx(13 / 24)
    assert (one["ci_low"], one["ci_high"]) == (reward["ci_low"].iloc[0],
                                               reward["ci_high"].iloc[0])
    assert one["interval_of"] == "mean reward"
    assert passk.loc[passk["k"] == 2, "interval_of"].isna().all()
    # a partial reward: two quantities, each its own interval
    partial = frame.copy()
    partial.loc[0, "reward"] = 0.5
    partial.loc[0, "success"] = False
    _, passk = both(partial)
    assert passk["interval_of"].isna().all()
    # unequal trials: mean over episodes 2/3 vs over tasks 0.5: not one number
    uneven = _binary_runs({"a": [1, 1, 1, 1], "b": [0, 0]})
    from accordkit.tables.passk import one_interval as raw
    pk = pd.DataFrame({"domain": ["airline"], "configuration": ["c"], "k": [1],
                       "pass_hat_k": [0.5], "ci_low": [0.0], "ci_high": [1.0]})
    rw = pd.DataFrame({"domain": ["airline"], "configuration": ["c"],
                       "estimate": [4 / 6], "ci_low": [0.3], "ci_high": [0.9]})
    assert raw(pk, reward=rw, frame=uneven, by=group)["interval_of"].isna().all()
