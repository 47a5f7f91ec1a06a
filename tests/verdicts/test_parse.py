"""Strict reply parsers: a verdict or ``invalid``, never a guess."""

from __future__ import annotations

import json

import pytest

from accordkit.verdicts.parse import (
    gsrt_struct,
    parse_gsrt,
    parse_json_object,
    parse_label,
    parse_nl_results,
)

from ..judges.episodes import GSRT_REPLY

YNA = ("yes", "no", "n/a")


@pytest.mark.parametrize("raw, expected", [
    ("yes", "yes"), (" No.\n", "no"), ("`N/A`", "n/a"), ('"yes"', "yes"), ("**no**", "no"),
    ("yes no", "invalid"), ("Yes, the reply is relevant.", "invalid"), ("", "invalid"),
    ("maybe", "invalid"), (None, "invalid"), ("na", "invalid"),
])
def test_parse_label(raw, expected):
    assert parse_label(raw, YNA) == expected


def test_parse_label_binary():
    assert parse_label("1", ("1", "0")) == "1"
    assert parse_label("0.", ("1", "0")) == "0"
    assert parse_label("10", ("1", "0")) == "invalid"


def test_parse_json_object():
    assert parse_json_object('{"a": [1]}') == {"a": [1]}
    assert parse_json_object("```\n{\"a\": 1}\n```") == {"a": 1}
    assert parse_json_object("[1, 2]") is None
    assert parse_json_object('The answer: {"a": 1}') is None
    assert parse_json_object("\x00%%garbage%% }{") is None


def test_parse_nl_results_per_item():
    raw = json.dumps({"results": [
        {"index": 1, "met": False, "justification": "missing"},
        {"index": 0, "met": True, "justification": "done"},
        {"index": 2, "met": "yes"},
        {"index": 3, "met": True}, {"index": 3, "met": False},
    ]})
    out = parse_nl_results(raw, 5)
    assert [v for v, _ in out] == ["met", "not_met", "invalid", "invalid", "invalid"]
    assert json.loads(out[0][1])["justification"] == "done"


def test_parse_nl_results_unreadable_reply_is_invalid_for_all_items():
    assert parse_nl_results("I think all are met.", 2) == [("invalid", "I think all are met.")] * 2


def test_a_key_answered_twice_makes_the_reply_unreadable():
    assert parse_json_object('{"test000": "yes", "test000": "no"}') is None
    assert parse_json_object('{"a": {"b": 1, "b": 2}}') is None
    assert parse_json_object('{"test000": "yes", "test001": "no"}') == {
        "test000": "yes", "test001": "no"}


@pytest.mark.parametrize("indices", [(1, 2), (0, 1, 7), (-1, 0, 1)])
def test_an_index_naming_no_assertion_makes_every_assertion_invalid(indices):
    # a reply counting from 1 would shift every answer onto the wrong assertion
    raw = json.dumps({"results": [{"index": i, "met": True} for i in indices]})
    assert parse_nl_results(raw, 2) == [("invalid", raw)] * 2


def test_parse_gsrt_normalises_and_rejects_bad_types():
    out = parse_gsrt(GSRT_REPLY)
    assert out["start_goal"] == {"turn": 1, "goal": "cards"}
    assert out["user_goal_shifts"][0]["acknowledgment_turn"] == 5
    for bad in ('{"start_goal": {"turn": 1, "goal": "a"}}',
                '{"start_goal": {"turn": -1, "goal": "a"}, "user_goal_shifts": []}',
                '{"start_goal": {"turn": 1, "goal": "a"}, "user_goal_shifts": [{"turn": 2}]}',
                '{"start_goal": {"turn": 1, "goal": "a"}, "user_goal_shifts": [{"turn": 2, '
                '"agent_responded": true, "transferred_to_human": "no"}]}',
                "no shifts"):
        assert parse_gsrt(bad) is None


def test_gsrt_struct_maps_to_canonical_names():
    assert gsrt_struct(GSRT_REPLY) == {
        "start_turn": 1, "start_goal": "cards",
        "shifts": [{"turn": 4, "from_goal": "cards", "to_goal": "dispute",
                    "agent_responded": True, "agent_turn": 5, "ack_turn": 5, "tool_turn": None,
                    "outcome_turn": None, "transferred": False}]}
    with pytest.raises(ValueError, match="not valid goal-shift"):
        gsrt_struct("{}")


def test_gsrt_struct_agrees_with_the_loader_on_released_judge_output(acb_dir):
    import accordkit as ak

    ds = ak.load(acb_dir / "banking_gpt-4.1_13sims_tasks-trimmed.json")
    n = 0
    for rec in ds:
        stored = json.loads(rec["reward_info_json"])["info"].get("gsrt_v2")
        if stored is None:
            continue
        assert gsrt_struct(stored) == rec["gsrt_judge"]
        n += 1
    assert n >= 10
