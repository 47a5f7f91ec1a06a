"""TCRR: identities, window and batch rules, per-episode vs pooled upstream modes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from accordkit.metrics.tcrr import (
    call_redundancy,
    identity_a6a9157,
    identity_b2cc83c,
    resolve_mode,
    tcrr_counts,
)
from accordkit.schema import EPISODE_FEATURES
from accordkit.testing import build_episode, message


def table_of(*records):
    return pa.Table.from_pylist(list(records), schema=EPISODE_FEATURES.arrow_schema)


def asst(*calls, text=None):
    return message("assistant", text, calls=list(calls) or None)


LOOKUP = ("get_accounts", {"customer_id": "C1"})
OTHER = ("get_accounts", {"customer_id": "C2"})


# --------------------------------------------------------------------------- identities


def test_b2cc83c_identity_ignores_key_order_list_order_and_int_float():
    a = identity_b2cc83c("f", '{"b": [2, 1], "a": 1, "c": {"y": 1, "x": 2}}')
    b = identity_b2cc83c("f", '{"a": 1.0, "c": {"x": 2, "y": 1}, "b": [1, 2]}')
    assert a == b
    assert identity_b2cc83c("f", '{"a": true}') == identity_b2cc83c("f", '{"a": 1}')
    assert identity_b2cc83c("f", '{"a": "1"}') != identity_b2cc83c("f", '{"a": 1}')
    assert identity_b2cc83c("f", '{"a": 1}') != identity_b2cc83c("g", '{"a": 1}')


def test_b2cc83c_normalises_dicts_inside_lists():
    one = identity_b2cc83c("f", '{"x": [{"b": 1, "a": 2}, {"c": 3}]}')
    two = identity_b2cc83c("f", '{"x": [{"c": 3}, {"a": 2, "b": 1}]}')
    assert one == two
    hash(one)


def test_a6a9157_identity_depends_on_key_order_inside_lists_of_dicts():
    # Two dicts do not sort: str() of the raw items, so key order matters.
    one = identity_a6a9157("f", '{"x": [{"a": 1}, {"b": 2, "c": 3}]}')
    two = identity_a6a9157("f", '{"x": [{"a": 1}, {"c": 3, "b": 2}]}')
    assert one != two
    # One dict sorts but leaves the identity unhashable: str() of the whole raw dict.
    assert identity_a6a9157("f", '{"x": [{"b": 1, "a": 2}]}') == ("f", "{'x': [{'b': 1, 'a': 2}]}")
    # Mixed types do not sort: str of each item in the original order.
    assert identity_a6a9157("f", '{"x": [2, "a"]}') == ("f", (("x", ("2", "a")),))


def test_unknown_mode_is_rejected_and_alias_resolves():
    assert resolve_mode("upstream") == "upstream_a6a9157"
    with pytest.raises(ValueError, match="tcrr_mode must be one of"):
        resolve_mode("pooled")


# --------------------------------------------------------------------------- rules


def test_no_tool_calls_gives_nan_and_zero_counts():
    rec = build_episode([message("assistant", "Hi"), message("user", "Bye")])
    out = tcrr_counts(table_of(rec))
    assert np.isnan(out["tcrr"].iloc[0])
    assert out["n_redundant_calls"].iloc[0] == 0 and out["n_tcrr_calls"].iloc[0] == 0


@pytest.mark.parametrize("gap, redundant", [(1, 1), (2, 1), (3, 1), (4, 0)])
def test_window_rule_counts_assistant_turns(gap, redundant):
    # The repeated call is `gap` assistant turns later; text-only assistant messages count,
    # user and tool messages do not.
    msgs = [asst(LOOKUP), message("tool", "{}", tool_call_id="call_0_0")]
    for _ in range(gap - 1):
        msgs += [message("user", "hm?"), asst(text="Still looking.")]
    msgs += [message("user", "and?"), asst(LOOKUP)]
    out = tcrr_counts(table_of(build_episode(msgs)))
    assert out["n_redundant_calls"].iloc[0] == redundant
    assert out["n_tcrr_calls"].iloc[0] == 2
    assert out["tcrr"].iloc[0] == redundant / 2


def test_batch_rule_identical_calls_in_one_turn():
    for copies, expected in ((2, 0), (3, 1), (4, 2)):
        out = tcrr_counts(table_of(build_episode([asst(*[LOOKUP] * copies)])))
        assert out["n_redundant_calls"].iloc[0] == expected
    flags = call_redundancy(table_of(build_episode([asst(LOOKUP, LOOKUP, LOOKUP)])))
    assert flags["redundant"].tolist() == [0, 0, 1]   # the copies beyond two


def test_batch_by_function_name_only_in_a6a9157():
    rec = build_episode([asst(LOOKUP, OTHER, ("get_accounts", {"customer_id": "C3"}))],
                        source="run.json")
    table = table_of(rec)
    assert tcrr_counts(table)["n_redundant_calls"].iloc[0] == 0
    assert tcrr_counts(table, mode="upstream_b2cc83c")["n_redundant_calls"].iloc[0] == 0
    assert tcrr_counts(table, mode="upstream_a6a9157")["n_redundant_calls"].iloc[0] == 1


def test_window_and_batch_each_call_counted_once_by_default_but_added_upstream():
    # Turn 1: one lookup; turn 2: three identical lookups (all in the window).
    rec = build_episode([asst(LOOKUP), message("user", "again"), asst(LOOKUP, LOOKUP, LOOKUP)])
    table = table_of(rec)
    ours = tcrr_counts(table)
    assert ours["n_redundant_calls"].iloc[0] == 3 and ours["tcrr"].iloc[0] == 0.75
    upstream = tcrr_counts(table, mode="upstream_b2cc83c", pooled=False)
    assert upstream["n_redundant_calls"].iloc[0] == 4    # window 3 + batch 1
    assert upstream["tcrr"].iloc[0] == 1.0


def test_user_calls_take_the_current_assistant_turn_and_turn_zero_is_never_in_a_window():
    user_call = message("user", calls=[LOOKUP])
    # A user call before any assistant message has turn 0: outside every window (floor 1).
    rec = build_episode([user_call, asst(LOOKUP)])
    flags = call_redundancy(table_of(rec))
    assert flags["assistant_turn"].tolist() == [0, 1]
    assert flags["redundant"].tolist() == [0, 0]
    # After assistant turn 1, a user call gets turn 1 and is compared like any call.
    rec = build_episode([asst(LOOKUP), message("user", calls=[LOOKUP]), asst(LOOKUP)])
    flags = call_redundancy(table_of(rec))
    assert flags["assistant_turn"].tolist() == [1, 1, 2]
    assert flags["redundant"].tolist() == [0, 0, 1]
    # a6a9157 ignores calls on user messages altogether.
    a6 = call_redundancy(table_of(rec), mode="upstream_a6a9157")
    assert a6["counted"].tolist() == [True, False, True]
    assert tcrr_counts(table_of(rec), mode="upstream_a6a9157")["n_tcrr_calls"].iloc[0] == 2


def test_upstream_modes_pool_conversations_of_one_source_file():
    # Two conversations that each call the lookup once, at assistant turns 1 and 2.
    a = build_episode([asst(LOOKUP)], episode_id="agentchangebench/a", task_id="t1",
                      source="run.json")
    b = build_episode([asst(text="Hello"), asst(LOOKUP)], episode_id="agentchangebench/b",
                      task_id="t2", source="run.json")
    c = build_episode([asst(text="Hello"), asst(LOOKUP)], episode_id="agentchangebench/c",
                      task_id="t3", source="other.json")
    table = table_of(a, b, c)
    assert tcrr_counts(table)["n_redundant_calls"].tolist() == [0, 0, 0]
    pooled = tcrr_counts(table, mode="upstream")
    # b's call at turn 2 "repeats" a's call at turn 1; c lives in another file.
    assert pooled["n_redundant_calls"].tolist() == [0, 1, 0]
    assert tcrr_counts(table, mode="upstream", pooled=False)["n_redundant_calls"].tolist() \
        == [0, 0, 0]


def test_pooled_batch_excess_goes_to_the_later_calls_in_upstream_order():
    # Three conversations of one file each call the same lookup at turn 1: pooled, the
    # turn has 3 identical calls -> 1 redundant, attributed to the third in upstream order
    # (task by task in order of first appearance, then file order).
    recs = [build_episode([asst(LOOKUP)], episode_id=f"agentchangebench/{i}", task_id=t,
                          source="run.json") for i, t in enumerate(["t1", "t2", "t1"])]
    out = tcrr_counts(table_of(*recs), mode="upstream_b2cc83c")
    assert out["n_redundant_calls"].tolist() == [0, 1, 0]


def test_episode_mode_rejects_pooling():
    with pytest.raises(ValueError, match="pooled=True applies to the upstream modes"):
        tcrr_counts(table_of(build_episode([asst(LOOKUP)])), pooled=True)


def test_bad_arguments_json_is_named():
    bad = message("assistant", calls=[("f", "{not json")])
    rec = build_episode([message("assistant", "x")])
    rec["messages"].append(dict(bad, turn_idx=1, tool_calls=[dict(bad["tool_calls"][0],
                                                                   id="c")]))
    with pytest.raises(ValueError, match=r"file test, record agentchangebench/t0-0, field "
                       r"messages\[1\]\.tool_calls\[0\]\.arguments_json: tool call 'f': "
                       "arguments are not JSON"):
        tcrr_counts(table_of(rec))
