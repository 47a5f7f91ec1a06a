"""Plain-text views of canonical transcripts for judge prompts (still untrusted text).

Two layouts:

* :func:`dialogue_lines` — what a user simulator saw: the agent's greeting and utterances
  and the user's messages, one ``[turn N] role: text`` line each (AcCoRD unit tests);
* :func:`indexed_lines` — every message, one ``N:role:text`` line each, ``N`` being the
  message's ``turn_idx`` (AgentChangeBench judges, whose output refers to these positions).

Newlines inside a message are written as ``\\n`` so one message stays one line; very long
messages (tool results) are shortened with a note saying how much was cut.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["dialogue_lines", "indexed_lines", "MAX_MESSAGE_CHARS", "one_line"]

#: Longest message text kept whole in a prompt; the rest is cut with a note.
MAX_MESSAGE_CHARS = 4000


def one_line(text: str | None, *, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` on one line (newlines escaped), cut to ``limit`` characters with a note.

    Examples
    --------
    >>> one_line("a\\nb")
    'a\\\\nb'
    >>> one_line("x" * 10, limit=4)
    'xxxx[... 6 more characters cut]'
    """
    text = (text or "").replace("\r\n", "\n").replace("\n", "\\n")
    if len(text) > limit:
        return f"{text[:limit]}[... {len(text) - limit} more characters cut]"
    return text


def _calls_text(calls: Iterable[Mapping[str, Any]] | None) -> str:
    parts = []
    for call in calls or ():
        args = call.get("arguments_json") or "{}"
        try:
            args = json.dumps(json.loads(args), ensure_ascii=False, separators=(", ", ": "))
        except (TypeError, ValueError):
            pass
        parts.append(f"{call.get('name')}({args})")
    return "; ".join(parts)


def dialogue_lines(messages: Iterable[Mapping[str, Any]], *, before: int | None = None) -> str:
    """The user-visible dialogue, optionally only the messages with ``turn_idx < before``.

    Agent actions, observations and thoughts are left out: the user simulator never saw
    them, so its replies must not be judged against them.

    Examples
    --------
    >>> msgs = [{"role": "assistant", "kind": "greeting", "turn_idx": 0, "content": "Hi"},
    ...         {"role": "user", "kind": "utterance", "turn_idx": 1, "content": "A lamp"}]
    >>> print(dialogue_lines(msgs))
    [turn 0] assistant: Hi
    [turn 1] user: A lamp
    """
    lines = []
    for msg in messages:
        if before is not None and msg["turn_idx"] >= before:
            continue
        if msg.get("role") not in ("user", "assistant"):
            continue
        if msg.get("kind") not in (None, "greeting", "utterance") or not msg.get("content"):
            continue
        lines.append(f"[turn {msg['turn_idx']}] {msg['role']}: {one_line(msg['content'])}")
    return "\n".join(lines) if lines else "(no messages yet)"


def indexed_lines(messages: Iterable[Mapping[str, Any]]) -> str:
    """Every message as ``turn_idx:role:text``; tool calls appended as ``[calls f(args)]``.

    Examples
    --------
    >>> msgs = [{"role": "assistant", "turn_idx": 0, "content": "Hi"},
    ...         {"role": "assistant", "turn_idx": 1, "content": None,
    ...          "tool_calls": [{"name": "f", "arguments_json": '{"x": 1}'}]}]
    >>> print(indexed_lines(msgs))
    0:assistant:Hi
    1:assistant: [calls f({"x": 1})]
    """
    lines = []
    for msg in messages:
        text = one_line(msg.get("content"))
        calls = _calls_text(msg.get("tool_calls"))
        if calls:
            text = f"{text} [calls {calls}]"
        lines.append(f"{msg['turn_idx']}:{msg['role']}:{text}")
    return "\n".join(lines)
