"""Flips between configurations, each task tested on its own trials, hand-computed."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats

from accordkit.analysis.flips import (
    FLIP_COLUMNS,
    flip_caption,
    flip_pairs,
    flips,
    trials_needed,
)

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


def test_moves_and_the_per_task_test():
    out = flips(_episodes())
    assert list(out.columns) == ["domain", "scenario_id", *FLIP_COLUMNS]
    assert out.attrs["baseline"] == "a" and out.attrs["other"] == "b"
    row = out.set_index("scenario_id")
    assert row.loc["t2", "delta"] == 1.0 and row.loc["t2", "direction"] == "gained"
    assert row.loc["t1", "delta"] == pytest.approx(-2 / 3)
    assert row.loc["t3", "delta"] == pytest.approx(-1 / 3)
    assert out["scenario_id"].tolist() == ["t2", "t1", "t3"]   # largest moves first
    # Fisher by hand (hypergeometric, 3 trials a side): t2 0/3 vs 3/3 -> 2/20; t1 2/3 vs
    # 0/3 -> 6/15; t3 2/3 vs 1/3 -> 1; Holm over the three: 0.3, 0.8, 1
    assert row["p_value"].tolist() == pytest.approx([0.1, 0.4, 1.0])
    assert row["p_adjusted"].tolist() == pytest.approx([0.3, 0.8, 1.0])
    # with 3 trials a side no table reaches p < 0.05: not tested, never "noise explains"
    assert row["noise_explains"].isna().all()
    cells = out.attrs["cells"].iloc[0]
    assert (cells.n_tasks, cells.n_moved, cells.n_testable, cells.min_trials) == (3, 3, 0, 3)
    assert flip_caption(out) == ("3 of 3 shared task(s) moved from a to b; telling a move "
                                 "from trial noise over 3 tasks (Holm) needs ≥ 5 trials per "
                                 "task on each side (here 3): not tested")


def test_adjusted_over_the_tasks_and_the_noise_count():
    ep = _n_trials({"t1": (5, 0), "t2": (2, 2)}, 5)
    out = flips(ep, include_unmoved=True).set_index("scenario_id")
    # 5/5 vs 0/5: 2 of the C(10, 5) = 252 tables as extreme; Holm over the 2 shared tasks
    assert out.loc["t1", "p_value"] == pytest.approx(2 / 252)
    assert out.loc["t1", "p_adjusted"] == pytest.approx(4 / 252)
    assert out.loc["t2", "p_value"] == pytest.approx(1.0)
    assert out["noise_explains"].tolist() == [False, True]
    # t1 at pooled rate 1/2 stays put with chance sum C(5,i)^2 / 4^5 = 252/1024; t2 at 2/5
    # with chance sum b(i; 5, 0.4)^2
    same = sum(stats.binom.pmf(i, 5, 0.4) ** 2 for i in range(6))
    cells = out.attrs["cells"].iloc[0]
    assert cells.noise_moves == pytest.approx((1 - 252 / 1024) + (1 - same))
    assert cells.n_beyond_noise == 1 and cells.n_testable == 2
    assert flip_caption(out) == (
        f"1 of 2 shared task(s) moved from a to b; trial noise alone would move about "
        f"{cells.noise_moves:.1f} (each task at its pooled rate); 1 beyond noise (Fisher's "
        "exact test per task, Holm (family-wise error) over the 2 shared tasks, 5 %)")
    with pytest.raises(ValueError, match="adjust must be one of"):
        flips(ep, adjust="bonferroni")


def test_holm_over_many_tasks_needs_more_trials_and_says_so():
    # 4 trials a side: 4/4 vs 0/4 gives p = 2/70, below 5 % alone, never after Holm over
    # two tasks (4/70): not a count of flips, the trials it would take
    ep = _n_trials({"t1": (4, 0), "t2": (2, 2)}, 4)
    out = flips(ep, include_unmoved=True)
    assert out["noise_explains"].isna().all()
    assert out.attrs["cells"]["n_testable"].tolist() == [0]
    assert flip_caption(out).endswith("telling a move from trial noise over 2 tasks (Holm) "
                                      "needs ≥ 5 trials per task on each side (here 4): "
                                      "not tested")
    raw = flips(ep, adjust="none", include_unmoved=True)
    assert raw["noise_explains"].tolist() == [False, True]
    assert "1 beyond noise" in flip_caption(raw)
    assert trials_needed(0.05, n_tasks=50) == 7


def test_a_same_rate_task_is_called_a_flip_at_most_alpha_of_the_time():
    """The exact chance, over every table two equal configurations can give, that a task
    is flagged beyond noise (no adjustment): at most alpha at every task rate."""
    n = 5
    every = {(k_a, k_b): (k_a, k_b) for k_a in range(n + 1) for k_b in range(n + 1)}
    tables = _n_trials({f"{k_a}-{k_b}": ks for ks, (k_a, k_b) in
                        zip(every, every.values(), strict=True)}, n)
    out = flips(tables, adjust="none", include_unmoved=True)
    flagged = [tuple(map(int, t.split("-"))) for t in
               out.loc[out["noise_explains"].eq(False), "scenario_id"]]
    assert (5, 0) in flagged and (0, 5) in flagged and (3, 2) not in flagged
    for p in (0.05, 0.2, 0.5, 0.8, 0.97):
        chance = sum(stats.binom.pmf(a, n, p) * stats.binom.pmf(b, n, p) for a, b in flagged)
        assert chance <= 0.05, p


def _n_trials(rows, n):
    out = []
    for task, (k_a, k_b) in rows.items():
        for config, k in (("a", k_a), ("b", k_b)):
            out += [{"episode_id": f"{config}-{task}-{t}", "domain": "d", "agent_model": config,
                     "scenario_id": task, "rollout": t, "success": t < k} for t in range(n)]
    return pd.DataFrame(out)


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
    caption = flip_caption(out)
    assert "needs ≥ 5 trials per task on each side (here 1): not tested" in caption
    assert "beyond" not in caption


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


def _three_configurations(trials=1):
    """gpt-4.1 and a fine-tuned gpt-4.1 on the same 20 airline tasks, claude on 50."""
    rows = []
    runs = {"gpt-4.1": 20, "ft:gpt-4.1:org::abc": 20, "claude-sonnet-4-5": 50}
    for model, n_tasks in runs.items():
        for i in range(n_tasks):
            for t in range(trials):
                rows.append({"episode_id": f"{model}-{i}-{t}", "domain": "airline",
                             "agent_model": model, "scenario_id": str(i), "rollout": t,
                             "success": (i + t + len(model)) % 3 == 0})
    return pd.DataFrame(rows)


def test_every_pair_that_shares_tasks_is_listed():
    ep = _three_configurations()
    assert flip_pairs(ep) == [("claude-sonnet-4-5", "ft:gpt-4.1:org::abc"),
                              ("claude-sonnet-4-5", "gpt-4.1"),
                              ("ft:gpt-4.1:org::abc", "gpt-4.1")]
    assert flip_pairs(ep, baseline="gpt-4.1") == [("gpt-4.1", "claude-sonnet-4-5"),
                                                  ("gpt-4.1", "ft:gpt-4.1:org::abc")]
    assert flip_pairs(ep, pairs=[["gpt-4.1", "ft:gpt-4.1:org::abc"]]) == [
        ("gpt-4.1", "ft:gpt-4.1:org::abc")]
    with pytest.raises(ValueError, match="baseline 'gpt-4' is not a value of 'agent_model'; "
                                         "the values are: claude-sonnet-4-5, "):
        flip_pairs(ep, baseline="gpt-4")
    with pytest.raises(ValueError, match="pairs: 'nope'"):
        flip_pairs(ep, pairs=[["gpt-4.1", "nope"]])
    for base, other in flip_pairs(ep):
        out = flips(ep, baseline=base, other=other, include_unmoved=True)
        assert out.attrs["cells"]["n_tasks"].tolist() == [20]    # on the tasks they share
        assert len(out.attrs["unshared"]) == (30 if "claude" in base + other else 0)
        assert "shared task(s)" in flip_caption(out)
        assert "over 20 tasks (Holm) needs ≥ 6 trials per task on each side (here 1)" in \
            flip_caption(out)


def test_no_shared_task_says_so():
    ep = _episodes()
    ep = ep[~((ep["agent_model"] == "b") & ep["scenario_id"].isin(["t1", "t2", "t3"]))]
    ep = pd.concat([ep, _episodes().query("agent_model == 'b'").assign(scenario_id="t9")])
    out = flips(ep)
    assert out.empty and out.attrs["cells"].empty
    assert flip_caption(out) == "a and b share no task: nothing to compare"
