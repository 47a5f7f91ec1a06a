"""tau2's stored action checks read for the action diff, and the bound on nesting it works in.

A tau2 results file stores, with each simulation, the evaluator's verdict on every expected
action (``reward_info.action_checks[i]``: the gold ``action`` and its ``action_match``). The
action diff compares its statuses with them, and needs them to line up with the expected
actions of the task the simulation names. Published files do not always keep that promise
(spec ``tau2-format.md`` §12): uploads whose task ids were renumbered store checks made on
another task of the file, and a fork with ``acceptable_outcomes`` stores the checks of the
best-matching list while its task lists no ``actions``. The stored checks are what the run
was scored on, so such an episode's expected actions are the gold actions its checks hold.

Every value read here is nested at most :data:`MAX_DEPTH` levels (measured without
recursion, :func:`too_deep`): deeper text is a problem of its episode, never a
``RecursionError`` of the whole data set.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._internal.arrow import one_array
from .._internal.jsontext import loads

__all__ = ["MAX_DEPTH", "too_deep", "deep_texts", "StoredChecks", "read_stored_checks",
           "with_gold_actions"]

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


def deep_texts(texts: pa.Array | pa.ChunkedArray, bound: int = MAX_DEPTH) -> np.ndarray:
    """Positions of the texts of ``texts`` nested deeper than ``bound`` (nulls are not).

    A vectorised count of brackets rules out almost every text; only the others are scanned.
    """
    arr = pc.fill_null(texts, "")
    brackets = pc.add(pc.count_substring(arr, "{"), pc.count_substring(arr, "["))
    maybe = np.flatnonzero(brackets.to_numpy(zero_copy_only=False) > bound)
    if not len(maybe):
        return maybe.astype(np.int64)
    values = one_array(arr).take(pa.array(maybe)).to_pylist()
    return np.array([i for i, t in zip(maybe.tolist(), values, strict=True)
                     if too_deep(t, bound)], dtype=np.int64)


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
    problems: dict[int, str] = field(default_factory=dict)


def _where(table: pa.Table, row: int, field_name: str) -> str:
    return (f"file {table.column('source')[row]}, record {table.column('episode_id')[row]}, "
            f"field {field_name}")


def _parse_checks(text: str, where: str) -> list[tuple[dict[str, Any] | None, bool]] | None:
    """``(gold action or None, action_match)`` of each stored check; None when none is
    stored. Raises ``ValueError`` (naming ``where``) for checks that cannot be read."""
    if too_deep(text):
        raise ValueError(f"{where}: nested deeper than {MAX_DEPTH} levels; not read")
    info = loads(text)
    checks = info.get("action_checks") if isinstance(info, dict) else None
    if checks is None:
        return None
    if not isinstance(checks, list):
        raise ValueError(f"{where}: expected a list of action checks, got "
                         f"{type(checks).__name__}")
    out = []
    for i, check in enumerate(checks):
        if not isinstance(check, dict) or not isinstance(check.get("action_match"), bool):
            got = check.get("action_match") if isinstance(check, dict) else check
            raise ValueError(f"{where}[{i}].action_match: expected true or false, got "
                             f"{got!r:.60}")
        action = check.get("action")
        gold = None
        if isinstance(action, dict) and isinstance(action.get("name"), str) \
                and isinstance(action.get("arguments") or {}, dict):
            compare = action.get("compare_args")
            gold = {"action_id": _text_or_none(action.get("action_id")),
                    "requestor": _text_or_none(action.get("requestor")),
                    "name": action["name"],
                    "arguments": action.get("arguments") or {},
                    "compare_args": [str(c) for c in compare] if isinstance(compare, list)
                    else None}
        out.append((gold, check["action_match"]))
    return out


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
    rows = np.flatnonzero(has.to_numpy(zero_copy_only=False))
    if not len(rows):
        return out
    actions = pc.struct_field(one_array(table.column("criteria")), "actions")
    picked = actions.take(pa.array(rows))
    texts = one_array(text).take(pa.array(rows)).to_pylist()
    for row, info, task_actions in zip(rows.tolist(), texts, picked.to_pylist(), strict=True):
        if use_sets[row]:
            continue
        where = _where(table, row, "reward_info.action_checks")
        try:
            checks = _parse_checks(info, where)
            if checks is None:
                continue
            task_actions = task_actions or []
            if _line_up(checks, task_actions, where):
                out.matches[row] = [match for _, match in checks]
                continue
            if any(gold is None for gold, _ in checks):
                raise ValueError(f"{where}: {len(checks)} stored check(s) for "
                                 f"{len(task_actions)} expected action(s), and a check stores "
                                 "no gold action to take instead")
        except ValueError as exc:
            out.problems[row] = str(exc)
            continue
        out.gold[row] = [_action_record(gold) for gold, _ in checks]  # type: ignore[arg-type]
        out.matches[row] = [match for _, match in checks]
        if not task_actions:
            out.no_task_actions.add(row)
    return out


def _line_up(checks: list[tuple[dict[str, Any] | None, bool]],
             task_actions: list[dict[str, Any]], where: str) -> bool:
    """Whether stored checks are those of the task's actions: as many, each of the same
    tool with the same arguments (a check without its action agrees with any)."""
    if len(checks) != len(task_actions):
        return False
    for k, ((gold, _), action) in enumerate(zip(checks, task_actions, strict=True)):
        if gold is None:
            continue
        if gold["name"] != action.get("name"):
            return False
        text = action.get("arguments_json") or "{}"
        if too_deep(text):
            raise ValueError(f"{where}[{k}]: the task's expected arguments nest deeper than "
                             f"{MAX_DEPTH} levels; not compared")
        if not loads(text) == gold["arguments"]:
            return False
    return True


def _action_record(gold: dict[str, Any]) -> dict[str, Any]:
    """A stored gold action as a canonical expected action (``criteria.actions[]``)."""
    return {"action_id": gold["action_id"], "requestor": gold["requestor"],
            "name": gold["name"],
            "arguments_json": json.dumps(gold["arguments"], ensure_ascii=False),
            "compare_args": gold["compare_args"]}


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
