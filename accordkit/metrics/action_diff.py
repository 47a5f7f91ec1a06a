"""The action diff: each expected action against the tool calls of the conversation.

For every episode whose task lists expected actions, :func:`action_rows` gives

* one row per expected action, with its ``status``:

  ``matched``
      some call satisfies it (the rule below);
  ``wrong_arguments``
      no call satisfies it, but the tool was called: the row names the closest such call
      (fewest differing compared arguments, then the earliest) and the arguments that differ,
      with the expected and the actual values;
  ``missing``
      the tool was never called;

* one row per *write* call that no expected action accounts for (``status="extra"``,
  ``action_index`` null): a state-changing call nobody asked for, including a second copy
  of a write that was already done, and a wrong write the agent later corrected. Read and
  generic calls are never extra (see :mod:`accordkit.metrics.tool_kinds`), and only
  episodes whose task's actions are known (``criteria`` recorded, ``actions`` not null or
  action sets given) have extra rows: an AcCoRD episode, one whose task the results file
  does not list, or a fork's task listing ``acceptable_outcomes``, expects nothing we know of.

The matching rule is tau2's (``Action.compare_with_tool_call``) for expected ``actions``,
whatever the benchmark (tau2, AgentChangeBench legacy tasks, τ-bench v1): a call matches when
it has the action's name and, on the compared arguments, equal values (Python ``==`` on the
parsed JSON, so ``1 == 1.0``; a string argument is compared as the string it is, JSON text
or not, unless ``decode_json_text=True``). The compared arguments are ``compare_args`` when
the action lists them (an empty list: the name alone decides), otherwise every argument
*the call* has, so an argument the call leaves out is not compared. Calls of the assistant
and of the user (tau2's dual-control domains) count, in any order, and one call may satisfy
several actions. The requestor is not compared. AgentChangeBench ``action_sets`` are matched by their own rule: some allowed tool
was called with every expected parameter present and equal (extra parameters allowed).

Which call a row names: a satisfied action names its first satisfying call in conversation
order, except that when ``k`` earlier actions of the episode have the same first satisfying
call it names its ``k+1``-th one (if it has that many), so two identical expected actions name
two calls when two were made. An action with no satisfying call names its closest call of the
tool: fewest differing arguments, then a call no satisfied action names, then the earliest.
A write call named by no row is ``extra``.

Where a file stores tau2's own verdicts (``reward_info.action_checks``, one per expected
action, in order), ``stored_match`` holds them and ``agrees_with_stored`` says whether our
status agrees (matched or not); both are null where nothing is stored. Checks made on other
actions than the task's (renumbered task ids, a fork's ``acceptable_outcomes``) are found by
their gold actions' names and arguments, and those gold actions are then the episode's
expected actions (:mod:`accordkit.metrics._action_checks`), said once per file. Each row
also says whether its call came before an earlier action's call (``out_of_order``) and after
a hand-off to a human (``after_transfer``).

The **first divergence** of an episode is its first call, in conversation order, that
leaves the expected path:

``transfer``
    a hand-off to a human (:data:`~accordkit.metrics.tool_kinds.TRANSFER_TOOLS`) that no
    expected action asks for, made before some expected action was first satisfied (or
    with one never satisfied);
``wrong_arguments``
    a call of an expected tool that satisfies no expected action;
``unexpected_write``
    a write call of a tool no expected action names;
``repeated_write``
    a write call that satisfies an expected action but that no row names (the action was
    done already);
``out_of_order``
    a write call named by an action while an *earlier* expected write action is not yet
    satisfied;

and, when no call leaves the path but an expected action is never satisfied, ``missing``:
the first assistant message after the last call that satisfies an expected action (with
none, after the first user message), where the agent did something else. Lookups of tools
no expected action names, and reads done in another order, are not divergences.
``first_divergence_turn`` and ``divergence_reason`` are values of the episode, repeated on
each of its rows (an episode without rows has nothing to diverge from).

All positions are ``turn_idx`` (message index) and ``call_index`` (position of the call among
the episode's calls, from 0).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._internal.arrow import one_array
from .._internal.jsontext import loads
from ._action_checks import (
    MAX_DEPTH,
    LeftOut,
    StoredChecks,
    left_out,
    left_out_line,
    read_stored_checks,
    too_deep,
    with_gold_actions,
)
from ._checks import check_episode_table
from .calls import Transcripts, arrow_to_numpy, join_positions, positions_in_runs, text_codes
from .tool_kinds import TRANSFER_TOOLS, check_tool_kinds, tool_kind

__all__ = ["ACTION_COLUMNS", "SUMMARY_COLUMNS", "STATUSES", "DIVERGENCE_REASONS", "action_diff",
           "action_summary", "action_rows", "action_match", "ActionDiffWarning",
           "argument_differences", "params_differences", "LeftOut", "left_out_line"]

#: The row statuses.
STATUSES = ("matched", "wrong_arguments", "missing", "extra")
#: Why an episode first left its expected path.
DIVERGENCE_REASONS = ("wrong_arguments", "unexpected_write", "repeated_write", "out_of_order",
                      "transfer", "missing")
#: Columns of :func:`action_rows` after ``row`` (the id columns come before them in
#: :func:`accordkit.action_diff`).
ACTION_COLUMNS = ["action_index", "action_id", "name", "requestor", "kind", "status",
                  "diff_args", "expected_json", "actual_json", "turn_idx", "call_index",
                  "n_calls_same_name", "out_of_order", "after_transfer", "stored_match",
                  "agrees_with_stored", "first_divergence_turn", "divergence_reason"]
_REQUIRED = ("messages", "criteria", "reward_info_json", "episode_id", "source")
#: Stands for an argument the call (or the expected action) does not have.
_ABSENT = object()


# --------------------------------------------------------------------------- the rules


class _TooDeep(ValueError):
    """A value nests deeper than :data:`~accordkit.metrics._action_checks.MAX_DEPTH`."""


def _decoded(value: Any) -> Any:
    """``value`` with JSON text inside it (an object or list written as a string) decoded,
    at every level, without recursion; other text stays as it is.

    Raises :class:`_TooDeep` when the decoded value nests deeper than ``MAX_DEPTH``.
    """
    out: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(out, 0, value, 0)]
    while stack:
        parent, key, item, depth = stack.pop()
        if isinstance(item, str):
            text = item.strip()
            if text[:1] in ("{", "["):
                if too_deep(text, MAX_DEPTH - depth):
                    raise _TooDeep(f"JSON text in an argument nests deeper than {MAX_DEPTH} "
                                   "levels")
                try:
                    item = loads(text)
                except ValueError:
                    pass
        if isinstance(item, dict | list):
            if depth >= MAX_DEPTH:
                raise _TooDeep(f"an argument nests deeper than {MAX_DEPTH} levels")
            new: Any = dict.fromkeys(item) if isinstance(item, dict) else [None] * len(item)
            parent[key] = new
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            stack.extend((new, k, v, depth + 1) for k, v in pairs)
        else:
            parent[key] = item
    return out[0]


def _compared_keys(call_args: Mapping[str, Any],
                   compare_args: list[str] | tuple[str, ...] | None) -> list[str]:
    return list(call_args) if compare_args is None else list(compare_args)


def argument_differences(call_args: Mapping[str, Any], expected_args: Mapping[str, Any],
                         compare_args: list[str] | tuple[str, ...] | None = None, *,
                         decode_json_text: bool = False) -> list[str]:
    """The compared arguments on which a call and an expected action differ (tau2's rule).

    Compared are ``compare_args`` when given, else every argument of the call. An argument
    one side has and the other lacks differs; one neither side has does not. Values are
    compared with Python ``==`` as they are stored, as tau2 compares them; with
    ``decode_json_text=True`` a string holding JSON text (an object or a list) is compared as
    the value it encodes.

    Examples
    --------
    >>> argument_differences({"id": 1, "cabin": "economy"}, {"id": 1.0, "cabin": "business"})
    ['cabin']
    >>> argument_differences({"id": 1}, {"id": 1, "note": "x"})  # 'note' not compared
    []
    >>> argument_differences({"id": 2}, {"id": 1}, compare_args=[])
    []
    >>> argument_differences({"q": '{"a": 1}'}, {"q": '{"a":1}'})
    ['q']
    >>> argument_differences({"q": '{"a": 1}'}, {"q": '{"a":1}'}, decode_json_text=True)
    []
    """
    prepare = _decoded if decode_json_text else _same
    out = []
    for key in _compared_keys(call_args, compare_args):
        got = prepare(call_args[key]) if key in call_args else _ABSENT
        want = prepare(expected_args[key]) if key in expected_args else _ABSENT
        if got is _ABSENT and want is _ABSENT:
            continue
        if got is _ABSENT or want is _ABSENT or not got == want:
            out.append(key)
    return out


def _same(value: Any) -> Any:
    return value


def action_match(call_name: str, call_args: Mapping[str, Any], expected_name: str,
                 expected_args: Mapping[str, Any],
                 compare_args: list[str] | tuple[str, ...] | None = None, *,
                 decode_json_text: bool = False) -> bool:
    """Whether a tool call satisfies an expected action, by tau2's rule
    (:func:`argument_differences`).

    Examples
    --------
    >>> action_match("cancel", {"id": "R1"}, "cancel", {"id": "R1", "reason": "x"})
    True
    >>> action_match("cancel", {"id": "R1", "reason": "y"}, "cancel", {"id": "R1", "reason": "x"})
    False
    >>> action_match("cancel", {"id": "R1", "reason": "y"}, "cancel", {"id": "R1"},
    ...              compare_args=["id"])
    True
    """
    return call_name == expected_name and not argument_differences(
        call_args, expected_args, compare_args, decode_json_text=decode_json_text)


def params_differences(call_args: Mapping[str, Any], params: Mapping[str, Any]) -> list[str]:
    """The expected parameters of an AgentChangeBench action set that a call does not have
    with an equal value (extra call arguments are allowed).

    Examples
    --------
    >>> params_differences({"card_id": "K1", "memo": "x"}, {"card_id": "K1"})
    []
    >>> params_differences({"amount": "12"}, {"amount": 12, "to": "A"})
    ['amount', 'to']
    """
    return [k for k, v in params.items() if k not in call_args or not call_args[k] == v]


# --------------------------------------------------------------------------- expected actions


class _Expected:
    """The expected actions of every episode, flattened: units (one per expected action or
    action set, in episode and list order) and their alternatives (one per allowed tool;
    a legacy action is one alternative)."""

    def __init__(self, table: pa.Table) -> None:
        criteria = one_array(table.column("criteria"))
        sets = pc.struct_field(criteria, "action_sets")
        legacy = pc.struct_field(criteria, "actions")
        n_sets = arrow_to_numpy(pc.list_value_length(sets), 0).astype(np.int64)
        n_legacy = arrow_to_numpy(pc.list_value_length(legacy), 0).astype(np.int64)
        use_sets = n_sets > 0
        self.use_sets = use_sets
        unit_ep, unit_index, unit_id, unit_req, unit_is_set = [], [], [], [], []
        alt_unit_key, alt_name, alt_args, alt_compare, alt_subset = [], [], [], [], []
        # legacy actions (episodes without action sets)
        if n_legacy.sum():
            ep = arrow_to_numpy(pc.list_parent_indices(legacy)).astype(np.int64)
            flat = pc.list_flatten(legacy)
            keep = np.flatnonzero(~use_sets[ep])
            starts = np.r_[0, np.cumsum(n_legacy)[:-1]]
            pos = np.arange(len(ep)) - starts[ep]
            take = pa.array(keep, type=pa.int64())
            unit_ep.append(ep[keep])
            unit_index.append(pos[keep])
            unit_id += pc.struct_field(flat, "action_id").take(take).to_pylist()
            unit_req += pc.struct_field(flat, "requestor").take(take).to_pylist()
            unit_is_set.append(np.zeros(len(keep), dtype=bool))
            alt_unit_key.append(np.stack([ep[keep], pos[keep]], axis=1))
            alt_name.append(pc.struct_field(flat, "name").take(take))
            alt_args.append(pc.struct_field(flat, "arguments_json").take(take))
            alt_compare += pc.struct_field(flat, "compare_args").take(take).to_pylist()
            alt_subset.append(np.zeros(len(keep), dtype=bool))
        if n_sets.sum():
            set_ep = arrow_to_numpy(pc.list_parent_indices(sets)).astype(np.int64)
            flat_sets = pc.list_flatten(sets)
            starts = np.r_[0, np.cumsum(n_sets)[:-1]]
            set_pos = np.arange(len(set_ep)) - starts[set_ep]
            unit_ep.append(set_ep)
            unit_index.append(set_pos)
            unit_id += pc.struct_field(flat_sets, "action_id").to_pylist()
            unit_req += [None] * len(set_ep)
            unit_is_set.append(np.ones(len(set_ep), dtype=bool))
            tools = pc.struct_field(flat_sets, "allowed_tools")
            tool_set = arrow_to_numpy(pc.list_parent_indices(tools)).astype(np.int64)
            flat_tools = pc.list_flatten(tools)
            alt_unit_key.append(np.stack([set_ep[tool_set], set_pos[tool_set]], axis=1))
            alt_name.append(pc.struct_field(flat_tools, "function_name"))
            alt_args.append(pc.struct_field(flat_tools, "params_json"))
            alt_compare += [None] * len(tool_set)
            alt_subset.append(np.ones(len(tool_set), dtype=bool))
        text = pa.string()
        if unit_ep:
            ep = np.concatenate(unit_ep)
            idx = np.concatenate(unit_index)
            order = np.lexsort((idx, ep))
            self.unit_ep, self.unit_index = ep[order], idx[order]
            self.unit_id = [unit_id[i] for i in order]
            self.unit_requestor = [unit_req[i] for i in order]
            self.unit_is_set = np.concatenate(unit_is_set)[order]
            keys = np.concatenate(alt_unit_key)
            names = pa.concat_arrays([a.cast(text) for a in alt_name])
            args = pa.concat_arrays([a.cast(text) for a in alt_args])
            subset = np.concatenate(alt_subset)
            # each alternative -> its unit (units are sorted by (episode, index))
            unit_of = np.searchsorted(self.unit_ep * (1 << 32) + self.unit_index,
                                      keys[:, 0] * (1 << 32) + keys[:, 1])
            aorder = np.lexsort((np.arange(len(unit_of)), unit_of))
            self.alt_unit = unit_of[aorder]
            take = pa.array(aorder, type=pa.int64())
            self.alt_name = names.take(take)
            self.alt_args = args.take(take)
            self.alt_compare = [alt_compare[i] for i in aorder]
            self.alt_subset = subset[aorder]
        else:
            self.unit_ep = self.unit_index = np.zeros(0, np.int64)
            self.unit_id, self.unit_requestor = [], []
            self.unit_is_set = np.zeros(0, bool)
            self.alt_unit = np.zeros(0, np.int64)
            self.alt_name = self.alt_args = pa.array([], text)
            self.alt_compare = []
            self.alt_subset = np.zeros(0, bool)
        self.alt_ep = self.unit_ep[self.alt_unit]


# --------------------------------------------------------------------------- the diff


class _Pairs:
    """Every (alternative, call) pair of the same episode and tool name, evaluated once per
    distinct (expected arguments, compared keys, rule, call arguments).

    Arguments that cannot be compared (not the JSON text of an object, nested deeper than
    ``MAX_DEPTH``) make their pairs unmatched and their episodes' ``problems`` (row ->
    the reason, naming the file, record and field): the caller leaves those episodes out.
    """

    def __init__(self, exp: _Expected, tr: Transcripts, table: pa.Table, *,
                 decode_json_text: bool = False) -> None:
        (call_name, alt_name), names = text_codes(pc.fill_null(tr.call_field("name"), ""),
                                                  pc.fill_null(exp.alt_name, ""))
        self.names = names.to_pylist()
        self.call_name = call_name
        self.alt_name = alt_name
        self.problems: dict[int, LeftOut] = {}
        n_names = max(len(self.names), 1)
        alt_pos, call_pos = join_positions(exp.alt_ep * n_names + alt_name,
                                           tr.call_episode * n_names + call_name)
        self.alt, self.call = alt_pos, call_pos
        n = len(alt_pos)
        self.match = np.zeros(n, dtype=bool)
        self.n_diff = np.zeros(n, dtype=np.int64)
        self.detail: list[tuple[str, str | None, str | None]] = []
        self.detail_of = np.zeros(n, dtype=np.int64)
        if not n:
            return
        (call_args,), call_texts = text_codes(tr.call_arguments)
        (alt_args,), alt_texts = text_codes(pc.fill_null(exp.alt_args, "{}"))
        compare_codes: dict[Any, int] = {}
        alt_cmp = np.array([compare_codes.setdefault(
            None if c is None else tuple(c), len(compare_codes)) for c in exp.alt_compare],
            dtype=np.int64)
        compare_of = {code: key for key, code in compare_codes.items()}
        n_cmp = max(len(compare_codes), 1)
        pa_alt, pa_call = alt_pos, call_pos
        key = (((alt_args[pa_alt] * n_cmp + alt_cmp[pa_alt]) * 2
                + exp.alt_subset[pa_alt]) * (len(call_texts) + 1) + call_args[pa_call])
        uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        first_alt, first_call = pa_alt[first], pa_call[first]
        alt_text = alt_texts.take(pa.array(alt_args[first_alt])).to_pylist()
        call_text = call_texts.take(pa.array(call_args[first_call])).to_pylist()
        parsed: dict[str, Any] = {}

        def load(text: str) -> dict[str, Any]:
            value = parsed.get(text)
            if value is None:
                if too_deep(text):
                    raise _TooDeep(f"nested deeper than {MAX_DEPTH} levels; not compared")
                value = loads(text)
                if not isinstance(value, dict):
                    raise ValueError("expected the JSON text of an object")
                parsed[text] = value
            return value

        match = np.zeros(len(uniq), dtype=bool)
        n_diff = np.zeros(len(uniq), dtype=np.int64)
        failed: dict[int, tuple[str, str]] = {}   # unique pair -> (side, reason)
        for u in range(len(uniq)):
            a = int(first_alt[u])
            side = "expected"
            try:
                expected = load(alt_text[u])
                side = "call"
                got = load(call_text[u])
                side = "both"
                if exp.alt_subset[a]:
                    diff = params_differences(got, expected)
                else:
                    diff = argument_differences(got, expected, compare_of[int(alt_cmp[a])],
                                                decode_json_text=decode_json_text)
                detail = ("", None, None)
                if diff:
                    want = {k: expected[k] for k in diff if k in expected}
                    have = {k: got[k] for k in diff if k in got}
                    detail = (", ".join(diff), json.dumps(want, ensure_ascii=False),
                              json.dumps(have, ensure_ascii=False))
            except (ValueError, RecursionError) as exc:
                failed[u] = (side, str(exc) if isinstance(exc, ValueError)
                             else "nested too deeply to compare")
                diff, detail = [], ("", None, None)
            match[u] = not diff and u not in failed
            n_diff[u] = len(diff)
            self.detail.append(detail)
        self.match = match[inverse]
        self.n_diff = n_diff[inverse]
        self.detail_of = inverse
        if failed:
            self._name_problems(failed, inverse, exp, tr, table)

    def _name_problems(self, failed: dict[int, tuple[str, str]], inverse: np.ndarray,
                       exp: _Expected, tr: Transcripts, table: pa.Table) -> None:
        """One problem per episode with a pair that could not be compared, naming the field."""
        bad = np.flatnonzero(np.isin(inverse, np.array(sorted(failed), dtype=np.int64)))
        for p in bad.tolist():
            a, c = int(self.alt[p]), int(self.call[p])
            row = int(exp.alt_ep[a])
            if row in self.problems:
                continue
            side, reason = failed[int(inverse[p])]
            unit = int(exp.alt_unit[a])
            if side == "call" or (side == "both" and "JSON text in" in reason):
                m = int(tr.call_message[c] - tr.msg_start[row])
                where = f"messages[{m}].tool_calls[{int(tr.call_index[c])}].arguments_json"
            elif exp.unit_is_set[unit]:
                where = f"criteria.action_sets[{int(exp.unit_index[unit])}].allowed_tools"
            else:
                where = f"criteria.actions[{int(exp.unit_index[unit])}].arguments_json"
            self.problems[row] = left_out(table, row, where, reason)


class ActionDiffWarning(UserWarning):
    """What the action diff noticed in the data: stored checks made on other actions than
    the task's (their gold actions were used), or episodes it left out (named)."""


