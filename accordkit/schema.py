"""The canonical episode schema: one row per conversation, for every benchmark.

Every adapter turns its raw format into records that match :data:`EPISODE_FEATURES`;
everything downstream (metrics, judges, statistics, notebooks) reads only these columns.
The full field-by-field description lives in ``docs/schema.md``.

Conventions
-----------
* Values whose type varies between records (tool-call arguments, expected parameters,
  purchased items, the raw ``reward_info``) are stored as JSON text in columns whose
  name ends in ``_json``. JSON text keeps the distinction between ``1`` and ``1.0`` and
  the key order, which the upstream metric code depends on.
* ``None`` means "not recorded"; an empty list means "recorded, and empty". Stored
  judge output that lists zero goal shifts is therefore different from no judge output.
* ``turn_idx`` is the 0-based position of a message in the source transcript. Messages
  made by splitting one source message share its ``turn_idx`` and get ``sub_idx`` 0, 1, ...
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from datasets import Features, List, Value

__all__ = [
    "EPISODE_FEATURES",
    "ID_COLUMNS",
    "CONFIG_COLUMNS",
    "BENCHMARKS",
    "ROLES",
    "DYNAMICS",
    "SCHEMA_VERSION",
    "check_json_objects",
    "json_object_problem",
    "EpisodeValidationError",
    "validate_episode",
    "empty_episode",
]

#: Bumped when a column is added, removed or changes meaning.
SCHEMA_VERSION = "accordkit.episode/2"

#: ``"taubench"`` is τ-bench v1 (sierra-research/tau-bench): its own id because its files,
#: success rule inputs and pass^k convention differ from tau2's (docs/tau2.md).
BENCHMARKS = ("accord", "agentchangebench", "tau2", "taubench")
ROLES = ("system", "user", "assistant", "tool")
DYNAMICS = ("stated", "hard_underspec", "soft_underspec", "unachievable", "triggered")
#: Message kinds. ``None`` is allowed too (tau2 messages carry no kind).
KINDS = ("greeting", "utterance", "thought", "action", "observation")

#: Columns that identify an episode; every scores frame starts with them.
ID_COLUMNS = (
    "benchmark",
    "domain",
    "scenario_id",
    "task_id",
    "rollout",
    "episode_id",
    "agent_model",
    "method",
    "user_model",
    "user_implementation",
    "persona",
)

#: Columns that together name one agent configuration: the agent model, the agent
#: implementation (``method``: tau2 ``info.agent_info.implementation``, AcCoRD react/uncreact),
#: the user-simulator model and the user-simulator implementation. Tables, pass^k and
#: comparisons group by ``domain`` x these unless asked otherwise. Group with
#: ``dropna=False``: a canonical dataset may leave some of them null.
CONFIG_COLUMNS = ("agent_model", "method", "user_model", "user_implementation")

_str = Value("string")
_bool = Value("bool")
_i32 = Value("int32")
_i64 = Value("int64")
_f64 = Value("float64")

TOOL_CALL = {
    "id": _str,
    "name": _str,
    "arguments_json": _str,
    "requestor": _str,
}

MESSAGE = {
    "role": _str,
    "content": _str,
    "turn_idx": _i32,
    "sub_idx": _i32,
    "kind": _str,
    "tool_calls": List(TOOL_CALL),
    "tool_call_id": _str,
    "error": _bool,
    "event": _str,
    "event_json": _str,
}

PREFERENCE = {
    "pref_id": _str,
    "name": _str,
    "slot": _str,
    "value": _str,
    "dynamic": _str,
    "backoff": _str,
    "trigger": _str,
    "satisfied": _bool,
}

CRITERIA = {
    "action_sets": List(
        {
            "action_id": _str,
            "allowed_tools": List({"function_name": _str, "params_json": _str}),
        }
    ),
    "actions": List(
        {
            "action_id": _str,
            "requestor": _str,
            "name": _str,
            "arguments_json": _str,
            "compare_args": List(_str),
        }
    ),
    "communicate_info": List(_str),
    "nl_assertions": List(_str),
    "env_assertions_json": _str,
    "reward_basis": List(_str),
}

NL_VERDICT = {"assertion": _str, "met": _bool, "justification": _str}

TSR_DETAILS = {
    "overall_tsr": _f64,
    "action": _f64,
    "nl_assertion": _f64,
    "communicate_info": _f64,
    "weight_action": _f64,
    "weight_nl_assertion": _f64,
    "weight_communicate_info": _f64,
    "has_actions": _bool,
    "has_nl_assertions": _bool,
    "has_communicate_info": _bool,
}

GSRT_SHIFT = {
    "turn": _i32,
    "from_goal": _str,
    "to_goal": _str,
    "agent_responded": _bool,
    "agent_turn": _i32,
    "ack_turn": _i32,
    "tool_turn": _i32,
    "outcome_turn": _i32,
    "transferred": _bool,
}

GSRT_JUDGE = {
    "start_turn": _i32,
    "start_goal": _str,
    "shifts": List(GSRT_SHIFT),
}

EPISODE_FEATURES = Features(
    {
        # --- identity -------------------------------------------------------------
        "benchmark": _str,
        "domain": _str,
        "scenario_id": _str,
        "task_id": _str,
        "task_set": _str,
        "rollout": _i32,
        "episode_id": _str,
        "agent_model": _str,
        "method": _str,
        "user_model": _str,
        "user_implementation": _str,
        "persona": _str,
        "persona_text": _str,
        "source": _str,
        "config": _str,
        "split": _str,
        "seed": _i64,
        "instructions": _str,
        # --- transcript -----------------------------------------------------------
        "messages": List(MESSAGE),
        # --- AcCoRD -----------------------------------------------------------------
        "preferences": List(PREFERENCE),
        "completed": _bool,
        "outcome_json": _str,
        "product_type_ok": _bool,
        "price_ok": _bool,
        # --- AgentChangeBench / tau2 ----------------------------------------------
        "goals": List(_str),
        "required_shifts": _i32,
        "num_trials": _i32,
        "criteria": CRITERIA,
        "termination_reason": _str,
        "reward": _f64,
        "reward_basis": List(_str),
        "reward_breakdown_json": _str,
        "nl_verdicts": List(NL_VERDICT),
        "tsr_details": TSR_DETAILS,
        "gsrt_judge": GSRT_JUDGE,
        "reward_info_json": _str,
        "agent_cost": _f64,
        "user_cost": _f64,
    }
)

_REQUIRED_STR = ("benchmark", "domain", "scenario_id", "task_id", "episode_id", "source")


class EpisodeValidationError(ValueError):
    """A record does not match the canonical episode schema.

    The message names the source file, the record and the field.

    Attributes
    ----------
    source, record, field : str or None
        Where the problem is: file path, record id (or index) and field path.
    reason : str
        What was expected.
    """

    def __init__(self, reason: str, *, source: str | None = None, record: str | None = None,
                 field: str | None = None) -> None:
        self.source, self.record, self.field, self.reason = source, record, field, reason
        where = ", ".join(
            f"{k} {v}" for k, v in (("file", source), ("record", record), ("field", field)) if v
        )
        super().__init__(f"{where}: {reason}" if where else reason)


def empty_episode() -> dict[str, Any]:
    """Return a record with every canonical column set to ``None``.

    Adapters start from it so that a record always has every column.

    Examples
    --------
    >>> rec = empty_episode()
    >>> sorted(rec) == sorted(EPISODE_FEATURES)
    True
    """
    return dict.fromkeys(EPISODE_FEATURES)


def _fail(reason: str, rec: Mapping[str, Any], field: str) -> EpisodeValidationError:
    return EpisodeValidationError(
        reason, source=rec.get("source"), record=str(rec.get("episode_id")), field=field
    )


def _check_type(value: Any, types: tuple[type, ...], rec: Mapping[str, Any], field: str,
                what: str) -> None:
    if value is not None and (not isinstance(value, types) or isinstance(value, bool) and bool not in types):
        raise _fail(f"expected {what}, got {type(value).__name__} {value!r:.60}", rec, field)


def _check_messages(messages: Iterable[Mapping[str, Any]], rec: Mapping[str, Any]) -> None:
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(msg, Mapping):
            raise _fail(f"expected a message object, got {type(msg).__name__}", rec, where)
        if msg.get("role") not in ROLES:
            raise _fail(f"unknown role {msg.get('role')!r}; expected one of {ROLES}", rec,
                        f"{where}.role")
        _check_type(msg.get("content"), (str,), rec, f"{where}.content", "text")
        if not isinstance(msg.get("turn_idx"), int) or isinstance(msg.get("turn_idx"), bool):
            raise _fail(f"expected an integer turn_idx, got {msg.get('turn_idx')!r}", rec,
                        f"{where}.turn_idx")
        kind = msg.get("kind")
        if kind is not None and kind not in KINDS:
            raise _fail(f"unknown kind {kind!r}; expected one of {KINDS} or null", rec,
                        f"{where}.kind")
        for j, call in enumerate(msg.get("tool_calls") or ()):
            if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
                raise _fail("a tool call needs a string name", rec, f"{where}.tool_calls[{j}].name")
            _check_type(call.get("arguments_json"), (str,), rec,
                        f"{where}.tool_calls[{j}].arguments_json", "JSON text")


#: Text fields that hold a JSON object (tool-call arguments, action parameters).
JSON_OBJECT_FIELDS = ("arguments_json", "params_json")


def json_object_problem(text: str) -> str | None:
    """Why ``text`` is not the JSON text of an object, or None when it is.

    Examples
    --------
    >>> json_object_problem('{"a": 1}') is None
    True
    >>> json_object_problem('[1, 2]')
    'expected the JSON text of an object, got list [1, 2]'
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"expected the JSON text of an object, got text that is not JSON ({exc.msg})"
    except RecursionError:
        return "expected the JSON text of an object, got JSON nested too deeply"
    if not isinstance(value, dict):
        return f"expected the JSON text of an object, got {type(value).__name__} {text:.40}"
    return None


