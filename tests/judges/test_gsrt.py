"""``gsrt``: one call per episode with goals; one row holding the shift structure."""

from __future__ import annotations

import json

from accordkit.judges import gsrt

from .episodes import GSRT_REPLY, acb_episode


def test_call_states_goals_and_shift_cap():
    (call,) = gsrt.build(acb_episode(goals=("cards", "dispute", "statements")))
    user = call.messages[1][1]
    code = call.messages[0][1].split("carry the code ", 1)[1][:16]
    assert (f"<<<BEGIN GOALS {code}>>>\ncards\ndispute\nstatements\n<<<END GOALS {code}>>>"
            in user)
    assert "Maximum number of shifts: 2" in user
    assert call.items[0].item == "shifts"


def test_no_goals_no_call():
    ep = acb_episode()
    ep["goals"] = None
    assert gsrt.build(ep) == []


def test_parse_returns_normalised_json_or_invalid():
    (call,) = gsrt.build(acb_episode())
    ((verdict, raw),) = gsrt.parse("```json\n" + GSRT_REPLY + "\n```", call)
    assert json.loads(verdict) == json.loads(GSRT_REPLY)
    assert raw.startswith("```json")
    assert gsrt.parse('{"user_goal_shifts": []}', call)[0][0] == "invalid"
