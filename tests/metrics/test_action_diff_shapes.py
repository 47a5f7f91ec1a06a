"""The action diff on the shapes published tau2 runs have (issue 40 items 1-3, issue 41 item 2).

Each file is made here from the released airline file (tests/metrics/tau2_shapes.py) with
the shape a public file has: renumbered task ids, no tool call at all, ``actions: null``
with ``acceptable_outcomes``, one record whose arguments nest 500 levels, JSON text in
arguments. Then a fuzz of the diff over random episodes of those shapes.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import accordkit as ak
from accordkit.metrics._action_checks import MAX_DEPTH, too_deep
from accordkit.metrics.action_diff import (
    ACTION_COLUMNS,
    STATUSES,
    ActionDiffWarning,
    action_diff,
    action_match,
    action_rows,
)
from accordkit.testing import build_episode, criteria, episode_table, message
from tests.metrics import tau2_shapes as shapes

AIRLINE = "airline_grok-3_4tasks_4trials.json"
KEY = ["episode_id", "action_index", "name", "status", "diff_args", "turn_idx", "call_index",
       "stored_match", "agrees_with_stored", "divergence_reason"]


@pytest.fixture(scope="module")
def raw(tau2_dir):
    return shapes.read(tau2_dir / AIRLINE)


@pytest.fixture(scope="module")
def original(tau2_dir):
    """The action diff of the released file as it is (self-consistent)."""
    return action_diff(ak.load(tau2_dir / AIRLINE))


def _rows(frame, episodes=None):
    out = frame if episodes is None else frame[frame["episode_id"].isin(episodes)]
    return out[KEY].astype(object).where(out[KEY].notna(), None).reset_index(drop=True)


# --------------------------------------------------------------------------- 40.1


def test_renumbered_task_ids_take_the_stored_gold_actions(raw, original, tmp_path):
    path = shapes.write(shapes.renumbered(raw), tmp_path / "renumbered.json")
    ds = ak.load(path)
    # before: "ValueError ... 1 stored check(s) for 5 expected action(s)" for the whole file
    with pytest.warns(ActionDiffWarning, match=r"renumbered.json: 16 of 16 simulations store "
                                               r"checks made on other tasks than this file's"):
        out = action_diff(ds)
    # the expected actions are those the run was scored on: the diff of the consistent file
    pd.testing.assert_frame_equal(_rows(out), _rows(original))
    stored = shapes.stored_matches(raw)
    known = out["agrees_with_stored"].dropna()
    assert len(known) == len(stored) == 44 and known.all()
    # the task id stays the file's (24 -> 32), the expected actions are those of the task
    # it ran (24: one booking), not the five of task 32
    first = out[out["episode_id"] == f"tau2/{raw['simulations'][0]['id']}"]
    assert set(first["task_id"]) == {"32"} and raw["simulations"][0]["task_id"] == "24"
    assert first.loc[first["action_index"].notna(), "name"].tolist() == ["book_reservation"]


def test_without_stored_checks_the_diff_trusts_the_files_tasks(raw, tmp_path):
    path = shapes.write(shapes.strip_checks(shapes.renumbered(raw)), tmp_path / "stripped.json")
    out = action_diff(ak.load(path))      # nothing to detect: no warning
    tasks = {t["id"]: [a["name"] for a in t["evaluation_criteria"]["actions"]]
             for t in raw["tasks"]}
    for _, rows in out[out["action_index"].notna()].groupby("episode_id", sort=False):
        assert rows["name"].tolist() == tasks[rows["task_id"].iloc[0]]
    assert out["stored_match"].isna().all()


def test_a_file_of_consistent_and_renumbered_simulations_counts_each(raw, original, tmp_path):
    mixed = shapes.renumbered(raw)
    mixed["simulations"][:4] = raw["simulations"][:4]   # these name their own tasks
    path = shapes.write(mixed, tmp_path / "mixed.json")
    with pytest.warns(ActionDiffWarning, match="12 of 16 simulations store checks made on "
                                               "other tasks"):
        out = action_diff(ak.load(path))
    pd.testing.assert_frame_equal(_rows(out), _rows(original))


def test_score_and_summary_of_a_renumbered_file(raw, tmp_path):
    path = shapes.write(shapes.renumbered(raw), tmp_path / "renumbered.json")
    ds = ak.load(path)
    with pytest.warns(ActionDiffWarning, match="16 of 16"):
        actions = ak.score(ds, level="action")
    summary = ak.action_summary(actions)
    assert len(summary) == 16 and summary["checks_agree"].all()
    assert len(ak.score(ds)) == 16


# --------------------------------------------------------------------------- 40.2


def test_no_tool_call_anywhere_gives_missing_rows(raw, tmp_path):
    # the simulations of task 32 (five expected actions), none with a tool call
    keep = [i for i, s in enumerate(raw["simulations"]) if s["task_id"] == "32"]
    made = shapes.strip_checks(shapes.without_calls(raw, keep))
    made["simulations"] = [made["simulations"][i] for i in keep]
    out = action_diff(ak.load(shapes.write(made, tmp_path / "no_calls.json")))
    assert len(out) == 4 * 5
    assert set(out["status"]) == {"missing"}
    assert (out["n_calls_same_name"] == 0).all()
    assert out["turn_idx"].isna().all() and out["call_index"].isna().all()
    assert set(out["divergence_reason"]) == {"missing"}


def test_three_expected_actions_and_no_call_in_the_data_set():
    # the AgentChangeBench banking shape: 3 expected actions, 0 calls, alone in its data set
    rec = build_episode([message("assistant", "Hi, how can I help?"),
                         message("user", "Lock my card and tell me my balance.")],
                        criteria=criteria(actions=[("get_customer", {"id": "C1"}),
                                                   ("lock_card", {"card_id": "K1"}),
                                                   ("get_balance", {"id": "C1"})]))
    out = action_rows(episode_table(rec))
    assert out["status"].tolist() == ["missing"] * 3
    assert out["n_calls_same_name"].tolist() == [0, 0, 0]


def test_actions_null_with_acceptable_outcomes_is_said(raw, original, tmp_path):
    made = shapes.acceptable_outcomes(raw, "8")
    path = shapes.write(made, tmp_path / "fork.json")
    with pytest.warns(UserWarning, match=r"fork.json: 1 task\(s\) list acceptable_outcomes"):
        ds = ak.load(path)
    # the fork's evaluator stored the checks of the best-matching list: they are used
    with pytest.warns(ActionDiffWarning, match=r"4 of 16 simulations store action checks while "
                                               r"their task lists no expected actions"):
        out = action_diff(ds)
    pd.testing.assert_frame_equal(_rows(out), _rows(original))
    # with no stored checks there is nothing to diff against: the loader's note says so
    bare = shapes.write(shapes.strip_checks(made), tmp_path / "fork_bare.json")
    with pytest.warns(UserWarning, match="acceptable_outcomes"):
        ds = ak.load(bare)
    out = action_diff(ds)
    fork = {f"tau2/{s['id']}" for s in raw["simulations"] if s["task_id"] == "8"}
    assert not set(out["episode_id"]) & fork
    assert out["episode_id"].nunique() == 12


# --------------------------------------------------------------------------- 41.2


def test_deep_arguments_name_their_record_and_the_others_are_diffed(raw, original, tmp_path):
    sim = 9      # a task 8 simulation: its first call is an expected tool (get_user_details)
    made = shapes.deep_arguments(raw, sim)
    path = shapes.write(made, tmp_path / "deep.json")
    ds = ak.load(path)
    assert len(ds) == 16                                  # the loader reads it
    record = f"tau2/{raw['simulations'][sim]['id']}"
    with pytest.raises(ValueError, match=rf"deep.json, record {record}, field messages\[\d+\]"
                                         rf".tool_calls\[0\].arguments_json: nested deeper "
                                         rf"than {MAX_DEPTH} levels"):
        action_diff(ds)
    with pytest.warns(ActionDiffWarning, match=rf"left out 1 episode.*record {record}"):
        out = action_diff(ds, errors="skip")
    others = [e for e in original["episode_id"].unique() if e != record]
    pd.testing.assert_frame_equal(_rows(out), _rows(original, others))
    # the episode left out is data too, not only a warning: file, record, field, reason
    (left,) = out.attrs["left_out"]
    assert left["source"].endswith("deep.json") and left["record"] == record
    assert re.fullmatch(r"messages\[\d+\]\.tool_calls\[0\]\.arguments_json", left["field"])
    assert left["reason"] == f"nested deeper than {MAX_DEPTH} levels; not compared"
    with pytest.warns(ActionDiffWarning, match=record):
        scored = ak.score(ds, level="action")
    assert scored["episode_id"].nunique() == 15 and scored.attrs["left_out"] == [left]
    assert "left_out" not in original.attrs         # nothing left out, no list
    assert len(ak.score(ds)) == 16


def test_deep_stored_checks_and_expected_arguments_are_named():
    deep = shapes.nested(MAX_DEPTH + 5)
    rec = build_episode([message("user", "x"),
                         message("assistant", calls=[("cancel", {"id": "R1"})])],
                        criteria=criteria(actions=[("cancel", {"id": "R1"})]),
                        benchmark="tau2", source="run.json", episode_id="tau2/deep-checks")
    rec["reward_info_json"] = json.dumps({"reward": 0.0, "action_checks": [
        {"action": {"name": "cancel", "arguments": {"id": "R1", "x": deep}},
         "action_match": True}]})
    with pytest.raises(ValueError, match=r"record tau2/deep-checks, field reward_info."
                                         r"action_checks\[0\].action.arguments: nested deeper "
                                         r"than 100 levels"):
        action_rows(episode_table(rec))
    fine = build_episode([message("user", "x"),
                          message("assistant", calls=[("cancel", {"id": "R1"})])],
                         criteria=criteria(actions=[("cancel", {"id": "R1"})]),
                         benchmark="tau2", episode_id="tau2/fine")
    expected = build_episode([message("user", "x"),
                              message("assistant", calls=[("cancel", {"id": "R1"})])],
                             criteria=criteria(actions=[("cancel", {"id": "R1", "x": deep})]),
                             benchmark="tau2", episode_id="tau2/deep-task")
    parser = build_episode([message("user", "x")], benchmark="tau2",
                           criteria=criteria(actions=[("cancel", {"id": "R1"})]),
                           episode_id="tau2/deep-info")
    parser["reward_info_json"] = ('{"action_checks": [], "info": ' + "[" * 5000 + "]" * 5000
                                  + "}")
    with pytest.warns(ActionDiffWarning, match=r"left out 3 episode.*tau2/deep-checks.*"
                                               r"tau2/deep-task, field criteria.actions\[0\]"
                                               r".*tau2/deep-info, field reward_info.action_"
                                               r"checks: nested too deeply to read"):
        out = action_rows(episode_table(rec, fine, expected, parser), errors="skip")
    assert out["row"].tolist() == [1] and out["status"].tolist() == ["matched"]
    assert [(r["record"], r["field"], r["reason"]) for r in out.attrs["left_out"]] == [
        ("tau2/deep-checks", "reward_info.action_checks[0].action.arguments",
         "nested deeper than 100 levels; not read"),
        ("tau2/deep-task", "criteria.actions[0].arguments_json",
         "nested deeper than 100 levels; not compared"),
        ("tau2/deep-info", "reward_info.action_checks", "nested too deeply to read")]


def test_depth_is_measured_without_recursion():
    text = "[" * 200_000 + "]" * 200_000
    assert too_deep(text) and not too_deep('{"a": "' + "[" * 500 + '"}')
    assert not too_deep(json.dumps(shapes.nested(MAX_DEPTH - 1)))
    assert too_deep(json.dumps(shapes.nested(MAX_DEPTH + 1)))


def test_an_unexpected_failure_of_one_episode_leaves_the_others(monkeypatch):
    """Any failure of the diff is narrowed to its episode (here a tool name that breaks the
    kind rule), which is named; the others get their rows."""
    import accordkit.metrics.action_diff as mod

    real = mod.tool_kind

    def breaks(name, overrides=None):
        if name == "explode":
            raise RuntimeError("boom")
        return real(name, overrides)

    monkeypatch.setattr(mod, "tool_kind", breaks)
    recs = [build_episode([message("user", "x"),
                           message("assistant", calls=[(name, {"id": 1})])],
                          criteria=criteria(actions=[("cancel", {"id": 1})]),
                          benchmark="tau2", episode_id=f"tau2/{name}")
            for name in ("cancel", "explode", "cancel")]
    recs[2]["episode_id"] = "tau2/other"
    with pytest.raises(ValueError, match=r"record tau2/explode: the action diff could not be "
                                         r"made \(RuntimeError: boom\)"):
        action_rows(episode_table(*recs))
    with pytest.warns(ActionDiffWarning, match="tau2/explode"):
        out = action_rows(episode_table(*recs), errors="skip")
    assert out["row"].tolist() == [0, 2] and set(out["status"]) == {"matched"}
    assert out.attrs["left_out"] == [{
        "source": "test", "record": "tau2/explode", "field": None,
        "reason": "the action diff could not be made (RuntimeError: boom)"}]
    with pytest.warns(ActionDiffWarning, match="tau2/explode"):     # alone in its data set
        out = action_rows(episode_table(recs[1]), errors="skip")
    assert out.empty and list(out.columns) == ["row", *ACTION_COLUMNS]


# --------------------------------------------------------------------------- 40.3


def test_json_text_arguments_are_compared_raw_unless_asked():
    # banking_knowledge's call_discoverable_*_tool(arguments: str): JSON text as a string
    rec = build_episode([message("user", "x"),
                         message("assistant", calls=[("call_discoverable_tool",
                                                      {"arguments": '{"a": 1, "b": [2]}'})])],
                        criteria=criteria(actions=[("call_discoverable_tool",
                                                    {"arguments": '{"b": [2], "a": 1}'})]),
                        benchmark="tau2")
    table = episode_table(rec)
    raw_rows = action_rows(table)
    assert raw_rows["status"].tolist() == ["wrong_arguments"]
    assert raw_rows["diff_args"].tolist() == ["arguments"]
    assert action_rows(table, decode_json_text=True)["status"].tolist() == ["matched"]
    assert action_diff(table, decode_json_text=True)["status"].tolist() == ["matched"]


def test_decoding_is_bounded_too():
    text = json.dumps(shapes.nested(MAX_DEPTH + 5))
    rec = build_episode([message("user", "x"),
                         message("assistant", calls=[("f", {"q": text})])],
                        criteria=criteria(actions=[("f", {"q": "x"})]), benchmark="tau2",
                        episode_id="tau2/deep-text")
    table = episode_table(rec)
    assert action_rows(table)["status"].tolist() == ["wrong_arguments"]   # raw: a string
    with pytest.raises(ValueError, match=r"tau2/deep-text, field messages\[1\].tool_calls\[0\]"
                                         r".arguments_json: JSON text in an argument nests"):
        action_rows(table, decode_json_text=True)


# --------------------------------------------------------------------------- fuzz

TOOLS = ("get_user", "book", "cancel", "transfer_to_human_agents")
VALUES = st.one_of(st.integers(0, 2), st.sampled_from(["a", "b", '{"x": 1}']),
                   st.lists(st.integers(0, 1), max_size=2))
ARGS = st.dictionaries(st.sampled_from(["id", "x", "q"]), VALUES, max_size=2)
CALL = st.tuples(st.sampled_from(TOOLS), ARGS)


@st.composite
def episodes(draw, k):
    expected = draw(st.lists(CALL, max_size=4))
    turns = draw(st.lists(st.lists(CALL, max_size=2), max_size=4))
    messages = [message("assistant", "Hi"), message("user", "Please help")]
    for calls in turns:
        messages.append(message("assistant", calls=calls) if calls
                        else message("assistant", "Let me see."))
    shape = draw(st.sampled_from(["actions", "sets", "unknown_task", "null_actions"]))
    if shape == "sets":
        crit = criteria(action_sets=[[call] for call in expected])
    elif shape == "unknown_task":
        crit = None
    else:
        crit = criteria(actions=[] if shape == "null_actions" else expected)
        if shape == "null_actions":
            crit["actions"] = None
    rec = build_episode(messages, criteria=crit, benchmark="tau2", episode_id=f"tau2/e{k}")
    checks = draw(st.sampled_from(["none", "aligned", "other"]))
    if checks != "none":
        gold = expected if checks == "aligned" else draw(st.lists(CALL, max_size=3))
        rec["reward_info_json"] = json.dumps({"reward": 0.0, "action_checks": [
            {"action": {"name": n, "arguments": a}, "action_match": draw(st.booleans())}
            for n, a in gold]})
    return rec


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(*[episodes(k) for k in range(n)])))
def test_fuzz_the_diff_over_real_shapes(recs):
    table = episode_table(*recs)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ActionDiffWarning)   # said once per file, as tested
        out = action_rows(table)
        alone = [action_rows(episode_table(rec)) for rec in recs]
    assert set(out["status"]) <= set(STATUSES)
    for row, rec in enumerate(recs):
        mine = out[out["row"] == row].drop(columns="row").reset_index(drop=True)
        # each episode's rows are its own: the same when it is diffed alone
        pd.testing.assert_frame_equal(_plain(mine), _plain(alone[row].drop(columns="row")))
        calls = [(c["name"], json.loads(c["arguments_json"])) for m in rec["messages"]
                 for c in m["tool_calls"] or ()]
        units = mine[mine["status"] != "extra"]
        for _, r in units.iterrows():
            same = [a for n, a in calls if n in r["name"].split(" | ")]
            assert r["n_calls_same_name"] == (len(same) if " | " not in r["name"] else
                                              r["n_calls_same_name"])
            if r["status"] == "missing":
                assert not same
            elif r["status"] == "wrong_arguments":
                assert same
        # a matched legacy action has a call that satisfies it by tau2's rule
        expected = _expected_actions(rec)
        for _, r in units[units["status"] == "matched"].iterrows():
            if expected is not None and r["name"] in TOOLS:
                name, args = expected[int(r["action_index"])]
                assert any(action_match(n, a, name, args) for n, a in calls) or \
                    rec["criteria"] and rec["criteria"]["action_sets"]
        unknown = rec["criteria"] is None or (rec["criteria"]["actions"] is None
                                              and not rec["criteria"]["action_sets"])
        if unknown and "action_checks" not in (rec["reward_info_json"] or ""):
            assert mine.empty      # a task whose actions are unknown expects nothing we know of


def _plain(frame):
    return frame.astype(object).where(frame.notna(), None).reset_index(drop=True)


def _expected_actions(rec):
    """The legacy actions the diff compares: the task's, or the stored gold ones."""
    info = json.loads(rec["reward_info_json"]) if rec["reward_info_json"] else {}
    crit = rec["criteria"] or {}
    if crit.get("action_sets"):
        return None
    task = [(a["name"], json.loads(a["arguments_json"])) for a in crit.get("actions") or ()]
    checks = info.get("action_checks")
    if checks is None:
        return task
    gold = [(c["action"]["name"], c["action"]["arguments"]) for c in checks]
    return task if gold == task else gold