#: How many left-out episodes a warning names (the count covers all).
_NAMED = 5


def action_rows(table: pa.Table, *, tool_kinds: Mapping[str, str] | None = None,
                decode_json_text: bool = False,
                errors: Literal["raise", "skip"] = "raise") -> pd.DataFrame:
    """The action diff of every episode of ``table`` (see the module docstring).

    Parameters
    ----------
    table : pyarrow.Table
        Canonical episodes.
    tool_kinds : mapping of str to str, optional
        Kinds (``"read"``, ``"write"``, ``"generic"``) for tools the name rule of
        :func:`~accordkit.metrics.tool_kinds.tool_kind` gets wrong.
    decode_json_text : bool
        Compare a string argument holding JSON text (an object or a list) as the value it
        encodes. Off by default: tau2 compares the strings as stored.
    errors : {"raise", "skip"}
        What an episode whose diff cannot be made does (stored checks that cannot be read,
        arguments that are not JSON objects or nest deeper than ``MAX_DEPTH`` levels):
        ``"raise"`` a ``ValueError`` naming the file, record and field; ``"skip"`` leave
        that episode out, named in one :class:`ActionDiffWarning` and in the frame's
        ``attrs["left_out"]``, and diff the others.

    Returns
    -------
    pandas.DataFrame
        ``row`` (the episode's position in ``table``) then :data:`ACTION_COLUMNS`. With an
        episode left out, ``attrs["left_out"]`` lists each (in table order) as a dict:
        ``source``, ``record`` (its episode id), ``field`` (None when no one field is to
        blame) and ``reason``.

    Raises
    ------
    ValueError
        With ``errors="raise"``, naming the file, record and field of the first episode
        whose diff cannot be made.

    Warns
    -----
    ActionDiffWarning
        Once per file whose stored checks were made on other actions than the tasks' (see
        :mod:`accordkit.metrics._action_checks`): ``N of M simulations store checks made on
        other tasks than this file's``; their stored gold actions are their expected
        actions. With ``errors="skip"``, once naming the episodes left out.

    Examples
    --------
    >>> from accordkit.testing import build_episode, criteria, episode_table, message
    >>> rec = build_episode([message("user", "Cancel R1"),
    ...                      message("assistant", calls=[("cancel", {"id": "R2"})])],
    ...                     criteria=criteria(actions=[("cancel", {"id": "R1"})]))
    >>> action_rows(episode_table(rec))[["status", "diff_args", "expected_json", "actual_json"]]
                status diff_args expected_json   actual_json
    0  wrong_arguments        id  {"id": "R1"}  {"id": "R2"}
    """
    check_episode_table(table, _REQUIRED, what="the action diff")
    kinds_given = check_tool_kinds(tool_kinds)
    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', got {errors!r}")
    sets = pc.struct_field(one_array(table.column("criteria")), "action_sets")
    stored = read_stored_checks(table, arrow_to_numpy(pc.list_value_length(sets), 0) > 0)
    if stored.gold:
        _warn_gold(table, stored)
        table = with_gold_actions(table, stored.gold)
    problems: dict[int, LeftOut] = dict(stored.problems)
    frame, found = _isolated(table, lambda part, rows: _diff_rows(
        part, rows, stored, kinds_given, decode_json_text))
    problems.update({row: _failure(table, row, p) if isinstance(p, BaseException) else p
                     for row, p in found.items()})
    if problems:
        if errors == "raise":
            row = min(problems)
            cause = found.get(row)
            if isinstance(cause, BaseException):
                raise ValueError(str(problems[row])) from cause
            raise ValueError(str(problems[row]))
        _warn_left_out(problems)
        frame = frame[~frame["row"].isin(list(problems))].reset_index(drop=True)
        frame.attrs["left_out"] = [problems[r].as_dict() for r in sorted(problems)]
    return frame


