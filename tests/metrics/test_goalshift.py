"""score_episodes / score_shifts: columns, dtypes, modes, the dispatcher, the sample's truth."""

from __future__ import annotations

import math

import datasets
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import accordkit as ak
from accordkit._internal.arrow import arrow_table
from accordkit.metrics.goalshift import EPISODE_COLUMNS, score_episodes, score_shifts
from accordkit.metrics.tcrr import call_redundancy
from accordkit.schema import EPISODE_FEATURES, ID_COLUMNS
from accordkit.score import score
from accordkit.synth.goalshift import generate_goalshift
from accordkit.tables.passk import pass_hat_k
from accordkit.testing import build_episode, criteria, judge_output, message


def table_of(*records):
    return pa.Table.from_pylist(list(records), schema=EPISODE_FEATURES.arrow_schema)


LOOKUP = ("get_order", {"order_id": "W1"})


def episode(*, greetings=1, **kw):
    msgs = [message("assistant", "Hi, how can I help?")] * (greetings - 1) + [
        message("assistant", "Hi, how can I help?"),                                  # 0
        message("user", "Where is my order?"),                                        # 1
        message("assistant", calls=[(*LOOKUP, "c1")]),                                 # 2
        message("tool", '{"status": "shipped"}', tool_call_id="c1", error=False),     # 3
        message("assistant", "It has shipped."),                                      # 4
        message("user", "Also cancel the other one."),                                # 5
        message("assistant", "Sure, cancelling it.", calls=[(*LOOKUP, "c2")]),         # 6
        message("tool", "Error: order locked", tool_call_id="c2", error=True),        # 7
        message("assistant", "I'll transfer you to a human agent."),                  # 8
    ]
    kw.setdefault("criteria", criteria(action_sets=[[("get_order", {"order_id": "W1"})]],
                                       communicate_info=["shipped"],
                                       nl_assertions=["The agent was polite."]))
    kw.setdefault("gsrt_judge", judge_output(1, "status", [
        dict(turn=5, from_goal="status", to_goal="cancel", ack_turn=6, tool_turn=6,
             transferred=True)]))
    kw.setdefault("reward", 1.0)
    return build_episode(msgs, **kw)


def test_episode_frame_columns_dtypes_and_values():
    out = score_episodes(table_of(episode()))
    assert list(out.columns) == EPISODE_COLUMNS
    row = out.iloc[0]
    assert out["tsr"].dtype == "float64" and str(out["nl_unjudged"].dtype) == "boolean"
    assert str(out["n_tool_calls"].dtype) == "Int64" and str(out["success"].dtype) == "boolean"
    # action 1.0 (.642857) + communicate 1.0 (.357143); NL unjudged
    assert row["tsr"] == pytest.approx(1.0) and bool(row["nl_unjudged"])
    assert row["tue"] == pytest.approx(0.6 * 0.5 + 0.4 * 1.0)
    # c2 repeats c1 two assistant turns later (turns 2 and 4): window rule
    assert (row["n_redundant_calls"], row["n_tcrr_calls"], row["tcrr"]) == (1, 2, 0.5)
    assert (row["n_shifts"], row["n_recovered"], row["n_transferred"]) == (1, 0, 1)
    assert row["recovery_rate"] == 0.0 and math.isnan(row["gsrt_ack"])
    assert row["gsrt_tool"] == 1.0 and row["shift_source"] == "judge"
    assert bool(row["success"]) and bool(row["success_tsr"])


def test_success_uses_the_stored_reward_and_success_tsr_the_rescored_tsr():
    out = score_episodes(table_of(episode(reward=0.9999995, episode_id="agentchangebench/a"),
                                  episode(reward=0.99, episode_id="agentchangebench/b"),
                                  episode(reward=None, episode_id="agentchangebench/c")))
    assert out["success"].tolist()[:2] == [True, False] and out["success"].isna().iloc[2]
    assert out["success_tsr"].tolist() == [True, True, True]


def test_max_steps_run_keeps_its_termination_and_is_not_zeroed():
    rec = episode(termination_reason="max_steps", reward=0.4, agent_cost=0.02, user_cost=0.01)
    row = score_episodes(table_of(rec)).iloc[0]
    assert row["termination_reason"] == "max_steps"
    assert row["tsr"] == pytest.approx(1.0) and row["reward"] == 0.4
    assert (row["agent_cost"], row["user_cost"]) == (0.02, 0.01)


