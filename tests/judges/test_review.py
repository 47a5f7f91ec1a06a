"""``review``: prompt, strict parsing, a run against the stand-in server (cache, cost cap,
resume, shards, the command line) and the comparison with stored reviews."""

from __future__ import annotations

import json
import re

import datasets
import pandas as pd
import pytest

import accordkit as ak
from accordkit.ingest.formats.tau2.reviews import stored_reviews
from accordkit.judges import merge_verdicts, run_judge
from accordkit.judges.review import (
    COMPARE_LABELS,
    build,
    compare_reviews,
    normalise,
    parse,
    review_tables_from_verdicts,
)
from accordkit.judges.verdicts import check_verdicts, read_verdicts
from accordkit.metrics.reviews import reviews_from_json
from accordkit.schema import EPISODE_FEATURES

from .episodes import acb_episode
from .stub_server import last_user_text

FAST = {"backoff": (0.01, 0.05), "progress": False}


def episode(eid: str) -> dict:
    ep = acb_episode(eid)
    ep["benchmark"] = "tau2"
    ep["instructions"] = f"You want card {eid} locked. Do not mention the dispute first."
    ep["criteria"]["actions"] = [{"action_id": "a0", "requestor": "assistant",
                                  "name": "lock_card", "arguments_json": '{"card": 1}',
                                  "compare_args": None}]
    ep["termination_reason"], ep["reward"] = "user_stop", 0.0
    return ep


def judged_review(eid: str) -> dict:
    """What the stand-in judge says about an episode: depends on its number."""
    k = int(eid[2:])
    errors = []
    if k % 2 == 0:
        errors.append({"source": "agent", "fault_type": "wrong_argument", "severity": "critical",
                       "turn_idx": 2, "reasoning": f"locked the wrong card in {eid}",
                       "correct_behavior": "lock the card the user named"})
    if k % 3 == 0:
        errors.append({"source": "user", "fault_type": "revealed_too_early",
                       "severity": "critical_helped", "turn_idx": 4,
                       "reasoning": "raised the dispute before the card was locked"})
    return {"summary": f"review of {eid}", "errors": errors}


def answer(body) -> str:
    eid = re.search(r"lock my card \((ep\d+)\)", last_user_text(body)).group(1)
    return json.dumps(judged_review(eid))


def _opts(server, tmp_path, **extra):
    return {"judge": "review", "model": "openai/stub-judge", "api_base": server.base_url,
            "cache_dir": tmp_path / "cache", "price_in": 1.0, "price_out": 2.0, **FAST,
            **extra}


# --------------------------------------------------------------------------- prompt, parse


def test_call_quotes_script_expected_actions_and_conversation():
    (call,) = build(episode("ep1"))
    system, user = call.messages[0][1], call.messages[1][1]
    code = system.split("carry the code ", 1)[1][:16]
    assert f"<<<BEGIN SCRIPT {code}>>>\nYou want card ep1 locked." in user
    assert f'<<<BEGIN EXPECTED {code}>>>\nlock_card({{"card": 1}})\n<<<END EXPECTED' in user
    assert "2:assistant: [calls lock_card" in user
    assert (f"<<<BEGIN ENDING {code}>>>\ntermination user_stop, reward 0\n"
            f"<<<END ENDING {code}>>>") in user
    for fault in ("wrong_tool", "goal_partly_done", "revealed_too_early"):
        assert f'"{fault}"' in system
    assert call.items[0].item == "review" and call.items[0].turn_idx is None


@pytest.mark.parametrize("reply", [
    "not json",
    json.dumps({"errors": [{"source": "judge", "fault_type": "other", "severity": "minor",
                            "reasoning": "r"}]}),
    json.dumps({"errors": [{"source": "agent", "fault_type": "typo", "severity": "minor",
                            "reasoning": "r"}]}),
    json.dumps({"errors": [{"source": "agent", "fault_type": "other",
                            "severity": "critical_helped", "reasoning": "r"}]}),
    json.dumps({"errors": [{"source": "agent", "fault_type": "other", "severity": "minor",
                            "reasoning": ""}]}),
    json.dumps({"errors": [{"source": "agent", "fault_type": "other", "severity": "minor",
                            "turn_idx": "3", "reasoning": "r"}]}),
    json.dumps({"errors": "none"}),
])
def test_replies_that_break_the_contract_are_invalid(reply):
    (call,) = build(episode("ep1"))
    assert parse(reply, call) == [("invalid", reply)]


