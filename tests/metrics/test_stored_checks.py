"""The reward checks tau2 stores, as per-episode pass shares carried into the scores."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import accordkit as ak
from accordkit.metrics.stored_checks import CHECK_COLUMNS, reward_checks


def test_reward_checks_are_pass_shares_with_nan_where_absent():
    info = {"db_check": {"db_match": True, "db_reward": 1.0},
            "env_assertions": [{"met": True}, {"met": False}, {"met": True}],
            "action_checks": [{"action_match": False}],
            "communicate_checks": [], "nl_assertions": None}
    out = reward_checks(["a", "b", "c"], [json.dumps(info), None, "{}"])
    assert list(out.columns) == CHECK_COLUMNS
    assert out.loc[0, "db_check"] == 1.0
    assert out.loc[0, "env_assertions"] == pytest.approx(2 / 3)
    assert out.loc[0, "action_checks"] == 0.0
    assert np.isnan(out.loc[0, "communicate_checks"]) and np.isnan(out.loc[0, "nl_assertions"])
    assert out.loc[[1, 2]].isna().all().all()
    assert reward_checks([], []).shape == (0, len(CHECK_COLUMNS))


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