@pytest.mark.parametrize("benchmark, termination, stored, expected", [
    ("tau2", "max_steps", None, 0.0),            # tau2 rule 1: a premature end scores 0
    ("tau2", "too_many_errors", None, 0.0),
    ("tau2", "max_steps", 0.0, 0.0),             # as stored
    ("tau2", "user_stop", None, math.nan),       # evaluated, but nothing stored: unknown
    ("tau2", None, None, math.nan),              # no termination reason: unknown
    ("tau2", "infrastructure_error", 0.0, math.nan),  # says nothing about the agent
    ("agentchangebench", "infrastructure_error", 1.0, math.nan),
    ("agentchangebench", "max_steps", None, math.nan),  # ACB does not zero premature ends
])
def test_outcome_reward_follows_tau2s_rules(benchmark, termination, stored, expected):
    rec = episode(termination_reason=termination, reward=stored,
                  episode_id=f"{benchmark}/x", benchmark=benchmark)
    row = score_episodes(table_of(rec)).iloc[0]
    if math.isnan(expected):
        assert math.isnan(row["reward"]) and pd.isna(row["success"])
    else:
        assert row["reward"] == expected and not row["success"]
    assert row["termination_reason"] == termination


def test_mean_reward_and_pass_k_leave_out_the_same_infrastructure_errors():
    # Task t1: 2 successes; task t2: one failure and one infrastructure error (reward 0
    # stored). tau2's avg_reward over the 3 remaining runs is 2/3, pass^1 = (1 + 0) / 2.
    recs = [episode(task_id="t1", scenario_id="tau2/d/t1", rollout=0, reward=1.0),
            episode(task_id="t1", scenario_id="tau2/d/t1", rollout=1, reward=1.0),
            episode(task_id="t2", scenario_id="tau2/d/t2", rollout=0, reward=0.0,
                    termination_reason="max_steps"),
            episode(task_id="t2", scenario_id="tau2/d/t2", rollout=1, reward=0.0,
                    termination_reason="infrastructure_error")]
    for i, rec in enumerate(recs):
        rec.update(benchmark="tau2", episode_id=f"tau2/e{i}", num_trials=2)
    frame = score(datasets.Dataset(table_of(*recs)))
    assert frame["reward"].mean() == pytest.approx(2 / 3)
    with pytest.warns(UserWarning, match="k is capped at 1"):  # t2 has one counted trial
        one = pass_hat_k(frame, by=[]).query("k == 1").iloc[0]
    assert one["pass_hat_k"] == pytest.approx(0.5) and one["n_excluded"] == 1


def test_an_infrastructure_error_is_not_scored_by_any_metric():
    # tau2 §8: such a run says nothing about the agent, so no metric counts it (not only
    # reward and pass^k): TSR, TUE, TCRR, shifts and costs are all missing, and its goal
    # shifts are not shift rows
    recs = [episode(episode_id="tau2/ok", benchmark="tau2"),
            episode(episode_id="tau2/infra", benchmark="tau2",
                    termination_reason="infrastructure_error")]
    out = score_episodes(table_of(*recs))
    ok, infra = out.iloc[0], out.iloc[1]
    assert ok["tsr"] == pytest.approx(1.0) and ok["n_tool_calls"] == 2
    for column in ("tsr", "tue", "tcrr", "reward", "agent_cost", "recovery_rate", "db_check"):
        assert pd.isna(infra[column]), column
    for column in ("success", "success_tsr", "n_tool_calls", "n_shifts", "nl_unjudged"):
        assert pd.isna(infra[column]), column
    assert infra["termination_reason"] == "infrastructure_error"
    assert out.dtypes.equals(score_episodes(table_of(recs[0])).dtypes)
    shifts = score_shifts(table_of(*recs))
    assert shifts["row"].tolist() == [0]


def test_modes_are_validated():
    table = table_of(episode())
    with pytest.raises(ValueError, match="tcrr_mode must be one of"):
        score_episodes(table, tcrr_mode="pooled")
    with pytest.raises(ValueError, match="action_mode must be one of"):
        score_episodes(table, action_mode="first")
    with pytest.raises(ValueError, match=r"goal-shift scoring needs the canonical columns \['criteria'\]"):
        score_episodes(table.drop(["criteria"]))


