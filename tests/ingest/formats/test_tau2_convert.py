"""tau2-bench / AgentChangeBench results -> canonical episodes (``accordkit.ingest.formats.tau2.convert``)."""

from __future__ import annotations

import contextlib
import json
import warnings
from collections import Counter

import numpy as np
import pytest

import accordkit as ak
from accordkit.ingest.formats.tau2.convert import is_results_object, results_to_episodes
from accordkit.schema import EpisodeValidationError


def _no_task():
    """The warning for simulations whose task is not among the file's task definitions."""
    return pytest.warns(UserWarning, match="name a task id missing from 'tasks'")


def _raw(path):
    return json.loads(path.read_text())


# --------------------------------------------------------------------------- tau2 fixtures


def test_tau2_airline_ids_trials_and_seeds(tau2_dir):
    ds = ak.load(tau2_dir / "airline_grok-3_4tasks_4trials.json")
    assert len(ds) == 16
    assert set(ds["benchmark"]) == {"tau2"} and set(ds["domain"]) == {"airline"}
    per_task = Counter(ds["task_id"])
    assert per_task == {"8": 4, "11": 4, "24": 4, "32": 4}
    for row in ds:
        assert row["scenario_id"] == f"tau2/airline/{row['task_id']}"
        assert row["task_set"] is None and row["persona"] is None and row["goals"] is None
        assert row["num_trials"] == 4
        assert row["agent_model"] == row["user_model"] == "xai/grok-3"
        assert row["reward_basis"] == ["DB", "COMMUNICATE"]
    assert {tid: sorted(r for t, r in zip(ds["task_id"], ds["rollout"], strict=True) if t == tid)
            for tid in per_task} == {tid: [0, 1, 2, 3] for tid in per_task}
    seeds = {r: s for r, s in zip(ds["rollout"], ds["seed"], strict=True)}
    assert seeds == {0: 626729, 1: 373753, 2: 361454, 3: 1567}


def test_tau2_airline_stored_rewards(tau2_dir):
    ds = ak.load(tau2_dir / "airline_grok-3_4tasks_4trials.json")
    wins = Counter(t for t, r in zip(ds["task_id"], ds["reward"], strict=True) if r == 1.0)
    assert wins == {"8": 4, "11": 1, "24": 1, "32": 1}
    assert sum(ds["reward"]) / len(ds) == pytest.approx(0.4375)


def test_tau2_telecom_persona_tags_and_user_tool_calls(tau2_dir):
    ds = ak.load(tau2_dir / "telecom_grok-3_5tasks_1trial.json")
    assert Counter(ds["persona"]) == {"None": 3, "Easy": 2}
    for row in ds:
        assert (row["persona_text"] is not None) == (row["persona"] == "Easy")
    calls = Counter(m["role"] for row in ds for m in row["messages"] for _ in m["tool_calls"] or [])
    assert calls == {"assistant": 31, "user": 25}
    requestors = {c["requestor"] for row in ds for m in row["messages"] if m["role"] == "user"
                  for c in m["tool_calls"] or []}
    assert requestors == {"user"}
    failed = [r["task_id"] for r in ds if r["reward"] != 1.0]
    assert failed == ["[mobile_data_issue]data_saver_mode_on|data_usage_exceeded[PERSONA:Easy]"]


def test_tau2_criteria_and_tool_results(tau2_dir):
    raw = _raw(tau2_dir / "telecom_grok-3_5tasks_1trial.json")
    ds = ak.load(tau2_dir / "telecom_grok-3_5tasks_1trial.json")
    tasks = {t["id"]: t for t in raw["tasks"]}
    for row, sim in zip(ds, raw["simulations"], strict=True):
        ec = tasks[sim["task_id"]]["evaluation_criteria"]
        assert json.loads(row["criteria"]["env_assertions_json"]) == ec["env_assertions"]
        assert row["criteria"]["reward_basis"] == ["ENV_ASSERTION"]
        for msg, src in zip(row["messages"], sim["messages"], strict=True):
            if src["role"] == "tool":
                assert msg["tool_call_id"] == src["id"]
                assert msg["error"] is src["error"]
            for call, want in zip(msg["tool_calls"] or [], src.get("tool_calls") or [],
                                  strict=True):
                assert json.loads(call["arguments_json"]) == want["arguments"]
                assert call["name"] == want["name"] and call["id"] == want["id"]


