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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from datasets import Features, List, Value

# the names (benchmarks, roles, dynamics, kinds, id columns) live in a module of their own,
# free of datasets, and are part of this module's interface
from .names import BENCHMARKS, CONFIG_COLUMNS, DYNAMICS, ID_COLUMNS, KINDS, ROLES

__all__ = [
    "EPISODE_FEATURES",
    "ID_COLUMNS",
    "CONFIG_COLUMNS",
    "BENCHMARKS",
    "ROLES",
    "DYNAMICS",
    "SCHEMA_VERSION",
    "LATER_COLUMNS",
    "check_json_objects",
    "RULES",
    "Rule",
    "rule_problem",
    "json_object_problem",
    "EpisodeValidationError",
    "validate_episode",
    "empty_episode",
]

#: Bumped when a column is added, removed or changes meaning (3: ``reviews_json``).
SCHEMA_VERSION = "accordkit.episode/3"

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
        "reviews_json": _str,
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


def check_json_objects(rec: Mapping[str, Any]) -> None:
    """Raise when a tool call's ``arguments_json`` or an expected action's ``arguments_json``
    / ``params_json`` is not the JSON text of an object (the ``json_object`` rules of
    :data:`RULES`).

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
    found = rule_problem(rec, rules=[r for r in RULES if r.test == "json_object"])
    if found:
        raise _fail(found[1], rec, found[0])


# --------------------------------------------------------------------------- rules


@dataclass(frozen=True)
class Rule:
    """One rule every canonical episode obeys beyond its column types.

    Attributes
    ----------
    path : str
        The field, with ``[]`` after a list to mean each of its items
        (``messages[].tool_calls[].name``).
    test : str
        ``required`` (non-empty text), ``one_of`` (a value of ``allowed``; null only when
        ``null_ok``), ``non_empty`` (a list with items), ``present`` (not null), ``finite``
        (no NaN or infinity) or ``json_object`` (the JSON text of an object; null allowed).
    allowed : tuple of str
        The values ``one_of`` accepts.
    null_ok : bool
        Whether ``one_of`` accepts null.
    """

    path: str
    test: str
    allowed: tuple[str, ...] = ()
    null_ok: bool = False

    def fails(self, value: Any) -> bool:
        """Whether ``value`` (of a record that has the schema's types) breaks the rule."""
        if self.test == "required":
            return not isinstance(value, str) or not value
        if self.test == "one_of":
            return value not in self.allowed and not (value is None and self.null_ok)
        if self.test == "non_empty":
            return not value
        if self.test == "present":
            return value is None
        if self.test == "finite":
            return isinstance(value, float) and not math.isfinite(value)
        if self.test == "json_object":
            return isinstance(value, str) and json_object_problem(value) is not None
        raise ValueError(f"unknown rule test {self.test!r}")  # pragma: no cover

    def reason(self, value: Any) -> str:
        """What is wrong with ``value`` (one that :meth:`fails`)."""
        field = self.path.rsplit(".", 1)[-1].removesuffix("[]")
        if self.path in _MESSAGES:
            return _MESSAGES[self.path]
        if self.test == "required":
            return ("missing required value" if value is None
                    else f"expected non-empty text, got {value!r:.60}")
        if self.test == "one_of":
            tail = " or null" if self.null_ok else ""
            return f"unknown {_NOUNS.get(field, field)} {value!r}; expected one of " \
                   f"{self.allowed}{tail}"
        if self.test == "finite":
            return f"expected a finite number, got {value!r}"
        if self.test == "json_object":
            return str(json_object_problem(value))
        return _MESSAGES[self.path]


_NOUNS = {"benchmark": "benchmark", "role": "role", "kind": "kind", "dynamic": "dynamic"}
_MESSAGES = {
    "messages": "empty conversation: no messages",
    "messages[].turn_idx": "missing message position (turn_idx)",
    "messages[].tool_calls[].name": "a tool call needs a string name",
    "preferences[].name": "a preference needs a name",
}


def _float_paths(fields: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Paths of every float field of a features mapping (lists marked ``[]``)."""
    out = []
    for name, feature in fields.items():
        path = f"{prefix}{name}"
        while isinstance(feature, List):
            feature, path = feature.feature, f"{path}[]"
        if isinstance(feature, Mapping):
            out += _float_paths(feature, f"{path}.")
        elif isinstance(feature, Value) and feature.dtype.startswith("float"):
            out.append(path)
    return out


#: The episode rules, in the order they are checked: a record's problem is the first rule
#: it breaks (at its first position). :func:`validate_episode` checks them on one record,
#: :func:`accordkit.validate.table_problems` on a whole Arrow table, both from this table.
RULES: tuple[Rule, ...] = (
    *(Rule(name, "required") for name in _REQUIRED_STR),
    Rule("benchmark", "one_of", BENCHMARKS),
    Rule("messages", "non_empty"),
    Rule("messages[].role", "one_of", ROLES),
    Rule("messages[].turn_idx", "present"),
    Rule("messages[].kind", "one_of", KINDS, null_ok=True),
    Rule("messages[].tool_calls[].name", "present"),
    Rule("preferences[].dynamic", "one_of", DYNAMICS),
    Rule("preferences[].name", "required"),
    *(Rule(path, "finite") for path in _float_paths(EPISODE_FEATURES)),
    Rule("messages[].tool_calls[].arguments_json", "json_object"),
    Rule("criteria.actions[].arguments_json", "json_object"),
    Rule("criteria.action_sets[].allowed_tools[].params_json", "json_object"),
    # read by scoring (the stored reward checks): a bad one is this record's problem
    Rule("reward_info_json", "json_object"),
    Rule("reviews_json", "json_object"),
)

#: Columns added to the schema after canonical files were first written: a canonical table
#: (parquet, hub dataset) without them is read with the column null, not refused.
LATER_COLUMNS = ("reviews_json",)


Finder = Callable[[Any], "tuple[tuple[int, ...], Any] | None"]


def _finder(steps: list[str], fails: Callable[[Any], bool]) -> Finder:
    """A function giving the first value along ``steps`` that ``fails``, with its list
    positions; compiled once per rule so checking a record builds no paths."""
    name, is_list = steps[0].removesuffix("[]"), steps[0].endswith("[]")
    child = _finder(steps[1:], fails) if len(steps) > 1 else None

    def find(value: Any) -> tuple[tuple[int, ...], Any] | None:
        if isinstance(value, dict) or isinstance(value, Mapping):
            value = value.get(name)
        else:
            value = None
        if not is_list:
            if child is not None:
                return child(value)
            return ((), value) if fails(value) else None
        if not isinstance(value, list | tuple):
            return None
        for i, item in enumerate(value):
            if child is None:
                if fails(item):
                    return (i,), item
                continue
            found = child(item)
            if found is not None:
                return (i, *found[0]), found[1]
        return None

    return find


@cache
def _compiled(rule: Rule) -> Finder:
    return _finder(rule.path.split("."), rule.fails)


def named_path(path: str, positions: Sequence[int]) -> str:
    """A rule path with its list positions filled in.

    Examples
    --------
    >>> named_path("messages[].tool_calls[].name", [3, 0])
    'messages[3].tool_calls[0].name'
    """
    parts = path.split("[]")
    if not positions:
        return path
    return "".join(f"{part}[{p}]" for part, p in zip(parts, positions, strict=False)) \
        + parts[-1]


def rule_problem(rec: Mapping[str, Any], *,
                 rules: Iterable[Rule] = RULES) -> tuple[str, str] | None:
    """The first rule of :data:`RULES` that ``rec`` breaks, as (field path, reason).

    ``rec`` must already have the schema's types (see
    :func:`accordkit.validate.record_problem`).

    Examples
    --------
    >>> rec = empty_episode() | {"benchmark": "tau2", "domain": "d", "scenario_id": "s",
    ...                          "task_id": "t", "episode_id": "e", "source": "f"}
    >>> rule_problem(rec)
    ('messages', 'empty conversation: no messages')
    >>> rec["messages"] = [{"role": "user", "turn_idx": 0}, {"role": "bot", "turn_idx": 1}]
    >>> rule_problem(rec)
    ('messages[1].role', "unknown role 'bot'; expected one of ('system', 'user', 'assistant', 'tool')")
    """
    for rule in rules:
        found = _compiled(rule)(rec)
        if found is not None:
            return named_path(rule.path, found[0]), rule.reason(found[1])
    return None


def validate_episode(rec: Mapping[str, Any]) -> None:
    """Check one canonical record; raise :class:`EpisodeValidationError` on the first problem.

    The rules are those of :data:`RULES` (required ids, known roles, kinds and dynamics,
    message positions, a non-empty conversation, finite numbers, JSON objects where JSON
    text is stored), after the types of every field (:func:`accordkit.validate.record_problem`).

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
    from .validate import record_problem  # the type checks, compiled from the features

    found = record_problem(rec) or rule_problem(rec)
    if found:
        raise _fail(found[1], rec, found[0])
