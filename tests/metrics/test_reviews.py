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
