"""compare_modes: accordkit's file-level values beside the upstream ones, on synthetic runs."""

from __future__ import annotations

import datasets
import numpy as np
import pytest

from accordkit.metrics.compare_modes import COMPARE_COLUMNS, compare_modes
from accordkit.schema import EPISODE_FEATURES
from accordkit.testing import build_episode, criteria, judge_output, message

LOOKUP = ("get_reservation", {"id": "R1"})


def run(task, trial, *, recovered, source="run.json", reward=0.5, judge=True):
    """One conversation: a lookup at assistant turns 1 and 6, one shift at message 2."""
    msgs = [message("assistant", calls=[LOOKUP]), message("user", "Hi"),
            message("user", "Now something else"), message("assistant", "Sure.")]
    msgs += [message("assistant", "...")] * 3 + [message("assistant", calls=[LOOKUP])]
    shift = dict(turn=2, from_goal="a", to_goal="b", ack_turn=3 if recovered else None,
                 tool_turn=7, transferred=not recovered)
    return build_episode(
        msgs, episode_id=f"agentchangebench/{source}/{task}/{trial}", task_id=task,
        rollout=trial, source=source, reward=reward, num_trials=3,
        criteria=criteria(action_sets=[[("get_reservation", {"id": "R1"})]]),
        gsrt_judge=judge_output(1, "a", [shift]) if judge else None, agent_cost=0.01)


def frame(records):
    return compare_modes(datasets.Dataset.from_list(records, features=EPISODE_FEATURES))


def pick(out, metric, mode="compute_metrics", source="run.json"):
    sel = out[(out["metric"] == metric) & (out["upstream_mode"] == mode)
              & (out["source"] == source)]
    assert len(sel) == 1
    return sel.iloc[0]


def test_multi_trial_file_shows_the_upstream_artifacts():
    # Task t1: trial 0 fails to recover, trials 1 and 2 recover; task t2 recovers on all.
    recs = [run("t1", 0, recovered=False), run("t1", 1, recovered=True),
            run("t1", 2, recovered=True, reward=1.0)]
    recs += [run("t2", k, recovered=True, reward=1.0) for k in range(3)]
    out = frame(recs)
    assert list(out.columns) == COMPARE_COLUMNS
    # Recovery: pooled 5/6; gsrt.py counts recoveries of each task's first trial only (0 + 1).
    assert pick(out, "recovery_rate")["default"] == pytest.approx(5 / 6)
    assert pick(out, "recovery_rate")["upstream"] == pytest.approx(5 / 6)
    assert pick(out, "recovery_rate", "gsrt_py")["upstream"] == pytest.approx(1 / 6)
    # compute_metrics: never-recovered share of simulations, medians never produced.
    assert pick(out, "never_recovered_rate")["upstream"] == pytest.approx(1 / 6)
    assert np.isnan(pick(out, "gsrt_ack")["upstream"])
    assert pick(out, "gsrt_ack")["default"] == 1.0
    # TCRR: within a conversation the repeat comes 5 turns later (not redundant); pooled by
    # turn number, the six conversations' identical calls form one batch of 6 at turn 1 and
    # another at turn 6, each adding 6 - 2 = 4 redundant calls upstream.
    assert pick(out, "tcrr")["default"] == 0.0
    assert pick(out, "n_redundant_calls")["upstream"] == 8
    assert pick(out, "n_redundant_calls", "tcrr_b2cc83c")["upstream"] == 8
    # pass^k from the stored reward: t1 1/3, t2 3/3
    assert pick(out, "pass_hat_1")["default"] == pytest.approx((1 / 3 + 1) / 2)
    assert pick(out, "pass_hat_3")["upstream"] == pytest.approx(0.5)
    assert pick(out, "n_sims_without_judge", "none")["default"] == 0


def test_missing_judge_cache_and_separate_files():
    recs = [run("t1", 0, recovered=True), run("t1", 1, recovered=True, judge=False),
            run("t1", 0, recovered=False, source="other.json")]
    out = frame(recs)
    assert set(out["source"]) == {"run.json", "other.json"}
    assert pick(out, "n_shifts")["upstream"] == -1          # upstream sentinel
    assert pick(out, "n_shifts")["default"] == 1
    assert pick(out, "n_sims_without_judge", "none")["default"] == 1
    assert pick(out, "recovery_rate", source="other.json")["default"] == 0.0
    assert pick(out, "tsr")["upstream"] == -1               # no tsr_details stored
    assert pick(out, "tsr")["default"] == 1.0


def test_empty_and_non_goalshift_input():
    recs = [run("t1", 0, recovered=True)]
    recs[0]["benchmark"] = "accord"
    out = frame(recs)
    assert out.empty and list(out.columns) == COMPARE_COLUMNS
