"""The action diff: hand-built episodes for every status, and tau2's stored checks."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import accordkit as ak
from accordkit._internal.arrow import arrow_table
from accordkit.metrics.action_diff import (
    ACTION_COLUMNS,
    SUMMARY_COLUMNS,
    action_diff,
    action_match,
    action_rows,
    action_summary,
    argument_differences,
)
from accordkit.names import ID_COLUMNS
from accordkit.testing import build_episode, criteria, episode_table, message

BOOK = {"user_id": "u1", "flight": "HAT001", "cabin": "economy"}


def diff_of(messages, actions=(), action_sets=(), **fields):
    fields.setdefault("benchmark", "tau2")
    rec = build_episode(messages, criteria=criteria(actions=actions, action_sets=action_sets),
                        **fields)
    return action_rows(episode_table(rec))


def one(frame, **where):
    rows = frame
    for k, v in where.items():
        rows = rows[rows[k] == v]
    assert len(rows) == 1, rows
    return rows.iloc[0]


# --------------------------------------------------------------------------- statuses


def test_matched_actions_name_their_calls_and_nothing_diverges():
    out = diff_of([message("user", "Book HAT001 for u1"),
                   message("assistant", calls=[("get_user_details", {"user_id": "u1"})]),
                   message("tool", "{}"),
                   message("assistant", calls=[("book_reservation", BOOK)]),
                   message("tool", "{}"),
                   message("assistant", "Done.")],
                  actions=[("get_user_details", {"user_id": "u1"}),
                           ("book_reservation", BOOK)])
    assert list(out.columns) == ["row", *ACTION_COLUMNS]
    assert out["status"].tolist() == ["matched", "matched"]
    assert out["turn_idx"].tolist() == [1, 3]
    assert out["call_index"].tolist() == [0, 1]
    assert out["kind"].tolist() == ["read", "write"]
    assert out["diff_args"].tolist() == ["", ""]
    assert out["out_of_order"].tolist() == [False, False]
    assert out["after_transfer"].tolist() == [False, False]
    assert out["first_divergence_turn"].isna().all() and out["divergence_reason"].isna().all()
    assert out["stored_match"].isna().all() and out["agrees_with_stored"].isna().all()


def test_wrong_arguments_names_the_closest_call_and_the_values():
    far = {"user_id": "u2", "flight": "HAT009", "cabin": "economy"}
    near = {"user_id": "u1", "flight": "HAT001", "cabin": "business"}
    out = diff_of([message("user", "Book it"),
                   message("assistant", calls=[("book_reservation", far)]),
                   message("tool", "{}"),
                   message("assistant", calls=[("book_reservation", near)]),
                   message("tool", "{}")],
                  actions=[("book_reservation", BOOK)])
    row = one(out, status="wrong_arguments")
    # the closest call differs on one argument (cabin), the first on two
    assert row["turn_idx"] == 3 and row["call_index"] == 1
    assert row["diff_args"] == "cabin"
    assert json.loads(row["expected_json"]) == {"cabin": "economy"}
    assert json.loads(row["actual_json"]) == {"cabin": "business"}
    assert row["n_calls_same_name"] == 2
    # the other wrong write changed state too: it is an unrequested write
    extra = one(out, status="extra")
    assert extra["turn_idx"] == 1 and json.loads(extra["actual_json"]) == far
    assert pd.isna(extra["action_index"])
    # the path is left at the first call of the expected tool with other arguments
    assert set(out["first_divergence_turn"]) == {1}
    assert set(out["divergence_reason"]) == {"wrong_arguments"}


def test_missing_action_and_where_the_agent_turned_away():
    out = diff_of([message("user", "Cancel R1 please"),
                   message("assistant", calls=[("get_reservation_details", {"id": "R1"})]),
                   message("tool", "{}"),
                   message("assistant", "Your reservation cannot be cancelled."),
                   message("user", "OK")],
                  actions=[("get_reservation_details", {"id": "R1"}),
                           ("cancel_reservation", {"id": "R1"})])
    row = one(out, status="missing")
    assert row["name"] == "cancel_reservation" and row["action_index"] == 1
    assert pd.isna(row["turn_idx"]) and pd.isna(row["call_index"])
    assert json.loads(row["expected_json"]) == {"id": "R1"}
    assert pd.isna(row["diff_args"]) and row["n_calls_same_name"] == 0
    # the first assistant message after the last call on the path
    assert row["first_divergence_turn"] == 3 and row["divergence_reason"] == "missing"


def test_missing_with_no_call_on_the_path_diverges_at_the_first_reply():
    out = diff_of([message("assistant", "Hi"), message("user", "Cancel R1"),
                   message("assistant", "I cannot do that.")],
                  actions=[("cancel_reservation", {"id": "R1"})])
    row = one(out, status="missing")
    assert row["first_divergence_turn"] == 2


def test_extra_write_is_a_row_and_extra_lookups_are_not():
    out = diff_of([message("user", "What is my balance?"),
                   message("assistant", calls=[("get_account", {"id": "A"})]),
                   message("tool", "{}"),
                   message("assistant", calls=[("search_transactions", {"id": "A"})]),
                   message("tool", "{}"),
                   message("assistant", calls=[("lock_card", {"card_id": "K1"})]),
                   message("tool", "{}")],
                  actions=[("get_account", {"id": "A"})])
    assert out["status"].tolist() == ["matched", "extra"]
    extra = one(out, status="extra")
    assert extra["name"] == "lock_card" and extra["kind"] == "write"
    assert extra["turn_idx"] == 5 and extra["requestor"] == "assistant"
    assert json.loads(extra["actual_json"]) == {"card_id": "K1"}
    assert pd.isna(extra["expected_json"]) and pd.isna(extra["out_of_order"])
    assert set(out["divergence_reason"]) == {"unexpected_write"}
    assert set(out["first_divergence_turn"]) == {5}


def test_episode_with_only_an_extra_write():
    out = diff_of([message("user", "hi"),
                   message("assistant", calls=[("cancel_reservation", {"id": "R9"})])])
    assert out["status"].tolist() == ["extra"]
    assert out["divergence_reason"].tolist() == ["unexpected_write"]


def test_order_writes_done_in_the_other_order():
    a, b = ("cancel_reservation", {"id": "R1"}), ("book_reservation", BOOK)
    out = diff_of([message("user", "Swap my booking"),
                   message("assistant", calls=[b]), message("tool", "{}"),
                   message("assistant", calls=[a]), message("tool", "{}")],
                  actions=[a, b])
    assert out["status"].tolist() == ["matched", "matched"]
    # book (expected second) was done before cancel (expected first)
    assert out["out_of_order"].tolist() == [False, True]
    assert set(out["divergence_reason"]) == {"out_of_order"}
    assert set(out["first_divergence_turn"]) == {1}


def test_reads_in_another_order_are_no_divergence():
    r1, r2 = ("get_user_details", {"user_id": "u1"}), ("get_reservation_details", {"id": "R1"})
    out = diff_of([message("user", "x"),
                   message("assistant", calls=[r2]), message("tool", "{}"),
                   message("assistant", calls=[r1]), message("tool", "{}")],
                  actions=[r1, r2])
    assert out["out_of_order"].tolist() == [False, True]
    assert out["first_divergence_turn"].isna().all()


def test_repeated_calls():
    wrong = dict(BOOK, cabin="business")
    out = diff_of([message("user", "Book"),
                   message("assistant", calls=[("get_user_details", {"user_id": "u1"})]),
                   message("tool", "{}"),
                   message("assistant", calls=[("get_user_details", {"user_id": "u1"})]),
                   message("tool", "{}"),
                   message("assistant", calls=[("book_reservation", wrong)]),
                   message("tool", "{}"),
                   message("assistant", calls=[("book_reservation", BOOK)]),
                   message("tool", "{}"),
                   message("assistant", calls=[("book_reservation", BOOK)]),
                   message("tool", "{}")],
                  actions=[("get_user_details", {"user_id": "u1"}),
                           ("book_reservation", BOOK)])
    expected = out[out["action_index"].notna()]
    # a repeated lookup is no extra row; the booking matched at its first correct call
    assert expected["status"].tolist() == ["matched", "matched"]
    assert expected["turn_idx"].tolist() == [1, 7]
    assert expected["n_calls_same_name"].tolist() == [2, 3]
    # the wrong write (later corrected) and the second booking are unrequested writes
    extras = out[out["status"] == "extra"]
    assert extras["turn_idx"].tolist() == [5, 9]
    # the first divergence is the wrong booking
    assert set(out["divergence_reason"]) == {"wrong_arguments"}
    assert set(out["first_divergence_turn"]) == {5}


def test_repeated_write_is_its_own_divergence():
    out = diff_of([message("user", "Book"),
                   message("assistant", calls=[("book_reservation", BOOK)]),
                   message("tool", "{}"),
                   message("assistant", calls=[("book_reservation", BOOK)])],
                  actions=[("book_reservation", BOOK)])
    assert out["status"].tolist() == ["matched", "extra"]
    assert set(out["divergence_reason"]) == {"repeated_write"}
    assert set(out["first_divergence_turn"]) == {3}


def test_two_identical_expected_actions_name_two_calls():
    act = ("update_reservation_flights", {"id": "R1"})
    out = diff_of([message("user", "x"),
                   message("assistant", calls=[act]), message("tool", "{}"),
                   message("assistant", calls=[act]), message("tool", "{}")],
                  actions=[act, act])
    assert out["status"].tolist() == ["matched", "matched"]
    assert out["turn_idx"].tolist() == [1, 3]
    assert out["first_divergence_turn"].isna().all()


def test_calls_after_a_transfer():
    out = diff_of([message("user", "Cancel R1"),
                   message("assistant", calls=[("transfer_to_human_agents", {"summary": "x"})]),
                   message("tool", "{}"),
                   message("assistant", calls=[("cancel_reservation", {"id": "R1"})]),
                   message("tool", "{}"),
                   message("assistant", calls=[("lock_card", {"card_id": "K1"})])],
                  actions=[("cancel_reservation", {"id": "R1"})])
    row = one(out, action_index=0)
    # tau2's rule counts the call all the same; the row says it came after the hand-off
    assert row["status"] == "matched" and row["after_transfer"]
    extra = one(out, status="extra")
    assert extra["name"] == "lock_card" and extra["after_transfer"]
    # the transfer is not a write and not extra, but it left the path
    assert "transfer_to_human_agents" not in set(out["name"])
    assert set(out["divergence_reason"]) == {"transfer"}
    assert set(out["first_divergence_turn"]) == {1}


def test_transfer_after_the_path_is_done_is_no_divergence():
    out = diff_of([message("user", "Cancel R1"),
                   message("assistant", calls=[("cancel_reservation", {"id": "R1"})]),
                   message("tool", "{}"),
                   message("assistant", calls=[("transfer_to_human_agents", {})])],
                  actions=[("cancel_reservation", {"id": "R1"})])
    assert out["status"].tolist() == ["matched"]
    assert out["after_transfer"].tolist() == [False]
    assert out["first_divergence_turn"].isna().all()


def test_user_tool_calls_count_as_in_tau2():
    rec = build_episode(
        [message("assistant", "Please turn data on."),
         message("user", calls=[("toggle_data", {})]),
         message("tool", "{}")],
        criteria=criteria(actions=[("toggle_data", {})]), benchmark="tau2")
    rec["criteria"]["actions"][0]["requestor"] = "user"
    out = action_rows(episode_table(rec))
    assert out["status"].tolist() == ["matched"]
    assert out["requestor"].tolist() == ["user"]


def test_action_sets_use_the_parameter_subset_rule():
    sets = [[("lock_card", {"card_id": "K1"}), ("freeze_card", {"card_id": "K1"})],
            [("file_dispute", {"txn": "T1", "reason": "fraud"})],
            [("make_payment", {"amount": 10}), ("schedule_payment", {"amount": 10})]]
    out = diff_of([message("user", "x"),
                   message("assistant", calls=[("freeze_card", {"card_id": "K1", "note": "y"})]),
                   message("tool", "{}"),
                   message("assistant", calls=[("file_dispute", {"txn": "T1"})]),
                   message("tool", "{}")],
                  action_sets=sets, benchmark="agentchangebench")
    assert out["status"].tolist() == ["matched", "wrong_arguments", "missing"]
    assert out["name"].tolist() == ["freeze_card", "file_dispute",
                                    "make_payment | schedule_payment"]
    assert out.loc[1, "diff_args"] == "reason"
    assert json.loads(out.loc[1, "expected_json"]) == {"reason": "fraud"}
    assert json.loads(out.loc[1, "actual_json"]) == {}


# --------------------------------------------------------------------------- the rule


def test_rule_compare_args():
    # None: every argument of the call; one the call lacks is not compared
    assert action_match("f", {"a": 1}, "f", {"a": 1.0, "b": 2})
    assert not action_match("f", {"a": 1, "c": 3}, "f", {"a": 1})
    assert not action_match("g", {"a": 1}, "f", {"a": 1})
    # a list: those arguments only; an empty list: the name alone
    assert action_match("f", {"a": 1, "b": 9}, "f", {"a": 1, "b": 2}, ["a"])
    assert not action_match("f", {"b": 2}, "f", {"a": 1, "b": 2}, ["a", "b"])
    assert action_match("f", {"a": 5}, "f", {"a": 1}, [])
    assert argument_differences({"b": 2}, {"a": 1, "b": 2}, ["a", "b", "z"]) == ["a"]
    # JSON text inside an argument is compared as the string it is (tau2's main line)...
    assert not action_match("f", {"q": '{"x": 1, "y": [1, 2]}'}, "f",
                            {"q": {"y": [1, 2], "x": 1}})
    assert not action_match("f", {"q": '{"x": 1}'}, "f", {"q": '{"x":1}'})
    assert action_match("f", {"q": '{"x": 1}'}, "f", {"q": '{"x": 1}'})
    # ... or, on request, as the value it holds (at any level)
    assert action_match("f", {"q": '{"x": 1, "y": [1, 2]}'}, "f", {"q": {"y": [1, 2], "x": 1}},
                        decode_json_text=True)
    assert action_match("f", {"q": ['{"x": "[1]"}']}, "f", {"q": [{"x": [1]}]},
                        decode_json_text=True)
    assert not action_match("f", {"q": "1"}, "f", {"q": 1}, decode_json_text=True)


def test_compare_args_from_the_task():
    rec = build_episode([message("user", "x"),
                         message("assistant", calls=[("get_customer", {"phone": "1",
                                                                       "note": "hi"})])],
                        criteria=criteria(actions=[("get_customer", {"phone": "1",
                                                                     "note": "other"})]),
                        benchmark="tau2")
    assert action_rows(episode_table(rec))["status"].tolist() == ["wrong_arguments"]
    rec["criteria"]["actions"][0]["compare_args"] = ["phone"]
    assert action_rows(episode_table(rec))["status"].tolist() == ["matched"]


def test_tool_kinds_override():
    msgs = [message("user", "x"), message("assistant", calls=[("log_event", {"a": 1})])]
    assert diff_of(msgs)["status"].tolist() == ["extra"]
    rec = build_episode(msgs, benchmark="tau2", criteria=criteria())
    assert action_rows(episode_table(rec))["status"].tolist() == ["extra"]
    out = action_rows(episode_table(rec), tool_kinds={"log_event": "generic"})
    assert out.empty
    with pytest.raises(ValueError, match=r"tool_kinds\['log_event'\] must be one of"):
        action_rows(episode_table(rec), tool_kinds={"log_event": "delete"})


# --------------------------------------------------------------------------- stored checks


def _with_checks(rec, checks):
    rec["reward_info_json"] = json.dumps({"reward": 0.0, "action_checks": checks})
    return rec


def _check(name, match, arguments=None):
    return {"action": {"action_id": name, "requestor": "assistant", "name": name,
                       "arguments": arguments or {}, "info": None, "compare_args": None},
            "action_match": match, "action_reward": float(match)}


def test_stored_checks_are_compared():
    rec = build_episode([message("user", "x"),
                         message("assistant", calls=[("cancel_reservation", {"id": "R1"})])],
                        criteria=criteria(actions=[("cancel_reservation", {"id": "R1"}),
                                                   ("book_reservation", BOOK)]),
                        benchmark="tau2")
    _with_checks(rec, [_check("cancel_reservation", True, {"id": "R1"}),
                       _check("book_reservation", True, BOOK)])
    out = action_rows(episode_table(rec))
    assert out["stored_match"].tolist() == [True, True]
    assert out["agrees_with_stored"].tolist() == [True, False]
    summary = action_summary(out.assign(episode_id="e"))
    assert not summary.loc[0, "checks_agree"]


def test_stored_checks_not_a_list_name_file_record_field():
    rec = build_episode([message("user", "x")],
                        criteria=criteria(actions=[("cancel_reservation", {"id": "R1"})]),
                        benchmark="tau2", source="run.json", episode_id="tau2/sim-7")
    rec["reward_info_json"] = json.dumps({"reward": 0.0, "action_checks": {"0": True}})
    with pytest.raises(ValueError, match=r"file run.json, record tau2/sim-7, field "
                                         r"reward_info.action_checks: expected a list"):
        action_rows(episode_table(rec))


def test_unreadable_stored_checks_are_an_error_naming_the_field():
    rec = build_episode([message("user", "x")],
                        criteria=criteria(actions=[("cancel_reservation", {"id": "R1"})]),
                        benchmark="tau2", source="run.json", episode_id="tau2/sim-8")
    _with_checks(rec, [{"action": {"name": "cancel_reservation"}, "action_match": "yes"}])
    with pytest.raises(ValueError, match=r"action_checks\[0\].action_match: expected true"):
        action_rows(episode_table(rec))
    # checks that do not line up and store no gold action to take instead
    _with_checks(rec, [{"action_match": False}, {"action_match": True}])
    with pytest.raises(ValueError, match=r"run.json, record tau2/sim-8, field reward_info."
                                         r"action_checks: 2 stored check.s. for 1 expected "
                                         r"action.s., and a check stores no gold action"):
        action_rows(episode_table(rec))
    # a check without its action is taken as its action's when the counts agree
    _with_checks(rec, [{"action_match": False}])
    assert action_rows(episode_table(rec))["agrees_with_stored"].tolist() == [True]


# --------------------------------------------------------------------------- public faces


def test_action_diff_has_the_id_columns_and_episodes_in_order():
    recs = [build_episode([message("user", "x"),
                           message("assistant", calls=[("cancel_reservation", {"id": i})])],
                          criteria=criteria(actions=[("cancel_reservation", {"id": "R1"})]),
                          benchmark="tau2", episode_id=f"tau2/e{i}", task_id=f"t{i}")
            for i in ("R1", "R2")]
    recs.insert(1, build_episode([message("user", "no expected actions")], benchmark="tau2",
                                 episode_id="tau2/none"))
    out = action_diff(episode_table(*recs))
    assert list(out.columns) == [*ID_COLUMNS, *ACTION_COLUMNS]
    assert out["episode_id"].tolist() == ["tau2/eR1", "tau2/eR2"]
    assert out["status"].tolist() == ["matched", "wrong_arguments"]
    summary = action_summary(out)
    assert list(summary.columns) == ["episode_id", *SUMMARY_COLUMNS]
    assert summary["all_matched"].tolist() == [True, False]
    assert summary["n_wrong_arguments"].tolist() == [0, 1]
    assert summary["checks_agree"].isna().all()


def test_empty_table_gives_the_columns():
    from accordkit.schema.arrow import empty_table

    out = action_diff(empty_table())
    assert out.empty and list(out.columns) == [*ID_COLUMNS, *ACTION_COLUMNS]


def test_accord_episodes_have_no_rows(sample_dir):
    out = action_diff(ak.load(sample_dir / "accord"))
    assert out.empty


# --------------------------------------------------------------------------- released files


def _stored(path):
    """(episode_id, action index) -> stored action_match, straight from the raw file."""
    raw = json.loads(path.read_text())
    out = {}
    for sim in raw["simulations"]:
        checks = (sim.get("reward_info") or {}).get("action_checks")
        for i, check in enumerate(checks or ()):
            out[(f"{'tau2' if 'tau2' in str(path.parent) else 'agentchangebench'}/{sim['id']}",
                 i)] = check["action_match"]
    return out


def _strip_checks(table):
    """The table with ``action_checks`` removed from every stored reward_info."""
    texts = []
    for text in table.column("reward_info_json").to_pylist():
        if text is None:
            texts.append(None)
            continue
        info = json.loads(text)
        info.pop("action_checks", None)
        texts.append(json.dumps(info))
    import pyarrow as pa

    i = table.schema.get_field_index("reward_info_json")
    return table.set_column(i, "reward_info_json", pa.array(texts, pa.string()))


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", ["tau2/airline_grok-3_4tasks_4trials.json",
                                  "tau2/telecom_grok-3_5tasks_1trial.json",
                                  "agentchangebench/banking_gpt-4.1_legacy-reward_meta-tags_"
                                  "7sims.json"])
def test_diff_agrees_with_tau2_stored_checks_on_every_simulation(tau2_dir, name):
    path = tau2_dir.parent / name
    stored = _stored(path)
    assert stored  # every file here stores checks
    table = _strip_checks(arrow_table(ak.load(path)))
    out = action_diff(table)
    assert out["stored_match"].isna().all()  # nothing copied: the checks were removed
    ours = out[out["action_index"].notna()]
    got = {(e, int(i)): s == "matched" for e, i, s in
           zip(ours["episode_id"], ours["action_index"], ours["status"], strict=True)}
    assert set(got) == set(stored)
    assert got == stored
    # unstripped: the agreement column says the same
    full = action_diff(ak.load(path))
    known = full["agrees_with_stored"].dropna()
    assert len(known) == len(stored) and known.all()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_released_files_of_every_benchmark_get_a_diff(tau2_dir):
    fixtures = tau2_dir.parent
    tau = fixtures / "taubench" / "airline_gpt-4o_3tasks_4trials.json"
    acb = fixtures / "agentchangebench" / "banking_gpt-4.1_13sims_tasks-trimmed.json"
    if not tau.exists() or not acb.exists():
        pytest.skip("τ-bench or AgentChangeBench fixture missing")
    t = action_diff(ak.load(tau))
    # τ-bench task 0, trial 0 (first record): the booking differs in one argument only
    first = t[t["episode_id"] == t["episode_id"].iloc[0]]
    row = one(first, action_index=0)
    assert row["status"] == "wrong_arguments" and row["diff_args"] == "nonfree_baggages"
    assert set(t["benchmark"]) == {"taubench"}
    a = action_diff(ak.load(acb))
    assert set(a["benchmark"]) == {"agentchangebench"}
    assert {"matched", "wrong_arguments", "missing"} <= set(a["status"])