def test_a_valid_reply_is_normalised():
    (call,) = build(episode("ep0"))
    ((verdict, _),) = parse("```json\n" + json.dumps(judged_review("ep0")) + "\n```", call)
    review = json.loads(verdict)
    assert review["has_errors"] and review["agent_error"] and review["critical_user_error"]
    assert [e["error_tags"] for e in review["errors"]] == [["wrong_argument"],
                                                          ["revealed_too_early"]]
    assert normalise({"errors": []})["has_errors"] is False


def test_verdict_tables_refuse_a_review_that_is_not_one():
    rows = {"episode_id": ["e"], "judge": ["review"], "judge_model": ["m"],
            "prompt_id": ["review"], "prompt_version": ["1"], "item": ["review"],
            "turn_idx": [None], "verdict": ['{"errors": [{"source": "x"}]}'], "raw": ["r"],
            "error": [None], "input_tokens": [1], "output_tokens": [1], "cost_usd": [0.0],
            "cached_at": [None]}
    with pytest.raises(ValueError, match="row 0, column verdict: not a review"):
        check_verdicts(pd.DataFrame(rows))


# --------------------------------------------------------------------------- runs


def test_run_against_the_standin_server_cache_cost_and_resume(stub, tmp_path, fake_key):
    server = stub(answer=answer)
    eps = [episode(f"ep{i}") for i in range(6)]
    run = run_judge(eps, **_opts(server, tmp_path))
    assert run.exit_code == 0 and run.n_calls == 6 and server.n_requests == 6
    assert run.cost_usd > 0
    reviews, errors = review_tables_from_verdicts(run.verdicts)
    assert reviews["review"].unique().tolist() == ["judge"]
    assert reviews["reviewer"].unique().tolist() == ["openai/stub-judge"]
    # ep0: agent + user, ep2 and ep4: agent, ep3: user, ep1 and ep5: none
    assert errors.groupby("episode_id").size().to_dict() == {
        "agentchangebench/ep0": 2, "agentchangebench/ep2": 1, "agentchangebench/ep3": 1,
        "agentchangebench/ep4": 1}
    assert set(errors["fault_type"]) == {"wrong_argument", "revealed_too_early"}
    assert errors.loc[errors["source"] == "user", "critical"].all()
    # resume: nothing asked twice
    again = run_judge(eps, **_opts(server, tmp_path))
    assert again.n_calls == 0 and again.n_cached == 6 and server.n_requests == 6
    pd.testing.assert_frame_equal(again.verdicts, run.verdicts)


def test_cost_cap_stops_the_run(stub, tmp_path, fake_key):
    server = stub(answer=answer)
    eps = [episode(f"ep{i}") for i in range(6)]
    run = run_judge(eps, **_opts(server, tmp_path, price_in=1000.0, price_out=1000.0,
                                 max_cost=1.5, concurrency=1))
    assert 1 <= run.n_calls < 6 and run.cost_usd <= 1.5 and run.exit_code == 2
    assert run.verdicts["error"].dropna().str.contains("max_cost").all()


def test_shards_merge_to_the_single_run(stub, tmp_path, fake_key):
    server = stub(answer=answer)
    eps = [episode(f"ep{i}") for i in range(8)]
    single = run_judge(eps, **_opts(server, tmp_path / "one"))
    parts = [run_judge(eps, **_opts(server, tmp_path / f"s{i}", shard=(i, 2))) for i in (1, 2)]
    assert sum(p.n_calls for p in parts) == 8
    keys = ["episode_id", "item"]
    merged = merge_verdicts([p.verdicts for p in parts]).drop(columns="cached_at")
    pd.testing.assert_frame_equal(
        merged.sort_values(keys).reset_index(drop=True),
        single.verdicts.drop(columns="cached_at").sort_values(keys).reset_index(drop=True))


