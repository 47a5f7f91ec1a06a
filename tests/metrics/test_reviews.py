"""Review tables: one row per review and per error, fault types and critical flags."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from accordkit.ingest.formats.tau2.reviews import stored_reviews
from accordkit.metrics.reviews import (
    ERROR_COLUMNS,
    REVIEW_COLUMNS,
    review_tables,
    reviews_from_json,
    user_critical,
)
from accordkit.testing import build_episode, episode_table, message

from ..ingest.formats.test_tau2_reviews import HALLUCINATION, REVIEW, USER_ONLY


def test_tables_from_stored_reviews():
    text = stored_reviews({"review": REVIEW, "user_only_review": USER_ONLY,
                           "hallucination_check": HALLUCINATION})
    reviews, errors = reviews_from_json(["e1", "e2"], [text, None])
    assert list(reviews.columns) == REVIEW_COLUMNS and list(errors.columns) == ERROR_COLUMNS
    assert reviews["review"].tolist() == ["review", "user_only_review", "hallucination_check"]
    assert reviews["n_errors"].tolist() == [2, 1, 1]
    assert reviews["reviewer"].unique().tolist() == ["stored"]
    assert reviews.loc[0, "critical_agent_error"]
    assert errors["source"].tolist() == ["agent", "user", "user", "user"]
    assert errors["fault_type"].tolist() == ["policy_violation", "hallucination",
                                             "revealed_too_early", "hallucination"]
    assert errors["critical"].tolist() == [True, True, False, False]
    assert errors["turn_idx"].tolist()[:3] == [6, 3, 3] and pd.isna(errors["turn_idx"][3])
    assert errors.loc[0, "tags"] == "guideline_violation"
    assert errors.loc[2, "user_message"] == "my zip is 10001"


def test_review_tables_reads_the_episode_column():
    rec = build_episode([message("user", "hi")], benchmark="tau2", episode_id="tau2/s1")
    table = episode_table(rec)
    if "reviews_json" not in table.column_names:
        pytest.skip("the episode schema has no reviews_json column yet")
    rec["reviews_json"] = stored_reviews({"review": REVIEW})
    reviews, errors = review_tables(episode_table(rec))
    assert reviews["episode_id"].tolist() == ["tau2/s1"] and len(errors) == 2


def test_not_json_names_the_record():
    with pytest.raises(ValueError, match="record e9, field reviews_json: not JSON"):
        reviews_from_json(["e9"], ["{oops"])
    with pytest.raises(ValueError, match="expected the JSON text of an object"):
        reviews_from_json(["e9"], ["[1]"])


def test_user_critical_three_ways():
    crit = json.dumps({"review": {"has_errors": True, "errors": [
        {"source": "agent", "severity": "critical", "reasoning": "r"},
        {"source": "user", "severity": "minor", "reasoning": "r"}]}})
    t = reviews_from_json(["a", "b"], [crit, stored_reviews({"user_only_review": {
        "has_errors": True, "errors": [{"severity": "critical", "reasoning": "r"}]}})])
    # a: the agent erred critically, the user only in a minor way
    assert user_critical(t, ["a", "b", "z"]).tolist() == [False, True, pd.NA]


# tau2's placeholders for a review its reviewer could not parse (spec tau2-format.md §12)
FAILED_REVIEW = {"summary": "", "has_errors": False, "agent_error": False,
                 "user_error": False, "critical_user_error": False,
                 "errors": [{"source": "user", "error_tags": [], "severity": "minor",
                             "turn_idx": -1,
                             "reasoning": "Failed to parse LLM response: Expecting value"}]}
FAILED_USER_ONLY = {"summary": "", "user_error": False, "critical_user_error": False,
                    "has_errors": False,
                    "errors": [{"turn_idx": -1, "severity": "minor",
                                "reasoning": "Failed to parse LLM response: no JSON"}]}


def test_placeholder_review_is_a_failed_review_not_an_error():
    texts = [stored_reviews({"review": FAILED_REVIEW}),
             stored_reviews({"user_only_review": FAILED_USER_ONLY}),
             stored_reviews({"review": REVIEW}), None]
    t = reviews_from_json(["f1", "f2", "ok", "none"], texts)
    assert t.reviews["review_failed"].tolist() == [True, True, False]
    assert t.reviews["n_errors"].tolist() == [0, 0, 2]
    # the failed reviews' flags are unknown, not "no error"
    assert t.reviews.loc[:1, "user_error"].isna().all()
    assert set(t.errors["episode_id"]) == {"ok"}
    crit = user_critical(t, ["f1", "f2", "ok", "none"])   # ok: a critical_hindered error
    assert crit.isna().tolist() == [True, True, False, True] and crit["ok"]
    from accordkit.metrics.reviews import review_status
    assert review_status(t, ["f1", "ok", "none"]).tolist() == ["review failed", "2",
                                                             "not reviewed"]
    assert review_status(None, ["f1"]).tolist() == ["not reviewed"]


def test_placeholder_beside_real_errors_keeps_the_real_ones():
    mixed = dict(REVIEW, errors=[*REVIEW["errors"], FAILED_REVIEW["errors"][0]])
    t = reviews_from_json(["e"], [stored_reviews({"review": mixed})])
    assert not t.reviews.loc[0, "review_failed"] and t.reviews.loc[0, "n_errors"] == 2
    assert (t.errors["turn_idx"] != -1).all()


def test_levels_stored_before_the_column_drop_placeholders():
    from accordkit.metrics.reviews import tables_from_levels

    texts = [stored_reviews({"review": FAILED_REVIEW}), stored_reviews({"review": REVIEW})]
    # an old store: the placeholder as an error row, no review_failed column
    reviews = pd.DataFrame([
        {**{c: None for c in REVIEW_COLUMNS}, "episode_id": "f", "review": "review",
         "reviewer": "stored", "has_errors": False, "n_errors": 1},
        {**{c: None for c in REVIEW_COLUMNS}, "episode_id": "ok", "review": "review",
         "reviewer": "stored", "has_errors": True, "n_errors": 2,
         "user_error": True}]).drop(
        columns="review_failed")
    new = reviews_from_json(["f", "ok"], texts)
    placeholder = {**{c: None for c in ERROR_COLUMNS}, "episode_id": "f", "review": "review",
                   "reviewer": "stored", "error_index": 0, "source": "user",
                   "critical": False, "turn_idx": -1,
                   "reasoning": FAILED_REVIEW["errors"][0]["reasoning"]}
    errors = pd.concat([pd.DataFrame([placeholder]), new.errors], ignore_index=True)
    got = tables_from_levels(reviews, errors)
    assert got.reviews["review_failed"].tolist() == [True, False]
    assert got.reviews["n_errors"].tolist() == [0, 2]
    assert set(got.errors["episode_id"]) == {"ok"}
    assert got.reviews["user_error"].isna().tolist() == [True, False]


def test_revealed_info_early_is_read_by_who_erred():
    """tau2 tags an agent that tells too early ``revealed_info_early`` too: an agent breaking
    its policy, not the user simulator revealing the task (issue 40, item 7)."""
    text = json.dumps({"review": {"has_errors": True, "errors": [
        {"source": "agent", "severity": "minor", "error_tags": ["revealed_info_early"],
         "reasoning": "gave the refund amount before verifying the user"},
        {"source": "user", "severity": "minor", "error_tags": ["revealed_info_early"],
         "reasoning": "gave the order id unasked"}]}})
    _, errors = reviews_from_json(["e1"], [text])
    assert errors["source"].tolist() == ["agent", "user"]
    assert errors["fault_type"].tolist() == ["policy_violation", "revealed_too_early"]
