"""TSR: action / NL / communicate channels, reweighting, stored flags, verdict tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from accordkit.judges.verdicts import attach_verdicts
from accordkit.metrics.tsr import combine_channels, params_match, tsr_channels
from accordkit.schema import EPISODE_FEATURES
from accordkit.testing import build_episode, criteria, message


def table_of(*records):
    return pa.Table.from_pylist(list(records), schema=EPISODE_FEATURES.arrow_schema)


def asst(*calls, text=None):
    return message("assistant", text, calls=list(calls) or None)


def verdicts(*met):
    return [{"assertion": f"a{i}", "met": m, "justification": ""} for i, m in enumerate(met)]


def score(rec, verdicts=None, **kw):
    table = table_of(rec)
    if verdicts is not None:
        table = attach_verdicts(table, verdicts)
    return tsr_channels(table, **kw).iloc[0]


# --------------------------------------------------------------------------- parameters


@pytest.mark.parametrize("actual, expected, match", [
    ({"amount": 120.0}, {"amount": 120}, True),        # integer vs float: Python ==
    ({"amount": 120}, {"amount": 120.0}, True),
    ({"amount": "120"}, {"amount": 120}, False),        # text is not a number
    ({"flag": 1}, {"flag": True}, True),                # True == 1 in Python
    ({"a": 1, "extra": 2}, {"a": 1}, True),             # extra keys allowed
    ({"b": 1}, {"a": 1}, False),                        # missing key
    ({"ids": [2, 1]}, {"ids": [1, 2]}, False),          # list order matters
    ({"d": {"y": 1, "x": 2}}, {"d": {"x": 2, "y": 1}}, True),  # dict key order does not
    ({"a": "Rent"}, {"a": "rent"}, False),              # exact strings
    ({"anything": 1}, {}, True),
    ({"anything": 1}, None, True),
    (["not", "a", "dict"], {"a": 1}, False),
])
def test_params_match(actual, expected, match):
    assert params_match(actual, expected) is match


def test_expected_params_must_be_an_object():
    with pytest.raises(ValueError, match="must be a JSON object"):
        params_match({"a": 1}, [1])


def test_integer_vs_float_in_episode_arguments():
    crit = criteria(action_sets=[[("pay", {"amount": 120})]])
    rec = build_episode([asst(("pay", '{"amount": 120.0}'))], criteria=crit)
    assert score(rec)["tsr_action"] == 1.0
    rec = build_episode([asst(("pay", '{"amount": "120"}'))], criteria=crit)
    assert score(rec)["tsr_action"] == 0.5


# --------------------------------------------------------------------------- action


def test_best_match_vs_upstream_first_call():
    crit = criteria(action_sets=[[("lock_card", {"card_id": "K1"})], [("get_card", {})]])
    rec = build_episode([asst(("lock_card", {"card_id": "K9"})),
                         asst(("lock_card", {"card_id": "K1"}))], criteria=crit)
    # set 1: best match 1.0, first call only 0.5; set 2: tool never called, 0.
    assert score(rec)["tsr_action"] == 0.5
    assert score(rec, action_mode="upstream")["tsr_action"] == 0.25


def test_set_takes_its_best_allowed_tool_and_calls_of_any_role_count():
    crit = criteria(action_sets=[[("refund", {"order": "W1"}), ("exchange", {"order": "W1"})]])
    rec = build_episode([message("user", calls=[("exchange", {"order": "W1"})]),
                         asst(("refund", {"order": "W2"}))], criteria=crit)
    assert score(rec)["tsr_action"] == 1.0
    assert score(rec, action_mode="upstream")["tsr_action"] == 1.0


def test_legacy_actions_are_used_only_without_action_sets():
    legacy = criteria(actions=[("cancel", {"id": "R1", "reason": "change of plan"})])
    rec = build_episode([asst(("cancel", {"id": "R1", "reason": "plans changed"}))],
                        criteria=legacy)
    assert score(rec)["tsr_action"] == 0.5     # every legacy argument must match
    both = criteria(action_sets=[[("cancel", {"id": "R1"})]],
                    actions=[("other", {"x": 1})])
    rec = build_episode([asst(("cancel", {"id": "R1", "reason": "x"}))], criteria=both)
    assert score(rec)["tsr_action"] == 1.0


def test_set_with_no_call_scores_zero_and_no_tool_calls_at_all():
    crit = criteria(action_sets=[[("pay", {})]], nl_assertions=[])
    rec = build_episode([message("assistant", "Hello")], criteria=crit)
    row = score(rec)
    assert row["tsr_action"] == 0.0 and row["tsr"] == 0.0


def test_bad_expected_parameters_name_the_record():
    crit = criteria(action_sets=[[("pay", "[1, 2]")]])
    rec = build_episode([asst(("pay", {"amount": 1}))], criteria=crit,
                        episode_id="agentchangebench/e9", source="run.json", validate=False)
    with pytest.raises(ValueError, match="file run.json, record agentchangebench/e9, field "
                                         "criteria .action pay.: expected parameters must be"):
        tsr_channels(table_of(rec))


def test_unknown_action_mode():
    rec = build_episode([message("assistant", "x")])
    with pytest.raises(ValueError, match="action_mode must be one of"):
        tsr_channels(table_of(rec), action_mode="first")


# --------------------------------------------------------------------------- communicate


def test_communicate_is_a_lowercase_substring_of_joined_assistant_text():
    crit = criteria(communicate_info=["Card ENDING 4421", "refund of $1,000", "locked now",
                                      "never said"])
    rec = build_episode([message("assistant", "Your card ending"),
                         message("user", "locked now"),        # user text does not count
                         message("assistant", "4421 is locked"),
                         message("assistant", "A refund of $1000 is coming.")], criteria=crit)
    # "card ending 4421" spans two messages joined by a space; commas are not stripped.
    assert score(rec)["tsr_communicate"] == 0.25


@pytest.mark.parametrize("benchmark, expected", [
    # ACB: the assistant texts joined; "card ending 4421" spans two messages, commas kept
    ("agentchangebench", 2 / 3),
    # tau2 / tau-bench: some single message, its commas removed: "23553" is said, the
    # phrase with the comma and the one spanning two messages are not
    ("tau2", 1 / 3),
    ("taubench", 1 / 3),
])
def test_tau2_and_taubench_match_communicate_strings_by_their_own_rule(benchmark, expected):
    crit = criteria(communicate_info=["Card ending 4421", "23553", "total is $23,553"])
    rec = build_episode([message("assistant", "Your card ending"),
                         message("assistant", "4421 is locked. The total is $23,553.")],
                        criteria=crit, benchmark=benchmark, episode_id=f"{benchmark}/e")
    assert score(rec)["tsr_communicate"] == pytest.approx(expected)


def test_taubench_communicate_agrees_with_the_stored_output_check():
    import json

    import accordkit as ak

    from ..conftest import FIXTURES, _need

    path = _need(FIXTURES / "taubench" / "airline_gpt-4o_3tasks_4trials.json")
    runs = json.loads(path.read_text())
    with pytest.warns(UserWarning, match="does not say the agent model"):
        scores = ak.score(ak.load(str(path), cache=False))
    checked = 0
    for run, (_, row) in zip(runs, scores.iterrows(), strict=True):
        stored = ((run.get("info") or {}).get("reward_info") or {}).get("info", {})
        if stored.get("r_outputs") is not None:
            # tau-bench's r_outputs is 1 when every required output was said
            assert stored["r_outputs"] == float(row["tsr_communicate"] == 1.0), run["task_id"]
            checked += 1
    assert checked >= 3


def test_no_assistant_text_scores_zero():
    crit = criteria(communicate_info=["x"])
    rec = build_episode([asst(("f", {})), message("user", "x")], criteria=crit)
    assert score(rec)["tsr_communicate"] == 0.0


# --------------------------------------------------------------------------- NL and weights


def test_nl_from_stored_verdicts_divides_by_task_assertions():
    crit = criteria(nl_assertions=["a0", "a1", "a2"])
    rec = build_episode([message("assistant", "x")], criteria=crit,
                        nl_verdicts=verdicts(True, True, False))
    row = score(rec)
    assert row["tsr_nl"] == pytest.approx(2 / 3) and row["tsr"] == pytest.approx(2 / 3)
    assert not row["nl_unjudged"]
    # A judge that returned more met items than assertions is clamped to 1.
    rec = build_episode([message("assistant", "x")], criteria=criteria(nl_assertions=["a0"]),
                        nl_verdicts=verdicts(True, True))
    assert score(rec)["tsr_nl"] == 1.0


def test_nl_judge_failure_drops_the_channel_and_flags_the_episode():
    crit = criteria(action_sets=[[("pay", {})]], nl_assertions=["a0", "a1"],
                    communicate_info=["done"])
    rec = build_episode([asst(("pay", {})), message("assistant", "All done.")], criteria=crit)
    row = score(rec)
    assert math.isnan(row["tsr_nl"]) and bool(row["nl_unjudged"]) is True
    # action + communicate weights: 0.45/0.70 and 0.25/0.70; both channels score 1.
    assert row["tsr"] == 1.0
    assert not math.isnan(row["tsr"])


def test_verdict_table_fills_missing_nl_verdicts():
    crit = criteria(action_sets=[[("pay", {})]], nl_assertions=["a0", "a1"])
    rec = build_episode([message("assistant", "x")], criteria=crit,
                        episode_id="agentchangebench/e1")
    table = pd.DataFrame({"episode_id": "agentchangebench/e1", "judge": "nl_assertions",
                          "item": ["0", "1"], "verdict": ["met", "not_met"]})
    row = score(rec, verdicts=table)
    assert row["tsr_nl"] == 0.5 and not row["nl_unjudged"]
    # action 0 (weight .6) + NL 0.5 (weight .4)
    assert row["tsr"] == pytest.approx(0.2)
    # An invalid or missing item leaves the channel unjudged.
    partial = table.assign(verdict=["met", "invalid"])
    assert bool(score(rec, verdicts=partial)["nl_unjudged"]) is True
    assert bool(score(rec, verdicts=table.iloc[:1])["nl_unjudged"]) is True
    # Other judges' rows are ignored.
    assert bool(score(rec, verdicts=table.assign(judge="usersim_tests"))["nl_unjudged"]) is True


def test_stored_verdicts_win_over_the_table():
    crit = criteria(nl_assertions=["a0"])
    rec = build_episode([message("assistant", "x")], criteria=crit, nl_verdicts=verdicts(False),
                        episode_id="agentchangebench/e1")
    table = pd.DataFrame({"episode_id": ["agentchangebench/e1"], "judge": "nl_assertions",
                          "item": ["0"], "verdict": ["met"]})
    assert score(rec, verdicts=table)["tsr_nl"] == 0.0


def test_verdict_table_errors():
    rec = build_episode([message("assistant", "x")], criteria=criteria(nl_assertions=["a0"]),
                        episode_id="e")
    base = {"episode_id": ["e", "e"], "judge": "nl_assertions"}
    with pytest.raises(ValueError, match=r"lack the columns \['item', 'verdict'\]"):
        score(rec, verdicts=pd.DataFrame({"episode_id": ["e"], "judge": ["nl_assertions"]}))
    with pytest.raises(ValueError, match="conflicting nl_assertions verdicts for episode 'e'"):
        score(rec, verdicts=pd.DataFrame({**base, "item": ["0", "0"],
                                          "verdict": ["met", "not_met"]}))
    with pytest.raises(ValueError, match="is not an assertion index"):
        score(rec, verdicts=pd.DataFrame({**base, "item": ["x", "1"], "verdict": ["met", "met"]}))
    with pytest.raises(ValueError, match=r"verdict 'yes' is not one of \['invalid', 'met'"):
        score(rec, verdicts=pd.DataFrame({**base, "item": ["0", "1"], "verdict": ["yes", "met"]}))
    with pytest.raises(TypeError, match="pandas DataFrame"):
        score(rec, verdicts=[1, 2])


@pytest.mark.parametrize("action, nl, comm, expected", [
    (1.0, 0.0, 0.0, 0.45),
    (1.0, 0.0, math.nan, 0.45 / 0.75),          # action + NL: .6 / .4
    (0.0, math.nan, 1.0, 0.25 / 0.70),          # action + communicate: .642857 / .357143
    (math.nan, 1.0, 0.0, 0.30 / 0.55),          # NL + communicate: .545455 / .454545
    (math.nan, math.nan, 0.3, 0.3),             # one channel: weight 1
])
def test_weights_are_renormalised_over_active_channels(action, nl, comm, expected):
    assert combine_channels(action, nl, comm) == pytest.approx(expected, abs=1e-12)


def test_task_missing_a_channel_and_no_channel_at_all():
    crit = criteria(action_sets=[[("pay", {})]], nl_assertions=["a0"])   # no communicate_info
    rec = build_episode([asst(("pay", {}))], criteria=crit, nl_verdicts=verdicts(False))
    row = score(rec)
    assert math.isnan(row["tsr_communicate"])
    assert row["tsr"] == pytest.approx(0.6)
    # A task with no channel at all: TSR 0 with every channel NaN, as upstream stores it.
    empty = score(build_episode([message("assistant", "x")], criteria=criteria()))
    assert empty["tsr"] == 0.0
    assert all(math.isnan(empty[c]) for c in ("tsr_action", "tsr_nl", "tsr_communicate"))


def test_unknown_task_is_nan_not_zero():
    # No criteria and no stored tsr_details (e.g. a results file whose tasks list lacks the
    # task): nothing says which channels the task has, so TSR is unknown, not a failure.
    unknown = score(build_episode([message("assistant", "x")]))
    assert math.isnan(unknown["tsr"])
    # With stored tsr_details the stored channels still give TSR without the task.
    stored = score(build_episode([message("assistant", "x")], tsr_details={
        "overall_tsr": 0.5, "action": 0.5, "nl_assertion": None, "communicate_info": None,
        "has_actions": True, "has_nl_assertions": False, "has_communicate_info": False}))
    assert stored["tsr"] == pytest.approx(0.5)


def test_nl_only_task_without_verdicts_is_zero_not_nan():
    # The judge never ran (or failed) on a task whose only channel is NL: the channel is
    # inactive and flagged, and TSR is 0, never NaN because a judge is missing.
    rec = build_episode([message("assistant", "x")], criteria=criteria(nl_assertions=["a0"]))
    row = score(rec)
    assert row["tsr"] == 0.0 and math.isnan(row["tsr_nl"]) and bool(row["nl_unjudged"])


def test_stored_tsr_details_decide_which_channels_are_active():
    crit = criteria(action_sets=[[("pay", {})]], nl_assertions=["a0"])
    details = {"overall_tsr": 1.0, "action": 1.0, "nl_assertion": None, "communicate_info": None,
               "weight_action": 1.0, "weight_nl_assertion": None,
               "weight_communicate_info": None, "has_actions": True,
               "has_nl_assertions": False, "has_communicate_info": False}
    # The verdict is stored, but the run recorded the NL channel as inactive.
    rec = build_episode([asst(("pay", {}))], criteria=crit, nl_verdicts=verdicts(False),
                        tsr_details=details)
    row = score(rec)
    assert math.isnan(row["tsr_nl"]) and row["tsr"] == 1.0 and bool(row["nl_unjudged"])


def test_stored_score_is_used_when_the_record_cannot_be_rescored():
    # Checkpoint without its task definition: criteria missing, tsr_details stored.
    details = {"overall_tsr": 0.7, "action": 0.5, "nl_assertion": 1.0, "communicate_info": None,
               "weight_action": 0.6, "weight_nl_assertion": 0.4,
               "weight_communicate_info": None, "has_actions": True,
               "has_nl_assertions": True, "has_communicate_info": False}
    rec = build_episode([message("assistant", "x")], tsr_details=details)
    row = score(rec)
    assert (row["tsr_action"], row["tsr_nl"]) == (0.5, 1.0)
    assert row["tsr"] == pytest.approx(0.7)


def test_max_steps_runs_are_scored_like_any_other():
    crit = criteria(action_sets=[[("pay", {})]])
    rec = build_episode([asst(("pay", {}))], criteria=crit, termination_reason="max_steps")
    assert score(rec)["tsr"] == 1.0


def test_channels_are_nan_per_row_in_a_mixed_table():
    a = build_episode([asst(("pay", {}))], criteria=criteria(action_sets=[[("pay", {})]]),
                      episode_id="agentchangebench/a")
    b = build_episode([message("assistant", "done")],
                      criteria=criteria(communicate_info=["done"]),
                      episode_id="agentchangebench/b")
    out = tsr_channels(table_of(a, b))
    assert out["tsr_action"].tolist()[0] == 1.0 and np.isnan(out["tsr_action"].iloc[1])
    assert np.isnan(out["tsr_communicate"].iloc[0]) and out["tsr_communicate"].iloc[1] == 1.0
    assert out["tsr"].tolist() == [1.0, 1.0]


def test_communicate_scores_do_not_depend_on_chunking():
    from accordkit.metrics.calls import Transcripts
    from accordkit.metrics.tsr import _communicate_scores

    recs = [build_episode([message("assistant", "Order shipped" if i % 2 else "Nothing yet"),
                           message("user", "shipped?")], episode_id=f"agentchangebench/{i}",
                          criteria=criteria(communicate_info=["SHIPPED"] if i % 3 else []))
            for i in range(10)]
    table = table_of(*recs)
    whole = _communicate_scores(table, Transcripts(table))
    assert np.array_equal(whole, _communicate_scores(table, Transcripts(table), chunk=3),
                          equal_nan=True)
    assert whole[[1, 2, 5]].tolist() == [1.0, 0.0, 1.0] and np.isnan(whole[[0, 3]]).all()
