"""τ-bench (v1) result files -> canonical episodes (``accordkit.ingest.formats.taubench``)."""

from __future__ import annotations

import copy
import json
from collections import Counter

import pytest

import accordkit as ak
from accordkit.ingest.formats.taubench import (
    RUN_ERROR,
    guess_domain,
    is_run_py_name,
    looks_like_taubench,
    metadata_from_filename,
    read_taubench,
    run_id,
)
from accordkit.schema import EpisodeValidationError

from ...conftest import FIXTURES, _need

NAME = "airline_gpt-4o_3tasks_4trials.json"


@pytest.fixture(scope="module")
def fixture_path():
    return _need(FIXTURES / "taubench" / NAME)


@pytest.fixture(scope="module")
def raw(fixture_path):
    return json.loads(fixture_path.read_text())


def _no_model():
    """The warning a τ-bench file whose name does not say the agent model gives on load."""
    return pytest.warns(UserWarning, match="does not say the agent model")


def _write(tmp_path, records, name="run.json"):
    path = tmp_path / name
    path.write_text(json.dumps(records))
    return path


# --------------------------------------------------------------------------- the fixture


def test_fixture_is_recognised_by_content_and_mapped(fixture_path, raw):
    assert looks_like_taubench(raw)
    with pytest.warns(UserWarning, match="does not say the agent model"):
        ds = ak.load(fixture_path, cache=False)
    assert len(ds) == 12
    assert set(ds["benchmark"]) == {"taubench"}
    assert set(ds["domain"]) == {"airline"}          # from the tools: not in the file name
    assert Counter(ds["task_id"]) == {"0": 4, "1": 4, "2": 4}
    assert [(r["task_id"], r["trial"]) for r in raw] == [
        (int(t), r) for t, r in zip(ds["task_id"], ds["rollout"], strict=True)]
    assert set(ds["num_trials"]) == {4}
    assert ds["reward"] == [r["reward"] for r in raw]
    assert ds["user_cost"] == pytest.approx([r["info"].get("user_cost") for r in raw])
    assert len(set(ds["episode_id"])) == 12
    assert ds["scenario_id"][0] == "taubench/airline/0"
    # nothing in this file or its name says which models ran
    assert set(ds["agent_model"]) == {None} and set(ds["method"]) == {None}


def test_messages_keep_tool_calls_and_results(fixture_path, raw):
    with _no_model():
        row = ak.load(fixture_path)[0]
    traj = raw[0]["traj"]
    assert [m["role"] for m in row["messages"]] == [m["role"] for m in traj]
    assert [m["turn_idx"] for m in row["messages"]] == list(range(len(traj)))
    first_call = next(i for i, m in enumerate(traj) if m.get("tool_calls"))
    call = row["messages"][first_call]["tool_calls"][0]
    want = traj[first_call]["tool_calls"][0]
    assert call["name"] == want["function"]["name"]
    assert call["id"] == want["id"]
    assert json.loads(call["arguments_json"]) == json.loads(want["function"]["arguments"])
    result = row["messages"][first_call + 1]
    assert result["role"] == "tool" and result["tool_call_id"] == want["id"]
    assert result["content"] == traj[first_call + 1]["content"]


def test_expected_actions_outputs_and_endings(fixture_path, raw):
    with _no_model():
        ds = ak.load(fixture_path)
    crit = ds[0]["criteria"]
    task = raw[0]["info"]["task"]
    assert [a["name"] for a in crit["actions"]] == [a["name"] for a in task["actions"]]
    assert [json.loads(a["arguments_json"]) for a in crit["actions"]] == [
        a["kwargs"] for a in task["actions"]]
    assert crit["communicate_info"] == task["outputs"]
    assert ds[0]["instructions"] == task["instruction"]
    want = ["user_stop" if r["info"]["source"] == "user" else f"tool:{r['info']['source']}"
            for r in raw]
    assert ds["termination_reason"] == want
    assert "tool:transfer_to_human_agents" in want
    scores = ak.score(ds)
    assert scores["success"].tolist() == [r["reward"] == 1.0 for r in raw]
    assert scores["reward"].mean() == pytest.approx(2 / 12)


