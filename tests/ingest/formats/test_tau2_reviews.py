"""tau2's stored reviews: checked against tau2's data model, normalised, errors named."""

from __future__ import annotations

import json

import pytest

from accordkit.ingest.formats.tau2.reviews import stored_reviews
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


# --------------------------------------------------------------------------- from a file


def _sim(sid, task="t1", trial=0, **extra):
    """A tau2 SimulationRun (data model of tau2/data_model/simulation.py) as stored."""
    return {"id": sid, "task_id": task, "trial": trial, "seed": 1,
            "timestamp": "2026-01-01T00:00:00", "start_time": "2026-01-01T00:00:00",
            "end_time": "2026-01-01T00:01:00", "duration": 60.0,
            "termination_reason": "user_stop", "agent_cost": 0.01, "user_cost": 0.002,
            "reward_info": {"reward": 0.0, "db_check": {"db_match": False, "db_reward": 0.0},
                            "action_checks": [{"action": {"action_id": "a0",
                                                          "requestor": "assistant",
                                                          "name": "cancel_reservation",
                                                          "arguments": {"id": "R1"},
                                                          "info": None, "compare_args": None},
                                               "action_match": False, "action_reward": 0.0}],
                            "reward_basis": ["DB"], "reward_breakdown": {"DB": 0.0},
                            "info": None},
            "messages": [
                {"role": "assistant", "content": "Hi! How can I help?", "turn_idx": 0},
                {"role": "user", "content": "Cancel reservation R1.", "turn_idx": 1},
                {"role": "assistant", "content": None, "turn_idx": 2, "tool_calls": [
                    {"id": "c1", "name": "cancel_reservation", "arguments": {"id": "R2"},
                     "requestor": "assistant"}]},
                {"role": "tool", "id": "c1", "content": "ok", "requestor": "assistant",
                 "error": False, "turn_idx": 3},
                {"role": "user", "content": "Thanks ###STOP###", "turn_idx": 4}],
            **extra}


def _results(sims, tasks=None):
    task = {"id": "t1", "user_scenario": {"persona": None, "instructions": "Cancel R1."},
            "evaluation_criteria": {"actions": [{"action_id": "a0", "requestor": "assistant",
                                                 "name": "cancel_reservation",
                                                 "arguments": {"id": "R1"}}],
                                    "reward_basis": ["DB"]}}
    return {"timestamp": "2026-01-01T00:00:00",
            "info": {"git_commit": "x", "num_trials": 1, "max_steps": 50, "max_errors": 10,
                     "seed": 1,
                     "user_info": {"implementation": "user_simulator", "llm": "sim-u"},
                     "agent_info": {"implementation": "llm_agent", "llm": "agent-a"},
                     "environment_info": {"domain_name": "airline", "policy": "p"}},
            "tasks": tasks or [task], "simulations": sims}


def test_stored_reviews_read_from_a_tau2_results_file(tmp_path):
    import accordkit as ak
    from accordkit.metrics.reviews import review_tables

    bad_severity = dict(REVIEW, errors=[dict(REVIEW["errors"][0], severity="catastrophic")])
    no_reasoning = {"has_errors": True, "errors": [{"turn_idx": 1}]}
    sims = [_sim("s-ok", review=REVIEW, user_only_review=USER_ONLY,
                 hallucination_check=HALLUCINATION),
            _sim("s-plain", trial=1),
            _sim("s-bad-severity", trial=2, review=bad_severity),
            _sim("s-no-reasoning", trial=3, user_only_review=no_reasoning)]
    bad_checks = _sim("s-bad-checks", trial=4)
    bad_checks["reward_info"]["action_checks"] = {"a0": False}
    sims.append(bad_checks)
    path = tmp_path / "run_reviewed.json"
    path.write_text(json.dumps(_results(sims)))
    ds, report = ak.load_with_report(path, errors="skip")
    assert sorted(ds["episode_id"]) == ["tau2/s-ok", "tau2/s-plain"]
    problems = {s.record: (s.field, s.reason) for s in report.skipped}
    assert problems["s-bad-severity"][0] == "review.errors[0].severity"
    assert "unknown severity 'catastrophic'" in problems["s-bad-severity"][1]
    assert problems["s-no-reasoning"] == ("user_only_review.errors[0].reasoning",
                                          "missing required value")
    assert problems["s-bad-checks"][0] == "reward_info.action_checks"
    assert all(str(path) in str(s) for s in report.skipped)   # the file is named
    with pytest.raises(EpisodeValidationError, match="review.errors.0..severity"):
        ak.load(path)
    reviews, errors = review_tables(ds)
    assert reviews["episode_id"].unique().tolist() == ["tau2/s-ok"]
    assert reviews["review"].tolist() == ["review", "user_only_review", "hallucination_check"]
    assert errors["fault_type"].tolist() == ["policy_violation", "hallucination",
                                             "revealed_too_early", "hallucination"]
    assert errors["turn_idx"].tolist()[:3] == [6, 3, 3]
    assert ds[1]["reviews_json"] is None   # s-plain stores none


def test_expected_action_without_a_name_skips_its_task_only(tmp_path):
    import accordkit as ak

    good = _results([])["tasks"][0]
    nameless = {"id": "t2", "user_scenario": {"instructions": "x"},
                "evaluation_criteria": {"actions": [{"action_id": "a0",
                                                     "arguments": {"id": "R1"}}]}}
    sims = [_sim("s1"), _sim("s2", task="t2")]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_results(sims, tasks=[good, nameless])))
    ds, report = ak.load_with_report(path, errors="skip")
    assert ds["episode_id"] == ["tau2/s1"]
    (skipped,) = report.skipped
    assert (skipped.record, skipped.field) == ("s2", "task.evaluation_criteria.actions[0].name")
    assert str(path) in str(skipped)
