"""``ak.to_frame``: flat pandas view of episodes."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import accordkit as ak


@pytest.fixture(scope="module")
def episodes(acb_dir, tau2_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ak.load([acb_dir / "banking_gpt-4.1_legacy-reward_meta-tags_7sims.json",
                        tau2_dir / "telecom_grok-3_5tasks_1trial.json"])


def test_one_row_per_episode_with_flat_columns(episodes):
    df = ak.to_frame(episodes)
    assert len(df) == 12
    assert df["episode_id"].tolist() == episodes["episode_id"]
    assert "messages" not in df and "criteria" not in df
    assert df["n_messages"].tolist() == [len(m) for m in episodes["messages"]]
    assert df["n_goals"].iloc[0] == 3  # goalshift_banking_001: authentication, transactions, dispute
    assert df["n_goals"].iloc[-1] is pd.NA  # tau2 telecom: no goal sequence recorded


def test_nullable_dtypes(episodes):
    df = ak.to_frame(episodes)
    assert df["rollout"].dtype == "Int64"
    assert df["num_trials"].dtype == "Int64"
    assert df["n_messages"].dtype == "Int64"
    assert df["completed"].dtype == "boolean"
    assert df["reward"].dtype == "float64"
    assert df["seed"].tolist() == episodes["seed"]


def test_selection_is_honoured(episodes):
    sub = episodes.select([11, 0])
    df = ak.to_frame(sub)
    assert df["episode_id"].tolist() == [episodes[11]["episode_id"], episodes[0]["episode_id"]]
    kept = ak.to_frame(sub, nested="keep")
    assert kept["episode_id"].tolist() == df["episode_id"].tolist()
    assert len(kept["messages"].iloc[1]) == len(episodes[0]["messages"])


def test_filter_is_honoured(episodes):
    tau2 = episodes.filter(lambda r: r["benchmark"] == "tau2")
    assert set(ak.to_frame(tau2)["benchmark"]) == {"tau2"}
    assert len(ak.to_frame(tau2)) == 5


def test_nested_argument_is_checked(episodes):
    with pytest.raises(ValueError, match="nested must be 'count' or 'keep'"):
        ak.to_frame(episodes, nested="flat")
