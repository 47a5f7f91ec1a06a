"""The rules every canonical episode obeys beyond its column types, declared once
(:data:`RULES`): :func:`rule_problem` checks them on one record, and the loader's checker
(:func:`accordkit.ingest.check.table_problems`) on a whole Arrow table, from this table."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from datasets import List, Value

from ..names import BENCHMARKS, DYNAMICS, KINDS, REWARD_RANGE, ROLES
from .features import EPISODE_FEATURES, REQUIRED_TEXT, EpisodeValidationError

__all__ = ["Rule", "RULES", "rule_problem", "named_path", "json_object_problem",
           "check_json_objects", "JSON_OBJECT_FIELDS", "fail"]

def fail(reason: str, rec: Mapping[str, Any], field: str) -> EpisodeValidationError:
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
    >>> from accordkit.schema import empty_episode
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
        raise fail(found[1], rec, found[0])


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
        (no NaN or infinity), ``in_range`` (a number within ``bounds``; null allowed) or
        ``json_object`` (the JSON text of an object; null allowed).
    allowed : tuple of str
        The values ``one_of`` accepts.
    null_ok : bool
        Whether ``one_of`` accepts null.
    bounds : tuple of float
        ``(low, high)`` of ``in_range``, both included.
    """

    path: str
    test: str
    allowed: tuple[str, ...] = ()
    null_ok: bool = False
    bounds: tuple[float, float] = (0.0, 0.0)

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
        if self.test == "in_range":
            return isinstance(value, int | float) and not (
                self.bounds[0] <= value <= self.bounds[1])
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
        if self.test == "in_range":
            return (f"expected a {field} in [{self.bounds[0]:g}, {self.bounds[1]:g}] (the "
                    f"range of every benchmark's {field}), got {value!r:.40}")
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
#: :func:`accordkit.ingest.check.table_problems` on a whole Arrow table, both from this table.
RULES: tuple[Rule, ...] = (
    *(Rule(name, "required") for name in REQUIRED_TEXT),
    Rule("benchmark", "one_of", BENCHMARKS),
    Rule("messages", "non_empty"),
    Rule("messages[].role", "one_of", ROLES),
    Rule("messages[].turn_idx", "present"),
    Rule("messages[].kind", "one_of", KINDS, null_ok=True),
    Rule("messages[].tool_calls[].name", "present"),
    Rule("preferences[].dynamic", "one_of", DYNAMICS),
    Rule("preferences[].name", "required"),
    *(Rule(path, "finite") for path in _float_paths(EPISODE_FEATURES)),
    Rule("reward", "in_range", bounds=REWARD_RANGE),
    Rule("messages[].tool_calls[].arguments_json", "json_object"),
    Rule("criteria.actions[].arguments_json", "json_object"),
    Rule("criteria.action_sets[].allowed_tools[].params_json", "json_object"),
    # read by scoring (the stored reward checks): a bad one is this record's problem
    Rule("reward_info_json", "json_object"),
    Rule("reviews_json", "json_object"),
)

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


#: id of a rule -> (the rule, its finder): compiled once; keyed by id, since hashing a
#: frozen dataclass (all its fields) on every look-up cost more than the look-up's work
_FINDERS: dict[int, tuple[Rule, Finder]] = {}


def _compiled(rule: Rule) -> Finder:
    found = _FINDERS.get(id(rule))
    if found is None or found[0] is not rule:
        found = _FINDERS[id(rule)] = (rule, _finder(rule.path.split("."), rule.fails))
    return found[1]


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
    :func:`accordkit.schema.record_problem`).

    Examples
    --------
    >>> from accordkit.schema import empty_episode
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
