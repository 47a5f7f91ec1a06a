"""``usersim_tests``: one call per user-simulator message, six verdict rows each."""

from __future__ import annotations

import json

import pytest

from accordkit.judges import usersim
from accordkit.judges.calls import ItemRef

from .episodes import accord_episode, msg


def test_one_call_per_user_turn_with_six_items():
    ep = accord_episode(user_texts=("I need a lamp.", "Brass, please.", "Thanks!"))
    calls = usersim.build(ep)
    assert [c.items[0].turn_idx for c in calls] == [1, 3, 5]
    assert calls[1].items == tuple(ItemRef(ep["episode_id"], f"test00{i}", 3) for i in range(6))
    assert {c.prompt_id for c in calls} == {"usersim_tests.shop"}


def test_conversation_holds_only_earlier_dialogue_and_the_reply_is_quoted_apart():
    ep = accord_episode(user_texts=("I need a lamp.", "Brass, please."))
    ep["messages"].insert(2, msg("assistant", "thinking...", 2, kind="thought"))
    user = usersim.build(ep)[1].messages[1][1]
    conversation = user.split("<<<BEGIN CONVERSATION")[1].split("<<<END CONVERSATION")[0]
    assert "[turn 0] assistant: Hi! What do you need?" in conversation
    assert "[turn 1] user: I need a lamp." in conversation
    assert "thinking" not in conversation          # agent thoughts: never seen by the user
    assert "Brass, please." not in conversation    # the judged reply is not in the context
    reply = user.split("<<<BEGIN REPLY")[1].split("<<<END REPLY")[0]
    assert "Brass, please." in reply
    assert "Say 'brass' only when asked." in user  # the instructions


def test_travel_episodes_use_the_travel_wording():
    calls = usersim.build(accord_episode(domain="travel"))
    assert {c.prompt_id for c in calls} == {"usersim_tests.travel"}
    assert "traveller" in calls[0].messages[0][1]


def test_non_accord_domain_is_refused_with_the_record_named():
    ep = accord_episode()
    ep["domain"] = "banking"
    with pytest.raises(ValueError, match=r"record accord/.*field domain"):
        usersim.build(ep)


def test_parse_gives_one_verdict_per_test_and_invalid_for_missing_or_odd_answers():
    call = usersim.build(accord_episode())[0]
    raw = json.dumps({"test000": "yes", "test001": "N/A", "test002": "no", "test003": "maybe",
                      "test004": 1})
    verdicts = [v for v, _ in usersim.parse(raw, call)]
    assert verdicts == ["yes", "n/a", "no", "invalid", "invalid", "invalid"]
    assert [v for v, _ in usersim.parse("yes", call)] == ["invalid"] * 6
