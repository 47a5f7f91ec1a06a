"""Render one episode's conversation as readable HTML (for notebooks and reports)."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["render_conversation", "ConversationView"]

_STYLE = """
<style>
.ak-conv{font-family:system-ui,sans-serif;font-size:13px;max-width:56rem}
.ak-msg{margin:4px 0;padding:6px 9px;border-radius:6px;border-left:4px solid #ccc}
.ak-user{background:#eef5ff;border-color:#3b78c3}
.ak-assistant{background:#f3f8ef;border-color:#4b8b3b}
.ak-tool{background:#f7f7f7;border-color:#999;font-family:monospace;font-size:12px}
.ak-system{background:#fff8e6;border-color:#d19a00}
.ak-role{font-weight:600;margin-right:.4rem}
.ak-idx{color:#888;font-size:11px;margin-right:.4rem}
.ak-call{font-family:monospace;font-size:12px;color:#5a3d99}
.ak-event{display:inline-block;background:#ffe08a;border-radius:4px;padding:0 5px;
font-size:11px;margin-left:.4rem}
.ak-mark{display:inline-block;background:#ffd1d1;border-radius:4px;padding:0 5px;
font-size:11px;margin-left:.4rem}
.ak-err{color:#b00020;font-weight:600}
.ak-head td{padding:1px 8px 1px 0;vertical-align:top}
</style>
"""


class ConversationView:
    """HTML shown by Jupyter (``_repr_html_``) and usable as a string (``.html``); in a
    terminal its ``repr`` is the plain text (``.text``), so that a REPL shows the
    conversation or table rather than an object address."""

    def __init__(self, text: str, plain: str | None = None) -> None:
        self.html = text
        self.text = plain

    def _repr_html_(self) -> str:
        return self.html

    def __str__(self) -> str:
        return self.html

    def __repr__(self) -> str:
        if self.text is not None:
            return self.text
        return f"<ConversationView: {len(self.html)} characters of HTML; str() gives them>"


def _judge_marks(episode: Mapping[str, Any]) -> dict[int, list[str]]:
    marks: dict[int, list[str]] = {}
    judge = episode.get("gsrt_judge") or {}
    for i, shift in enumerate(judge.get("shifts") or ()):
        label = f"shift {i + 1}: {shift.get('from_goal')} → {shift.get('to_goal')}"
        for key, what in (("turn", "user shifts goal"), ("ack_turn", "agent acknowledges"),
                          ("tool_turn", "first relevant tool"), ("outcome_turn", "goal reached")):
            if shift.get(key) is not None:
                marks.setdefault(int(shift[key]), []).append(f"{label} · {what}")
        if shift.get("transferred"):
            marks.setdefault(int(shift.get("turn") or 0), []).append(
                f"{label} · transferred to a human")
    return marks


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more chars]"


def render_conversation(episode: Mapping[str, Any], *, max_tool_chars: int = 400,
                        marks: Mapping[int, Any] | None = None) -> ConversationView:
    """Render a canonical episode (a row of the dataset) as HTML.

    Roles are coloured, tool calls shown with their arguments, tool results shortened,
    preference reveals and goal-shift markers highlighted, and stored goal-shift judge
    output is marked at the messages it points to.

    Parameters
    ----------
    episode : mapping
        One record, e.g. ``ds[i]`` or a row selected by ``episode_id``.
    max_tool_chars : int
        Tool results longer than this are cut (the length is shown).
    marks : mapping of int to list of str, optional
        More labels to mark, by ``turn_idx`` (e.g. the first divergence and the review
        errors, :func:`accordkit.analysis.marks.conversation_marks`); those under ``-1``,
        or under a turn the transcript does not have, are listed above the conversation.

    Examples
    --------
    >>> ep = {"episode_id": "x", "messages": [
    ...     {"role": "user", "content": "hi", "turn_idx": 0, "tool_calls": None}]}
    >>> "hi" in render_conversation(ep).html
    True
    """
    esc = html.escape
    head = [("episode", episode.get("episode_id")), ("scenario", episode.get("scenario_id")),
            ("agent", f"{episode.get('agent_model')} / {episode.get('method')}"),
            ("persona", episode.get("persona")), ("goals", " → ".join(episode.get("goals") or [])
                                                  or None),
            ("termination", episode.get("termination_reason")),
            ("completed", episode.get("completed"))]
    rows = "".join(f"<tr><td><b>{esc(k)}</b></td><td>{esc(str(v))}</td></tr>"
                   for k, v in head if v is not None)
    prefs = episode.get("preferences") or []
    if prefs:
        items = "".join(
            f"<li><b>{esc(str(p.get('name')))}</b> = {esc(str(p.get('value')))} "
            f"<i>({esc(str(p.get('dynamic')))}"
            + (f", backoff {esc(str(p.get('backoff')))}" if p.get("backoff") else "")
            + (f", trigger {esc(str(p.get('trigger')))}" if p.get("trigger") else "")
            + f")</i> — satisfied: {esc(str(p.get('satisfied')))}</li>" for p in prefs)
        rows += f"<tr><td><b>preferences</b></td><td><ul style='margin:0'>{items}</ul></td></tr>"
    given, marks = dict(marks or {}), _judge_marks(episode)
    turns = {m.get("turn_idx") for m in episode.get("messages") or ()}
    loose = [str(label) for label in given.pop(-1, None) or ()]
    for turn, labels in given.items():
        if int(turn) in turns:
            marks.setdefault(int(turn), []).extend(str(label) for label in labels)
        else:  # a turn the transcript does not have: said above it, not lost
            loose += [f"(turn {int(turn)}) {label}" for label in labels]
    given[-1] = loose
    if loose:
        items = "".join(f"<li>{esc(label)}</li>" for label in loose)
        rows += f"<tr><td><b>marks</b></td><td><ul style='margin:0'>{items}</ul></td></tr>"
    parts = [_STYLE, "<div class='ak-conv'>", f"<table class='ak-head'>{rows}</table>"]
    lines = [" · ".join(f"{k} {v}" for k, v in head if v is not None)]
    lines += [f"! {label}" for label in given.get(-1) or ()]
    for msg in episode.get("messages") or ():
        content = msg.get("content") or ""
        lines.append(f"[{msg.get('turn_idx')}] {msg.get('role') or '?'}: "
                     + (_short(content, max_tool_chars) if msg.get("role") == "tool"
                        else content))
        lines += [f"    → {c.get('name')}({c.get('arguments_json')})"
                  for c in msg.get("tool_calls") or ()]
        lines += [f"    ! {label}" for label in marks.get(msg.get("turn_idx"), ())]
    for msg in episode.get("messages") or ():
        role = msg.get("role") or "?"
        idx = msg.get("turn_idx")
        content = msg.get("content") or ""
        body = esc(_short(content, max_tool_chars) if role == "tool" else content)
        body = body.replace("\n", "<br>")
        extra = ""
        if msg.get("kind") and msg.get("kind") not in ("utterance",):
            extra += f"<span class='ak-idx'>[{esc(msg['kind'])}]</span>"
        if msg.get("event"):
            detail = ""
            if msg.get("event_json"):
                try:
                    data = json.loads(msg["event_json"])
                    detail = ", ".join(f"{k}={v}" for k, v in data.items()
                                       if v not in (None, "") and k not in ("raw",))
                except (TypeError, ValueError):
                    detail = ""
            extra += f"<span class='ak-event'>{esc(msg['event'])} {esc(detail)}</span>"
        for mark in marks.get(idx, []) if idx is not None else []:
            extra += f"<span class='ak-mark'>{esc(mark)}</span>"
        if role == "tool" and msg.get("error"):
            extra += "<span class='ak-err'> error</span>"
        calls = "".join(
            f"<div class='ak-call'>→ {esc(str(c.get('name')))}({esc(str(c.get('arguments_json')))})"
            f"</div>" for c in msg.get("tool_calls") or ())
        parts.append(f"<div class='ak-msg ak-{esc(role)}'><span class='ak-idx'>{idx}</span>"
                     f"<span class='ak-role'>{esc(role)}</span>{extra}<div>{body}</div>{calls}"
                     "</div>")
    parts.append("</div>")
    return ConversationView("".join(parts), "\n".join(lines))
