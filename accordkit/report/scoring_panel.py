"""What an episode scored and why, shown beside its conversation.

From the fields a result file stores with each episode: the reward and what it is made of
(``reward_basis``, the stored breakdown), the stored task success (``tsr_details``, with
its channel weights), tau2's checks (``reward_info``: the database check, environment
assertions, each expected action, communicate checks, NL assertions) as ✔ / ✘, the
NL-assertion verdicts with the judge's reasons, the task's expected actions and the
information the agent had to communicate, and the user simulator's instructions. AcCoRD
episodes show completion and each preference's outcome.

Every value comes from the data and is escaped. Looks are inline styles (a notebook opened
untrusted keeps them).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["scoring_panel", "scoring_lines", "PANEL_STYLE"]

#: The panel's own look (inline: see the module docstring).
PANEL_STYLE = ("flex:0 1 26rem;min-width:16rem;border:1px solid #d0d7de;border-radius:6px;"
               "padding:6px 10px;background:#f6f8fa;color:#1f2328;font-size:12px")
_H = "font-size:12px;font-weight:600;margin:8px 0 2px 0;color:#1f2328"
_UL = "margin:0;padding-left:18px"
_MUTED = "color:#57606a"
_CODE = ("font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:11px;"
         "overflow-wrap:anywhere")

esc = html.escape


def _mark(met: Any) -> str:
    """Met, not met or unknown, as a sign that every font has (✔, ✘, –)."""
    return "✔" if met is True else "✘" if met is False else "–"


def _sign(met: Any) -> str:
    """:func:`_mark` coloured, with its meaning as hover text."""
    colour, words = {True: ("#1a7f37", "met"), False: ("#cf222e", "not met")}.get(
        met if isinstance(met, bool) else None, ("#57606a", "not judged"))
    return (f"<span style='color:{colour};font-weight:700' title='{words}'>"
            f"{_mark(met)}</span>")


def _number(x: Any) -> str:
    try:
        value = float(x)
    except (TypeError, ValueError):
        return "–"
    return "–" if value != value else f"{value:.3f}"


def _json(text: Any) -> Any:
    if not isinstance(text, str) or not text:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _call(name: Any, arguments: Any) -> str:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments, sort_keys=True)
    return f"{name}({'' if args in (None, 'null', '{}') else args})"


def _score_items(ep: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, value) of the stored scores."""
    items = []
    if ep.get("reward") is not None:
        basis = ", ".join(ep.get("reward_basis") or []) or "not stored"
        items.append(("reward", f"{_number(ep['reward'])} (basis: {basis})"))
    breakdown = _json(ep.get("reward_breakdown_json"))
    if isinstance(breakdown, Mapping) and breakdown:
        items.append(("breakdown", ", ".join(f"{k} {_number(v)}" for k, v in breakdown.items())))
    tsr = ep.get("tsr_details") or {}
    if tsr.get("overall_tsr") is not None:
        channels = [(f"{name} {_number(tsr.get(key))} × {_number(tsr.get('weight_' + key))}")
                    for name, key, has in (("action", "action", "has_actions"),
                                           ("NL", "nl_assertion", "has_nl_assertions"),
                                           ("communicate", "communicate_info",
                                            "has_communicate_info"))
                    if tsr.get(has) is not False and tsr.get(key) is not None]
        items.append(("TSR (stored)", f"{_number(tsr['overall_tsr'])}"
                      + (f" = {' + '.join(channels)}" if channels else "")))
    if ep.get("completed") is not None:
        items.append(("completed", "yes" if ep["completed"] else "no"))
    for key, label in (("product_type_ok", "product type right"), ("price_ok", "price right")):
        if ep.get(key) is not None:
            items.append((label, "yes" if ep[key] else "no"))
    if ep.get("termination_reason"):
        items.append(("ended", str(ep["termination_reason"])))
    return items


def _checks(ep: Mapping[str, Any]) -> list[tuple[Any, str, str]]:
    """(met, what, detail) of tau2's stored checks (``reward_info``)."""
    info = _json(ep.get("reward_info_json"))
    if not isinstance(info, Mapping):
        return []
    out: list[tuple[Any, str, str]] = []
    db = info.get("db_check")
    if isinstance(db, Mapping):
        out.append((db.get("db_match"), "database matches the expected end state", ""))
    for item in info.get("env_assertions") or []:
        if isinstance(item, Mapping):
            what = item.get("env_assertion") or {}
            name = what.get("func_name") if isinstance(what, Mapping) else what
            out.append((item.get("met"), f"environment assertion {name}", ""))
    for item in info.get("action_checks") or []:
        if isinstance(item, Mapping):
            action = item.get("action") or {}
            out.append((item.get("action_match"), "expected action "
                        + _call(action.get("name"), action.get("arguments")), ""))
    for item in info.get("communicate_checks") or []:
        if isinstance(item, Mapping):
            out.append((item.get("met"), f"communicates {item.get('info')}", ""))
    return out