# --------------------------------------------------------------------------- metadata


RUN_PY_NAMES = [
    ("tool-calling-gpt-4o-0.0_range_0-50_user-gpt-4o-llm_0614120102.json",
     {"method": "tool-calling", "agent_model": "gpt-4o", "user_model": "gpt-4o",
      "user_implementation": "llm"}),
    ("react-claude-3-5-sonnet-20241022-0.0_range_0-115_user-gpt-4o-react_1105093000.json",
     {"method": "react", "agent_model": "claude-3-5-sonnet-20241022", "user_model": "gpt-4o",
      "user_implementation": "react"}),
    ("few-shot-Meta-Llama-3.1-70B-Instruct-0.5_range_10-20_user-gpt-4-turbo-verify_0101.json",
     {"method": "few-shot", "agent_model": "Meta-Llama-3.1-70B-Instruct",
      "user_model": "gpt-4-turbo", "user_implementation": "verify"}),
    ("act-gpt-4o-mini-1.0_range_0--1_user-gpt-4o-mini-reflection_1231235959.json",
     {"method": "act", "agent_model": "gpt-4o-mini", "user_model": "gpt-4o-mini",
      "user_implementation": "reflection"}),
]


@pytest.mark.parametrize(("name", "want"), RUN_PY_NAMES)
def test_run_py_file_names_give_models_and_strategies(name, want):
    assert metadata_from_filename(f"/some/dir/{name}") == want


def test_renamed_and_unrelated_file_names():
    assert metadata_from_filename("gpt-4o-retail.json") == {"agent_model": "gpt-4o",
                                                           "domain": "retail"}
    assert metadata_from_filename("claude-3-5-sonnet-20241022-airline.json") == {
        "agent_model": "claude-3-5-sonnet-20241022", "domain": "airline"}
    assert metadata_from_filename(NAME) == {}
    assert metadata_from_filename("airline.json") == {}


def test_loading_a_run_py_named_file_fills_the_configuration(tmp_path, raw):
    name, want = RUN_PY_NAMES[0]
    ds = ak.load(_write(tmp_path, raw, name))
    for key, value in want.items():
        assert set(ds[key]) == {value}
    table = ak.pass_hat_k(ak.score(ds))
    assert table[["domain", "agent_model", "method", "user_model",
                  "user_implementation"]].drop_duplicates().values.tolist() == [
        ["airline", "gpt-4o", "tool-calling", "gpt-4o", "llm"]]


def test_metadata_given_to_load_wins(tmp_path, raw, fixture_path):
    name, _ = RUN_PY_NAMES[0]
    ds = ak.load(_write(tmp_path, raw, name), metadata={"agent_model": "gpt-4o-2024-05-13"})
    assert set(ds["agent_model"]) == {"gpt-4o-2024-05-13"}
    assert set(ds["method"]) == {"tool-calling"}              # the rest from the name
    with _no_model():
        ds = ak.load(fixture_path, metadata={"domain": "airline", "user_model": "gpt-4o",
                                             "split": "test"})
    assert set(ds["user_model"]) == {"gpt-4o"} and set(ds["split"]) == {"test"}
    with pytest.raises(EpisodeValidationError, match=r"unknown metadata key\(s\) \['model'\]"):
        ak.load(fixture_path, metadata={"model": "x"})


