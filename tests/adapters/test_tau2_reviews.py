"""tau2's stored reviews: checked against tau2's data model, normalised, errors named."""

from __future__ import annotations

import json

import pytest

from accordkit.adapters.tau2_reviews import stored_reviews
from accordkit.schema import EpisodeValidationError

REVIEW = {
    "summary": "The agent cancelled without confirmation; the user invented an order id.",
    "agent_error": True, "user_error": True, "critical_user_error": True, "has_errors": True,
    "errors": [
        {"source": "agent", "error_type": "content_error", "error_tags": ["guideline_violation"],
         "severity": "critical", "turn_idx": 6, "reasoning": "no explicit confirmation",
         "correct_behavior": "ask for a yes"},
        {"source": "user", "error_tags": ["hallucination"], "severity": "critical_hindered",
         "turn_idx": 3, "reasoning": "order #W999 is not in the instructions"},
    ],
    "cost": 0.0123,
}
USER_ONLY = {"summary": "", "user_error": True, "critical_user_error": False,
             "has_errors": True,
             "errors": [{"turn_idx": 3, "error_tags": ["revealed_info_early"],
                         "severity": "minor", "reasoning": "gave the zip code unasked",
                         "user_message": "my zip is 10001"}]}
HALLUCINATION = {"reasoning": "step by step", "hallucination_found": True,
                 "errors": [{"reasoning": "made up a flight number",
                             "user_message": "HAT999"}], "summary": "one"}


def test_all_three_reviews_normalised():
    out = json.loads(stored_reviews({"review": REVIEW, "user_only_review": USER_ONLY,
                                     "hallucination_check": HALLUCINATION}))
    assert set(out) == {"review", "user_only_review", "hallucination_check"}
    r = out["review"]
    assert r["has_errors"] and r["cost"] == 0.0123
    assert r["errors"][1] == {"source": "user", "error_type": None,
                              "error_tags": ["hallucination"], "severity": "critical_hindered",
                              "turn_idx": 3, "reasoning": "order #W999 is not in the "
                              "instructions", "correct_behavior": None, "user_message": None}
    u = out["user_only_review"]["errors"][0]
    assert u["source"] == "user" and u["error_type"] == "content_error"   # tau2's default
    assert u["user_message"] == "my zip is 10001"
    h = out["hallucination_check"]
    assert h["has_errors"] and h["errors"][0]["error_tags"] == ["hallucination"]


def test_defaults_of_the_data_model():
    out = json.loads(stored_reviews({"review": {"has_errors": False}}))
    assert out["review"] == {"summary": "", "has_errors": False, "agent_error": False,
                             "user_error": False, "critical_user_error": False, "cost": None,
                             "errors": []}
    assert stored_reviews({"review": None, "messages": []}) is None


@pytest.mark.parametrize(("sim", "field", "reason"), [
    ({"review": dict(REVIEW, errors=[dict(REVIEW["errors"][0], severity="severe")])},
     "review.errors[0].severity", "unknown severity 'severe'"),
    ({"user_only_review": dict(USER_ONLY, errors=[dict(USER_ONLY["errors"][0],
                                                       severity="critical_helped")])},
     "user_only_review.errors[0].severity", "unknown severity 'critical_helped'"),
    ({"review": {k: v for k, v in REVIEW.items() if k != "has_errors"}},
     "review.has_errors", "missing required value"),
    ({"review": dict(REVIEW, errors=[{"source": "agent", "severity": "minor"}])},
     "review.errors[0].reasoning", "missing required value"),
    ({"review": dict(REVIEW, errors=[{"severity": "minor", "reasoning": "r"}])},
     "review.errors[0].source", "missing required value"),
    ({"review": dict(REVIEW, errors=[{"source": "simulator", "reasoning": "r"}])},
     "review.errors[0].source", "unknown error source 'simulator'"),
    ({"review": dict(REVIEW, errors={"0": {}})}, "review.errors", "expected a list of errors"),
    ({"review": dict(REVIEW, errors=[dict(REVIEW["errors"][0], error_tags="x")])},
     "review.errors[0].error_tags", "expected a list of tags"),
    ({"review": dict(REVIEW, errors=[dict(REVIEW["errors"][0], turn_idx="six")])},
     "review.errors[0].turn_idx", "expected an integer message index"),
    ({"hallucination_check": {"hallucination_found": True, "errors": [{}]}},
     "hallucination_check.errors[0].reasoning", "missing required value"),
    ({"review": "looks fine"}, "review", "expected an object"),
])
def test_bad_reviews_name_the_field(sim, field, reason):
    with pytest.raises(EpisodeValidationError) as info:
        stored_reviews(sim)
    assert info.value.field == field
    assert reason in info.value.reason
