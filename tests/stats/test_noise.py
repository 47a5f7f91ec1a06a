"""noise_floor: variance components on hand-computed tables, flags for what cannot be estimated."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accordkit.stats.noise import noise_floor, variance_components


def _frame(groups: dict[str, list[float]], model: str = "a") -> pd.DataFrame:
    rows = [(model, task, v) for task, values in groups.items() for v in values]
    return pd.DataFrame(rows, columns=["agent_model", "scenario_id", "success"])


def test_balanced_components_by_hand():
    # tasks: [1, 1], [0, 0], [1, 0]; task means 1, 0, .5; grand mean .5
    # SSW = .5, MSW = .5 / 3; MSB = 2 * (.25 + .25 + 0) / 2 = .5; n0 = 2
    row = noise_floor(_frame({"t1": [1, 1], "t2": [0, 0], "t3": [1, 0]})).iloc[0]
    assert row.n_tasks == 3 and row.trials_per_task == 2.0
    assert row["mean"] == pytest.approx(0.5)
    assert row.var_within == pytest.approx(1 / 6)
    assert row.var_between == pytest.approx((0.5 - 1 / 6) / 2)
    assert row.icc == pytest.approx(0.5)
    assert row.flip_rate == pytest.approx(1 / 3)
    # CR1 standard error: e_c = (sum_c - .5 n_c) / 6 = (1/6, -1/6, 0); var = 3/2 * 2/36
    assert row.se == pytest.approx(np.sqrt(1.5 * 2 / 36))
    # three tasks: a paired t test with 2 df cannot reach 80 % power within (0, 1)
    assert np.isnan(row.mdd)
    assert row.flag == "no detectable difference within the range of the metric"


def test_mdd_is_the_effect_with_the_target_power():
    from accordkit.stats.planning import design_power

    rng = np.random.default_rng(5)
    p = np.repeat(rng.beta(2, 3, 50), 3)
    frame = pd.DataFrame({"scenario_id": np.repeat(np.arange(50), 3),
                          "success": rng.random(150) < p})
    row = noise_floor(frame).iloc[0]
    assert row.flag == ""
    assert design_power(row["mean"], row.icc, row.mdd, 50, 3)[0] == pytest.approx(0.8, abs=1e-4)
    assert design_power(row["mean"], row.icc, row.mdd * 0.9, 50, 3)[0] < 0.8


def test_unbalanced_components_by_hand():
    # tasks [1, 1, 1, 0] (mean .75) and [0, 1] (mean .5); N = 6, k = 2
    values = np.array([1.0, 1, 1, 0, 0, 1])
    codes = np.array([0, 0, 0, 0, 1, 1])
    vc = variance_components(values, codes)
    ssw = 3 * 0.0625 + 0.5625 + 0.25 + 0.25
    assert vc.var_within == pytest.approx(ssw / 4)
    grand = 4 / 6
    msb = 4 * (0.75 - grand) ** 2 + 2 * (0.5 - grand) ** 2
    n0 = 6 - (16 + 4) / 6
    assert vc.var_between == pytest.approx(max(0.0, (msb - ssw / 4) / n0))
    assert vc.trials_per_task == 3.0 and vc.trials_harmonic == pytest.approx(2 / (1 / 4 + 1 / 2))
    assert vc.flip_rate == 1.0


def test_negative_between_estimate_is_truncated_and_flagged():
    row = noise_floor(_frame({"t1": [1, 0], "t2": [0, 1]})).iloc[0]
    assert row.var_between == 0.0 and row.icc == 0.0
    assert "truncated at 0" in row.flag


def test_single_trial_per_task_is_flagged_not_estimated():
    row = noise_floor(_frame({"t1": [1], "t2": [0], "t3": [1]})).iloc[0]
    assert np.isnan(row.var_within) and np.isnan(row.var_between) and np.isnan(row.icc)
    assert np.isnan(row.mdd) and np.isnan(row.flip_rate)
    assert "single trial per task" in row.flag
    assert np.isfinite(row.se)  # the clustered standard error needs no within variance


def test_group_with_one_task_is_flagged():
    frame = pd.concat([_frame({"t1": [1, 0, 1]}, "solo"),
                       _frame({"t1": [1, 1], "t2": [0, 1]}, "pair")])
    out = noise_floor(frame, by="agent_model").set_index("agent_model")
    solo = out.loc["solo"]
    assert "one task" in solo.flag
    assert np.isnan(solo.var_between) and np.isnan(solo.se) and np.isnan(solo.mdd)
    assert solo.var_within == pytest.approx(1 / 3)
    assert out.loc["pair"].n_tasks == 2


def test_missing_values_are_left_out_and_counted():
    frame = _frame({"t1": [1, 1, np.nan], "t2": [0, 0], "t3": [1, 0]})
    row = noise_floor(frame).iloc[0]
    assert row.var_within == pytest.approx(1 / 6)
    assert "1 row(s) with missing 'success' left out" in row.flag


def test_continuous_metric_uses_within_noise_only():
    frame = _frame({"t1": [0.2, 0.4], "t2": [0.5, 0.9], "t3": [0.1, 0.3]})
    row = noise_floor(frame).iloc[0]
    assert row.var_within == pytest.approx((0.02 + 0.08 + 0.02) / 3)
    assert row.mdd > 0


def test_columns_and_bad_input():
    frame = _frame({"t1": [1, 0], "t2": [0, 0]})
    out = noise_floor(frame, by="agent_model")
    assert list(out.columns) == ["agent_model", "n_tasks", "trials_per_task", "mean",
                                 "var_between", "var_within", "icc", "flip_rate", "se",
                                 "mdd", "flag"]
    with pytest.raises(ValueError, match="'nope' is not in the frame"):
        noise_floor(frame, metric="nope")
    with pytest.raises(TypeError, match="must be numeric or boolean"):
        noise_floor(frame.assign(success="x"))
    with pytest.raises(ValueError, match="`power` must be"):
        noise_floor(frame, power=1.5)


def test_icc_recovers_simulated_truth():
    rng = np.random.default_rng(3)
    p = np.repeat(rng.beta(1, 1, 2000), 4)  # ICC 1 / (a + b + 1) = 1/3
    frame = pd.DataFrame({"scenario_id": np.repeat(np.arange(2000), 4),
                          "success": rng.random(8000) < p})
    row = noise_floor(frame).iloc[0]
    assert row.icc == pytest.approx(1 / 3, abs=0.03)
    assert row.var_within == pytest.approx(1 / 6, abs=0.01)


@pytest.mark.parametrize("name", ["noise", "planning", "survival", "discrimination"])
def test_docstring_examples_of_the_reliability_modules(name):
    import doctest
    import importlib

    module = importlib.import_module(f"accordkit.stats.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
