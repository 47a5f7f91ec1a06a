"""Task discrimination: 2PL on a separable toy set, point-biserial by hand, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accordkit.stats.discrimination import fit_2pl, task_discrimination


def _guttman(n_configs=6, n_tasks=5, trials=4):
    """Configuration j solves task i on every trial iff j > i (a separable toy set)."""
    rows = []
    for j in range(n_configs):
        for i in range(n_tasks):
            rows += [(f"c{j}", f"t{i}", float(j > i))] * trials
    return pd.DataFrame(rows, columns=["agent_model", "scenario_id", "success"])


def test_2pl_orders_a_separable_toy_set():
    res = task_discrimination(_guttman())
    tasks = res.tasks.set_index("task")
    assert set(tasks.method) == {"2pl"}
    b = tasks.loc[[f"t{i}" for i in range(5)], "difficulty"].to_numpy()
    theta = res.abilities.loc[[f"c{j}" for j in range(6)]].to_numpy()
    assert np.all(np.diff(b) > 0) and np.all(np.diff(theta) > 0)
    # every task is perfectly separating: steep curves, finite thanks to the priors
    assert (tasks.discrimination > 1.5).all() and np.isfinite(tasks.discrimination).all()
    # difficulty lies between the abilities of the last failing and first solving config
    for i in range(5):
        assert theta[i] < b[i] < theta[i + 1]
    assert res.all_solve == [] and res.none_solve == []
    assert sorted(res.separating) == [f"t{i}" for i in range(5)]  # all spread 1


def test_2pl_gives_negative_discrimination_to_a_reversed_task():
    frame = _guttman()
    rev = frame.scenario_id == "t2"
    frame.loc[rev, "success"] = 1.0 - frame.loc[rev, "success"]
    tasks = task_discrimination(frame).tasks.set_index("task")
    # a > 0 by construction (log scale): the reversed task gets the flattest curve
    assert tasks.discrimination.idxmin() == "t2"
    assert tasks.loc["t2", "discrimination"] < 0.5


def test_fit_2pl_recovers_parameters_roughly():
    rng = np.random.default_rng(0)
    theta = np.linspace(-1.5, 1.5, 8)
    b = rng.normal(0, 1, 40)
    a = rng.uniform(0.8, 2.0, 40)
    p = 1 / (1 + np.exp(-a[:, None] * (theta[None, :] - b[:, None])))
    s = rng.binomial(30, p)
    t_hat, _, b_hat = fit_2pl(s, np.full(s.shape, 30))
    assert np.corrcoef(t_hat, theta)[0, 1] > 0.98
    assert np.corrcoef(b_hat, b)[0, 1] > 0.9


def test_point_biserial_by_hand():
    # a: 3 of 4 overall, b: 1 of 4 overall
    frame = pd.DataFrame({"scenario_id": ["t1"] * 4 + ["t2"] * 4,
                          "agent_model": ["a", "a", "b", "b"] * 2,
                          "success": [1, 0, 0, 1, 1, 1, 0, 0]})
    res = task_discrimination(frame)
    tasks = res.tasks.set_index("task")
    assert set(tasks.method) == {"point_biserial"}
    # t1: y = 1,0,0,1 with x = .75,.75,.25,.25 -> uncorrelated; t2: y tracks x exactly
    assert tasks.loc["t1", "discrimination"] == pytest.approx(0.0)
    assert tasks.loc["t2", "discrimination"] == pytest.approx(1.0)
    assert tasks.loc["t2", "difficulty"] == pytest.approx(0.5)
    assert res.success.loc["t1", "a"] == 0.5 and res.success.loc["t2", "b"] == 0.0
    assert res.separating == ["t2"]
    assert res.abilities["a"] == 0.75


def test_all_and_none_solve():
    frame = pd.DataFrame({"scenario_id": ["easy"] * 4 + ["hard"] * 4 + ["mid"] * 4,
                          "agent_model": ["a", "a", "b", "b"] * 3,
                          "success": [1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1, 1]})
    res = task_discrimination(frame)
    assert res.all_solve == ["easy"] and res.none_solve == ["hard"]
    assert np.isnan(res.tasks.set_index("task").loc["easy", "discrimination"])
    loose = task_discrimination(frame, threshold=0.5 + 1e-9)
    assert "mid" not in loose.all_solve


def test_bad_input():
    frame = _guttman()
    with pytest.raises(ValueError, match="binary metric"):
        task_discrimination(frame.assign(success=frame.success * 0.5))
    with pytest.raises(ValueError, match="at least two configurations"):
        task_discrimination(frame.assign(agent_model="one"))
    with pytest.raises(ValueError, match="`threshold` must be"):
        task_discrimination(frame, threshold=0.3)


def test_point_biserial_of_every_task_at_once_equals_the_per_task_correlation():
    """The vectorised form (a run of 83,334 tasks has no Python loop per task) equals
    numpy's corrcoef task by task within 1e-12, with NaN where corrcoef is undefined."""
    from accordkit.stats.discrimination import _point_biserial_by_task

    def _point_biserial(y, x):   # the per-task definition the vectorised form replaced
        if len(y) < 2 or np.all(y == y[0]) or np.all(x == x[0]):
            return np.nan
        return float(np.corrcoef(y, x)[0, 1])

    rng = np.random.default_rng(7)
    for _ in range(40):
        n_tasks, rows = int(rng.integers(1, 50)), int(rng.integers(1, 300))
        codes = rng.integers(0, n_tasks, rows)
        y = (rng.random(rows) < rng.random()).astype(float)
        abilities = rng.random(5).round(3)
        x = abilities[rng.integers(0, int(rng.integers(1, 6)), rows)]
        fast = _point_biserial_by_task(y, x, codes, n_tasks)
        slow = np.array([_point_biserial(y[codes == t], x[codes == t]) for t in range(n_tasks)])
        np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)   # NaNs in the same places
