"""``usersim_tests``: AcCoRD user-simulator unit tests test000-test005, per user turn.

One call per user-simulator message: the judge sees the scenario (the simulator's
instructions), the dialogue before the message and the message itself, and answers all six
rules at once as JSON (they share the long context, so one call costs a sixth of six). Each
rule becomes one verdict row: ``item`` = test id, ``turn_idx`` = the judged user message,
``verdict`` ∈ yes / no / n/a / invalid.

Length caps (the rest replaced by ``[cut N chars]``): :data:`MAX_INSTRUCTIONS_CHARS` for the
scenario, :data:`MAX_REPLY_CHARS` for the judged reply, and the transcript's own caps for
the conversation before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..benchmarks import judged_by
from ..verdicts.parse import INVALID, parse_json_object, parse_label
from .calls import ItemRef, JudgeCall, JudgeSpec
from .prompts import fence_code, fill, load_prompt, quote
from .transcript import dialogue_lines

__all__ = ["SPEC", "TESTS", "LABELS", "user_turns", "scenario_text",
           "MAX_INSTRUCTIONS_CHARS", "MAX_REPLY_CHARS"]

#: Longest scenario (simulator instructions) kept whole in a prompt.
MAX_INSTRUCTIONS_CHARS = 8000
#: Longest judged user-simulator reply kept whole in a prompt.
MAX_REPLY_CHARS = 4000

TESTS = ("test000", "test001", "test002", "test003", "test004", "test005")
LABELS = ("yes", "no", "n/a")


def user_turns(messages: list[Mapping[str, Any]]) -> list[tuple[int, str]]:
    """``(turn_idx, text)`` of every user-simulator message, in order.

    Parts of one source message (same ``turn_idx``) are joined.
    """
    turns: dict[int, list[str]] = {}
    for msg in messages:
        if msg.get("role") == "user" and msg.get("kind") in (None, "utterance") \
                and msg.get("content"):
            turns.setdefault(int(msg["turn_idx"]), []).append(msg["content"])
    return [(t, "\n".join(parts)) for t, parts in turns.items()]


def scenario_text(episode: Mapping[str, Any]) -> str:
    """The simulator's instructions, or a listing of the preferences when none are stored."""
    if episode.get("instructions"):
        return str(episode["instructions"])
    lines = []
    for p in episode.get("preferences") or ():
        extra = "".join(f"; {k}: {p[k]}" for k in ("backoff", "trigger") if p.get(k))
        lines.append(f"- {p['name']} = {p.get('value')} ({p.get('dynamic')}{extra})")
    return "\n".join(lines) or "(no instructions stored)"


def _rules(extra: Mapping[str, Any]) -> str:
    tests = extra.get("tests") or {}
    return "\n".join(f"{tid} ({tests[tid]['name']}): {' '.join(tests[tid]['rule'].split())}"
                     for tid in TESTS)


def build(episode: Mapping[str, Any]) -> list[JudgeCall]:
    """One call per user-simulator message of an AcCoRD episode."""
    domain = episode.get("domain")
    if domain not in ("shop", "travel"):
        raise ValueError(f"record {episode.get('episode_id')}, field domain: usersim_tests "
                         f"needs an AcCoRD shop or travel episode, got {domain!r}")
    tpl = load_prompt(f"usersim_tests.{domain}")
    rules = _rules(tpl.extra)
    scenario = scenario_text(episode)
    messages = list(episode.get("messages") or ())
    calls = []
    for turn, reply in user_turns(messages):
        conversation = dialogue_lines(messages, before=turn)
        code = fence_code(scenario, conversation, reply)
        user = fill(tpl.user, {
            "rules": rules,
            "scenario": quote("INSTRUCTIONS", scenario, code, limit=MAX_INSTRUCTIONS_CHARS),
            "conversation": quote("CONVERSATION", conversation, code),
            "reply": quote("REPLY", reply, code, limit=MAX_REPLY_CHARS),
        })
        items = tuple(ItemRef(episode["episode_id"], tid, turn) for tid in TESTS)
        calls.append(JudgeCall("usersim_tests", tpl.id, tpl.version,
                               (("system", fill(tpl.system, {"fence": code})), ("user", user)),
                               items, fence=code))
    return calls


def parse(raw: str, call: JudgeCall) -> list[tuple[str, str]]:
    """One verdict per test id; a missing or unknown answer is ``"invalid"``."""
    obj = parse_json_object(raw)
    out = []
    for ref in call.items:
        value = obj.get(ref.item) if obj is not None else None
        out.append((parse_label(value, LABELS) if isinstance(value, str) else INVALID, raw))
    return out


SPEC = JudgeSpec(name="usersim_tests", benchmarks=judged_by("usersim_tests"), verdicts=LABELS,
                 build=build, parse=parse, has_stored=lambda episode: False)
