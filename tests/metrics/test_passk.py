"""pass^k / pass@k: hand-computed multi-trial cases, k range, exclusions, bootstrap, tau2 files."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import accordkit as ak
from accordkit.metrics.passk import pass_hat_k
from accordkit.score import score


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


def test_bootstrap_interval_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(3)
    frame = trials(**{f"t{i}": list(rng.random(3) < 0.6) for i in range(30)})
    one = pass_hat_k(frame, ci="bootstrap", n_resamples=2000, seed=7)
    two = pass_hat_k(frame, ci="bootstrap", n_resamples=2000, seed=7)
    pd.testing.assert_frame_equal(one, two)
    assert (one["ci_low"] <= one["pass_hat_k"]).all()
    assert (one["pass_hat_k"] <= one["ci_high"]).all()
    assert (one["ci_high"] - one["ci_low"] > 0.05).all()
    other = pass_hat_k(frame, ci="bootstrap", n_resamples=2000, seed=8)
    assert not np.allclose(one["ci_low"], other["ci_low"])
    # Identical tasks: every resample gives the same mean.
    flat = pass_hat_k(trials(a=[True, False], b=[True, False]), ci="bootstrap", n_resamples=50)
    assert (flat["ci_low"] == flat["pass_hat_k"]).all() and (flat["ci_high"] ==
                                                               flat["pass_hat_k"]).all()


def test_validation_messages():
    frame = trials(a=[True])
    with pytest.raises(ValueError, match="column 'success_tsr' not in the frame"):
        pass_hat_k(frame, success="success_tsr")
    with pytest.raises(ValueError, match="ci must be None or 'bootstrap'"):
        pass_hat_k(frame, ci="bca")
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
