"""The reward checks tau2 stores, as per-episode pass shares carried into the scores."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import accordkit as ak
from accordkit.metrics.stored_checks import (
    BASIS_COLUMNS,
    CHECK_COLUMNS,
    reward_checks,
    reward_consistency,
)


def test_reward_checks_are_pass_shares_with_nan_where_absent():
    info = {"db_check": {"db_match": True, "db_reward": 1.0},
            "env_assertions": [{"met": True}, {"met": False}, {"met": True}],
            "action_checks": [{"action_match": False}],
            "communicate_checks": [], "nl_assertions": None}
    out = reward_checks(["a", "b", "c"], [json.dumps(info), None, "{}"])
    assert list(out.columns) == [*CHECK_COLUMNS, *BASIS_COLUMNS]
    assert out.loc[0, "db_check"] == 1.0
    assert out.loc[0, "env_assertions"] == pytest.approx(2 / 3)
    assert out.loc[0, "action_checks"] == 0.0
    assert np.isnan(out.loc[0, "communicate_checks"]) and np.isnan(out.loc[0, "nl_assertions"])
    assert out.loc[[1, 2]].isna().all().all()
    assert reward_checks([], []).shape == (0, len(CHECK_COLUMNS) + len(BASIS_COLUMNS))


def test_reward_checks_name_the_episode_of_bad_json():
    with pytest.raises(ValueError, match="episode ep-7: field reward_info_json"):
        reward_checks(["ep-7"], ["{not json"])


def test_scores_carry_the_stored_checks_and_task_set(tau2_dir):
    ds = ak.load(str(tau2_dir / "airline_grok-3_4tasks_4trials.json"))
    scores = ak.score(ds)
    frame = ak.to_frame(ds)
    want = reward_checks(frame["episode_id"], frame["reward_info_json"])
    for column in CHECK_COLUMNS:
        np.testing.assert_array_equal(scores[column].to_numpy(), want[column].to_numpy())
    assert scores[CHECK_COLUMNS].notna().any().any()
    assert [None if pd.isna(v) else v for v in frame["task_set"]] == scores["task_set"].tolist()


@pytest.mark.parametrize("info, expected", [
    # tau2 §7: the reward is the product of the breakdown over the basis
    ({"reward": 0.0, "reward_basis": ["DB", "COMMUNICATE"],
      "reward_breakdown": {"DB": 0.0, "COMMUNICATE": 1.0}}, ("DB+COMMUNICATE", True)),
    ({"reward": 1.0, "reward_basis": ["DB", "COMMUNICATE"],
      "reward_breakdown": {"DB": 0.0, "COMMUNICATE": 1.0}}, ("DB+COMMUNICATE", False)),
    # a component not evaluated (no breakdown entry) multiplies by 1, as in tau2
    ({"reward": 1.0, "reward_basis": ["DB", "COMMUNICATE"],
      "reward_breakdown": {"COMMUNICATE": 1.0}}, ("DB+COMMUNICATE", True)),
    ({"reward": 1.0, "reward_basis": ["DB"], "reward_breakdown": None}, ("DB", True)),
    ({"reward": 0.5, "reward_basis": ["ENV_ASSERTION"], "reward_breakdown": {}},
     ("ENV_ASSERTION", False)),
    ({"reward": 1.0, "reward_basis": ["DB"], "reward_breakdown": {"DB": "yes"}}, ("DB", False)),
    # not checkable: no basis (premature end), no reward, or ACB's reward (TSR)
    ({"reward": 0.0, "reward_basis": None}, (None, None)),
    ({"reward": None, "reward_basis": ["DB"], "reward_breakdown": {"DB": 1.0}}, ("DB", None)),
    ({"reward": 0.7, "reward_basis": ["DB"], "reward_breakdown": {"ACTION": 0.7},
      "info": {"tsr_details": {"overall_tsr": 0.7}}}, ("DB", None)),
])
def test_reward_consistency_is_tau2s_product_rule(info, expected):
    assert reward_consistency(info) == expected


def test_an_inconsistent_stored_reward_is_marked_and_warned_about(tau2_dir, tmp_path):
    obj = json.loads((tau2_dir / "airline_grok-3_4tasks_4trials.json").read_text())
    sim = obj["simulations"][0]
    sim["reward_info"].update(reward=1.0, reward_basis=["DB", "COMMUNICATE"],
                              reward_breakdown={"DB": 0.0, "COMMUNICATE": 1.0})
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(obj))
    with pytest.warns(UserWarning, match=r"1 episode\(s\) store a reward that is not the "
                                         r"product of reward_breakdown over reward_basis"):
        scores = ak.score(ak.load(str(path), cache=False))
    assert scores["reward_consistent"].tolist() == [False] + [True] * 15
    assert bool(scores.loc[0, "success"]), "success still follows the stored reward"
    assert set(scores["reward_basis"]) == {"DB+COMMUNICATE"}