# --------------------------------------------------------------------------- adapter rules


def _results(sims, *, info=None, tasks=None):
    base = {"num_trials": 1, "agent_info": {"implementation": "llm_agent", "llm": "a"},
            "user_info": {"implementation": "user_simulator", "llm": "u"},
            "environment_info": {"domain_name": "retail"}}
    base.update(info or {})
    return {"info": base, "tasks": tasks or [], "simulations": sims}


def _sim(sim_id="s1", task_id="7", messages=None):
    return {"id": sim_id, "task_id": task_id, "trial": 0,
            "messages": [{"role": "user", "content": "hi", "turn_idx": 0}]
            if messages is None else messages}


def test_is_results_object():
    assert is_results_object({"info": {}, "simulations": []})
    assert is_results_object({"info": {}, "tasks": []})
    assert not is_results_object({"info": "x", "simulations": []})
    assert not is_results_object([{"info": {}}])


def test_multi_tool_message_is_flattened_keeping_its_position():
    multi = {"role": "tool", "tool_messages": [
        {"role": "tool", "id": "c1", "content": "one", "error": False},
        {"role": "tool", "id": "c2", "content": "two", "error": True}]}
    msgs = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "name": "f", "arguments": {}}, {"id": "c2", "name": "g", "arguments": {}}]},
        multi, {"role": "assistant", "content": "done"}]
    with _no_task():
        (rec,) = results_to_episodes(_results([_sim(messages=msgs)]), source="x.json")
    got = [(m["role"], m["turn_idx"], m["sub_idx"], m["tool_call_id"], m["error"])
           for m in rec["messages"]]
    assert got == [("assistant", 0, 0, None, None), ("tool", 1, 0, "c1", False),
                   ("tool", 1, 1, "c2", True), ("assistant", 2, 0, None, None)]


@pytest.mark.parametrize("marker", [
    {"info": {"gsrt_judge_llm": "gpt-4o-mini"}},
    {"info": {"user_info": {"implementation": "retail_user_simulator", "llm": "u"}}},
    {"tasks": [{"id": "7", "user_scenario": {"goal_shifts": {"goals": ["a", "b"],
                                                             "required_shifts": 1}}}]},
])
def test_agentchangebench_is_recognised_by_content(marker):
    # the third marker defines the simulation's task; the others leave it undefined
    with _no_task() if "tasks" not in marker else contextlib.nullcontext():
        (rec,) = results_to_episodes(_results([_sim()], **marker), source="x.json")
    assert rec["benchmark"] == "agentchangebench"
    assert rec["scenario_id"] == "agentchangebench/retail/old/7"
    assert rec["episode_id"] == "agentchangebench/s1"


def test_plain_tau2_run():
    with _no_task():
        (rec,) = results_to_episodes(_results([_sim(task_id="abc")]), source="x.json")
    assert (rec["benchmark"], rec["scenario_id"], rec["task_set"]) == ("tau2", "tau2/retail/abc",
                                                                       None)


def test_simulation_without_task_definition_has_no_task_fields():
    tasks = [{"id": "other", "user_scenario": {"persona": "EASY_1"}}]
    with _no_task():
        (rec,) = results_to_episodes(_results([_sim()], tasks=tasks), source="x.json")
    assert rec["criteria"] is None and rec["goals"] is None and rec["persona"] is None


def test_numeric_task_ids_are_text():
    with _no_task():
        (rec,) = results_to_episodes(_results([_sim(task_id=12)]), source="x.json")
    assert rec["task_id"] == "12"


