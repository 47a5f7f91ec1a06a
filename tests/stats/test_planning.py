"""plan_trials: designs that reach the power, checked by simulation; bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from accordkit.stats import _power
from accordkit.stats.planning import design_power, plan_trials


def _frame(n_tasks=80, trials=3, a=2.0, b=2.0, seed=0):
    rng = np.random.default_rng(seed)
    p = np.repeat(rng.beta(a, b, n_tasks), trials)
    return pd.DataFrame({"agent_model": "m", "scenario_id": np.repeat(np.arange(n_tasks), trials),
                         "success": (rng.random(len(p)) < p).astype(float)})


def test_designs_reach_power_and_are_cheapest_first():
    plan = plan_trials(_frame(), effect=[0.1, 0.2], by="agent_model", trials=[1, 2, 4])
    assert set(plan.effect) == {0.1, 0.2}
    for _, part in plan.groupby("effect"):
        assert part.total_trials.is_monotonic_increasing
        assert (part.power >= 0.8).all()
    # one task fewer misses the target
    row = plan.iloc[0]
    below = design_power(row["mean"], row.icc, row.effect, row.n_tasks - 1, row.trials_per_task)
    assert below[0] < 0.8
    # a larger effect needs fewer tasks
    small = plan[plan.effect == 0.1].set_index("trials_per_task").n_tasks
    large = plan[plan.effect == 0.2].set_index("trials_per_task").n_tasks
    assert (large < small).all()


def test_predicted_power_matches_simulation():
    mu, rho, effect, k, m = 0.4, 0.25, 0.12, 40, 3
    a, b = mu * (1 / rho - 1), (1 - mu) * (1 / rho - 1)
    shift = _power.logit_shift(_power.beta_grid(mu, rho), effect)
    rng = np.random.default_rng(7)
    reps = 3000
    p = rng.beta(a, b, (reps, k))
    q = special.expit(special.logit(p) + shift)
    d = rng.binomial(m, q) / m - rng.binomial(m, p) / m
    t = d.mean(1) / (d.std(1, ddof=1) / np.sqrt(k))
    simulated = np.mean(np.abs(t) > stats.t.ppf(0.975, k - 1))
    predicted = float(design_power(mu, rho, effect, k, m)[0])
    assert predicted == pytest.approx(simulated, abs=0.03)  # MC s.e. about 0.009


def test_non_binary_metric_is_an_error():
    frame = _frame().assign(success=lambda f: f.success * 0.5)
    with pytest.raises(ValueError, match="binary metrics only.*non-binary values such as 0.5"):
        plan_trials(frame, effect=0.1)


def test_single_trial_per_task_is_an_error():
    with pytest.raises(ValueError, match="single trial per task"):
        plan_trials(_frame(trials=1), effect=0.1)


def test_group_with_one_task_is_an_error():
    frame = pd.concat([_frame(), _frame(n_tasks=1).assign(agent_model="solo")])
    with pytest.raises(ValueError, match="agent_model='solo'.*one task"):
        plan_trials(frame, effect=0.1, by="agent_model")


def test_effect_outside_range_and_bad_values():
    frame = _frame()
    with pytest.raises(ValueError, match="outside \\(0, 1\\)"):
        plan_trials(frame, effect=0.9)
    with pytest.raises(ValueError, match="non-zero difference"):
        plan_trials(frame, effect=0)
    with pytest.raises(ValueError, match="`trials` must hold positive integers"):
        plan_trials(frame, effect=0.1, trials=[0])
