"""Flips between two configurations, with the noise floor, hand-computed."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats

from accordkit.analysis.flips import FLIP_COLUMNS, flips

# config a: t1 1 1 0, t2 0 0 0, t3 1 1 0;  config b: t1 0 0 0, t2 1 1 1, t3 1 0 0
SUCCESS = {("a", "t1"): [1, 1, 0], ("a", "t2"): [0, 0, 0], ("a", "t3"): [1, 1, 0],
           ("b", "t1"): [0, 0, 0], ("b", "t2"): [1, 1, 1], ("b", "t3"): [1, 0, 0]}


def _episodes():
    rows = []
    for (config, task), values in SUCCESS.items():
        for trial, ok in enumerate(values):
            rows.append({"episode_id": f"{config}-{task}-{trial}", "domain": "d",
                         "agent_model": config, "scenario_id": task, "rollout": trial,
                         "success": bool(ok)})
    return pd.DataFrame(rows)


def _msw(config):
    """Within-task variance (one-way ANOVA mean square within) of a configuration."""
    groups = [v for (c, _), v in SUCCESS.items() if c == config]
    ss = sum(sum((x - sum(g) / len(g)) ** 2 for x in g) for g in groups)
    return ss / (sum(len(g) for g in groups) - len(groups))


def test_moves_and_the_noise_test():
    out = flips(_episodes())
    assert list(out.columns) == ["domain", "scenario_id", *FLIP_COLUMNS]
    assert out.attrs["baseline"] == "a" and out.attrs["other"] == "b"
    row = out.set_index("scenario_id")
    assert row.loc["t2", "delta"] == 1.0 and row.loc["t2", "direction"] == "gained"
    assert row.loc["t1", "delta"] == pytest.approx(-2 / 3)
    assert row.loc["t3", "delta"] == pytest.approx(-1 / 3)
    assert out["scenario_id"].tolist() == ["t2", "t1", "t3"]   # largest moves first
    se = math.sqrt(_msw("a") / 3 + _msw("b") / 3)
    assert row["noise_se"].tolist() == pytest.approx([se] * 3)
    z = stats.norm.ppf(0.975)
    assert z * se < 2 / 3 and z * se > 1 / 3
    assert row["noise_explains"].tolist() == [False, False, True]


def test_unmoved_tasks_and_unshared_tasks():
    ep = _episodes()
    extra = pd.DataFrame([{"episode_id": "a-t9-0", "domain": "d", "agent_model": "a",
                           "scenario_id": "t9", "rollout": 0, "success": True}])
    ep = pd.concat([ep, extra], ignore_index=True)
    ep.loc[ep["scenario_id"] == "t3", "success"] = True
    out = flips(ep, include_unmoved=True)
    assert "same" in set(out["direction"])
    assert out.attrs["unshared"]["scenario_id"].tolist() == ["t9"]
    assert "t9" not in set(out["scenario_id"])


def test_single_trials_cannot_be_told_from_noise():
    ep = _episodes()
    ep = ep[ep["rollout"] == 0]
    out = flips(ep)
    assert out["noise_explains"].isna().all()


def test_action_diff_side_by_side():
    ep = _episodes()
    diff = pd.DataFrame({
        "episode_id": ["a-t1-2", "b-t1-0", "b-t1-0", "b-t1-1"],
        "status": ["missing", "wrong_arguments", "extra", "wrong_arguments"],
        "name": ["cancel", "cancel", "book", "cancel"],
        "divergence_reason": ["missing", "wrong_arguments", "wrong_arguments",
                              "wrong_arguments"]})
    out = flips(ep, actions=diff).set_index("scenario_id")
    assert out.loc["t1", "actions_baseline"] == "missing cancel ×1"
    assert out.loc["t1", "actions_other"] == "wrong_arguments cancel ×2; extra book ×1"
    assert out.loc["t1", "divergence_baseline"] == "missing ×1"
    assert out.loc["t1", "divergence_other"] == "wrong_arguments ×2"
    assert pd.isna(out.loc["t2", "actions_other"])


def test_configuration_choice_errors():
    ep = _episodes()
    three = pd.concat([ep, ep.assign(agent_model="c")], ignore_index=True)
    with pytest.raises(ValueError, match="give baseline= and other="):
        flips(three)
    out = flips(three, baseline="c", other="b")
    assert out.attrs["baseline"] == "c"
    with pytest.raises(ValueError, match="baseline 'z' is not a value"):
        flips(ep, baseline="z", other="a")
    with pytest.raises(ValueError, match="lack the column"):
        flips(ep, between="method")