def test_domain_from_tools_prompt_or_metadata(tmp_path, raw):
    retail = [{"task_id": 0, "trial": 0, "reward": 1.0,
               "info": {"task": {"actions": [{"name": "get_order_details",
                                              "kwargs": {"order_id": "#1"}}]}},
               "traj": [{"role": "system", "content": "You are a helpful agent."},
                        {"role": "user", "content": "hi"}]}]
    assert guess_domain(retail) == "retail"
    prompt_only = [{"task_id": 0, "trial": 0, "reward": 0.0, "info": {},
                    "traj": [{"role": "system", "content": "# Airline Agent Policy"},
                             {"role": "user", "content": "hi"}]}]
    assert guess_domain(prompt_only) == "airline"
    unknown = [{"task_id": 0, "trial": 0, "reward": 0.0, "info": {},
                "traj": [{"role": "user", "content": "hi"}]}]
    path = _write(tmp_path, unknown)
    with pytest.raises(EpisodeValidationError, match="metadata=") as info:
        ak.load(path)
    assert info.value.field == "domain" and info.value.source == str(path)
    with _no_model():
        assert set(ak.load(path, metadata={"domain": "telecom"})["domain"]) == {"telecom"}


# --------------------------------------------------------------------------- run errors


def test_a_run_that_raised_is_its_own_termination_reason_and_a_failure(tmp_path, raw):
    records = copy.deepcopy(raw)
    records.append({"task_id": 1, "trial": 4, "reward": 0.0, "traj": [],
                    "info": {"error": "RateLimitError: too many requests",
                             "traceback": "Traceback ...\nRateLimitError"}})
    with _no_model():
        ds = ak.load(_write(tmp_path, records))
    assert len(ds) == 13 and set(ds["num_trials"]) == {5}
    row = ds[12]
    assert row["termination_reason"] == RUN_ERROR and row["reward"] == 0.0
    event = row["messages"][0]
    assert event["event"] == RUN_ERROR and event["error"] is True
    assert json.loads(event["event_json"])["error"].startswith("RateLimitError")
    scores = ak.score(ds)
    assert scores.loc[12, "success"] == False  # noqa: E712 - a boolean NA-aware column
    table = ak.pass_hat_k(scores, rule="taubench")
    assert table["n_excluded"].iloc[0] == 0 and table["k"].max() == 5


# --------------------------------------------------------------------------- bad input


def _break(records, pos, fn):
    records = copy.deepcopy(records)
    fn(records[pos])
    return records


def _first_call(rec):
    return next(m for m in rec["traj"] if m.get("tool_calls"))["tool_calls"][0]


BAD = [
    ("no traj", lambda r: r.pop("traj"), "traj", "needs 'traj'"),
    ("traj not a list", lambda r: r.update(traj={"role": "user"}), "traj",
     "expected a list of messages, got dict"),
    ("arguments not JSON", lambda r: _first_call(r)["function"].update(arguments="{oops"),
     "function.arguments", "arguments are text but not JSON"),
    ("unknown role", lambda r: r["traj"][1].update(role="customer"), "traj[1].role",
     "unknown role 'customer'"),
]


@pytest.mark.parametrize(("what", "breaker", "field", "reason"), BAD,
                         ids=[b[0] for b in BAD])
def test_bad_records_name_file_record_and_field(tmp_path, raw, what, breaker, field, reason):
    path = _write(tmp_path, _break(raw, 5, breaker))
    with pytest.raises(EpisodeValidationError, match=reason) as info:
        ak.load(path)
    err = info.value
    assert err.source == str(path)
    assert err.record == "task 2 trial 1 (item 5)"
    assert err.field.endswith(field)
    with pytest.warns(ak.SkippedRecordsWarning) as caught, _no_model():
        ds = ak.load(path, errors="skip")
    broken_id = f"taubench/{run_id(json.loads(path.read_text()), str(path))}/2/1"
    assert len(ds) == 11 and broken_id not in ds["episode_id"]
    skipped = [s for w in caught for s in getattr(w.message, "skipped", [])]
    assert len(skipped) == 1 and skipped[0].field.endswith(field)


