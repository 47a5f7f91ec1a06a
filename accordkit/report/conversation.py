"""Render one episode's conversation as readable HTML (for notebooks and reports).

The conversation sits beside what it scored and why (:mod:`.scoring_panel`): the reward and
its checks, the NL-assertion verdicts, the expected actions and the user's instructions.
Agent messages are shown as their words rendered as Markdown, sanitised (:mod:`.markup`);
tool results fold open (``<details>``); goal-shift and preference events are said in words,
the raw tag kept as hover text. Every name and text from the data is escaped. The look is
inline styles, so that a notebook opened untrusted (which drops ``<style>`` elements) shows
it as the report does; the class names stay, for the report's dark colour scheme. On a
report page the styles become classes of one hashed stylesheet
(:func:`accordkit.report.pages.seal_page`): the page's policy trusts no inline style.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["render_conversation", "render_messages", "ConversationView"]

#: Inline styles (see the module docstring), by element.
_S = {
    "conv": "font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:13px;"
            "line-height:1.45;color:#1f2328;background:#ffffff;display:flex;flex-wrap:wrap;"
            "gap:14px;align-items:flex-start;max-width:84rem",
    "main": "flex:1 1 34rem;min-width:0",
    "head": "border-collapse:collapse;margin:0 0 6px 0;font-size:12px",
    "head_td": "padding:1px 8px 1px 0;vertical-align:top;border:none;text-align:left",
    "msg": "margin:4px 0;padding:6px 9px;border-radius:6px;border-left:4px solid #cccccc",
    "user": "background:#eef5ff;border-left-color:#3b78c3",
    "assistant": "background:#f3f8ef;border-left-color:#4b8b3b",
    "tool": "background:#f7f7f7;border-left-color:#999999",
    "system": "background:#fff8e6;border-left-color:#d19a00",
    "role": "font-weight:600;margin-right:6px",
    "idx": "color:#6e7781;font-size:11px;margin-right:6px",
    "call": "font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;"
            "color:#5a3d99;overflow-wrap:anywhere",
    "event": "display:inline-block;background:#ffe08a;border-radius:4px;padding:0 5px;"
             "font-size:11px;margin-left:6px",
    "shift": "margin:10px 0 2px 0;padding:3px 8px;border-radius:4px;background:#fff1c2;"
             "border:1px dashed #d4a72c;font-size:12px;font-weight:600",
    "mark": "display:inline-block;background:#ffd1d1;border-radius:4px;padding:0 5px;"
            "font-size:11px;margin-left:6px",
    "err": "color:#b00020;font-weight:600",
    "pre": "white-space:pre-wrap;overflow-wrap:anywhere;font-family:ui-monospace,"
           "SFMono-Regular,Menlo,monospace;font-size:12px;margin:2px 0;max-height:28rem;"
           "overflow:auto",
    "summary": "cursor:pointer;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;"
               "font-size:12px;color:#57606a;overflow-wrap:anywhere",
    "extra": "color:#57606a;font-size:11px",
}

#: A tool result shown folded open is cut after this many characters (the count is shown).
MAX_EXPANDED_CHARS = 20_000


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


def _event_detail(msg: Mapping[str, Any]) -> dict[str, Any]:
    try:
        data = json.loads(msg.get("event_json") or "{}")
    except (TypeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _raw_event(msg: Mapping[str, Any], data: Mapping[str, Any]) -> str:
    """The event as stored, in one line (kept as hover text)."""
    detail = ", ".join(f"{k}={v}" for k, v in data.items()
                       if v not in (None, "") and k not in ("raw",))
    return f"{msg.get('event')} {detail}".strip()


def _goal_shift(msg: Mapping[str, Any], data: Mapping[str, Any]) -> str:
    """A goal-shift event in words: which shift, from what to what, and a malformed tag."""
    seq = f" {data['seq']}" if data.get("seq") not in (None, "") else ""
    moves = " → ".join(str(v) for v in (data.get("from_") or data.get("from"), data.get("to"))
                       if v not in (None, ""))
    words = f"⇄ goal shift{seq}" + (f": {moves}" if moves else "")
    if data.get("reason"):
        words += f" ({data['reason']})"
    problem = data.get("meta_error") or data.get("error")
    if problem:
        words += f" — the goal-shift tag in this {msg.get('role') or 'message'} is malformed " \
                 f"({problem})"
    return words


def _event_badge(msg: Mapping[str, Any], data: Mapping[str, Any]) -> str:
    """Any other event in words (a preference reveal names the preference)."""
    if msg.get("event") == "PREFERENCE_REVEAL":
        dynamic = str(data.get("dynamic") or "").replace("_", " ")
        return (f"reveals {data.get('name')} = {data.get('value')}"
                + (f" ({dynamic})" if dynamic else ""))
    return _raw_event(msg, data)


def _pretty(text: str) -> str:
    """A tool result as JSON laid out, when it is JSON; else as it is."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.dumps(json.loads(stripped), indent=2, ensure_ascii=False)
        except (ValueError, RecursionError):
            pass
    return text


