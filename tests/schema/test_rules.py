"""The episode rules are declared once (``schema.RULES``) and the per-record check
(:func:`accordkit.schema.rule_problem`) and the whole-table check
(:func:`accordkit.ingest.check.table_problems`) report the same first problem for any record."""

from __future__ import annotations

import copy
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accordkit.ingest.check import table_problems
from accordkit.schema import RULES, EpisodeValidationError, rule_problem, validate_episode
from accordkit.testing import (
    accord_episode,
    build_episode,
    criteria,
    episode_table,
    message,
    preference,
)


def _goalshift():
    return build_episode(
        [message("assistant", "Hi"), message("user", "Pay it"),
         message("assistant", None, calls=[("pay", {"amount": 1}, "c1")]),
         message("tool", "ok", tool_call_id="c1")],
        criteria=criteria(action_sets=[[("pay", {"amount": 1})]]), reward=1.0,
        tsr_details={"overall_tsr": 1.0, "action": 1.0, "nl_assertion": 1.0,
                     "communicate_info": 1.0, "weight_action": 0.5,
                     "weight_nl_assertion": 0.3, "weight_communicate_info": 0.2,
                     "has_actions": True, "has_nl_assertions": False,
                     "has_communicate_info": False})


def _accord():
    msgs = [message("assistant", "Hi", kind="greeting", turn=0),
            message("user", "Red shoes, please", kind="utterance", turn=1),
            message("assistant", None, kind="action", turn=2,
                    calls=[("search", {"q": "shoes"}, "c1")]),
            message("tool", "[]", kind="observation", tool_call_id="c1", turn=3)]
    return accord_episode("accord/e1", messages=msgs,
                          prefs=[preference("p1"), preference("p2", "stated")])


def _table_problem(rec):
    found = table_problems(episode_table(rec), source="s")
    return (found[0][1].field, found[0][1].reason) if found else None


# Mutations that break one rule each (all keep the schema's types).
MUTATIONS = {
    "no id": lambda r: r.update(task_id=None),
    "empty id": lambda r: r.update(scenario_id=""),
    "benchmark": lambda r: r.update(benchmark="other"),
    "no messages": lambda r: r.update(messages=[]),
    "role": lambda r: r["messages"] and r["messages"][-1].update(role="robot"),
    "turn": lambda r: r["messages"][1:] and r["messages"][1].update(turn_idx=None),
    "kind": lambda r: r["messages"] and r["messages"][0].update(kind="chat"),
    "reward": lambda r: r.update(reward=math.nan),
    "reward range": lambda r: r.update(reward=1e308),
    "cost": lambda r: r.update(agent_cost=-math.inf),
    "tsr": lambda r: r.update(tsr_details=dict(r["tsr_details"] or {}, action=math.inf)),
    "call name": lambda r: [m.update(tool_calls=[dict(c, name=None) for c in m["tool_calls"]])
                            for m in r["messages"] if m.get("tool_calls")],
    "arguments": lambda r: [m.update(tool_calls=[dict(c, arguments_json="[1]")
                                                 for c in m["tool_calls"]])
                            for m in r["messages"] if m.get("tool_calls")],
    "params": lambda r: r.update(criteria=criteria(action_sets=[[("pay", "7")]])),
    "dynamic": lambda r: r["preferences"] and r["preferences"][-1].update(dynamic="sudden"),
    "pref name": lambda r: r["preferences"] and r["preferences"][0].update(name=""),
}


def test_every_rule_test_is_known_and_paths_are_columns():
    from accordkit.schema import EPISODE_FEATURES

    assert {r.test for r in RULES} <= {"required", "one_of", "non_empty", "present", "finite",
                                       "in_range", "json_object"}
    assert {r.path.split(".")[0].removesuffix("[]") for r in RULES} <= set(EPISODE_FEATURES)


@pytest.mark.parametrize("make", [_goalshift, _accord])
def test_valid_records_pass_both_checks(make):
    rec = make()
    assert rule_problem(rec) is None and _table_problem(rec) is None


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_each_rule_is_reported_alike(name):
    for make in (_goalshift, _accord):
        rec = copy.deepcopy(make())
        MUTATIONS[name](rec)
        assert rule_problem(rec) == _table_problem(rec)


def test_positions_are_named():
    rec = _goalshift()
    rec["messages"][3]["role"] = "robot"
    assert rule_problem(rec)[0] == "messages[3].role" == _table_problem(rec)[0]
    with pytest.raises(EpisodeValidationError, match="field messages.3..role: unknown role"):
        validate_episode(rec)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(base=st.sampled_from([_goalshift, _accord]),
       names=st.lists(st.sampled_from(sorted(MUTATIONS)), min_size=1, max_size=4))
def test_any_mix_of_problems_gives_the_same_first_problem(base, names):
    rec = copy.deepcopy(base())
    for name in names:
        MUTATIONS[name](rec)
    assert rule_problem(rec) == _table_problem(rec)
