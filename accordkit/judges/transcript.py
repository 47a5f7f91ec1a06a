"""Plain-text views of canonical transcripts for judge prompts (still untrusted text).

Two layouts:

* :func:`dialogue_lines` — what a user simulator saw: the agent's greeting and utterances
  and the user's messages, one ``[turn N] role: text`` line each (AcCoRD unit tests);
* :func:`indexed_lines` — every message, one ``N:role:text`` line each, ``N`` being the
  message's ``turn_idx`` (AgentChangeBench judges, whose output refers to these positions).

Every line break inside a message (each one ``str.splitlines`` knows: ``\\n``, ``\\r``,
``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028``, ``\\u2029``) is written as a
visible escape, so one message stays one line and no text can forge a line of its own; tool
call names and arguments are escaped the same way. Length caps, each ending a cut text with
``[cut N chars]``: :data:`MAX_MESSAGE_CHARS` per message, :data:`MAX_NAME_CHARS` per role
or tool name, :data:`MAX_ARGUMENTS_CHARS` per tool call's arguments.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from .prompts import cut, escape_breaks

__all__ = ["dialogue_lines", "indexed_lines", "one_line", "MAX_MESSAGE_CHARS",
           "MAX_NAME_CHARS", "MAX_ARGUMENTS_CHARS"]

#: Longest message text kept whole in a prompt; the rest is cut with a note.
MAX_MESSAGE_CHARS = 4000
#: Longest role or tool-call name kept whole.
MAX_NAME_CHARS = 100
#: Longest tool-call argument text kept whole.
MAX_ARGUMENTS_CHARS = 2000


def one_line(text: str | None, *, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` on one line (every line break escaped), cut to ``limit`` characters.

    Examples
    --------
    >>> one_line("a\\nb\\u2028c")
    'a\\\\nb\\\\u2028c'
    >>> one_line("x" * 10, limit=4)
    'xxxx[cut 6 chars]'
    """
    return cut(escape_breaks(text or ""), limit)


def _calls_text(calls: Iterable[Mapping[str, Any]] | None) -> str:
    parts = []
    for call in calls or ():
        args = call.get("arguments_json") or "{}"
        try:
            args = json.dumps(json.loads(args), ensure_ascii=False, separators=(", ", ": "))
        except (TypeError, ValueError, RecursionError):
            args = str(args)
        name = one_line(str(call.get("name")), limit=MAX_NAME_CHARS)
        parts.append(f"{name}({one_line(args, limit=MAX_ARGUMENTS_CHARS)})")
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
        role = one_line(str(msg.get("role")), limit=MAX_NAME_CHARS)
        lines.append(f"{int(msg['turn_idx'])}:{role}:{text}")
    return "\n".join(lines)
