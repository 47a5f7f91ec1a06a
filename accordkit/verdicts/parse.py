"""Strict parsers for judge replies: a verdict or ``"invalid"``, never a guess.

Only presentation noise is tolerated: surrounding whitespace, quotes or backticks, a final
full stop, letter case, and a Markdown code fence around JSON. Anything else (extra words,
two answers, JSON of the wrong shape) is ``"invalid"``; the raw text is kept in the verdict
table for audit.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "INVALID",
    "parse_label",
    "parse_json_object",
    "parse_nl_results",
    "parse_gsrt",
    "gsrt_struct",
]

INVALID = "invalid"

_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.DOTALL)
_LABEL_NOISE = " \t\r\n`\"'*"


def parse_label(raw: str | None, labels: tuple[str, ...]) -> str:
    """The label ``raw`` states, or ``"invalid"``.

    Parameters
    ----------
    raw : str or None
        The judge's reply.
    labels : tuple of str
        Accepted answers, lower case (e.g. ``("yes", "no", "n/a")`` or ``("1", "0")``).

    Examples
    --------
    >>> parse_label(" Yes.", ("yes", "no", "n/a"))
    'yes'
    >>> parse_label("N/A", ("yes", "no", "n/a"))
    'n/a'
    >>> parse_label("yes, mostly", ("yes", "no", "n/a"))
    'invalid'
    """
    if not isinstance(raw, str):
        return INVALID
    text = raw.strip(_LABEL_NOISE)
    if text.endswith("."):
        text = text[:-1].strip(_LABEL_NOISE)
    text = text.lower()
    return text if text in labels else INVALID


def parse_json_object(raw: str | None) -> dict[str, Any] | None:
    """The JSON object in ``raw`` (optionally inside a code fence), or ``None``.

    Examples
    --------
    >>> parse_json_object('```json\\n{"a": 1}\\n```')
    {'a': 1}
    >>> parse_json_object('Here: {"a": 1}') is None
    True
    """
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        obj = json.loads(text, object_pairs_hook=_unique_keys)
    except (json.JSONDecodeError, RecursionError, _RepeatedKeyError):
        return None
    return obj if isinstance(obj, dict) else None


class _RepeatedKeyError(ValueError):
    """A JSON object names one key twice: two answers to one question."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict; a key given twice makes the whole reply unreadable
    (``json.loads`` would keep the last answer without a word)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _RepeatedKeyError("repeated key")
    return out


def parse_nl_results(raw: str | None, n: int) -> list[tuple[str, str]]:
    """Per-assertion ``(verdict, raw_row)`` for an NL-assertions reply covering ``n`` items.

    ``verdict`` is ``"met"``, ``"not_met"`` or ``"invalid"``; ``raw_row`` is the JSON text of
    that assertion's result (with its justification), or the whole reply when the reply
    cannot be read at all. An assertion with no result, two results, or a non-boolean
    ``met`` is ``"invalid"``; a result whose index names no assertion (outside ``0..n-1``)
    makes every assertion ``"invalid"``.

    Examples
    --------
    >>> parse_nl_results('{"results": [{"index": 0, "met": true, "justification": "ok"}]}', 2)
    [('met', '{"index": 0, "met": true, "justification": "ok"}'), ('invalid', '')]
    """
    obj = parse_json_object(raw)
    results = obj.get("results") if obj is not None else None
    if not isinstance(results, list):
        return [(INVALID, raw or "")] * n
    found: dict[int, list[dict[str, Any]]] = {}
    for entry in results:
        if isinstance(entry, dict) and type(entry.get("index")) is int:
            if not 0 <= entry["index"] < n:
                # an index that names no assertion (a reply counting from 1, or one made
                # up): the others cannot be trusted to be aligned either
                return [(INVALID, raw or "")] * n
            found.setdefault(entry["index"], []).append(entry)
    out = []
    for i in range(n):
        entries = found.get(i, [])
        if len(entries) != 1:
            out.append((INVALID, json.dumps(entries) if entries else ""))
            continue
        entry = entries[0]
        met = entry.get("met")
        justification = entry.get("justification")
        ok = isinstance(met, bool) and (justification is None or isinstance(justification, str))
        verdict = ("met" if met else "not_met") if ok else INVALID
        out.append((verdict, json.dumps(entry, ensure_ascii=False)))
    return out