def _failure(table: pa.Table, row: int, exc: BaseException) -> LeftOut:
    """An episode the diff failed on with an unexpected ``exc`` (no one field to blame)."""
    return left_out(table, row, None,
                    f"the action diff could not be made ({type(exc).__name__}: {exc})")


def _diff_rows(table: pa.Table, rows: np.ndarray | None, stored: StoredChecks,
               kinds_given: dict[str, str], decode_json_text: bool
               ) -> tuple[pd.DataFrame, dict[int, Any]]:
    """The rows of ``table`` (the episodes ``rows`` of the whole table, or all of it), and
    the problems of the episodes that could not be compared (positions in ``table``)."""
    exp = _Expected(table)
    tr = Transcripts(table)
    pairs = _Pairs(exp, tr, table, decode_json_text=decode_json_text)
    write_name = np.array([tool_kind(name, kinds_given) == "write" for name in pairs.names]
                          + [False], dtype=bool)
    call_is_write = write_name[pairs.call_name]
    transfer_names = {i for i, name in enumerate(pairs.names) if name in TRANSFER_TOOLS}
    matches = stored.matches if rows is None else {
        k: stored.matches[int(r)] for k, r in enumerate(rows) if int(r) in stored.matches}
    builder = _RowBuilder(table, exp, tr, pairs, call_is_write, transfer_names, kinds_given,
                          matches)
    return builder.frame(), pairs.problems


