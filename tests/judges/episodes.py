"""Tiny hand-made canonical episodes and a well-formed stand-in judge reply."""

from __future__ import annotations

import json
import re
from typing import Any

from accordkit.schema import empty_episode
from accordkit.testing import message

from .stub_server import last_user_text

#: A fake credential set in the environment by tests that check it never leaks.
FAKE_KEY = "sk-accordkit-fake-0123456789abcdef"


def msg(role: str, content: str | None, turn: int, *, kind: str | None = "utterance",
        **extra: Any) -> dict[str, Any]:
    """:func:`accordkit.testing.message` with the turn given and utterances by default."""
    return {**message(role, content, kind=kind, turn=turn), **extra}


def reveal(pref_id: str, value: str, dynamic: str = "hard_underspec") -> dict[str, Any]:
    return {"event": "PREFERENCE_REVEAL",
            "event_json": json.dumps({"pref_id": pref_id, "name": pref_id, "dynamic": dynamic,
                                      "value": value})}


def accord_episode(eid: str = "e1", *, domain: str = "shop",
                   user_texts: tuple[str, ...] = ("I need a lamp.", "Brass, please."),
                   completed: bool = True) -> dict[str, Any]:
    """A small AcCoRD shop episode: greeting, then alternating user / agent turns."""
    messages = [msg("assistant", "Hi! What do you need?", 0, kind="greeting")]
    for text in user_texts:
        messages.append(msg("user", text, len(messages)))
        messages.append(msg("assistant", "Noted. Anything else?", len(messages)))
    rec = empty_episode()
    rec.update({
        "benchmark": "accord", "domain": domain, "scenario_id": f"accord/{domain}/s1",
        "task_id": "s1", "rollout": 0, "episode_id": f"accord/{domain}/s1/m/react/{eid}",
        "agent_model": "m", "method": "react", "user_model": "u", "source": "test",
        "persona_text": "You need a desk lamp. You can spend at most $40.",
        "instructions": "You need a desk lamp under $40. Say 'brass' only when asked.",
        "messages": messages, "completed": completed,
        "preferences": [
            {"pref_id": "p0", "name": "finish", "slot": "attribute", "value": "brass",
             "dynamic": "hard_underspec", "backoff": None, "trigger": None, "satisfied": None},
            {"pref_id": "p1", "name": "colour", "slot": "option:colour", "value": "red",
             "dynamic": "unachievable", "backoff": "blue", "trigger": None, "satisfied": None},
        ],
        "outcome_json": json.dumps({"item_id": "B01", "name": "Brass desk lamp", "price": 31.5,
                                    "selected_options": {"colour": "blue"},
                                    "attributes": ["brass"]}) if completed else None,
    })
    return rec


def acb_episode(eid: str = "a1", *, n_assertions: int = 2,
                goals: tuple[str, ...] = ("cards", "dispute")) -> dict[str, Any]:
    """A small AgentChangeBench episode with NL assertions and a goal sequence."""
    rec = empty_episode()
    rec.update({
        "benchmark": "agentchangebench", "domain": "banking",
        "scenario_id": f"agentchangebench/banking/new/{eid}", "task_id": eid, "rollout": 0,
        "episode_id": f"agentchangebench/{eid}", "agent_model": "m", "method": "llm_agent",
        "user_model": "u", "source": "test", "goals": list(goals),
        "required_shifts": len(goals) - 1,
        "messages": [
            msg("assistant", "Hi! How can I help?", 0, kind=None),
            msg("user", f"Please lock my card ({eid}).", 1, kind=None),
            msg("assistant", None, 2, kind=None,
                tool_calls=[{"id": "c1", "name": "lock_card", "arguments_json": '{"card": 1}',
                             "requestor": "assistant"}]),
            msg("tool", '{"ok": true}', 3, kind=None, tool_call_id="c1"),
            msg("user", "Also, I want to dispute a charge.", 4, kind=None),
            msg("assistant", "Sure, let me open a dispute.", 5, kind=None),
        ],
        "criteria": {"action_sets": [], "actions": [], "communicate_info": [],
                     "nl_assertions": [f"Agent does thing {i} for {eid}"
                                       for i in range(n_assertions)],
                     "env_assertions_json": None, "reward_basis": []},
    })
    return rec


def unfenced(text: str) -> str:
    """A prompt with its fence code (random per process) replaced by a slot: the same
    request whichever process built it, as its cache key says."""
    return re.sub(r"^(<<<(?:BEGIN|END) [A-Z]+ )[0-9a-f]{16}(>>>)$", r"\1{fence}\2", text,
                  flags=re.MULTILINE)


GSRT_REPLY = json.dumps({"start_goal": {"turn": 1, "goal": "cards"}, "user_goal_shifts": [
    {"turn": 4, "from": "cards", "to": "dispute", "type": "GOAL_SHIFT", "agent_responded": True,
     "agent_turn": 5, "acknowledgment_turn": 5, "tool_turn": None, "outcome_turn": None,
     "transferred_to_human": False}]})


def smart_answer(body: dict[str, Any]) -> str:
    """A well-formed reply for whichever judge sent the request."""
    system = body["messages"][0]["content"]
    user = last_user_text(body)
    if "six numbered rules" in system:
        return json.dumps({f"test00{i}": "yes" for i in range(6)})
    if "single character" in system:
        return "1"
    if "numbered list of statements" in system:
        block = user.split("<<<BEGIN STATEMENTS", 1)[1].split("<<<END STATEMENTS", 1)[0]
        n = len(re.findall(r"^\d+\. ", block, flags=re.MULTILINE))
        return json.dumps({"results": [{"index": i, "met": i % 2 == 0, "justification": f"j{i}"}
                                       for i in range(n)]})
    return GSRT_REPLY
