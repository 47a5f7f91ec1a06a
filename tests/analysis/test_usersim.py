"""The user simulator's error rates, and results with and without the episodes it spoiled."""

from __future__ import annotations

import pandas as pd
import pytest

from accordkit.analysis.usersim import (
    SUBSETS,
    WITHOUT_COLUMNS,
    usersim_reliability,
    without_user_errors,
)
from accordkit.metrics.reviews import reviews_from_json
from accordkit.stats import DegenerateIntervalWarning

CRIT = ('{"review": {"has_errors": true, "errors": [{"source": "user", '
        '"severity": "critical_helped", "reasoning": "r"}]}}')
MINOR = ('{"user_only_review": {"has_errors": true, "errors": [{"severity": "minor", '
         '"reasoning": "r"}]}}')
CLEAN = '{"review": {"has_errors": false}}'


def _episodes():
    # two user models; tasks p, q with two trials each per model
    rows = []
    for model in ("u1", "u2"):
        for task in ("p", "q"):
            for trial in (0, 1):
                rows.append({"episode_id": f"{model}-{task}-{trial}", "user_model": model,
                             "domain": "x", "agent_model": "m", "scenario_id": task,
                             "rollout": trial})
    frame = pd.DataFrame(rows)
    frame["success"] = [True, True, False, True, True, False, False, False]
    frame["reward"] = frame["success"].astype(float)
    return frame


def _reviews(episodes):
    texts = {"u1-p-0": CRIT, "u1-p-1": CLEAN, "u1-q-0": CLEAN, "u1-q-1": MINOR,
             "u2-p-0": CRIT, "u2-p-1": CRIT, "u2-q-0": CLEAN}   # u2-q-1: not reviewed
    ids = list(episodes["episode_id"])
    return reviews_from_json(ids, [texts.get(e) for e in ids])


def test_reliability_per_user_model():
    ep = _episodes()
    t = usersim_reliability(ep, _reviews(ep), n_resamples=300, method="percentile")
    got = t.set_index(["user_model", "metric"])["estimate"]
    assert got[("u1", "critical_user_error")] == pytest.approx(1 / 4)
    assert got[("u1", "user_error")] == pytest.approx(2 / 4)
    assert got[("u2", "critical_user_error")] == pytest.approx(2 / 3)
    assert t.set_index(["user_model", "metric"]).loc[("u2", "user_error"), "n_events"] == 3


def test_with_and_without_critical_user_errors():
    ep = _episodes()
    # u2 without its spoiled trials keeps one task: no interval there, and it says so
    with pytest.warns(DegenerateIntervalWarning, match="'reward' in user_model='u2'"):
        t = without_user_errors(ep, _reviews(ep), by="user_model", ks=[1, 2],
                                n_resamples=300, method="percentile")
    assert list(t.columns) == ["user_model", *WITHOUT_COLUMNS]
    assert set(t["episodes"]) == set(SUBSETS)
    g = t.set_index(["user_model", "episodes", "metric"])
    # u1, all: rewards 1 1 0 1
    assert g.loc[("u1", "all", "reward"), "estimate"] == pytest.approx(0.75)
    # u1 without u1-p-0 (critical): 1 0 1
    assert g.loc[("u1", SUBSETS[1], "reward"), "estimate"] == pytest.approx(2 / 3)
    assert g.loc[("u1", SUBSETS[1], "reward"), "n_left_out"] == 1
    # pass^1 per task then averaged: all = (1 + 0.5) / 2; without: p 1/1, q 1/2
    assert g.loc[("u1", "all", "pass^1"), "estimate"] == pytest.approx(0.75)
    assert g.loc[("u1", SUBSETS[1], "pass^1"), "estimate"] == pytest.approx(0.75)
    # pass^2 needs two trials: without the spoiled trial, task p has one
    assert g.loc[("u1", "all", "pass^2"), "estimate"] == pytest.approx(0.5)
    # u2: p spoiled twice -> only q remains; q-1 never reviewed (kept, counted)
    assert g.loc[("u2", SUBSETS[1], "reward"), "n_rows"] == 2
    assert g.loc[("u2", SUBSETS[1], "reward"), "n_left_out"] == 2
    assert g.loc[("u2", "all", "reward"), "n_unreviewed"] == 1