def _tool_body(content: str, max_tool_chars: int) -> str:
    """A tool result: shown whole when short, else folded with its first characters."""
    esc = html.escape
    if len(content) <= max_tool_chars:
        return f"<div style=\"{_S['pre']}\">{esc(_pretty(content))}</div>"
    first = " ".join(content.split())
    return (f"<details><summary style=\"{_S['summary']}\">{esc(_short(first, max_tool_chars))}"
            f"</summary><div style=\"{_S['pre']}\">"
            f"{esc(_short(_pretty(content), MAX_EXPANDED_CHARS))}</div></details>")


def _message_body(role: str, content: str, max_tool_chars: int) -> str:
    """The message's text: an agent's words as sanitised Markdown, a tool result folded,
    anything else as escaped text with its line breaks."""
    from .markup import agent_text, markdown_html

    if role == "tool":
        return _tool_body(content, max_tool_chars)
    if role == "assistant":
        words, extra = agent_text(content)
        body = markdown_html(words) if words.strip() else ""
        if extra:
            fields = html.escape(json.dumps(extra, ensure_ascii=False, default=str))
            body += f"<div style=\"{_S['extra']}\">other fields: {fields}</div>"
        return body
    return f"<div>{html.escape(content).replace(chr(10), '<br>')}</div>"


