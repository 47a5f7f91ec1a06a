"""Builders of small canonical episodes, for tests, docstring examples and the simulators.

Hand-computed tests write episodes with a few messages and fields; these builders fill the
rest with the canonical defaults (:func:`accordkit.schema.empty_episode`) so a test states
only what it is about.

* :func:`message`, :func:`criteria`, :func:`judge_output`, :func:`preference`: parts;
* :func:`build_episode`: a validated goal-shift (AgentChangeBench / tau2) episode;
* :func:`accord_episode`: an AcCoRD episode;
* :func:`episode_table`: records as an Arrow table with the canonical schema.

Examples
--------
>>> from accordkit.testing import accord_episode, episode_table, preference
>>> rec = accord_episode("e1", prefs=[preference("p0", satisfied=True)])
>>> episode_table(rec).num_rows
1
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from .schema import EPISODE_FEATURES, empty_episode, validate_episode

__all__ = ["message", "criteria", "judge_output", "preference", "build_episode",
           "accord_episode", "episode_table"]


def message(role: str, content: str | None = None, *,
            calls: Iterable[Any] | None = None, tool_call_id: str | None = None,
            error: bool | None = None, event: str | None = None,
            event_json: str | Mapping[str, Any] | None = None, kind: str | None = None,
            turn: int | None = None) -> dict[str, Any]:
    """One canonical message (``turn_idx`` is ``turn``, or filled in by :func:`build_episode`).

    Parameters
    ----------
    role : {"system", "user", "assistant", "tool"}
    content : str, optional
    calls : iterable, optional
        Tool calls, each ``(name, arguments)`` or ``(name, arguments, id)`` where
        ``arguments`` is a dict (stored as JSON text) or JSON text kept as given.
    tool_call_id, error : for ``tool`` messages, the id of the call answered and its error flag.
    event, event_json : an event marker (e.g. ``"GOAL_SHIFT"``) and its details.
    kind : {"greeting", "utterance", "thought", "action", "observation"}, optional
    turn : int, optional
        The message's ``turn_idx``.

    Examples
    --------
    >>> m = message("assistant", calls=[("get_order", {"order_id": "W1"}, "c1")])
    >>> m["tool_calls"][0]["arguments_json"]
    '{"order_id": "W1"}'
    """
    tool_calls = None
    if calls is not None:
        tool_calls = []
        for call in calls:
            name, args = call[0], call[1]
            call_id = call[2] if len(call) > 2 else None
            tool_calls.append({
                "id": call_id,
                "name": name,
                "arguments_json": args if isinstance(args, str) else json.dumps(args),
                "requestor": "assistant" if role == "assistant" else role,
            })
    if isinstance(event_json, Mapping):
        event_json = json.dumps(dict(event_json))
    return {"role": role, "content": content, "turn_idx": turn, "sub_idx": 0, "kind": kind,
            "tool_calls": tool_calls, "tool_call_id": tool_call_id, "error": error,
            "event": event, "event_json": event_json}


def criteria(*, action_sets: Sequence[Sequence[tuple[str, Any]]] = (),
             actions: Sequence[tuple[str, Any]] = (), communicate_info: Sequence[str] = (),
             nl_assertions: Sequence[str] | None = ()) -> dict[str, Any]:
    """Canonical evaluation criteria.

    ``action_sets`` is a list of sets, each a list of allowed ``(function_name, params)``;
    ``actions`` a list of legacy ``(name, arguments)``. Params may be dicts or JSON text.

    Examples
    --------
    >>> c = criteria(action_sets=[[("lock_card", {"card_id": "K1"})]], nl_assertions=["polite"])
    >>> c["action_sets"][0]["allowed_tools"][0]["function_name"]
    'lock_card'
    """
    def js(value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value)

    return {
        "action_sets": [
            {"action_id": f"set_{i}",
             "allowed_tools": [{"function_name": n, "params_json": js(p)} for n, p in tools]}
            for i, tools in enumerate(action_sets)
        ],
        "actions": [
            {"action_id": f"act_{i}", "requestor": "assistant", "name": n,
             "arguments_json": js(a), "compare_args": None}
            for i, (n, a) in enumerate(actions)
        ],
        "communicate_info": list(communicate_info),
        "nl_assertions": None if nl_assertions is None else list(nl_assertions),
        "env_assertions_json": None,
        "reward_basis": None,
    }


def judge_output(start_turn: int | None, start_goal: str | None,
                 shifts: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """Canonical goal-shift judge output.

    Each shift is a mapping with ``turn``, ``from_goal``, ``to_goal``, ``ack_turn``,
    ``tool_turn``, ``outcome_turn``, ``transferred`` (missing keys are null / False).

    Examples
    --------
    >>> j = judge_output(1, "cards", [dict(turn=5, from_goal="cards", to_goal="dispute",
    ...                                    ack_turn=6)])
    >>> j["shifts"][0]["ack_turn"], j["shifts"][0]["transferred"]
    (6, False)
    """
    out = []
    for s in shifts:
        ack = s.get("ack_turn")
        out.append({
            "turn": s.get("turn"),
            "from_goal": s.get("from_goal"),
            "to_goal": s.get("to_goal"),
            "agent_responded": s.get("agent_responded", ack is not None),
            "agent_turn": s.get("agent_turn", ack),
            "ack_turn": ack,
            "tool_turn": s.get("tool_turn"),
            "outcome_turn": s.get("outcome_turn"),
            "transferred": bool(s.get("transferred", False)),
        })
    return {"start_turn": start_turn, "start_goal": start_goal, "shifts": out}


def build_episode(messages: Sequence[Mapping[str, Any]], *, validate: bool = True,
                  **fields: Any) -> dict[str, Any]:
    """A validated canonical goal-shift episode from messages and a few fields.

    ``turn_idx`` is set to each message's position; calls without an id get
    ``"call_<turn>_<k>"``. Unspecified ids default to a small test episode
    (``benchmark="agentchangebench"``, ``domain="banking"``, ``task_id="t0"``, ...).
    ``validate=False`` skips :func:`~accordkit.schema.validate_episode`, to hand a metric
    a record the loader would refuse (and test that the metric names it too).

    Examples
    --------
    >>> rec = build_episode([message("assistant", "Hi"), message("user", "Hello")],
    ...                     episode_id="agentchangebench/ep1", reward=1.0)
    >>> rec["messages"][1]["turn_idx"], rec["scenario_id"]
    (1, 'agentchangebench/banking/new/t0')
    """
    rec = empty_episode()
    msgs = []
    for i, m in enumerate(messages):
        m = dict(m)
        m["turn_idx"] = i
        m.setdefault("sub_idx", 0)
        if m.get("tool_calls"):
            m["tool_calls"] = [dict(c, id=c.get("id") or f"call_{i}_{k}")
                               for k, c in enumerate(m["tool_calls"])]
        msgs.append(m)
    benchmark = fields.get("benchmark", "agentchangebench")
    domain = fields.get("domain", "banking")
    task_id = fields.get("task_id", "t0")
    rec.update(
        benchmark=benchmark, domain=domain, task_id=task_id, task_set="new",
        scenario_id=(f"agentchangebench/{domain}/new/{task_id}" if benchmark == "agentchangebench"
                     else f"{benchmark}/{domain}/{task_id}"),
        rollout=0, episode_id=f"{benchmark}/{task_id}-0", agent_model="agent", method="llm_agent",
        user_model="user", user_implementation="user_simulator", source="test",
        termination_reason="user_stop", messages=msgs,
    )
    unknown = set(fields) - set(EPISODE_FEATURES)
    if unknown:
        raise KeyError(f"not canonical episode columns: {sorted(unknown)}")
    rec.update(fields)
    if validate:
        validate_episode(rec)
    return rec


def preference(pref_id: str, dynamic: str = "hard_underspec", satisfied: bool | None = None, *,
               name: str | None = None, slot: str = "attribute", value: str = "v",
               backoff: str | None = None, trigger: str | None = None) -> dict[str, Any]:
    """One canonical AcCoRD preference (``name`` defaults to ``"n" + pref_id``).

    Examples
    --------
    >>> preference("p1", "triggered", True)["name"]
    'np1'
    """
    return {"pref_id": pref_id, "name": f"n{pref_id}" if name is None else name, "slot": slot,
            "value": value, "dynamic": dynamic, "backoff": backoff, "trigger": trigger,
            "satisfied": satisfied}


def accord_episode(episode_id: str = "e", *, prefs: Sequence[Mapping[str, Any]] | None = (),
                   completed: bool | None = True, domain: str = "shop",
                   messages: Sequence[Mapping[str, Any]] | None = None,
                   **fields: Any) -> dict[str, Any]:
    """An AcCoRD episode: a greeting (unless ``messages`` are given) and ``prefs``.

    Not validated, so tests can build the malformed records the scorers must reject; other
    canonical fields are set through ``fields``.

    Examples
    --------
    >>> rec = accord_episode("x", prefs=None, completed=False)
    >>> rec["benchmark"], rec["preferences"], rec["messages"][0]["kind"]
    ('accord', None, 'greeting')
    """
    unknown = set(fields) - set(EPISODE_FEATURES)
    if unknown:
        raise KeyError(f"not canonical episode columns: {sorted(unknown)}")
    rec = empty_episode()
    rec.update({"benchmark": "accord", "domain": domain, "scenario_id": f"accord/{domain}/s",
                "task_id": "s", "episode_id": episode_id, "source": "test",
                "completed": completed, "preferences": None if prefs is None else list(prefs),
                "messages": list(messages) if messages is not None
                else [message("assistant", "Hi", kind="greeting", turn=0)]})
    rec.update(fields)
    return rec


def episode_table(*records: Mapping[str, Any]) -> pa.Table:
    """Records as an Arrow table with the canonical schema (what the scorers take)."""
    return pa.Table.from_pylist([dict(r) for r in records],
                                schema=EPISODE_FEATURES.arrow_schema)