def test_dispatcher_adds_ids_at_episode_and_shift_level():
    recs = [episode(episode_id="agentchangebench/a"),
            episode(episode_id="agentchangebench/b", gsrt_judge=None, greetings=2)]
    ds = datasets.Dataset.from_list(recs, features=EPISODE_FEATURES)
    ep = score(ds, level="episode", tcrr_mode="upstream", action_mode="upstream")
    assert list(ep.columns[: len(ID_COLUMNS)]) == list(ID_COLUMNS)
    assert ep["episode_id"].tolist() == ["agentchangebench/a", "agentchangebench/b"]
    assert ep["shift_source"].tolist() == ["judge", "none"]
    # a calls the lookup at assistant turns 2 and 4, b (one more greeting) at 3 and 5.
    # Pooled by file (a6a9157), b's turn-3 call "repeats" a's turn-2 call.
    assert ep["n_redundant_calls"].tolist() == [1, 2]
    assert score(ds)["n_redundant_calls"].tolist() == [1, 1]
    sh = score(ds, level="shift")
    assert sh["episode_id"].tolist() == ["agentchangebench/a"]
    assert sh["transferred"].tolist() == [True]
    assert list(score_shifts(arrow_table(ds))["row"]) == [0]


# --------------------------------------------------------------------------- sample data


@pytest.fixture(scope="module")
def sample(sample_dir):
    path = sample_dir / "goalshift"
    if not path.exists():
        pytest.skip("data/sample/goalshift has not been generated (accordkit synth)")
    ds = ak.load(path)
    return ds, generate_goalshift(seed=0)[1]


def test_sample_ground_truth_is_recovered_exactly(sample):
    ds, truth = sample
    table = arrow_table(ds)
    ids = table.column("episode_id").to_pylist()
    assert sorted(ids) == sorted(truth["episodes"])
    episodes = score(ds)
    shifts = score(ds, level="shift")
    calls = call_redundancy(table)
    flagged = calls[calls["redundant"] > 0]
    for row, eid in enumerate(ids):
        want = truth["episodes"][eid]
        got = flagged[flagged["row"] == row][["turn_idx", "call_index"]].values.tolist()
        assert sorted(got) == sorted(want["redundant_calls"]), eid
        assert episodes["n_tool_calls"].iloc[row] == want["n_tool_calls"]
        assert episodes["shift_source"].iloc[row] == want["shift_source"]
        mine = shifts[shifts["episode_id"] == eid]
        if want["shift_source"] == "none":
            assert mine.empty
            continue
        assert mine["shift_turn"].tolist() == [s["shift_turn"] for s in want["shifts"]], eid
        assert mine["to_goal"].tolist() == [s["to_goal"] for s in want["shifts"]]
        if want["shift_source"] == "judge":
            for col in ("ack_turn", "tool_turn", "outcome_turn"):
                assert [None if pd.isna(v) else v for v in mine[col].tolist()] == \
                    [s[col] for s in want["shifts"]], (eid, col)
            assert mine["transferred"].tolist() == [s["transferred"] for s in want["shifts"]]
        assert episodes["tsr"].iloc[row] == pytest.approx(want["tsr_best_match"], abs=1e-12)
    scored = score(ds, tcrr_mode="upstream", action_mode="upstream")
    first = np.array([truth["episodes"][e]["tsr_first_call"] for e in ids])
    assert np.allclose(scored["tsr"].to_numpy(), first, atol=1e-12)
    # The stored reward is the first-call TSR, as the upstream pipeline stores it.
    assert np.allclose(scored["reward"].to_numpy(), first, atol=1e-12)


def test_sample_has_what_the_metrics_need(sample):
    ds, _ = sample
    ep = score(ds)
    assert set(ep["shift_source"]) == {"judge", "meta", "none"}
    assert ep["nl_unjudged"].any() and (ep["termination_reason"] == "max_steps").any()
    assert (ep["n_transferred"].fillna(0) > 0).any()
    per_model = ep.groupby("agent_model")[["tsr", "tcrr", "recovery_rate"]].mean()
    assert per_model.loc["sim-attentive", "tsr"] > per_model.loc["sim-persistent", "tsr"]
    assert per_model.loc["sim-attentive", "tcrr"] < per_model.loc["sim-persistent", "tcrr"]
    with pytest.warns(UserWarning, match=r"by=\['agent_model'\] pools 3 domains"):
        passk = pass_hat_k(ep, by="agent_model")
    assert passk.groupby("agent_model")["k"].max().tolist() == [3, 3]
    hat = passk.pivot(index="k", columns="agent_model", values="pass_hat_k")
    assert (hat["sim-attentive"] > hat["sim-persistent"]).all()
    assert hat.loc[1].between(0.01, 0.99).all()        # not trivial
    assert (hat.diff().dropna() <= 0).all().all()        # pass^k never grows with k