def test_episodes_with_a_stored_review_are_skipped_unless_asked(stub, tmp_path, fake_key):
    server = stub(answer=answer)
    stored = dict(episode("ep7"), reviews_json=stored_reviews(
        {"review": {"has_errors": False}}))
    run = run_judge([episode("ep1"), stored], **_opts(server, tmp_path))
    assert run.n_skipped == {"benchmark": 0, "stored": 1} and run.n_episodes == 1
    assert run_judge([stored], skip_stored=False, **_opts(server, tmp_path)).n_episodes == 1


def test_command_line_task_review(stub, tmp_path, fake_key, capsys):
    from accordkit.cli import main

    server = stub(answer=answer)
    recs = [episode(f"ep{i}") for i in range(4)]
    source = ak.save(datasets.Dataset.from_list(recs, features=EPISODE_FEATURES),
                     tmp_path / "episodes.parquet")
    out = tmp_path / "reviews.parquet"
    code = main(["judge", str(source), "--task", "review", "--model", "openai/stub-judge",
                 "--api-base", server.base_url, "--cache", str(tmp_path / "cache"),
                 "--price-in", "1", "--price-out", "2", "--no-progress", "-o", str(out)])
    assert code == 0
    verdicts = read_verdicts(out)
    assert set(verdicts["judge"]) == {"review"} and len(verdicts) == 4
    assert len(review_tables_from_verdicts(verdicts).errors) == 4   # ep0: 2, ep2, ep3: 1


# --------------------------------------------------------------------------- comparison


def test_stored_and_judged_reviews_compared(stub, tmp_path, fake_key):
    server = stub(answer=answer)
    eps = [episode(f"ep{i}") for i in range(6)]
    judged = review_tables_from_verdicts(run_judge(eps, **_opts(server, tmp_path)).verdicts)
    # tau2's stored reviews of the same episodes: agent errors on ep0, ep1, ep2; no user error
    texts = []
    for i in range(6):
        errors = ([{"source": "agent", "severity": "critical", "reasoning": "r",
                    "error_tags": ["tool_call_argument_error"]}] if i < 3 else [])
        texts.append(stored_reviews({"review": {"has_errors": bool(errors),
                                                "errors": errors}}))
    stored = reviews_from_json([e["episode_id"] for e in eps], texts)
    out = compare_reviews(stored, judged).set_index("label")
    assert list(out.index) == list(COMPARE_LABELS)
    agent = out.loc["agent_error"]
    # stored: 1 1 1 0 0 0; judged: 1 0 1 0 1 0 -> agree on 4 of 6
    assert agent["n_pairs"] == 6 and agent["agreement"] == pytest.approx(4 / 6)
    # p_o = 2/3, p_e = 0.5 * 0.5 + 0.5 * 0.5 = 0.5 -> kappa = 1/3
    assert agent["kappa"] == pytest.approx(1 / 3)
    assert out.loc["fault_wrong_argument", "agreement"] == pytest.approx(4 / 6)
    user = out.loc["critical_user_error"]
    assert user["rate_stored"] == 0 and user["rate_judged"] == pytest.approx(2 / 6)


def test_a_failed_stored_review_is_no_pair_in_the_comparison():
    """tau2's placeholder ("Failed to parse LLM response", turn_idx -1) reviewed nothing:
    it is left out of the pairs, not counted as a review that found no error."""
    from ..metrics.test_reviews import FAILED_REVIEW

    err = {"source": "agent", "severity": "critical", "reasoning": "r",
           "error_tags": ["tool_call_argument_error"]}
    stored = reviews_from_json(["a", "b", "c"], [
        stored_reviews({"review": {"has_errors": True, "errors": [err]}}),
        stored_reviews({"review": FAILED_REVIEW}),
        stored_reviews({"review": {"has_errors": False}})])
    judged = reviews_from_json(["a", "b", "c"], [
        json.dumps({"judge": {"has_errors": True, "errors": [err]}}),
        json.dumps({"judge": {"has_errors": True, "errors": [err]}}),
        json.dumps({"judge": {"has_errors": False}})])
    out = compare_reviews(stored, judged).set_index("label")
    assert out.loc["agent_error", "n_pairs"] == 2
    assert out.loc["agent_error", "agreement"] == pytest.approx(1.0)