def _turn(value: Any) -> bool:
    return value is None or type(value) is int and value >= 0


def _goal(value: Any) -> bool:
    return value is None or isinstance(value, str)


def parse_gsrt(raw: str | None) -> dict[str, Any] | None:
    """Validate a goal-shift judge reply; return it normalised, or ``None`` when malformed.

    The normalised form has exactly the keys of the stored upstream output
    (``start_goal{turn, goal}``, ``user_goal_shifts[{turn, from, to, type, agent_responded,
    agent_turn, acknowledgment_turn, tool_turn, outcome_turn, transferred_to_human}]``);
    turns are non-negative integers or null, flags booleans.

    Examples
    --------
    >>> parse_gsrt('{"start_goal": {"turn": 1, "goal": "cards"}, "user_goal_shifts": []}')
    {'start_goal': {'turn': 1, 'goal': 'cards'}, 'user_goal_shifts': []}
    >>> parse_gsrt('{"start_goal": {"turn": "one"}, "user_goal_shifts": []}') is None
    True
    """
    obj = parse_json_object(raw)
    if obj is None or not isinstance(obj.get("start_goal"), dict):
        return None
    shifts = obj.get("user_goal_shifts")
    if not isinstance(shifts, list):
        return None
    start = obj["start_goal"]
    if not (_turn(start.get("turn")) and _goal(start.get("goal"))):
        return None
    out_shifts = []
    for s in shifts:
        if not isinstance(s, dict) or type(s.get("turn")) is not int:
            return None
        turns = ("turn", "agent_turn", "acknowledgment_turn", "tool_turn", "outcome_turn")
        if not all(_turn(s.get(k)) for k in turns):
            return None
        if not (_goal(s.get("from")) and _goal(s.get("to"))):
            return None
        flags = {k: s.get(k) for k in ("agent_responded", "transferred_to_human")}
        if not all(isinstance(v, bool) for v in flags.values()):
            return None
        out_shifts.append({
            "turn": s["turn"], "from": s.get("from"), "to": s.get("to"), "type": "GOAL_SHIFT",
            "agent_responded": flags["agent_responded"], "agent_turn": s.get("agent_turn"),
            "acknowledgment_turn": s.get("acknowledgment_turn"), "tool_turn": s.get("tool_turn"),
            "outcome_turn": s.get("outcome_turn"),
            "transferred_to_human": flags["transferred_to_human"],
        })
    return {"start_goal": {"turn": start.get("turn"), "goal": start.get("goal")},
            "user_goal_shifts": out_shifts}


def gsrt_struct(output: dict[str, Any] | str) -> dict[str, Any]:
    """Convert goal-shift judge output (upstream ``gsrt_v2`` form) to the canonical struct.

    Parameters
    ----------
    output : dict or str
        The normalised output of :func:`parse_gsrt`, or its JSON text (the ``verdict`` of a
        ``gsrt`` row in the verdict table).

    Returns
    -------
    dict
        ``{start_turn, start_goal, shifts: [{turn, from_goal, to_goal, agent_responded,
        agent_turn, ack_turn, tool_turn, outcome_turn, transferred}]}`` as in the
        ``gsrt_judge`` episode column.

    Raises
    ------
    ValueError
        The text is not valid goal-shift output.

    Examples
    --------
    >>> gsrt_struct('{"start_goal": {"turn": 1, "goal": "a"}, "user_goal_shifts": []}')
    {'start_turn': 1, 'start_goal': 'a', 'shifts': []}
    """
    obj = parse_gsrt(output) if isinstance(output, str) else parse_gsrt(json.dumps(output))
    if obj is None:
        raise ValueError(f"not valid goal-shift judge output: {str(output)[:120]!r}")
    return {
        "start_turn": obj["start_goal"]["turn"],
        "start_goal": obj["start_goal"]["goal"],
        "shifts": [
            {"turn": s["turn"], "from_goal": s["from"], "to_goal": s["to"],
             "agent_responded": s["agent_responded"], "agent_turn": s["agent_turn"],
             "ack_turn": s["acknowledgment_turn"], "tool_turn": s["tool_turn"],
             "outcome_turn": s["outcome_turn"], "transferred": s["transferred_to_human"]}
            for s in obj["user_goal_shifts"]
        ],
    }