def test_bad_simulation_is_returned_as_an_error_not_raised():
    with _no_task():
        good, bad = results_to_episodes(_results([_sim(), _sim("s2", messages=[])]),
                                        source="x.json")
    assert good["episode_id"] == "tau2/s1"
    assert isinstance(bad, EpisodeValidationError)
    assert (bad.source, bad.record, bad.field) == ("x.json", "s2", "messages")


def test_legacy_criteria_keep_compare_args_and_arguments():
    tasks = [{"id": "7", "evaluation_criteria": {"actions": [
        {"action_id": "a0", "requestor": "assistant", "name": "refund",
         "arguments": {"order": "#1", "amount": 1.0}, "compare_args": ["order"]}],
        "communicate_info": ["12.50"], "nl_assertions": None}}]
    (rec,) = results_to_episodes(_results([_sim()], tasks=tasks), source="x.json")
    crit = rec["criteria"]
    assert crit["actions"] == [{"action_id": "a0", "requestor": "assistant", "name": "refund",
                                "arguments_json": '{"order": "#1", "amount": 1.0}',
                                "compare_args": ["order"]}]
    assert crit["communicate_info"] == ["12.50"] and crit["nl_assertions"] is None


def test_action_sets_keep_params_as_json_text():
    tasks = [{"id": "7", "evaluation_criteria": {"action_sets": [
        {"action_id": "s0", "allowed_tools": [{"function_name": "get", "params": {"n": 1}}],
         "max_score": 2}]}}]
    (rec,) = results_to_episodes(_results([_sim()], tasks=tasks), source="x.json")
    assert rec["criteria"]["action_sets"] == [
        {"action_id": "s0", "allowed_tools": [{"function_name": "get", "params_json": '{"n": 1}'}]}]


def test_allowed_tools_not_a_list_is_an_error():
    tasks = [{"id": "7", "evaluation_criteria": {"action_sets": [
        {"action_id": "s0", "allowed_tools": 5}]}}]
    (err,) = results_to_episodes(_results([_sim()], tasks=tasks), source="x.json")
    assert isinstance(err, EpisodeValidationError)
    assert err.field == "task.evaluation_criteria.action_sets[0].allowed_tools"


def test_gsrt_turn_that_is_not_finite_is_an_error():
    sim = _sim()
    sim["reward_info"] = {"reward": 1.0, "info": {"gsrt_v2": {
        "start_goal": {"turn": 0, "goal": "a"},
        "user_goal_shifts": [{"turn": float("inf"), "from": "a", "to": "b"}]}}}
    with _no_task():
        (err,) = results_to_episodes(_results([sim]), source="x.json")
    assert isinstance(err, EpisodeValidationError)
    assert err.field == "reward_info.info.gsrt_v2.user_goal_shifts[0].turn"


def test_header_errors_are_raised_for_the_whole_file():
    with pytest.raises(EpisodeValidationError) as exc:
        results_to_episodes(_results([_sim()], info={"agent_info": "gpt"}), source="x.json")
    assert (exc.value.record, exc.value.field) == ("(file header)", "info.agent_info")
    with pytest.raises(EpisodeValidationError, match="not a tau2/AgentChangeBench results"):
        results_to_episodes({"simulations": []}, source="x.json")


def test_records_of_one_task_do_not_share_their_criteria():
    tasks = [{"id": "7", "user_scenario": {"instructions": "x"},
              "evaluation_criteria": {"nl_assertions": ["a"]}}]
    first, second = results_to_episodes(_results([_sim("s1"), dict(_sim("s2"), trial=1)],
                                                 tasks=tasks), source="x.json")
    first["criteria"]["nl_assertions"].append("changed")
    assert second["criteria"]["nl_assertions"] == ["a"]


# --------------------------------------------------------------------------- completed, voice


@pytest.mark.parametrize(("ending", "completed"), [
    ("user_stop", True), ("agent_stop", True), ("max_steps", False),
    ("too_many_errors", False), ("infrastructure_error", False), (None, None)])
