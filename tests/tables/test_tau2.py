"""tau2_results tables on hand-computed frames (no papermill)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accordkit.stats import BCaFallbackWarning, DegenerateIntervalWarning
from accordkit.tables import tau2 as tv

BOOT = {"n_resamples": 200, "seed": 0, "method": "percentile"}


def _episodes() -> pd.DataFrame:
    """Two domains, two tasks each, two trials each; one configuration."""
    rows = []
    rewards = {("airline", "t1"): [1.0, 1.0], ("airline", "t2"): [1.0, 0.0],
               ("retail", "t3"): [0.0, 0.0], ("retail", "t4"): [1.0, 0.5]}
    for (domain, task), values in rewards.items():
        for trial, reward in enumerate(values):
            rows.append({"benchmark": "tau2", "domain": domain, "scenario_id": task,
                         "episode_id": f"{task}/{trial}", "rollout": trial,
                         "agent_model": "m", "method": "llm_agent", "user_model": "u",
                         "user_implementation": None, "reward": reward,
                         "success": abs(reward - 1) < 1e-6,
                         "termination_reason": "user_stop" if trial == 0 else "max_steps",
                         "agent_cost": 0.1 * (trial + 1), "user_cost": np.nan if task == "t4"
                         else 0.01})
    return tv.with_configuration(pd.DataFrame(rows))


def test_configuration_label_names_all_four_columns_and_unknowns():
    frame = _episodes()
    assert set(frame["configuration"]) == {"m (llm_agent) | user: u (?)"}
    assert tv.with_configuration(pd.DataFrame(columns=["agent_model"]))["configuration"].empty


def test_reward_table_never_pools_domains():
    out = tv.reward_table(_episodes(), **BOOT).set_index(["domain", "metric"])
    assert out.loc[("airline", "mean reward"), "estimate"] == pytest.approx(0.75)
    assert out.loc[("retail", "mean reward"), "estimate"] == pytest.approx(0.375)
    assert out.loc[("airline", "success (reward = 1)"), "estimate"] == pytest.approx(0.75)
    assert out.loc[("retail", "success (reward = 1)"), "estimate"] == pytest.approx(0.25)
    assert (out["n_clusters"] == 2).all()


def test_check_table_keeps_only_present_checks():
    frame = _episodes().assign(db_check=[1.0, 0.0, 1.0, 1.0, np.nan, np.nan, 0.0, 0.0],
                               nl_assertions=np.nan)
    # retail has one task with a DB check: no interval there, and it says so
    with pytest.warns(DegenerateIntervalWarning, match="'DB check' in domain='retail'"):
        out = tv.check_table(frame, **BOOT).set_index(["domain", "metric"])
    assert set(out.index.get_level_values("metric")) == {"DB check"}
    assert out.loc[("airline", "DB check"), "estimate"] == pytest.approx(0.75)
    assert out.loc[("retail", "DB check"), "estimate"] == pytest.approx(0.0)
    assert tv.check_table(_episodes(), **BOOT).empty


def test_check_table_says_which_checks_made_the_reward():
    # airline: basis DB+COMMUNICATE; retail: ENV_ASSERTION for 3 episodes, none stored for 1
    frame = _episodes().assign(
        db_check=[1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0],
        reward_basis=["DB+COMMUNICATE"] * 4 + ["ENV_ASSERTION"] * 3 + [None])
    out = tv.check_table(frame, **BOOT).set_index(["domain", "metric"])
    assert out.loc[("airline", "DB check"), "in_reward_basis"] == 1.0
    assert out.loc[("retail", "DB check"), "in_reward_basis"] == 0.0  # a diagnostic there
    no_basis = tv.check_table(frame.assign(reward_basis=None), **BOOT)
    assert no_basis["in_reward_basis"].isna().all()


def test_termination_table_counts_and_shares():
    out = tv.termination_table(_episodes()).set_index(["domain", "termination_reason"])
    assert out.loc[("airline", "user_stop"), "episodes"] == 2
    assert out.loc[("retail", "max_steps"), "share"] == pytest.approx(0.5)


def test_cost_per_task_and_cost_table():
    per_task = tv.cost_per_task(_episodes()).set_index("scenario_id")
    assert per_task.loc["t1", "agent_cost"] == pytest.approx(0.15)
    assert per_task.loc["t1", "episodes"] == 2
    assert np.isnan(per_task.loc["t4", "user_cost"])
    with pytest.warns(DegenerateIntervalWarning,
                      match="'user cost per episode' in domain='retail'"):
        table = tv.cost_table(_episodes(), **BOOT).set_index(["domain", "metric"])
    assert table.loc[("retail", "user cost per episode"), "estimate"] == pytest.approx(0.01)
    assert table.loc[("airline", "agent cost per episode"), "estimate"] == pytest.approx(0.15)


def test_pass_k_table_per_domain_by_hand():
    with pytest.warns(BCaFallbackWarning, match="'pass_hat_k' in domain='retail'"):
        out = tv.pass_k_table(_episodes(), n_resamples=200).set_index(["domain", "k"])
    # airline: t1 2/2, t2 1/2 -> pass^1 = (1 + .5)/2, pass^2 = (1 + 0)/2, pass@2 = 1
    assert out.loc[("airline", 1), "pass_hat_k"] == pytest.approx(0.75)
    assert out.loc[("airline", 2), "pass_hat_k"] == pytest.approx(0.5)
    assert out.loc[("airline", 2), "pass_at_k"] == pytest.approx(1.0)
    # retail: t3 0/2, t4 1/2 -> pass^1 = .25, pass^2 = 0, pass@2 = .5
    assert out.loc[("retail", 2), "pass_hat_k"] == pytest.approx(0.0)
    assert out.loc[("retail", 2), "pass_at_k"] == pytest.approx(0.5)
    assert {"ci_low", "ci_high"} <= set(out.columns)


def test_empty_frames_give_empty_tables():
    empty = _episodes().iloc[0:0]
    assert tv.termination_table(empty).empty
    assert tv.cost_per_task(empty).empty
    assert list(tv.pass_k_table(empty).columns)[:3] == ["domain", "configuration", "k"]


def test_tau2_episodes_keeps_tau2_format_rows():
    scores = pd.concat([_episodes().drop(columns="configuration"),
                        pd.DataFrame({"benchmark": ["accord"], "episode_id": ["x"]})])
    out = tv.tau2_episodes(scores).set_index("episode_id")
    assert "x" not in out.index and len(out) == 8
    assert set(out["configuration"]) == {"m (llm_agent) | user: u (?)"}


@pytest.mark.parametrize("with_checks", [True, False])
def test_episode_tables_draw_once_and_equal_the_separate_tables(with_checks):
    frame = _episodes()
    if with_checks:
        frame = frame.assign(db_check=[1.0, 0.0, 1.0, 1.0, np.nan, np.nan, 0.0, 0.0])
    options = {**BOOT, "method": "bca"}
    # a few tasks a cell: constant costs fall back from BCa, one-task cells have no interval;
    # the tables drawn at once and one by one say so
    said = "BCa interval undefined|fewer than two clusters"
    with pytest.warns((BCaFallbackWarning, DegenerateIntervalWarning), match=said):
        got = tv.episode_tables(frame, **options)
    with pytest.warns((BCaFallbackWarning, DegenerateIntervalWarning), match=said):
        separate = {"reward": tv.reward_table(frame, **options),
                    "checks": tv.check_table(frame, **options),
                    "cost": tv.cost_table(frame, **options)}
    assert list(got) == ["reward", "checks", "cost"]
    pd.testing.assert_frame_equal(got["reward"], separate["reward"])
    pd.testing.assert_frame_equal(got["checks"], separate["checks"])
    pd.testing.assert_frame_equal(got["cost"], separate["cost"])
    assert got["checks"].empty != with_checks


def test_configurations_of_two_benchmarks_are_never_pooled():
    frame = _episodes().drop(columns="configuration")
    frame.loc[frame["domain"] == "retail", "domain"] = "airline"  # one domain, two benchmarks
    frame.loc[4:, "benchmark"] = "agentchangebench"
    labelled = tv.with_configuration(frame)
    assert set(labelled["configuration"]) == {"tau2: m (llm_agent) | user: u (?)",
                                              "agentchangebench: m (llm_agent) | user: u (?)"}
    out = tv.reward_table(labelled, **BOOT)
    assert len(out[out["metric"] == "mean reward"]) == 2
    # one benchmark: the label is the configuration alone
    assert set(tv.with_configuration(frame.iloc[:4])["configuration"]) == {
        "m (llm_agent) | user: u (?)"}


def test_pass_k_table_takes_the_pages_interval_options_without_a_cap():
    """The page's method and number of resamples, not a silent 2,000 (issue 36, item 3)."""
    from accordkit.tables.passk import pass_hat_k

    frame = _episodes()
    out = tv.pass_k_table(frame, n_resamples=10_000, seed=3, method="percentile",
                          confidence=0.9)
    direct = pass_hat_k(frame, by=["domain", "configuration"], ci=True, method="percentile",
                        confidence=0.9, n_resamples=10_000, seed=3)
    pd.testing.assert_frame_equal(out, direct)
    assert set(out["ci_method"]) == {"percentile"}


def test_pass_1_is_the_success_rate():
    out = tv.pass_k_table(_episodes(), **BOOT).set_index(["domain", "k"])
    rate = _episodes().groupby("domain")["success"].mean()
    for domain in ("airline", "retail"):
        assert out.loc[(domain, 1), "pass_hat_k"] == pytest.approx(rate[domain])