def _nl_verdicts(ep: Mapping[str, Any]) -> list[tuple[Any, str, str]]:
    """(met, assertion, justification) of the NL-assertion verdicts."""
    verdicts = ep.get("nl_verdicts") or []
    if verdicts:
        return [(v.get("met"), str(v.get("assertion")), str(v.get("justification") or ""))
                for v in verdicts]
    info = _json(ep.get("reward_info_json"))
    items = info.get("nl_assertions") if isinstance(info, Mapping) else None
    return [(v.get("met"), str(v.get("nl_assertion")), str(v.get("justification") or ""))
            for v in items or [] if isinstance(v, Mapping)]


def _expected(ep: Mapping[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """The task's expected actions (or action sets), what to communicate, NL assertions."""
    crit = ep.get("criteria") or {}
    actions = [_call(a.get("name"), a.get("arguments_json")) for a in crit.get("actions") or []]
    for aset in crit.get("action_sets") or []:
        tools = " or ".join(_call(t.get("function_name"), t.get("params_json"))
                            for t in aset.get("allowed_tools") or [])
        actions.append(f"{aset.get('action_id')}: {tools}")
    return (actions, [str(c) for c in crit.get("communicate_info") or []],
            [str(a) for a in crit.get("nl_assertions") or []])


def _instructions(ep: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field, text) of the user simulator's instructions."""
    text = ep.get("instructions")
    if not text:
        return []
    data = _json(text)
    if isinstance(data, Mapping):
        return [(str(k).replace("_", " "), str(v)) for k, v in data.items()
                if v not in (None, "") and k != "domain"]
    return [("instructions", str(text))]


def _section(title: str, items: list[str]) -> str:
    if not items:
        return ""
    return (f"<div style='{_H}'>{esc(title)}</div><ul style='{_UL}'>"
            + "".join(f"<li>{item}</li>" for item in items) + "</ul>")


def scoring_panel(episode: Mapping[str, Any]) -> str:
    """The panel's HTML (empty when the episode stores nothing to show).

    Examples
    --------
    >>> html_ = scoring_panel({"reward": 0.0, "reward_basis": ["DB"], "reward_info_json":
    ...     '{"db_check": {"db_match": false}}', "criteria": {"actions": [
    ...     {"name": "<b>book</b>", "arguments_json": '{"id": 1}'}]}})
    >>> "✘</span> database matches" in html_, "&lt;b&gt;book&lt;/b&gt;({&quot;id&quot;: 1})" in html_
    (True, True)
    """
    ep = episode
    parts = []
    scores = [f"<b>{esc(k)}</b> {esc(v)}" for k, v in _score_items(ep)]
    parts.append(_section("Score", scores))
    parts.append(_section("tau2's checks", [
        f"{_sign(met)} {esc(what)}" for met, what, _ in _checks(ep)]))
    verdicts = []
    for met, assertion, why in _nl_verdicts(ep):
        reason = (f"<details><summary style='{_MUTED}'>why</summary>"
                  f"<span style='{_MUTED}'>{esc(why)}</span></details>") if why else ""
        verdicts.append(f"{_sign(met)} {esc(assertion)}{reason}")
    parts.append(_section("NL assertions (judge's verdicts)", verdicts))
    actions, communicate, assertions = _expected(ep)
    parts.append(_section("Expected actions", [
        f"<span style='{_CODE}'>{esc(a)}</span>" for a in actions]))
    parts.append(_section("To communicate", [esc(c) for c in communicate]))
    if not verdicts:
        parts.append(_section("NL assertions", [esc(a) for a in assertions]))
    prefs = ep.get("preferences") or []
    parts.append(_section("Preferences", [
        f"{_sign(p.get('satisfied'))} {esc(str(p.get('name')))} = {esc(str(p.get('value')))} "
        f"<span style='{_MUTED}'>({esc(str(p.get('dynamic')))})</span>" for p in prefs]))
    instructions = _instructions(ep)
    if instructions or ep.get("persona_text"):
        rows = "".join(f"<div><b>{esc(k)}</b>: <span style='white-space:pre-wrap'>{esc(v)}"
                       "</span></div>" for k, v in instructions)
        if ep.get("persona_text"):
            rows += (f"<div><b>persona</b>: <span style='white-space:pre-wrap'>"
                     f"{esc(str(ep['persona_text']))}</span></div>")
        parts.append(f"<details><summary style='{_H}'>User instructions</summary>{rows}"
                     "</details>")
    body = "".join(p for p in parts if p)
    if not body:
        return ""
    return (f"<aside class='ak-why' style='{PANEL_STYLE}'><div style='font-weight:600;"
            f"font-size:13px'>Why it scored what it did</div>{body}</aside>")


def scoring_lines(episode: Mapping[str, Any]) -> list[str]:
    """The panel as plain text lines (for a terminal).

    Examples
    --------
    >>> scoring_lines({"reward": 1.0, "nl_verdicts": [{"assertion": "polite", "met": True}]})
    ['score: reward 1.000 (basis: not stored)', '✔ NL: polite']
    """
    ep = episode
    lines = []
    scores = _score_items(ep)
    if scores:
        lines.append("score: " + "; ".join(f"{k} {v}" for k, v in scores))
    lines += [f"{_mark(met)} {what}" for met, what, _ in _checks(ep)]
    lines += [f"{_mark(met)} NL: {a}" for met, a, _ in _nl_verdicts(ep)]
    actions, communicate, _ = _expected(ep)
    lines += [f"expects {a}" for a in actions]
    lines += [f"to communicate: {c}" for c in communicate]
    return lines