def test_completed_follows_the_termination_reason(ending, completed):
    # spec tau2-format.md section 11: completed = termination_reason in {user_stop, agent_stop}
    sim = dict(_sim(), termination_reason=ending)
    (rec,) = results_to_episodes(_results([sim], tasks=[{"id": "7"}]), source="x.json")
    assert rec["completed"] is completed and rec["termination_reason"] == ending


def test_completed_is_filled_on_the_typed_path_and_feeds_no_accord_metric(tmp_path):
    sims = [dict(_sim("s1"), termination_reason="agent_stop"),
            dict(_sim("s2"), trial=1, termination_reason="max_steps"),
            dict(_sim("s3"), trial=2)]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_results(sims, tasks=[{"id": "7"}])))
    ds = ak.load(path)
    assert ds["completed"] == [True, False, None]
    # tau2 rows are scored by the goal-shift metrics only: no AcCoRD completion or task score
    scores = ak.score(ds)
    assert not {"completed", "task_score", "outcome_score"} & set(scores.columns)


def test_null_messages_with_ticks_is_a_voice_run_on_the_general_path():
    sim = dict(_sim(), messages=None, ticks=[{"tick_id": 0}])
    (err,) = results_to_episodes(_results([sim], tasks=[{"id": "7"}]), source="x.json")
    assert isinstance(err, EpisodeValidationError) and err.field == "messages"
    assert "full-duplex (voice) runs store 'ticks'" in err.reason


def test_seed_outside_int64_warns_and_is_null():
    sim = dict(_sim(), seed=2**64)
    with pytest.warns(UserWarning, match=r"file x.json, record s1, field seed: integer "
                                         r"18446744073709551616 does not fit in int64"):
        (rec,) = results_to_episodes(_results([sim], tasks=[{"id": "7"}]), source="x.json")
    assert rec["seed"] is None


def test_a_task_without_criteria_has_no_checks_and_an_unknown_task_has_no_criteria(tmp_path):
    # evaluation_criteria: null is a task with no checks (TSR 0, as upstream); a task id
    # missing from 'tasks' is a task nobody knows (TSR NaN)
    import warnings

    from ..test_load_errors import _results, _sim, _write

    obj = _results(_sim("known"), _sim("unknown", task_id="gone"))
    obj["tasks"][0]["evaluation_criteria"] = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the missing task's note
        ds = ak.load(str(_write(tmp_path, obj)), cache=False)
        scores = ak.score(ds)
    known, unknown = ds[0]["criteria"], ds[1]["criteria"]
    assert known is not None and known["actions"] == [] and known["action_sets"] == []
    assert unknown is None
    assert scores["tsr"].iloc[0] == 0.0 and np.isnan(scores["tsr"].iloc[1])


def test_records_keep_the_json_rules_the_adapter_promises(acb_dir, tau2_dir):
    """``RULES_KEPT``: every JSON text of every converted record is an object's, so the
    loader may leave those rules out (checked here on the records, messages included)."""
    from accordkit.ingest.formats.tau2.convert import RULES_KEPT, iter_episodes
    from accordkit.schema import rule_problem

    assert RULES_KEPT and all(rule.test == "json_object" for rule in RULES_KEPT)
    n = 0
    for path in sorted([*acb_dir.glob("*.json"), *tau2_dir.glob("*.json")]):
        if path.name == "expected_upstream.json":
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for rec in iter_episodes(json.loads(path.read_text()), source=str(path)):
                if isinstance(rec, Exception):
                    continue
                assert rule_problem(rec, rules=RULES_KEPT) is None, (path.name, rec["episode_id"])
                n += 1
    assert n > 40


# --------------------------------------------------------------------------- issue 32, 35