def _check_json_object(value: Any, rec: Mapping[str, Any], field: str) -> None:
    if isinstance(value, str):
        problem = json_object_problem(value)
        if problem:
            raise _fail(problem, rec, field)


def check_json_objects(rec: Mapping[str, Any]) -> None:
    """Raise when a tool call's ``arguments_json`` or an expected action's ``arguments_json``
    / ``params_json`` is not the JSON text of an object (checked by the loader per record).

    Examples
    --------
    >>> rec = empty_episode()
    >>> rec["messages"] = [{"role": "assistant", "turn_idx": 0,
    ...                     "tool_calls": [{"name": "f", "arguments_json": "[1]"}]}]
    >>> check_json_objects(rec)
    Traceback (most recent call last):
    ...
    accordkit.schema.EpisodeValidationError: record None, field messages[0].tool_calls[0].arguments_json: expected the JSON text of an object, got list [1]
    """
    for i, msg in enumerate(rec.get("messages") or ()):
        calls = msg.get("tool_calls") if isinstance(msg, Mapping) else None
        for j, call in enumerate(calls or ()):
            if isinstance(call, Mapping):
                _check_json_object(call.get("arguments_json"), rec,
                                   f"messages[{i}].tool_calls[{j}].arguments_json")
    criteria = rec.get("criteria")
    if not isinstance(criteria, Mapping):
        return
    for i, action in enumerate(criteria.get("actions") or ()):
        if isinstance(action, Mapping):
            _check_json_object(action.get("arguments_json"), rec,
                               f"criteria.actions[{i}].arguments_json")
    for i, aset in enumerate(criteria.get("action_sets") or ()):
        for j, tool in enumerate((aset.get("allowed_tools") if isinstance(aset, Mapping)
                                  else None) or ()):
            if isinstance(tool, Mapping):
                _check_json_object(tool.get("params_json"), rec,
                                   f"criteria.action_sets[{i}].allowed_tools[{j}].params_json")