def test_placeholder_reviews_are_review_failed_not_user_errors():
    """tau2's "Failed to parse LLM response" placeholders (turn_idx -1) are neither user
    nor agent errors: those episodes are not reviewed, and counted apart."""
    from accordkit.analysis.failures import failure_indicators
    from accordkit.ingest.formats.tau2.reviews import stored_reviews

    from ..metrics.test_reviews import FAILED_REVIEW, FAILED_USER_ONLY

    ep = _episodes()
    texts = {"u1-p-0": CRIT, "u1-p-1": stored_reviews({"review": FAILED_REVIEW}),
             "u1-q-0": CLEAN,
             "u1-q-1": stored_reviews({"user_only_review": FAILED_USER_ONLY}),
             "u2-p-0": CRIT, "u2-p-1": stored_reviews({"review": FAILED_REVIEW}),
             "u2-q-0": CLEAN}
    ids = list(ep["episode_id"])
    reviews = reviews_from_json(ids, [texts.get(e) for e in ids])
    t = usersim_reliability(ep, reviews, n_resamples=300, method="percentile")
    g = t.set_index(["user_model", "metric"])
    # u1: reviewed p-0 (critical) and q-0 (clean); p-1 and q-1 failed, not errors
    assert g.loc[("u1", "user_error"), "estimate"] == pytest.approx(1 / 2)
    assert g.loc[("u1", "user_error"), "n_events"] == 2
    assert g.loc[("u1", "user_error"), "n_review_failed"] == 2
    assert g.loc[("u2", "user_error"), "n_review_failed"] == 1
    ind = failure_indicators(ep, reviews=reviews).set_index("episode_id")
    assert ind.loc["u1-p-1", "review_failed"] == 1.0
    assert pd.isna(ind.loc["u1-p-1", "user_error"]) and pd.isna(ind.loc["u1-p-1",
                                                                        "agent_error"])
    assert ind.loc["u1-p-0", "review_failed"] == 0.0 and ind.loc["u1-p-0", "user_error"] == 1
    assert pd.isna(ind.loc["u2-q-1", "review_failed"])   # no review at all
    # without_user_errors: a failed review spoils nothing and counts as unreviewed
    w = without_user_errors(ep, reviews, by="user_model", ks=1, n_resamples=300,
                            method="percentile")
    w = w.set_index(["user_model", "episodes", "metric"])
    assert w.loc[("u1", SUBSETS[1], "reward"), "n_left_out"] == 1
    assert w.loc[("u1", "all", "reward"), "n_unreviewed"] == 2


def test_pass1_and_mean_reward_show_one_interval():
    ep = _episodes()   # rewards 0/1, two trials per task: mean reward is pass^1
    with pytest.warns(DegenerateIntervalWarning):
        t = without_user_errors(ep, _reviews(ep), by="user_model", ks=1, n_resamples=300,
                                method="percentile")
    g = t.set_index(["user_model", "episodes", "metric"])
    reward, pass1 = g.loc[("u1", "all", "reward")], g.loc[("u1", "all", "pass^1")]
    assert reward["estimate"] == pytest.approx(pass1["estimate"])
    assert (reward["ci_low"], reward["ci_high"]) == (pass1["ci_low"], pass1["ci_high"])
    # without the spoiled trial task p has one trial, q two: 2/3 against 0.75, two numbers
    assert g.loc[("u1", SUBSETS[1], "reward"), "estimate"] != pytest.approx(
        g.loc[("u1", SUBSETS[1], "pass^1"), "estimate"])