def _isolated(table: pa.Table, run: Any) -> tuple[pd.DataFrame, dict[int, Any]]:
    """``run`` over the whole table; when it fails, over halves, and so on down to single
    episodes, so that an episode it cannot handle is a problem of its own (the exception)
    and the others get their rows. Returns the rows (``row`` in ``table``) and the problems.
    """
    try:
        return run(table, None)
    except (KeyboardInterrupt, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - narrowed below, episode by episode
        if not table.num_rows:
            raise
        first = exc
    frames: list[pd.DataFrame] = []
    problems: dict[int, Any] = {}
    rows = np.arange(table.num_rows, dtype=np.int64)
    half = len(rows) // 2
    todo = [rows[half:], rows[:half]] if len(rows) > 1 else []
    if len(rows) == 1:
        problems[0] = first
    while todo:
        rows = todo.pop()
        try:
            frame, found = run(table.take(pa.array(rows)), rows)
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - narrowed to one episode
            if len(rows) == 1:
                problems[int(rows[0])] = exc
            else:
                half = len(rows) // 2
                todo += [rows[half:], rows[:half]]
            continue
        frame["row"] = rows[frame["row"].to_numpy()]
        frames.append(frame)
        problems.update({int(rows[k]): v for k, v in found.items()})
    frame = pd.concat(frames, ignore_index=True) if frames else run(table.slice(0, 0), None)[0]
    order = np.argsort(frame["row"].to_numpy(), kind="stable")
    return frame.iloc[order].reset_index(drop=True), problems


def _warn_gold(table: pa.Table, stored: StoredChecks) -> None:
    """Once per file: how many of its simulations store checks made on other actions than
    their task's, whose gold actions the diff uses instead."""
    sources = table.column("source").to_pylist()
    per_file: dict[Any, list[int]] = {}
    for row, src in enumerate(sources):
        per_file.setdefault(src, []).append(row)
    for src, rows in per_file.items():
        other = [r for r in rows if r in stored.gold and r not in stored.no_task_actions]
        empty = [r for r in rows if r in stored.no_task_actions]
        if other:
            warnings.warn(
                f"{src}: {len(other)} of {len(rows)} simulations store checks made on other "
                "tasks than this file's (reward_info.action_checks name other actions than "
                "the task their task_id names: renumbered task ids?); the action diff takes "
                "the evaluator's stored gold actions (action_checks[i].action) as their "
                "expected actions", ActionDiffWarning, stacklevel=4)
        if empty:
            warnings.warn(
                f"{src}: {len(empty)} of {len(rows)} simulations store action checks while "
                "their task lists no expected actions (a fork's acceptable_outcomes, or a "
                "task missing from the file); the action diff takes the evaluator's stored "
                "gold actions (action_checks[i].action) as their expected actions",
                ActionDiffWarning, stacklevel=4)


def _warn_left_out(problems: dict[int, LeftOut]) -> None:
    """One warning naming the episodes the diff left out, and why."""
    rows = sorted(problems)
    named = [str(problems[r]) for r in rows[:_NAMED]]
    more = f"; and {len(rows) - _NAMED} more" if len(rows) > _NAMED else ""
    warnings.warn(f"the action diff left out {len(rows)} episode(s) it could not make (their "
                  f"other scores stand): {'; '.join(named)}{more}", ActionDiffWarning,
                  stacklevel=4)


_INF = np.int64(1 << 40)


def _excl_cummax(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """For each position, the max of ``values`` at the earlier positions of its group
    (groups are contiguous and increasing; -1 where there is none). ``values`` >= -1."""
    if not len(values):
        return values.copy()
    shift = np.int64(1) << 42
    keyed = groups.astype(np.int64) * shift + (values + 1)
    running = np.maximum.accumulate(keyed)
    prev = np.r_[np.int64(-1), running[:-1]]
    out = prev - groups.astype(np.int64) * shift - 1
    starts = np.r_[True, groups[1:] != groups[:-1]]
    out[starts] = -1
    return out


class _RowBuilder:
    """The rows of every episode at once, with numpy (the rules in the module docstring)."""

    def __init__(self, table: pa.Table, exp: _Expected, tr: Transcripts, pairs: _Pairs,
                 call_is_write: np.ndarray, transfer_names: set[int],
                 overrides: dict[str, str], stored: dict[int, list[bool]]) -> None:
        self.table, self.exp, self.tr, self.pairs = table, exp, tr, pairs
        self.stored_matches = stored
        self.is_write = call_is_write
        self.is_transfer = np.isin(pairs.call_name, np.array(sorted(transfer_names),
                                                             dtype=np.int64))
        self.overrides = overrides
        self._kinds: dict[Any, str] = {}

    def kind(self, name: str | None) -> str:
        """The kind of a tool, by name (the caller's overrides first)."""
        kind = self._kinds.get(name)
        if kind is None:
            kind = self._kinds[name] = tool_kind(name, self.overrides)
        return kind

    def frame(self) -> pd.DataFrame:
        exp, tr, pairs = self.exp, self.tr, self.pairs
        n_units, n_calls = len(exp.unit_ep), len(tr.call_episode)
        call_ep, call_order = tr.call_episode, tr.call_order
        p_unit = exp.alt_unit[pairs.alt]
        p_call = pairs.call
        p_order = call_order[p_call] if len(p_call) else np.zeros(0, np.int64)
        # ---- pass 1: satisfied actions, and the call each names
        hit = np.flatnonzero(pairs.match)
        hit = hit[np.lexsort((p_order[hit], p_unit[hit]))]
        hit_unit = p_unit[hit]
        n_hits = np.bincount(hit_unit, minlength=n_units)
        hit_start = np.r_[0, np.cumsum(n_hits)[:-1]]
        matched = n_hits > 0
        fm_order = np.full(n_units, _INF)
        fm_call = np.full(n_units, -1, np.int64)
        first_hit = hit[hit_start[matched]]
        fm_order[matched] = p_order[first_hit]
        fm_call[matched] = p_call[first_hit]
        # the k-th satisfying call, k = earlier actions whose first satisfying call is the same
        mu = np.flatnonzero(matched)
        rank = np.zeros(n_units, np.int64)
        if len(mu):
            by_first = mu[np.lexsort((mu, fm_call[mu]))]
            rank[by_first] = positions_in_runs(fm_call[by_first])
        use = np.where(rank < n_hits, rank, 0)
        chosen = np.full(n_units, -1, np.int64)
        chosen[matched] = hit[hit_start[matched] + use[matched]]
        named_by_match = np.zeros(n_calls, bool)
        named_by_match[p_call[chosen[matched]]] = True
        # ---- pass 2: the others name their closest call
        rest = np.flatnonzero(~matched[p_unit]) if len(p_unit) else np.zeros(0, np.int64)
        if len(rest):
            rest = rest[np.lexsort((p_order[rest], named_by_match[p_call[rest]],
                                    pairs.n_diff[rest], p_unit[rest]))]
            firsts = rest[np.r_[True, p_unit[rest][1:] != p_unit[rest][:-1]]]
            chosen[p_unit[firsts]] = firsts
        has_call = chosen >= 0
        unit_call = np.where(has_call, p_call[np.maximum(chosen, 0)] if len(p_call) else -1, -1)
        named_any = np.zeros(n_calls, bool)
        named_any[unit_call[has_call]] = True
        status = np.where(matched, 0, np.where(has_call, 1, 2))
        # ---- per call and per episode
        n_ep = self.table.num_rows
        transfer_at = np.full(n_ep, _INF)
        if self.is_transfer.any():
            np.minimum.at(transfer_at, call_ep[self.is_transfer], call_order[self.is_transfer])
        div_order, div_reason = self._divergence(p_unit, p_call, fm_order, matched,
                                                 unit_call, named_any, transfer_at)
        # ---- unit rows
        u_ep = exp.unit_ep
        order = np.where(has_call, call_order[np.maximum(unit_call, 0)] if n_calls else -1, -1)
        prev = _excl_cummax(np.where(matched, order, -1), u_ep)
        out_of_order = np.where(matched, order < prev, False)
        # ---- extra rows: writes no row names, of episodes whose task is known
        known = self._task_known()
        extra = np.flatnonzero(self.is_write & ~named_any & known[call_ep]) if n_calls \
            else np.zeros(0, np.int64)
        return self._assemble(u_ep, status, chosen, unit_call, order, out_of_order, extra,
                              transfer_at, div_order, div_reason, matched)

    def _task_known(self) -> np.ndarray:
        """Per episode: whether its task's expected actions are known (criteria recorded,
        and not ``actions: null`` without action sets: a fork's task that lists several
        acceptable outcomes instead)."""
        criteria = one_array(self.table.column("criteria"))
        known = arrow_to_numpy(criteria.is_valid(), False).astype(bool)
        no_actions = ~arrow_to_numpy(pc.struct_field(criteria, "actions").is_valid(), False).astype(bool)
        return known & ~(no_actions & ~self.exp.use_sets)

    # ------------------------------------------------------------------ divergence
    def _divergence(self, p_unit: np.ndarray, p_call: np.ndarray, fm_order: np.ndarray,
                    matched: np.ndarray, unit_call: np.ndarray, named_any: np.ndarray,
                    transfer_at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per episode: the call order of the first divergence (-1: none) and its reason
        (an index into :data:`DIVERGENCE_REASONS`, -1: none)."""
        exp, tr, pairs = self.exp, self.tr, self.pairs
        n_ep, n_calls = self.table.num_rows, len(tr.call_episode)
        call_ep, call_order = tr.call_episode, tr.call_order
        on_path = np.zeros(n_calls, bool)
        on_path[p_call[pairs.match]] = True
        in_pairs = np.zeros(n_calls, bool)
        in_pairs[p_call] = True
        u_ep = exp.unit_ep
        # the latest first-satisfaction of an expected action, per episode (_INF: never)
        latest = np.full(n_ep, -1, np.int64)
        if len(u_ep):
            np.maximum.at(latest, u_ep, fm_order)
        reason = np.full(n_calls, -1, np.int64)
        transfer = self.is_transfer & ~on_path & (latest[call_ep] > call_order)
        reason[transfer] = DIVERGENCE_REASONS.index("transfer")
        free = reason < 0
        reason[free & ~on_path & in_pairs & ~self.is_transfer] = \
            DIVERGENCE_REASONS.index("wrong_arguments")
        reason[free & ~on_path & ~in_pairs & self.is_write] = \
            DIVERGENCE_REASONS.index("unexpected_write")
        reason[free & on_path & self.is_write & ~named_any] = \
            DIVERGENCE_REASONS.index("repeated_write")
        # out of order: a write call named by action q while an earlier expected write
        # action is not yet satisfied
        self._unit_names()
        is_write_code = np.array([self.kind(n) == "write" for n in pairs.names] + [False])
        write_unit = is_write_code[np.where(self._first_alt >= 0,
                                            pairs.alt_name[np.maximum(self._first_alt, 0)]
                                            if len(pairs.alt_name) else -1, -1)]
        pending = _excl_cummax(np.where(write_unit, np.minimum(fm_order, _INF), -1), u_ep)
        first_q = np.full(n_calls, np.iinfo(np.int64).max)
        mu = np.flatnonzero(matched)
        if len(mu):
            np.minimum.at(first_q, unit_call[mu], mu)
        named_calls = np.flatnonzero(free & on_path & self.is_write & named_any
                                     & (first_q < np.iinfo(np.int64).max))
        late = named_calls[pending[first_q[named_calls]] > call_order[named_calls]]
        reason[late] = DIVERGENCE_REASONS.index("out_of_order")
        div_order = np.full(n_ep, -1, np.int64)
        div_reason = np.full(n_ep, -1, np.int64)
        flagged = np.flatnonzero(reason >= 0)
        if len(flagged):
            firsts = flagged[np.r_[True, call_ep[flagged][1:] != call_ep[flagged][:-1]]]
            div_order[call_ep[firsts]] = firsts   # a global call position, for now
            div_reason[call_ep[firsts]] = reason[firsts]
        # nothing left the path, but an expected action was never satisfied
        unmet = np.zeros(n_ep, bool)
        if len(u_ep):
            unmet[u_ep[~matched]] = True
        missing = unmet & (div_reason < 0)
        div_reason[missing] = DIVERGENCE_REASONS.index("missing")
        self.div_missing_turn = self._next_agent_turns(on_path)
        return div_order, div_reason

    def _next_agent_turns(self, on_path: np.ndarray) -> np.ndarray:
        """Per episode: turn_idx of the first assistant message after the last call on the
        path (with none: after the first user message); -1 when there is none."""
        tr = self.tr
        n_ep = self.table.num_rows
        after = tr.msg_start.astype(np.int64).copy()
        users = np.flatnonzero(tr.role_is("user"))
        first_user = np.full(n_ep, np.iinfo(np.int64).max)
        if len(users):
            np.minimum.at(first_user, tr.msg_episode[users], users)
        has_user = first_user < np.iinfo(np.int64).max
        after[has_user] = first_user[has_user] + 1
        path_calls = np.flatnonzero(on_path)
        if len(path_calls):
            last = np.full(n_ep, -1, np.int64)
            np.maximum.at(last, tr.call_episode[path_calls], tr.call_message[path_calls])
            after[last >= 0] = last[last >= 0] + 1
        asst = np.flatnonzero(tr.msg_is_assistant)
        out = np.full(n_ep, -1, np.int64)
        if len(asst):
            k = np.searchsorted(asst, after)
            ok = k < len(asst)
            pos = asst[np.minimum(k, len(asst) - 1)]
            ends = tr.msg_start + tr.msg_counts
            ok &= pos < ends
            out[ok] = tr.msg_turn_idx[pos[ok]]
        return out

    def _unit_names(self) -> list[str]:
        """The first allowed tool's name of every unit (\"\" for a set with none)."""
        exp = self.exp
        if not hasattr(self, "_first_alt"):
            first = np.searchsorted(exp.alt_unit, np.arange(len(exp.unit_ep)))
            ok = (first < len(exp.alt_unit))
            ok[ok] &= exp.alt_unit[first[ok]] == np.flatnonzero(ok)
            self._first_alt = np.where(ok, first, -1)
            names = exp.alt_name.to_pylist()
            self._alt_names = names
            self._unit_first_name = [names[a] if a >= 0 else "" for a in self._first_alt]
        return self._unit_first_name

    # ------------------------------------------------------------------ assembly
    def _assemble(self, u_ep, status, chosen, unit_call, order, out_of_order, extra,
                  transfer_at, div_order, div_reason, matched) -> pd.DataFrame:
        exp, tr, pairs = self.exp, self.tr, self.pairs
        self._unit_names()
        alt_names, first_alt = self._alt_names, self._first_alt
        n_units = len(u_ep)
        chosen_alt = np.where(chosen >= 0, pairs.alt[np.maximum(chosen, 0)]
                              if len(pairs.alt) else -1, first_alt)
        names = [alt_names[a] if a >= 0 else "" for a in chosen_alt.tolist()]
        open_sets = np.flatnonzero(exp.unit_is_set & (chosen < 0))
        if len(open_sets):
            lows = np.searchsorted(exp.alt_unit, open_sets, side="left").tolist()
            highs = np.searchsorted(exp.alt_unit, open_sets, side="right").tolist()
            for u, lo, hi in zip(open_sets.tolist(), lows, highs, strict=True):
                names[u] = " | ".join(alt_names[lo:hi])
        # differing arguments and values
        diff: list[Any] = [None] * n_units
        want: list[Any] = [None] * n_units
        have: list[Any] = [None] * n_units
        alt_args = exp.alt_args
        for u in np.flatnonzero(status == 0).tolist():
            diff[u] = ""
        for u in np.flatnonzero(status == 1).tolist():
            diff[u], want[u], have[u] = pairs.detail[int(pairs.detail_of[chosen[u]])]
        missing_units = np.flatnonzero((status == 2) & (first_alt >= 0))
        if len(missing_units):
            texts = alt_args.take(pa.array(first_alt[missing_units])).to_pylist()
            for u, text in zip(missing_units.tolist(), texts, strict=True):
                want[u] = text if text is not None else "{}"
        # calls per (episode, tool name)
        n_names = max(len(pairs.names), 1)
        call_key = tr.call_episode * n_names + pairs.call_name
        keys, counts = np.unique(call_key, return_counts=True)

        def count(ep: np.ndarray, code: np.ndarray) -> np.ndarray:
            """Calls of the episode with that tool name (0 for none, one per entry)."""
            out = np.zeros(len(ep), np.int64)
            if not len(keys) or not len(ep):
                return out
            key = ep * n_names + code
            k = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
            hit = (code >= 0) & (keys[k] == key)
            out[hit] = counts[k[hit]]
            return out

        u_code = np.where(chosen >= 0, pairs.call_name[np.maximum(unit_call, 0)]
                          if len(pairs.call_name) else -1,
                          np.where(first_alt >= 0, pairs.alt_name[np.maximum(first_alt, 0)]
                                   if len(pairs.alt_name) else -1, -1))
        u_same = count(u_ep, u_code)
        # stored checks
        stored = self._stored(matched)
        # extra rows
        e_ep = tr.call_episode[extra]
        e_names = pairs.call_name[extra]
        call_args = tr.call_arguments.take(pa.array(extra, type=pa.int64())).to_pylist()
        req = tr.call_field("requestor").take(pa.array(extra, type=pa.int64())).to_pylist()
        e_same = count(e_ep, e_names)
        # columns, units first then extras, then put in (episode, kind, position) order
        ep = np.r_[u_ep, e_ep].astype(np.int64)
        is_extra = np.r_[np.zeros(n_units, bool), np.ones(len(extra), bool)]
        call = np.r_[unit_call, extra].astype(np.int64)
        has_call = call >= 0
        corder = np.where(has_call, tr.call_order[np.maximum(call, 0)] if len(tr.call_order)
                          else -1, -1)
        position = np.where(is_extra, corder, np.r_[exp.unit_index, np.zeros(len(extra),
                                                                             np.int64)])
        sort = np.lexsort((position, is_extra, ep))
        turn = np.where(has_call, tr.call_turn_idx[np.maximum(call, 0)]
                        if len(tr.call_turn_idx) else -1, -1)
        after = np.where(has_call, corder > transfer_at[ep], False)
        div_turn = np.full(self.table.num_rows, -1, np.int64)
        found = div_order >= 0
        div_turn[found] = tr.call_turn_idx[div_order[found]]
        missing = div_reason == DIVERGENCE_REASONS.index("missing")
        div_turn[missing] = self.div_missing_turn[missing]
        reason_text = np.array([None, *DIVERGENCE_REASONS], dtype=object)[div_reason + 1]
        status_text = np.array(STATUSES, dtype=object)
        e_name_text = [pairs.names[c] for c in e_names.tolist()]
        all_names = names + e_name_text
        kind_of_code = np.array([self.kind(n) for n in pairs.names] + ["generic"],
                                dtype=object)
        u_kind_code = np.where(first_alt >= 0, pairs.alt_name[np.maximum(first_alt, 0)]
                               if len(pairs.alt_name) else -1, -1)
        kinds = kind_of_code[np.r_[u_kind_code, e_names].astype(np.int64)]
        cols = {
            "row": ep,
            "action_index": _ints(np.r_[exp.unit_index, np.full(len(extra), -1)],
                                  ~is_extra),
            "action_id": np.array([*exp.unit_id, *([None] * len(extra))], dtype=object),
            "name": np.array(all_names, dtype=object),
            "requestor": np.array([*exp.unit_requestor, *req], dtype=object),
            "kind": kinds,
            "status": status_text[np.r_[status, np.full(len(extra), 3)]],
            "diff_args": np.array([*diff, *([None] * len(extra))], dtype=object),
            "expected_json": np.array([*want, *([None] * len(extra))], dtype=object),
            "actual_json": np.array([*have, *call_args], dtype=object),
            "turn_idx": _ints(turn, has_call),
            "call_index": _ints(corder, has_call),
            "n_calls_same_name": np.r_[u_same, e_same].astype(np.int64),
            "out_of_order": _bools(np.r_[out_of_order, np.zeros(len(extra), bool)],
                                   np.r_[matched, np.zeros(len(extra), bool)]),
            "after_transfer": _bools(after, has_call),
            "stored_match": _bools(np.r_[stored[0], np.zeros(len(extra), bool)],
                                   np.r_[stored[1], np.zeros(len(extra), bool)]),
            "agrees_with_stored": _bools(np.r_[stored[0] == matched,
                                               np.zeros(len(extra), bool)],
                                         np.r_[stored[1], np.zeros(len(extra), bool)]),
            "first_divergence_turn": _ints(div_turn[ep], div_turn[ep] >= 0),
            "divergence_reason": reason_text[ep],
        }
        out = pd.DataFrame({k: v[sort] if isinstance(v, np.ndarray) else v.take(sort)
                            for k, v in cols.items()})
        return out.reset_index(drop=True)

    def _stored(self, matched: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """tau2's stored ``action_match`` of each unit, and whether one is stored (rows
        whose checks line up with their expected actions: :func:`read_stored_checks`)."""
        exp = self.exp
        n_units = len(exp.unit_ep)
        value = np.zeros(n_units, bool)
        known = np.zeros(n_units, bool)
        if not self.stored_matches or not n_units:
            return value, known
        bounds = np.searchsorted(exp.unit_ep, np.arange(self.table.num_rows + 1))
        for ep, checks in self.stored_matches.items():
            lo, hi = int(bounds[ep]), int(bounds[ep + 1])
            if exp.use_sets[ep] or hi - lo != len(checks):
                continue
            value[lo:hi] = checks
            known[lo:hi] = True
        return value, known


def _ints(values: np.ndarray, valid: np.ndarray) -> pd.arrays.IntegerArray:
    return pd.arrays.IntegerArray(np.asarray(values, dtype=np.int64), ~np.asarray(valid, bool))


def _bools(values: np.ndarray, valid: np.ndarray) -> pd.arrays.BooleanArray:
    return pd.arrays.BooleanArray(np.asarray(values, dtype=bool), ~np.asarray(valid, bool))


# --------------------------------------------------------------------------- public faces

#: Columns of :func:`action_summary` after ``episode_id``.
SUMMARY_COLUMNS = ["n_expected", "n_matched", "n_wrong_arguments", "n_missing", "n_extra",
                   "all_matched", "first_divergence_turn", "divergence_reason",
                   "checks_agree"]


def action_diff(ds: Any, *, tool_kinds: Mapping[str, str] | None = None,
                decode_json_text: bool = False,
                errors: Literal["raise", "skip"] = "raise") -> pd.DataFrame:
    """The action diff of every episode: expected actions against the calls made.

    One row per expected action (``matched``, ``wrong_arguments`` or ``missing``) and one
    per write call no expected action accounts for (``extra``), computed from the transcript
    and the task's expected actions, never copied from stored checks; the rules are in
    ``docs/why-it-failed.md`` and :mod:`accordkit.metrics.action_diff`.

    Parameters
    ----------
    ds : datasets.Dataset or pyarrow.Table
        Canonical episodes (:func:`accordkit.load`).
    tool_kinds : mapping of str to str, optional
        ``{"tool": "read" | "write" | "generic"}`` for tools the name rule gets wrong.
    decode_json_text : bool
        Compare a string argument holding JSON text as the value it encodes (off: the
        strings are compared as stored, as tau2 does).
    errors : {"raise", "skip"}
        An episode whose diff cannot be made (unreadable stored checks, arguments that are
        not JSON objects or nest deeper than 100 levels): ``"raise"`` a ``ValueError``
        naming its file, record and field, or ``"skip"`` it, named in one
        :class:`ActionDiffWarning` and in ``attrs["left_out"]`` of the frame, and diff the
        others (:func:`accordkit.score` does).

    Returns
    -------
    pandas.DataFrame
        The id columns (:data:`accordkit.ID_COLUMNS`) then :data:`ACTION_COLUMNS`, episodes
        in order, expected actions in order then extra calls in conversation order. When
        episodes were left out, ``attrs["left_out"]`` lists them, one dict each:
        ``source``, ``record`` (the episode id), ``field`` (or None) and ``reason``.

    Warns
    -----
    ActionDiffWarning
        Once per file whose stored ``action_checks`` were made on other actions than its
        tasks' ("N of M simulations store checks made on other tasks than this file's"):
        those episodes' expected actions are the evaluator's stored gold actions.

    Examples
    --------
    >>> from accordkit.testing import build_episode, criteria, episode_table, message
    >>> rec = build_episode([message("user", "Lock card K1"),
    ...                      message("assistant", calls=[("lock_card", {"card_id": "K1"})])],
    ...                     criteria=criteria(actions=[("lock_card", {"card_id": "K1"}),
    ...                                                ("log_event", {})]))
    >>> action_diff(episode_table(rec))[["action_index", "name", "status", "turn_idx"]]
       action_index       name   status  turn_idx
    0             0  lock_card  matched         1
    1             1  log_event  missing      <NA>
    """
    from .._internal.arrow import arrow_table
    from ..names import ID_COLUMNS

    table = ds if isinstance(ds, pa.Table) else arrow_table(ds)
    rows = action_rows(table, tool_kinds=tool_kinds, decode_json_text=decode_json_text,
                       errors=errors)
    ids = {name: table.column(name).to_pandas() for name in ID_COLUMNS}
    head = pd.DataFrame(ids).iloc[rows["row"].to_numpy()].reset_index(drop=True)
    frame = pd.concat([head, rows.drop(columns="row").reset_index(drop=True)], axis=1)
    if rows.attrs.get("left_out"):
        frame.attrs["left_out"] = list(rows.attrs["left_out"])
    return frame


def action_summary(diff: pd.DataFrame) -> pd.DataFrame:
    """One row per episode of an action diff: counts per status and the first divergence.

    Parameters
    ----------
    diff : pandas.DataFrame
        :func:`action_diff` (or the ``action`` level of a score store).

    Returns
    -------
    pandas.DataFrame
        ``episode_id`` then :data:`SUMMARY_COLUMNS`: ``n_expected`` expected actions,
        ``n_matched``, ``n_wrong_arguments``, ``n_missing``, ``n_extra`` (unrequested
        writes), ``all_matched`` (every expected action matched and no extra write),
        ``first_divergence_turn``, ``divergence_reason`` and ``checks_agree`` (every stored
        tau2 check agrees with our status; NA where none is stored).

    Examples
    --------
    >>> import pandas as pd
    >>> diff = pd.DataFrame({"episode_id": ["e", "e"], "status": ["matched", "extra"],
    ...                      "agrees_with_stored": pd.array([True, None], "boolean"),
    ...                      "first_divergence_turn": pd.array([4, 4], "Int64"),
    ...                      "divergence_reason": ["unexpected_write"] * 2})
    >>> action_summary(diff)[["n_expected", "n_extra", "all_matched", "checks_agree"]]
       n_expected  n_extra  all_matched  checks_agree
    0           1        1        False          True
    """
    missing = [c for c in ("episode_id", "status") if c not in diff.columns]
    if missing:
        raise ValueError(f"action_summary needs an action diff (columns {missing} missing)")
    counts = pd.crosstab(diff["episode_id"], diff["status"]).reindex(columns=list(STATUSES),
                                                                     fill_value=0)
    order = pd.unique(diff["episode_id"])
    counts = counts.reindex(order, fill_value=0)
    out = pd.DataFrame({"episode_id": order})
    for status, col in zip(STATUSES, ("n_matched", "n_wrong_arguments", "n_missing",
                                      "n_extra"), strict=True):
        out[col] = counts[status].to_numpy().astype(np.int64)
    out["n_expected"] = out["n_matched"] + out["n_wrong_arguments"] + out["n_missing"]
    out["all_matched"] = (out["n_matched"] == out["n_expected"]) & (out["n_extra"] == 0)
    first = diff.drop_duplicates("episode_id").set_index("episode_id")
    for col in ("first_divergence_turn", "divergence_reason"):
        out[col] = (first[col].reindex(order).to_numpy() if col in first.columns
                    else pd.NA)
    out["first_divergence_turn"] = out["first_divergence_turn"].astype("Int64")
    if "agrees_with_stored" in diff.columns:
        agree = diff["agrees_with_stored"].astype("boolean")
        known = agree.notna().groupby(diff["episode_id"]).any().reindex(order)
        all_ok = agree.fillna(True).groupby(diff["episode_id"]).all().reindex(order)
        out["checks_agree"] = pd.array(np.where(known.to_numpy(), all_ok.to_numpy(), None),
                                       dtype="boolean")
    else:
        out["checks_agree"] = pd.array([None] * len(out), dtype="boolean")
    return out[["episode_id", *SUMMARY_COLUMNS]]