def render_conversation(episode: Mapping[str, Any], *, max_tool_chars: int = 400,
                        marks: Mapping[int, Any] | None = None,
                        anchors: bool = False) -> ConversationView:
    """Render a canonical episode (a row of the dataset) as HTML.

    Roles are coloured, agent text rendered as sanitised Markdown, tool calls shown with
    their arguments, tool results folded open, preference reveals and goal shifts said in
    words, stored goal-shift judge output marked at the messages it points to, and what the
    episode scored and why beside it (:func:`~accordkit.report.scoring_panel.scoring_panel`).

    Parameters
    ----------
    episode : mapping
        One record, e.g. ``ds[i]`` or a row selected by ``episode_id``.
    max_tool_chars : int
        Tool results longer than this are folded: their first characters show, the rest
        opens on a click (up to :data:`MAX_EXPANDED_CHARS`; the length is shown).
    marks : mapping of int to list of str, optional
        More labels to mark, by ``turn_idx`` (e.g. the first divergence and the review
        errors, :func:`accordkit.analysis.marks.conversation_marks`); those under ``-1``,
        or under a turn the transcript does not have, are listed above the conversation.
    anchors : bool, default False
        Give the first message of each turn the id ``turn-<turn_idx>`` (a report's
        conversation page, which search hits link to at their turn; off in notebooks,
        where several conversations share a page).

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
    td = f" style=\"{_S['head_td']}\""
    rows = "".join(f"<tr><td{td}><b>{esc(k)}</b></td><td{td}>{esc(str(v))}</td></tr>"
                   for k, v in head if v is not None)
    prefs = episode.get("preferences") or []
    if prefs:
        items = "".join(
            f"<li><b>{esc(str(p.get('name')))}</b> = {esc(str(p.get('value')))} "
            f"<i>({esc(str(p.get('dynamic')))}"
            + (f", backoff {esc(str(p.get('backoff')))}" if p.get("backoff") else "")
            + (f", trigger {esc(str(p.get('trigger')))}" if p.get("trigger") else "")
            + f")</i> — satisfied: {esc(str(p.get('satisfied')))}</li>" for p in prefs)
        rows += (f"<tr><td{td}><b>preferences</b></td><td{td}><ul style='margin:0'>{items}"
                 "</ul></td></tr>")
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
        rows += (f"<tr><td{td}><b>marks</b></td><td{td}><ul style='margin:0'>{items}</ul>"
                 "</td></tr>")
    from .scoring_panel import scoring_lines, scoring_panel

    parts = [f"<div class='ak-conv' style=\"{_S['conv']}\">",
             f"<div class='ak-conv-main' style=\"{_S['main']}\">",
             f"<table class='ak-head' style=\"{_S['head']}\">{rows}</table>"]
    lines = [" · ".join(f"{k} {v}" for k, v in head if v is not None)]
    lines += [f"! {label}" for label in given.get(-1) or ()]
    lines += [f"= {line}" for line in scoring_lines(episode)]
    for msg in episode.get("messages") or ():
        content = msg.get("content") or ""
        lines.append(f"[{msg.get('turn_idx')}] {msg.get('role') or '?'}: "
                     + (_short(content, max_tool_chars) if msg.get("role") == "tool"
                        else content))
        lines += [f"    → {c.get('name')}({c.get('arguments_json')})"
                  for c in msg.get("tool_calls") or ()]
        lines += [f"    ! {label}" for label in marks.get(msg.get("turn_idx"), ())]
    parts += render_messages(episode.get("messages") or (), marks=marks,
                             max_tool_chars=max_tool_chars, anchors=anchors)
    parts.append("</div>")
    parts.append(scoring_panel(episode))
    parts.append("</div>")
    return ConversationView("".join(parts), "\n".join(lines))


def render_messages(messages, *, marks: Mapping[int, Any] | None = None,
                    max_tool_chars: int = 400, anchors: bool = False) -> list[str]:
    """The HTML of these messages (part of one conversation), each with its marks by
    ``turn_idx``: what :func:`render_conversation` shows under its header, and what a
    flip page shows on each side.

    Examples
    --------
    >>> "ak-user" in render_messages([{"role": "user", "content": "hi", "turn_idx": 0}])[0]
    True
    """
    esc = html.escape
    marks = marks or {}
    parts: list[str] = []
    seen: set[Any] = set()
    for msg in messages:
        role = msg.get("role") or "?"
        idx = msg.get("turn_idx")
        content = msg.get("content") or ""
        body = _message_body(role, content, max_tool_chars)
        extra = ""
        if msg.get("kind") and msg.get("kind") not in ("utterance",):
            extra += f"<span class='ak-idx' style=\"{_S['idx']}\">[{esc(msg['kind'])}]</span>"
        if msg.get("event"):
            data = _event_detail(msg)
            raw = esc(_raw_event(msg, data))
            if msg["event"] == "GOAL_SHIFT":   # said before the message it starts
                parts.append(f"<div class='ak-shift' style=\"{_S['shift']}\" title=\"{raw}\">"
                             f"{esc(_goal_shift(msg, data))}</div>")
            else:
                extra += (f"<span class='ak-event' style=\"{_S['event']}\" title=\"{raw}\">"
                          f"{esc(_event_badge(msg, data))}</span>")
        for mark in marks.get(idx, []) if idx is not None else []:
            extra += f"<span class='ak-mark' style=\"{_S['mark']}\">{esc(mark)}</span>"
        if role == "tool" and msg.get("error"):
            extra += f"<span class='ak-err' style=\"{_S['err']}\"> error</span>"
        calls = "".join(
            f"<div class='ak-call' style=\"{_S['call']}\">→ {esc(str(c.get('name')))}"
            f"({esc(str(c.get('arguments_json')))})</div>" for c in msg.get("tool_calls") or ())
        look = f"{_S['msg']};{_S.get(role, '')}"
        parts.append(f"<div class='ak-msg ak-{esc(role)}' style=\"{esc(look)}\">"
                     f"<span class='ak-idx' style=\"{_S['idx']}\">{idx}</span>"
                     f"<span class='ak-role' style=\"{_S['role']}\">{esc(role)}</span>{extra}"
                     f"{body}{calls}</div>")
        if anchors and idx is not None and idx not in seen:
            seen.add(idx)
            parts[-1] = parts[-1].replace("<div class='ak-msg", f"<div id='turn-{int(idx)}' "
                                          "class='ak-msg", 1)
    return parts
