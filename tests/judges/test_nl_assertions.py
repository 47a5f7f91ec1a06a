"""``nl_assertions``: one call per episode, one row per assertion."""

from __future__ import annotations

import json

from accordkit.judges import nl_assertions

from .episodes import acb_episode


def test_one_call_listing_every_assertion():
    ep = acb_episode(n_assertions=3)
    (call,) = nl_assertions.build(ep)
    assert [r.item for r in call.items] == ["0", "1", "2"]
    user = call.messages[1][1]
    assert "0. Agent does thing 0 for a1" in user and "2. Agent does thing 2 for a1" in user
    assert '2:assistant: [calls lock_card({"card": 1})]' in user
    assert "3:tool:{\"ok\": true}" in user


def test_no_assertions_no_call_and_stored_verdicts_are_detected():
    assert nl_assertions.build(acb_episode(n_assertions=0)) == []
    ep = acb_episode()
    assert not nl_assertions.SPEC.has_stored(ep)
    ep["nl_verdicts"] = []
    assert nl_assertions.SPEC.has_stored(ep)


def test_parse_keeps_the_justification_in_raw():
    (call,) = nl_assertions.build(acb_episode())
    raw = json.dumps({"results": [{"index": 0, "met": True, "justification": "did it"},
                                  {"index": 1, "met": False, "justification": "did not"}]})
    out = nl_assertions.parse(raw, call)
    assert [v for v, _ in out] == ["met", "not_met"]
    assert json.loads(out[1][1])["justification"] == "did not"