def test_read_taubench_raise_and_skip(raw):
    broken = _break(raw, 0, lambda r: r.update(trial="zero"))
    with pytest.raises(EpisodeValidationError, match="expected an integer") as info, \
            _no_model():
        read_taubench(broken, source="x.json")
    assert info.value.record == "item 0" and info.value.field == "trial"
    with _no_model():
        items = read_taubench(broken, source="x.json", errors="skip")
    assert isinstance(items[0], EpisodeValidationError)
    assert all(isinstance(i, dict) for i in items[1:])


def test_other_json_is_not_taken_for_taubench():
    assert not looks_like_taubench([])
    assert not looks_like_taubench({"task_id": 0, "traj": []})
    assert not looks_like_taubench([{"benchmark": "tau2", "episode_id": "e", "task_id": "1",
                                     "traj": []}])
    assert not looks_like_taubench([1, 2, 3])


# --------------------------------------------------------------------------- synthetic runs


def _tiny_run(reward: float = 1.0) -> list[dict]:
    """A two-record airline run (enough for the domain to be told from the tools)."""
    def record(task_id: int) -> dict:
        return {"task_id": task_id, "trial": 0, "reward": reward,
                "info": {"source": "user", "user_cost": 0.01,
                         "task": {"user_id": "u1", "instruction": "Cancel it.", "outputs": [],
                                  "actions": [{"name": "cancel_reservation",
                                               "kwargs": {"reservation_id": "R1"}}]}},
                "traj": [{"role": "system", "content": "# Airline Agent Policy"},
                         {"role": "user", "content": "Cancel R1."},
                         {"role": "assistant", "content": "Done."}]}
    return [record(0), record(1)]


def test_same_file_name_in_two_folders_gives_two_runs(tmp_path):
    # nothing in a τ-bench file names its run: the id carries a digest of the content
    for folder, reward in (("seed1", 1.0), ("seed2", 0.0)):  # e.g. two seeds of one model
        (tmp_path / folder).mkdir()
        _write(tmp_path / folder, _tiny_run(reward), "gpt-4o-airline.json")
    ds, report = ak.load_with_report(tmp_path)
    assert len(ds) == 4 and report.skipped == [] and report.duplicates == {}
    assert len(set(ds["episode_id"])) == 4
    runs = {eid.split("/")[1] for eid in ds["episode_id"]}
    assert len(runs) == 2 and all(r.startswith("gpt-4o-airline@") for r in runs)
    assert sorted(ds["scenario_id"]) == ["taubench/airline/0"] * 2 + ["taubench/airline/1"] * 2
    assert set(ds["agent_model"]) == {"gpt-4o"}


def test_episode_ids_do_not_depend_on_the_path_a_file_is_loaded_by(tmp_path, monkeypatch):
    path = _write(tmp_path, _tiny_run(), "gpt-4o-airline.json")
    ids = ak.load(path)["episode_id"]
    monkeypatch.chdir(tmp_path)
    assert ak.load("gpt-4o-airline.json")["episode_id"] == ids
    copy_dir = tmp_path / "copy"
    copy_dir.mkdir()
    # re-indenting or reordering keys is the same run
    (copy_dir / path.name).write_text(json.dumps([dict(reversed(list(r.items())))
                                                  for r in _tiny_run()], indent=2))
    assert ak.load(copy_dir / path.name)["episode_id"] == ids
    # the same run in two places is loaded once, reported as a duplicate (as before)
    ds, report = ak.load_with_report([path, copy_dir / path.name])
    assert ds["episode_id"] == ids and sorted(report.duplicates) == sorted(ids)
    assert ids[0] == f"taubench/{run_id(_tiny_run(), 'anywhere/gpt-4o-airline.json')}/0/0"