def test_a_single_task_runner_file_with_null_trials_is_read_numbered_in_file_order(tmp_path):
    """tau2's single-task runner writes ``"trial": null`` on every simulation (issue 32):
    the trials are numbered within their task in file order, with a note."""
    from ..test_load_errors import _results as results
    from ..test_load_errors import _sim as sim

    sims = [sim("a", trial=None), sim("b", trial=None, task_id="t2"), sim("c", trial=None),
            sim("d", trial=None)]
    task2 = {"id": "t2", "user_scenario": {"persona": None, "instructions": "Other."},
             "evaluation_criteria": {"actions": [], "communicate_info": []}}
    obj = results(*sims)
    obj["tasks"].append(task2)
    path = tmp_path / "single_task_runner.json"
    path.write_text(json.dumps(obj, indent=2))
    for cache in (False, True, True):               # afresh, then filling and from the cache
        ds, report = ak.load_with_report(path, cache=cache)
        assert report.skipped == []
        assert list(zip(ds["episode_id"], ds["task_id"], ds["rollout"], strict=True)) == [
            ("tau2/a", "t1", 0), ("tau2/b", "t2", 0), ("tau2/c", "t1", 1), ("tau2/d", "t1", 2)]
        (note,) = [n for n in report.notes if "no trial" in n]
        assert note.startswith(f"{path}: 4 simulation(s) have no trial")
    # the scores see them as the trials they are (pass^k counts per task)
    with pytest.warns(UserWarning, match="4 simulation.s. have no trial"):
        scores = ak.score(ak.load(path))
    assert sorted(scores["rollout"]) == [0, 0, 1, 2]


def test_null_trials_skip_the_numbers_of_their_tasks_other_trials(tmp_path):
    from ..test_load_errors import _results as results
    from ..test_load_errors import _sim as sim

    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(results(sim("a", trial=None), sim("b", trial=0),
                                       sim("c", trial=None))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ak.load(path, cache=False)["rollout"] == [1, 0, 2]


@pytest.mark.parametrize("reward", [1e308, -0.5, 1.5])
def test_a_reward_outside_the_benchmarks_range_is_a_problem_naming_it(tmp_path, reward):
    """A reward of 1e308 used to load silently (a mean of 9e306, issue 35)."""
    from ..test_load_errors import _results as results
    from ..test_load_errors import _sim as sim

    bad = sim("bad", reward_info={"reward": reward, "reward_basis": ["DB"],
                                  "reward_breakdown": {"DB": 1.0}})
    path = tmp_path / "run.json"
    path.write_text(json.dumps(results(sim("ok"), bad)))
    with pytest.raises(ak.EpisodeValidationError) as exc:
        ak.load(path, cache=False)
    err = exc.value
    assert (err.source, err.record, err.field) == (str(path), "bad", "reward_info.reward")
    assert "expected a reward in [0, 1]" in err.reason and repr(reward)[:6] in err.reason
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds, report = ak.load_with_report(path, errors="skip", cache=False)
    assert ds["episode_id"] == ["tau2/ok"]
    assert [(s.record, s.field) for s in report.skipped] == [("bad", "reward_info.reward")]


def test_a_canonical_reward_outside_the_range_is_a_problem_of_its_record(tmp_path):
    from ..test_load_canonical import _ep, _jsonl

    src = _jsonl(tmp_path / "eps.jsonl", [_ep(0, reward=1.0), _ep(1, reward=1e308)])
    with pytest.raises(ak.EpisodeValidationError) as exc:
        ak.load(src, cache=False)
    assert (exc.value.record, exc.value.field) == ("e1 (line 2)", "reward")
    assert "expected a reward in [0, 1]" in exc.value.reason


def test_the_field_map_is_data_naming_canonical_columns_and_source_fields():
    from accordkit.ingest.formats.tau2.convert import FIELDS, SCOPES

    assert len({f.column for f in FIELDS}) == len(FIELDS)
    assert {f.column for f in FIELDS} <= set(ak.EPISODE_FEATURES)
    assert {f.scope for f in FIELDS} <= set(SCOPES)
    by_column = {f.column: f.field for f in FIELDS}
    assert by_column["agent_model"] == "info.agent_info.llm"
    assert by_column["reward"] == "reward_info.reward"
    assert by_column["goals"] == "task.user_scenario.goal_shifts.goals"
