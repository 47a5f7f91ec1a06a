"""``outcome``: one 0/1 call per purchase criterion of a completed shop episode."""

from __future__ import annotations

import pytest

from accordkit.judges import outcome

from .episodes import accord_episode


def test_items_are_type_price_and_every_judged_preference():
    ep = accord_episode()
    ep["preferences"].append({"pref_id": "p2", "name": "size", "slot": "option:size",
                              "value": None, "dynamic": "soft_underspec", "backoff": None,
                              "trigger": None, "satisfied": None})
    calls = outcome.build(ep)
    assert [c.items[0].item for c in calls] == ["product_type", "price", "p0", "p1"]
    texts = [c.messages[1][1] for c in calls]
    assert "The product has this property: brass" in texts[2]
    assert "The selected colour is blue." in texts[3]     # unachievable: the backoff
    assert "You can spend at most $40." in texts[1]
    assert "Options selected at purchase: colour: blue" in texts[0]


def test_target_value_by_dynamic():
    assert outcome.target_value({"dynamic": "triggered", "value": "a", "trigger": "b"}) == "b"
    assert outcome.target_value({"dynamic": "hard_underspec", "value": "a"}) == "a"
    assert outcome.target_value({"dynamic": "unachievable", "value": "a", "backoff": None}) is None


def test_incomplete_and_travel_episodes_make_no_calls():
    assert outcome.build(accord_episode(completed=False)) == []
    assert outcome.build(accord_episode(domain="travel")) == []


def test_bad_outcome_json_names_record_and_field():
    ep = accord_episode()
    ep["outcome_json"] = "{not json"
    with pytest.raises(ValueError, match=r"record .*, field outcome_json: not valid JSON"):
        outcome.build(ep)


def test_parse_binary():
    call = outcome.build(accord_episode())[0]
    assert outcome.parse("1", call) == [("1", "1")]
    assert outcome.parse("Yes", call) == [("invalid", "Yes")]
    assert outcome.SPEC.has_stored(accord_episode()) is False
