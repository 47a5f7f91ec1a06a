"""tau2's stored action checks read for the action diff, and the bound on nesting it works in.

A tau2 results file stores, with each simulation, the evaluator's verdict on every expected
action (``reward_info.action_checks[i]``: the gold ``action`` and its ``action_match``). The
action diff compares its statuses with them, and needs them to line up with the expected
actions of the task the simulation names. Published files do not always keep that promise
(spec ``tau2-format.md`` §12): uploads whose task ids were renumbered store checks made on
another task of the file, and a fork with ``acceptable_outcomes`` stores the checks of the
best-matching list while its task lists no ``actions``. The stored checks are what the run
was scored on, so such an episode's expected actions are the gold actions its checks hold.

Every value the diff compares is nested at most :data:`MAX_DEPTH` levels (measured without
recursion, :func:`too_deep`), and a stored ``reward_info`` too deep for the parser is caught
by the parser's own guard, as the loader catches it: either is a problem of its episode,
never a ``RecursionError`` of the whole data set.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._internal.arrow import one_array
from .._internal.jsontext import loads

__all__ = ["MAX_DEPTH", "too_deep", "LeftOut", "left_out_line", "StoredChecks",
           "read_stored_checks", "with_gold_actions"]

#: Deepest nesting of a JSON value (objects and lists) the action diff reads. The loader
#: reads what Python's JSON parser reads (about 1,000 levels, its recursion limit); a real
#: tool's arguments nest a few levels, so a deeper value is hostile or broken and its
#: episode is named and left out of the diff, whatever the call stack of the caller.
MAX_DEPTH = 100

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_OPEN = np.frombuffer(b"{[", np.uint8)
_CLOSE = np.frombuffer(b"}]", np.uint8)


def too_deep(text: str, bound: int = MAX_DEPTH) -> bool:
    """Whether JSON ``text`` nests objects and lists deeper than ``bound`` (no recursion).

    Examples
    --------
    >>> too_deep('{"a": [1, {"b": "[[[[["}]}', bound=3)
    False
    >>> too_deep('[[[[1]]]]', bound=3)
    True
    """
    if text.count("{") + text.count("[") <= bound:
        return False
    bare = np.frombuffer(_STRING.sub("", text).encode("utf-8", "replace"), np.uint8)
    step = np.isin(bare, _OPEN).astype(np.int64) - np.isin(bare, _CLOSE).astype(np.int64)
    return bool(len(step)) and int(np.cumsum(step).max()) > bound


@dataclass(frozen=True)
class LeftOut:
    """An episode an analysis left out (``errors="skip"``): its file, record and field, and
    why. ``str()`` is the line a warning names it with; :meth:`as_dict` the record a store's
    manifest and a report keep (``field`` is None when no one field is to blame).

    Examples
    --------
    >>> left = LeftOut("run.json", "tau2/7", "messages[3].tool_calls[0].arguments_json",
    ...                "nested deeper than 100 levels; not compared")
    >>> print(left)
    file run.json, record tau2/7, field messages[3].tool_calls[0].arguments_json: nested deeper than 100 levels; not compared
    >>> left.as_dict()["field"]
    'messages[3].tool_calls[0].arguments_json'
    """

    source: str | None
    record: str | None
    field_path: str | None
    reason: str

    def __str__(self) -> str:
        where = f", field {self.field_path}" if self.field_path else ""
        return f"file {self.source}, record {self.record}{where}: {self.reason}"

    def as_dict(self) -> dict[str, str | None]:
        """``source``, ``record``, ``field`` and ``reason``, as plain text."""
        return {"source": _text(self.source), "record": _text(self.record),
                "field": self.field_path, "reason": self.reason}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> LeftOut:
        """The episode a record of :meth:`as_dict` names (as a store's manifest or a
        frame's ``attrs["left_out"]`` keeps it; a ``level`` key is ignored)."""
        return cls(record.get("source"), record.get("record"), record.get("field"),
                   record.get("reason"))  # type: ignore[arg-type]


def left_out_line(record: Mapping[str, Any]) -> str:
    """One line naming an episode left out at scoring, with the store level it is missing
    from (a record of a manifest's ``left_out_records``).

    Examples
    --------
    >>> left_out_line({"level": "action", "source": "a.json", "record": "tau2/7",
    ...                "field": "messages[2].tool_calls[0].arguments_json", "reason": "too deep"})
    'level action: file a.json, record tau2/7, field messages[2].tool_calls[0].arguments_json: too deep'
    """
    return f"level {record.get('level')}: {LeftOut.from_record(record)}"


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclass
class StoredChecks:
    """What the stored checks of a table say, by row.

    ``matches``: row -> the stored ``action_match`` of each check, in order, for rows whose
    checks line up with their expected actions (after ``gold`` replaced them);
    ``gold``: row -> the gold actions (canonical action records) of rows whose checks were
    made on other actions than their task's; ``no_task_actions``: those of ``gold`` whose
    task lists no expected action; ``problems``: row -> why its checks cannot be read.
    """

    matches: dict[int, list[bool]] = field(default_factory=dict)
    gold: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    no_task_actions: set[int] = field(default_factory=set)
    problems: dict[int, LeftOut] = field(default_factory=dict)


def left_out(table: pa.Table, row: int, field_name: str | None, reason: str) -> LeftOut:
    """Row ``row`` of ``table`` left out, blamed on ``field_name``, for ``reason``."""
    return LeftOut(table.column("source")[row].as_py(), table.column("episode_id")[row].as_py(),
                   field_name, reason)


def _checks_problem(table: pa.Table, row: int, field_name: str, text: str) -> LeftOut:
    """A stored-checks problem whose ``text`` starts with the part of the field below
    ``field_name`` (``"[2].action_match: ..."``, ``": ..."``); other text is the reason."""
    if text[:1] in ("[", ":") and ": " in text:
        below, reason = text.split(": ", 1)
        return left_out(table, row, field_name + below, reason)
    return left_out(table, row, field_name, text)


def _parse_checks(text: str) -> list[tuple[Any, bool]] | None:
    """``(stored action, action_match)`` of each stored check; None when none is stored.

    Raises ``ValueError`` for checks that cannot be read, its text starting with the part of
    the field below ``reward_info.action_checks`` (``"[2].action_match: ..."``).
    """
    info = loads(text)
    checks = info.get("action_checks") if isinstance(info, dict) else None
    if checks is None:
        return None
    if not isinstance(checks, list):
        raise ValueError(f": expected a list of action checks, got {type(checks).__name__}")
    out = []
    for i, check in enumerate(checks):
        if not isinstance(check, dict) or not isinstance(check.get("action_match"), bool):
            got = check.get("action_match") if isinstance(check, dict) else check
            raise ValueError(f"[{i}].action_match: expected true or false, got {got!r:.60}")
        out.append((check.get("action"), check["action_match"]))
    return out


def _gold(action: Any) -> dict[str, Any] | None:
    """A stored check's gold action (name, arguments, ...), or None when it stores none."""
    if not isinstance(action, dict) or not isinstance(action.get("name"), str) \
            or not isinstance(action.get("arguments") or {}, dict):
        return None
    compare = action.get("compare_args")
    return {"action_id": _text_or_none(action.get("action_id")),
            "requestor": _text_or_none(action.get("requestor")),
            "name": action["name"], "arguments": action.get("arguments") or {},
            "compare_args": [str(c) for c in compare] if isinstance(compare, list) else None}


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def read_stored_checks(table: pa.Table, use_sets: np.ndarray) -> StoredChecks:
    """The stored action checks of ``table``'s rows, checked against their tasks' actions.

    ``use_sets`` marks rows whose task is scored by AgentChangeBench action sets (their
    stored checks are of legacy actions and are not compared). A row's checks line up when
    they are as many as its task's actions and each names the same tool with the same
    arguments (a check that stores no action is taken as its action's); otherwise its
    expected actions are the checks' gold actions, and with a check that stores no action
    there are none to take (a problem of the row).
    """
    out = StoredChecks()
    text = table.column("reward_info_json")
    has = pc.fill_null(pc.match_substring(text, "action_checks"), False)
    rows = np.flatnonzero(has.to_numpy(zero_copy_only=False) & ~np.asarray(use_sets, bool))
    if not len(rows):
        return out
    take = pa.array(rows)
    picked = one_array(text).take(take)
    actions = pc.struct_field(one_array(table.column("criteria")), "actions").take(take)
    n_actions = actions.value_lengths().fill_null(0).to_numpy(zero_copy_only=False)
    starts = np.r_[0, np.cumsum(n_actions)].tolist()
    flat = pc.list_flatten(actions)
    names = pc.struct_field(flat, "name").to_pylist()
    arguments = pc.struct_field(flat, "arguments_json").to_pylist()
    parsed: dict[str, Any] = {}      # expected arguments by text: trials share their task's
    field_name = "reward_info.action_checks"
    for k, (row, info) in enumerate(zip(rows.tolist(), picked.to_pylist(), strict=True)):
        lo, hi = starts[k], starts[k + 1]
        try:
            checks = _parse_checks(info)
            if checks is None:
                continue
            if _line_up(checks, names[lo:hi], arguments[lo:hi], parsed):
                out.matches[row] = [match for _, match in checks]
                continue
            gold = [_gold(action) for action, _ in checks]
            if any(g is None for g in gold):
                raise ValueError(f": {len(checks)} stored check(s) for {hi - lo} expected "
                                 "action(s), and a check stores no gold action to take "
                                 "instead")
            records = [_action_record(g, i) for i, g in enumerate(gold)]  # type: ignore[arg-type]
        except RecursionError:
            out.problems[row] = left_out(table, row, field_name, "nested too deeply to read")
            continue
        except ValueError as exc:
            out.problems[row] = _checks_problem(table, row, field_name, str(exc))
            continue
        out.gold[row] = records
        out.matches[row] = [match for _, match in checks]
        if hi == lo:
            out.no_task_actions.add(row)
    return out


def _line_up(checks: list[tuple[Any, bool]], names: list[str | None],
             arguments: list[str | None], parsed: dict[str, Any]) -> bool:
    """Whether stored checks are those of the task's actions (``names``, ``arguments``): as
    many, each of the same tool with the same arguments (a check that stores no action
    agrees with any)."""
    if len(checks) != len(names):
        return False
    for k, (action, _) in enumerate(checks):
        name = action.get("name") if isinstance(action, dict) else None
        if not isinstance(name, str):
            continue     # no gold action stored: nothing says it is another one
        if name != names[k]:
            return False
        text = arguments[k] or "{}"
        if text not in parsed:
            if too_deep(text):
                raise ValueError(f"[{k}]: the task's expected arguments nest deeper than "
                                 f"{MAX_DEPTH} levels; not compared")
            parsed[text] = loads(text)
        if not parsed[text] == (action.get("arguments") or {}):
            return False
    return True


def _action_record(gold: dict[str, Any], k: int) -> dict[str, Any]:
    """A stored gold action as a canonical expected action (``criteria.actions[]``); raises
    ``ValueError`` when its arguments nest deeper than :data:`MAX_DEPTH`."""
    text = json.dumps(gold["arguments"], ensure_ascii=False)
    if too_deep(text):
        raise ValueError(f"[{k}].action.arguments: nested deeper than {MAX_DEPTH} levels; "
                         "not read")
    return {"action_id": gold["action_id"], "requestor": gold["requestor"],
            "name": gold["name"], "arguments_json": text, "compare_args": gold["compare_args"]}


def with_gold_actions(table: pa.Table, gold: dict[int, list[dict[str, Any]]]) -> pa.Table:
    """``table`` with the expected actions of the rows of ``gold`` replaced by theirs (a row
    without criteria gets criteria holding only those actions)."""
    if not gold:
        return table
    col = one_array(table.column("criteria"))
    rows = sorted(gold)
    values = []
    names = [f.name for f in col.type]
    for row, value in zip(rows, col.take(pa.array(rows)).to_pylist(), strict=True):
        value = dict(value) if value is not None else dict.fromkeys(names)
        value["actions"] = gold[row]
        if value.get("action_sets") is None:
            value["action_sets"] = []
        values.append(value)
    index = np.arange(table.num_rows, dtype=np.int64)
    index[rows] = table.num_rows + np.arange(len(rows))
    joined = pa.concat_arrays([col, pa.array(values, type=col.type)])
    i = table.schema.get_field_index("criteria")
    return table.set_column(i, table.schema.field(i), joined.take(pa.array(index)))