def validate_episode(rec: Mapping[str, Any]) -> None:
    """Check one canonical record; raise :class:`EpisodeValidationError` on the first problem.

    Only what the downstream code relies on is checked: required ids, known roles and
    dynamics, integer message positions, a non-empty conversation, number types.

    Parameters
    ----------
    rec : mapping
        A record with the columns of :data:`EPISODE_FEATURES`.

    Examples
    --------
    >>> rec = empty_episode()
    >>> validate_episode(rec)
    Traceback (most recent call last):
    ...
    accordkit.schema.EpisodeValidationError: record None, field benchmark: missing required value
    """
    for name in _REQUIRED_STR:
        if not isinstance(rec.get(name), str) or not rec.get(name):
            raise _fail("missing required value" if rec.get(name) is None else
                        f"expected non-empty text, got {rec.get(name)!r:.60}", rec, name)
    if rec["benchmark"] not in BENCHMARKS:
        raise _fail(f"unknown benchmark {rec['benchmark']!r}; expected one of {BENCHMARKS}",
                    rec, "benchmark")
    _check_type(rec.get("rollout"), (int,), rec, "rollout", "an integer")
    for name in ("reward", "agent_cost", "user_cost"):
        _check_type(rec.get(name), (int, float), rec, name, "a number")
        if isinstance(rec.get(name), float) and not math.isfinite(rec[name]):
            raise _fail(f"expected a finite number, got {rec[name]!r}", rec, name)
    messages = rec.get("messages")
    if not messages:
        raise _fail("empty conversation: no messages", rec, "messages")
    _check_messages(messages, rec)
    for i, pref in enumerate(rec.get("preferences") or ()):
        if pref.get("dynamic") not in DYNAMICS:
            raise _fail(f"unknown dynamic {pref.get('dynamic')!r}; expected one of {DYNAMICS}",
                        rec, f"preferences[{i}].dynamic")
        if not pref.get("name"):
            raise _fail("a preference needs a name", rec, f"preferences[{i}].name")