def test_run_id_is_the_stem_and_a_content_digest():
    run = run_id(_tiny_run(), "/a/b/gpt-4o-airline.json")
    stem, digest = run.split("@")
    assert stem == "gpt-4o-airline" and len(digest) == 8 and int(digest, 16) >= 0
    assert run_id(_tiny_run(), "x/gpt-4o-airline.json") == run
    assert run_id(_tiny_run(0.0), "x/gpt-4o-airline.json") != run
    assert run_id(_tiny_run(), "").startswith("run@")


RUN_PY_EMPTY = "tool-calling-gpt-4o-0.0_range_0-0_user-gpt-4o-llm_0614.json"


def test_empty_list_under_a_run_py_name_is_a_run_of_no_episodes(tmp_path):
    assert is_run_py_name(f"runs/{RUN_PY_EMPTY}") and not is_run_py_name("gpt-4o-airline.json")
    assert read_taubench([], source=RUN_PY_EMPTY) == []
    path = _write(tmp_path, [], RUN_PY_EMPTY)
    ds, report = ak.load_with_report(path)
    assert len(ds) == 0 and report.skipped == [] and report.files[str(path)].episodes == 0
    assert report.notes == [f"{path}: an empty τ-bench result list (run.py writes [] for an "
                            "empty task range or a run stopped before its first task ended): "
                            "0 episodes"]
    # beside a non-empty run in a folder
    _write(tmp_path, _tiny_run(), "gpt-4o-airline.json")
    with pytest.warns(UserWarning, match="an empty τ-bench result list"):
        assert len(ak.load(tmp_path)) == 2


def test_empty_list_under_another_name_is_still_an_error(tmp_path):
    path = _write(tmp_path, [], "gpt-4o-airline.json")
    with pytest.raises(EpisodeValidationError) as info:
        ak.load(path)
    err = info.value
    assert (err.source, err.record, err.field) == (str(path), "(whole file)", "(top level)")
    assert err.reason.endswith("(found a list of 0 item(s); an empty list is read as a "
                               "τ-bench run of 0 episodes only when its file name follows "
                               "τ-bench run.py's pattern)")
    with pytest.raises(EpisodeValidationError, match="only when its file name follows"):
        read_taubench([], source="gpt-4o-airline.json")
    with pytest.raises(EpisodeValidationError, match=r"unknown metadata key"):
        read_taubench([], source=RUN_PY_EMPTY, metadata={"model": "x"})


def test_bytes_that_are_not_utf8_are_noted(tmp_path):
    run = _tiny_run()
    run[1]["traj"][1]["content"] = "Cancel RX."
    path = tmp_path / "gpt-4o-airline.json"
    path.write_bytes(json.dumps(run).encode().replace(b"RX", b"R\xff"))
    ds, report = ak.load_with_report(path)
    assert ds[1]["messages"][1]["content"] == "Cancel R\ufffd."
    assert report.notes == [f"{path}: bytes that are not UTF-8 were replaced by U+FFFD "
                            f"(line 1); record(s) affected: {ds[1]['episode_id']}"]


def test_lone_surrogate_in_a_taubench_file_is_noted(tmp_path):
    run = _tiny_run()
    run[0]["traj"][2]["content"] = "Done \ud83d"
    path = _write(tmp_path, run, "gpt-4o-airline.json")
    ds, report = ak.load_with_report(path)
    assert ds[0]["messages"][2]["content"] == "Done \ufffd"
    assert len(report.notes) == 1 and "lone UTF-16 surrogate" in report.notes[0]
    assert report.notes[0].endswith(f"record(s) affected: {ds[0]['episode_id']}")


def test_a_taubench_reward_outside_the_range_is_a_problem_naming_it(tmp_path):
    """Issue 35: a reward of 1e308 is its record's problem, not a mean of 9e306."""
    path = _write(tmp_path, _tiny_run(1e308), "gpt-4o-airline.json")
    ds, report = ak.load_with_report(path, errors="skip", cache=False)
    assert len(ds) == 0 and [s.field for s in report.skipped] == ["reward", "reward"]
    assert "expected a reward in [0, 1]" in report.skipped[0].reason
