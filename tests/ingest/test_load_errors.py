"""Bad input: every problem is an ``EpisodeValidationError`` naming file, record and field.

One test per error message. Each builds the smallest input that shows the problem (a tiny
results object written by hand, or canonical records taken from a fixture and broken), and
``errors="skip"`` is checked to load the good records and list exactly the bad ones.
"""

from __future__ import annotations

import copy
import json
import sys
import warnings
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import accordkit as ak
from accordkit._internal.arrow import arrow_table
from accordkit.ingest.report import SkippedRecord
from accordkit.load import SourceNotFoundError

from ..hub_stub import use_hub


@pytest.fixture(autouse=True)
def _tmp_hf_home(tmp_path, monkeypatch):
    use_hub(monkeypatch, None, tmp_path / "hf_home")


def _sim(sim_id: str, **changes) -> dict:
    sim = {
        "id": sim_id, "task_id": "t1", "trial": 0, "seed": 7, "termination_reason": "user_stop",
        "agent_cost": 0.01, "user_cost": 0.02,
        "reward_info": {"reward": 1.0, "reward_basis": ["DB"], "reward_breakdown": {"DB": 1.0}},
        "messages": [
            {"role": "assistant", "content": "Hi! How can I help?", "turn_idx": 0},
            {"role": "user", "content": "Cancel my booking.", "turn_idx": 1},
            {"role": "assistant", "content": None, "turn_idx": 2, "tool_calls": [
                {"id": "c1", "name": "cancel", "arguments": {"id": "B1"}, "requestor": "assistant"}]},
            {"role": "tool", "id": "c1", "content": "{\"ok\": true}", "error": False,
             "turn_idx": 3},
        ],
    }
    sim.update(changes)
    return sim


def _results(*sims: dict, **info_changes) -> dict:
    info = {"num_trials": 1,
            "agent_info": {"implementation": "llm_agent", "llm": "agent-llm"},
            "user_info": {"implementation": "user_simulator", "llm": "user-llm"},
            "environment_info": {"domain_name": "airline"}}
    info.update(info_changes)
    task = {"id": "t1", "user_scenario": {"persona": None, "instructions": "Cancel B1."},
            "evaluation_criteria": {"actions": [], "communicate_info": []}}
    return {"timestamp": "2026-01-01", "info": info, "tasks": [task], "simulations": list(sims)}


def _write(tmp_path: Path, obj, name: str = "run.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(obj), "utf-8")
    return path


def _error(source) -> ak.EpisodeValidationError:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ak.EpisodeValidationError) as exc:
            ak.load(source)
    return exc.value


def _skipped(source) -> tuple[datasets.Dataset, list[SkippedRecord]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = ak.load(source, errors="skip")
    found = [w.message for w in caught if isinstance(w.message, ak.SkippedRecordsWarning)]
    assert len(found) == 1, "exactly one SkippedRecordsWarning"
    return ds, found[0].skipped


def _check_bad_sim(tmp_path: Path, bad: dict, *, record: str, field: str, reason: str) -> None:
    """One good and one bad simulation: the error names the bad one; skip keeps the good."""
    path = _write(tmp_path, _results(_sim("sim-good"), bad))
    err = _error(path)
    assert str(err) == f"file {path}, record {record}, field {field}: {reason}"
    assert (err.source, err.record, err.field) == (str(path), record, field)
    ds, skipped = _skipped(path)
    assert ds["episode_id"] == ["tau2/sim-good"]
    assert skipped == [SkippedRecord(str(path), record, field, reason)]


# --------------------------------------------------------------------------- results files


def test_good_tiny_results_file_loads(tmp_path):
    ds = ak.load(_write(tmp_path, _results(_sim("a"), _sim("b", trial=1))))
    assert ds["episode_id"] == ["tau2/a", "tau2/b"]
    assert ds[0]["messages"][2]["tool_calls"][0]["arguments_json"] == '{"id": "B1"}'


def test_truncated_json(tmp_path, acb_dir):
    text = (acb_dir / "airline_gemini-2.5-flash_old_checkpoint_1sim.json").read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[:5000])
    err = _error(path)
    assert str(err).startswith(f"file {path}, record (whole file), field (top level): "
                               "invalid or truncated JSON at line ")
    ds, skipped = _skipped([path, acb_dir / "retail_gemini-2.5-flash_old_checkpoint_1sim.json"])
    assert len(ds) == 1
    assert [(s.source, s.record) for s in skipped] == [(str(path), "(whole file)")]


def test_trial_as_text(tmp_path):
    _check_bad_sim(tmp_path, _sim("sim-bad", trial="0"), record="sim-bad", field="trial",
                   reason="expected an integer trial, got '0'")


def test_reward_as_text(tmp_path):
    bad = _sim("sim-bad")
    bad["reward_info"]["reward"] = "high"
    _check_bad_sim(tmp_path, bad, record="sim-bad", field="reward_info.reward",
                   reason="expected a number, got str 'high'")


def test_messages_not_a_list(tmp_path):
    _check_bad_sim(tmp_path, _sim("sim-bad", messages="hello"), record="sim-bad",
                   field="messages", reason="expected a list of messages, got str 'hello'")


def test_missing_simulation_id(tmp_path):
    bad = _sim("x")
    del bad["id"]
    _check_bad_sim(tmp_path, bad, record="simulations[1]", field="id",
                   reason="missing required value")


def test_missing_task_id(tmp_path):
    bad = _sim("sim-bad")
    del bad["task_id"]
    _check_bad_sim(tmp_path, bad, record="sim-bad", field="task_id",
                   reason="missing required value")


def test_missing_messages(tmp_path):
    bad = _sim("sim-bad")
    del bad["messages"]
    _check_bad_sim(tmp_path, bad, record="sim-bad", field="messages",
                   reason="missing required value")


def test_unknown_role(tmp_path):
    bad = _sim("sim-bad")
    bad["messages"][1]["role"] = "robot"
    _check_bad_sim(tmp_path, bad, record="sim-bad", field="messages[1].role",
                   reason="unknown role 'robot'; expected system, user, assistant or tool")


def test_empty_conversation(tmp_path):
    _check_bad_sim(tmp_path, _sim("sim-bad", messages=[]), record="sim-bad", field="messages",
                   reason="empty conversation: no messages")


def test_message_not_an_object(tmp_path):
    bad = _sim("sim-bad")
    bad["messages"][2] = "hello"
    _check_bad_sim(tmp_path, bad, record="sim-bad", field="messages[2]",
                   reason="expected a message object, got str 'hello'")


def test_tool_call_without_name(tmp_path):
    bad = _sim("sim-bad")
    del bad["messages"][2]["tool_calls"][0]["name"]
    _check_bad_sim(tmp_path, bad, record="sim-bad", field="messages[2].tool_calls[0].name",
                   reason="missing required value")


def test_tool_arguments_text_that_is_not_json(tmp_path):
    bad = _sim("sim-bad")
    bad["messages"][2]["tool_calls"][0]["arguments"] = "{id: B1"
    _check_bad_sim(tmp_path, bad, record="sim-bad", field="messages[2].tool_calls[0].arguments",
                   reason="arguments are text but not JSON (Expecting property name enclosed "
                          "in double quotes)")


def test_tool_error_flag_not_boolean(tmp_path):
    bad = _sim("sim-bad")
    bad["messages"][3]["error"] = "no"
    _check_bad_sim(tmp_path, bad, record="sim-bad", field="messages[3].error",
                   reason="expected true or false, got str 'no'")


@pytest.mark.parametrize("seed", [2**64, 2**70, -(2**63) - 1])
def test_seed_outside_int64_is_stored_as_null_with_a_note(tmp_path, seed):
    # The seed is metadata: the episode is kept, its seed null, and a note names the field.
    path = _write(tmp_path, _results(_sim("a"), _sim("big", seed=seed),
                                     _sim("edge", seed=2**63 - 1)))
    ds, report = ak.load_with_report(path)
    assert ds["episode_id"] == ["tau2/a", "tau2/big", "tau2/edge"]
    assert ds["seed"] == [7, None, 2**63 - 1]
    assert report.skipped == []
    assert report.notes == [f"file {path}, record big, field seed: integer {seed} does not fit "
                            "in int64; the seed is stored as null (the episode is kept)"]
    with pytest.warns(UserWarning, match="field seed: integer .* stored as null"):
        ak.load(path, errors="skip")
    _, again = ak.load_with_report(path)  # read from the cache: the same note
    assert again.notes == report.notes


@pytest.mark.parametrize("how", ["absent", "null"])
def test_voice_run_is_reported_unsupported(tmp_path, how):
    bad = _sim("sim-bad", ticks=[{"t": 0}], mode="full_duplex")
    if how == "absent":
        del bad["messages"]
    else:  # the typed decoder keeps a stored null as raw bytes: still a voice run
        bad["messages"] = None
    _check_bad_sim(tmp_path, bad, record="sim-bad", field="messages",
                   reason="full-duplex (voice) runs store 'ticks' instead of messages; they are "
                          "not supported yet")


def test_null_messages_without_ticks_are_missing(tmp_path):
    _check_bad_sim(tmp_path, _sim("sim-bad", messages=None), record="sim-bad",
                   field="messages", reason="missing required value")


_LONE = ("lone UTF-16 surrogate escapes (\\ud800-\\udfff without their pair, e.g. a cut "
         "emoji) were replaced by U+FFFD")


def _cut_emoji(sim_id: str) -> dict:
    """A simulation whose text holds a lone surrogate (json.dumps writes it as "\\ud83d")."""
    sim = _sim(sim_id)
    sim["messages"][1]["content"] = "Cancel my booking \ud83d"
    sim["messages"][2]["tool_calls"][0]["arguments"] = {"id": "B1", "note": "\udc00 x"}
    return sim


def test_lone_surrogate_is_replaced_with_a_note_not_the_whole_file(tmp_path):
    emoji = _sim("emoji")
    emoji["messages"][1]["content"] = "Cancel it \U0001f600, not \\ud83d"  # a pair; a text
    path = _write(tmp_path, _results(_sim("a"), _cut_emoji("cut"), emoji))
    assert "\\ud83d" in path.read_text() and "\\ud83d\\ude00" in path.read_text()
    ds, report = ak.load_with_report(path)
    assert ds["episode_id"] == ["tau2/a", "tau2/cut", "tau2/emoji"]
    assert report.skipped == []
    cut = ds[1]["messages"]
    assert cut[1]["content"] == "Cancel my booking \ufffd"
    assert json.loads(cut[2]["tool_calls"][0]["arguments_json"]) == {"id": "B1",
                                                                     "note": "\ufffd x"}
    assert ds[2]["messages"][1]["content"] == "Cancel it \U0001f600, not \\ud83d"
    assert report.notes == [f"{path}: {_LONE} (line 1); record(s) affected: tau2/cut"]
    with pytest.warns(UserWarning, match="lone UTF-16 surrogate"):
        assert len(ak.load(path, errors="skip")) == 3
    _, again = ak.load_with_report(path)  # read from the cache: the same note
    assert again.notes == report.notes


def test_lone_surrogate_in_jsonl_names_the_line(tmp_path):
    recs = ak.load(_write(tmp_path, _results(_sim("a"), _sim("b")))).to_list()
    recs[1]["messages"][0]["content"] = "bye \ud83d"
    path = tmp_path / "episodes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    ds, report = ak.load_with_report(path)
    assert ds[1]["messages"][0]["content"] == "bye \ufffd"
    assert report.notes == [f"{path}: {_LONE} (line 2); record(s) affected: tau2/b"]


def test_dir_format_lone_surrogate_is_replaced_with_a_note(tmp_path):
    run = _dir_run(tmp_path, _sim("a"), _cut_emoji("cut"))
    ds, report = ak.load_with_report(run)
    assert ds["episode_id"] == ["tau2/a", "tau2/cut"] and report.skipped == []
    assert ds[1]["messages"][1]["content"] == "Cancel my booking \ufffd"
    assert report.notes == [f"{run / 'simulations' / 'cut.json'}: {_LONE} (line 1); "
                            "record(s) affected: cut"]


def test_simulation_not_an_object(tmp_path):
    _check_bad_sim(tmp_path, ["not", "a", "sim"], record="simulations[1]", field="(simulation)",
                   reason="expected a simulation object, got list ['not', 'a', 'sim']")


def test_conflicting_duplicate_simulation_ids_in_one_file(tmp_path):
    path = _write(tmp_path, _results(_sim("same"), _sim("same", trial=1)))
    err = _error(path)
    assert str(err) == (f"file {path}, record tau2/same, field episode_id: episode id also "
                        f"loaded from {path} with different content (the first copy was kept)")
    ds, skipped = _skipped(path)
    assert ds["rollout"] == [0]
    assert [(s.record, s.field) for s in skipped] == [("tau2/same", "episode_id")]


def test_header_without_domain(tmp_path):
    obj = _results(_sim("a"))
    obj["info"]["environment_info"] = {"policy": "..."}
    path = _write(tmp_path, obj)
    assert str(_error(path)) == (f"file {path}, record (file header), field "
                                 "info.environment_info.domain_name: missing required value")


def test_header_num_trials_as_text(tmp_path):
    path = _write(tmp_path, _results(_sim("a"), num_trials="3"))
    assert str(_error(path)) == (f"file {path}, record (file header), field info.num_trials: "
                                 "expected an integer, got str '3'")


def test_simulations_not_a_list(tmp_path):
    obj = _results()
    obj["simulations"] = {"a": 1}
    path = _write(tmp_path, obj)
    assert str(_error(path)) == (f"file {path}, record (file header), field simulations: "
                                 "expected a list of simulations, got dict {'a': 1}")


def test_json_that_is_not_a_results_file(tmp_path):
    path = _write(tmp_path, {"note": "metrics", "files": {}}, "metrics.json")
    assert str(_error(path)) == (
        f"file {path}, record (whole file), field (top level): not a results file or canonical "
        "episodes: expected a tau2/AgentChangeBench results object ({info, tasks, simulations}) "
        "or episode records with 'benchmark' and 'episode_id' (found an object with keys "
        "['note', 'files'])")


def test_binary_file(tmp_path):
    path = tmp_path / "image.json"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    assert str(_error(path)) == (f"file {path}, record (whole file), field (top level): not a "
                                 "text file: byte 0 is not UTF-8 (a binary file?)")


def test_binary_file_named_parquet(tmp_path):
    path = tmp_path / "fake.parquet"
    path.write_bytes(b"hello, not parquet")
    assert str(_error(path)) == (f"file {path}, record (whole file), field (top level): not a "
                                 "parquet file (no PAR1 header)")


def test_empty_file(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text("  \n")
    assert str(_error(path)) == f"file {path}, record (whole file), field (top level): empty file"


def test_nonexistent_path_that_is_not_a_hub_id(tmp_path):
    missing = tmp_path / "nowhere" / "run.json"
    with pytest.raises(SourceNotFoundError) as exc:
        ak.load(missing)
    assert str(exc.value) == (f"file {missing}, record (whole file), field (path): no such file "
                              "or folder, and not a hub id of the form 'org/name'")
    assert isinstance(exc.value, ak.EpisodeValidationError)
    good = _write(tmp_path, _results(_sim("a")))
    ds, skipped = _skipped([good, missing])
    assert len(ds) == 1 and [s.source for s in skipped] == [str(missing)]


def test_results_file_with_config_selection(tmp_path):
    path = _write(tmp_path, _results(_sim("a")))
    with pytest.raises(ak.EpisodeValidationError, match="field \\(config/split\\): config= and"):
        ak.load(path, split="train")


def test_skip_lists_every_bad_simulation_once(tmp_path):
    bad_role = _sim("bad-role")
    bad_role["messages"][0]["role"] = "narrator"
    sims = [_sim("ok-1"), _sim("bad-trial", trial="x"), bad_role, _sim("ok-2", trial=1),
            _sim("bad-empty", messages=[])]
    path = _write(tmp_path, _results(*sims))
    ds, skipped = _skipped(path)
    assert ds["episode_id"] == ["tau2/ok-1", "tau2/ok-2"]
    assert [(s.record, s.field) for s in skipped] == [
        ("bad-trial", "trial"), ("bad-role", "messages[0].role"), ("bad-empty", "messages")]


def test_first_bad_simulation_is_raised_whichever_check_finds_it(tmp_path):
    # A rule (checked on the batch's table) before a conversion problem (found at once):
    # errors="raise" still stops at the first bad simulation of the file.
    bad_role = _sim("bad-role")
    bad_role["messages"][0]["role"] = "narrator"
    path = _write(tmp_path, _results(_sim("ok-1"), bad_role, _sim("bad-trial", trial="x")))
    assert (_error(path).record, _error(path).field) == ("bad-role", "messages[0].role")
    path = _write(tmp_path, _results(_sim("ok-1"), _sim("bad-trial", trial="x"), bad_role))
    assert (_error(path).record, _error(path).field) == ("bad-trial", "trial")
    # a rule problem before a value that does not fit its column (found building the table)
    path = _write(tmp_path, _results(_sim("ok-1"), _sim("empty-task", task_id=""),
                                     _sim("big-trial", trial=2**31)))
    assert (_error(path).record, _error(path).field) == ("empty-task", "task_id")
    _, skipped = _skipped(path)
    assert [(s.record, s.field) for s in skipped] == [("empty-task", "task_id"),
                                                       ("big-trial", "rollout")]


# --------------------------------------------------------------------------- dir format


def _dir_run(tmp_path: Path, *sims: dict, index: bool = True) -> Path:
    run = tmp_path / "run"
    (run / "simulations").mkdir(parents=True)
    meta = _results()
    del meta["simulations"]
    if index:
        meta["simulation_index"] = [{"id": s["id"], "task_id": s["task_id"]} for s in sims]
    (run / "results.json").write_text(json.dumps(meta))
    for s in sims:
        (run / "simulations" / f"{s['id']}.json").write_text(json.dumps(s))
    return run


def test_dir_format_run_loads(tmp_path):
    run = _dir_run(tmp_path, _sim("a"), _sim("b", trial=1))
    assert ak.load(run)["episode_id"] == ["tau2/a", "tau2/b"]
    assert ak.load(run / "results.json")["episode_id"] == ["tau2/a", "tau2/b"]


def test_dir_format_truncated_simulation_file(tmp_path):
    run = _dir_run(tmp_path, _sim("a"), _sim("b", trial=1))
    sim_file = run / "simulations" / "b.json"
    sim_file.write_text(sim_file.read_text()[:40])
    err = _error(run)
    assert str(err).startswith(f"file {sim_file}, record b, field (top level): invalid or "
                               "truncated JSON at line 1")
    ds, skipped = _skipped(run)
    assert ds["episode_id"] == ["tau2/a"]
    assert [(s.source, s.record) for s in skipped] == [(str(sim_file), "b")]


def test_dir_format_index_disagrees_with_files(tmp_path):
    run = _dir_run(tmp_path, _sim("a"))
    (run / "simulations" / "a.json").unlink()
    assert str(_error(run)) == (f"file {run}, record (whole file), field simulation_index: "
                                "simulation_index and simulations/ disagree: missing ['a'], "
                                "extra []")


# --------------------------------------------------------------------------- canonical files


@pytest.fixture(scope="module")
def rows(acb_dir) -> list[dict]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = ak.load(acb_dir / "banking_gpt-4.1_legacy-reward_meta-tags_7sims.json")
    return ds.select(range(3)).to_list()


def _jsonl(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def _parquet(tmp_path: Path, records: list[dict], schema: pa.Schema | None = None) -> Path:
    path = tmp_path / "episodes.parquet"
    schema = schema or ak.EPISODE_FEATURES.arrow_schema
    pq.write_table(pa.Table.from_pylist(records, schema=schema), path)
    return path


def _check_canonical(path: Path, *, record: str, field: str, reason: str, n_good: int) -> None:
    err = _error(path)
    assert str(err) == f"file {path}, record {record}, field {field}: {reason}"
    ds, skipped = _skipped(path)
    assert len(ds) == n_good
    assert skipped == [SkippedRecord(str(path), record, field, reason)]


def _with_preferences(rec: dict, dynamic: str) -> dict:
    rec = copy.deepcopy(rec)
    rec["preferences"] = [{"pref_id": "p1", "name": "colour", "slot": None, "value": "red",
                           "dynamic": dynamic, "backoff": None, "trigger": None,
                           "satisfied": None}]
    return rec


def test_jsonl_bad_role(tmp_path, rows):
    bad = copy.deepcopy(rows[1])
    bad["messages"][0]["role"] = "bot"
    eid = bad["episode_id"]
    _check_canonical(_jsonl(tmp_path, [rows[0], bad, rows[2]]), record=f"{eid} (line 2)",
                     field="messages[0].role", n_good=2,
                     reason="unknown role 'bot'; expected one of "
                            "('system', 'user', 'assistant', 'tool')")


def test_jsonl_unknown_column(tmp_path, rows):
    bad = dict(rows[0], judge_notes="x")
    _check_canonical(_jsonl(tmp_path, [bad, rows[1]]), record=f"{bad['episode_id']} (line 1)",
                     field="judge_notes", n_good=1,
                     reason="unknown field(s) ['judge_notes'] (see docs/schema.md)")


def test_jsonl_missing_required_column(tmp_path, rows):
    bad = dict(rows[2])
    del bad["domain"]
    _check_canonical(_jsonl(tmp_path, [rows[0], rows[1], bad]),
                     record=f"{bad['episode_id']} (line 3)", field="domain", n_good=2,
                     reason="missing required value")


def test_jsonl_bad_dynamic(tmp_path, rows):
    bad = _with_preferences(rows[0], "sometimes")
    _check_canonical(_jsonl(tmp_path, [bad, rows[1]]), record=f"{bad['episode_id']} (line 1)",
                     field="preferences[0].dynamic", n_good=1,
                     reason="unknown dynamic 'sometimes'; expected one of ('stated', "
                            "'hard_underspec', 'soft_underspec', 'unachievable', 'triggered')")


def test_jsonl_wrong_nested_type(tmp_path, rows):
    bad = copy.deepcopy(rows[0])
    bad["messages"][4]["turn_idx"] = 4.5
    _check_canonical(_jsonl(tmp_path, [bad, rows[1]]), record=f"{bad['episode_id']} (line 1)",
                     field="messages[4].turn_idx", n_good=1,
                     reason="expected an integer, got float 4.5")


def test_jsonl_text_where_a_list_belongs(tmp_path, rows):
    bad = dict(rows[0], goals="authentication")
    _check_canonical(_jsonl(tmp_path, [bad, rows[1]]), record=f"{bad['episode_id']} (line 1)",
                     field="goals", n_good=1,
                     reason="expected a list, got str 'authentication'")


def test_jsonl_unknown_nested_field(tmp_path, rows):
    bad = copy.deepcopy(rows[0])
    bad["messages"][0]["mood"] = "happy"
    _check_canonical(_jsonl(tmp_path, [bad, rows[1]]), record=f"{bad['episode_id']} (line 1)",
                     field="messages[0].mood", n_good=1,
                     reason="unknown field 'mood'; expected one of ['content', 'error', 'event', "
                            "'event_json', 'kind', 'role', 'sub_idx', 'tool_call_id', "
                            "'tool_calls', 'turn_idx']")


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_reward_info_that_is_not_a_json_object_is_the_record_problem(tmp_path, rows, fmt):
    # scoring reads it (tau2's stored checks): one bad record, not a failed batch
    bad = dict(rows[1], reward_info_json="{not json")
    path = (_jsonl if fmt == "jsonl" else _parquet)(tmp_path, [rows[0], bad, rows[2]])
    where = f"{bad['episode_id']} (line 2)" if fmt == "jsonl" else f"{bad['episode_id']} (row 1)"
    err = _error(path)
    assert (err.record, err.field) == (where, "reward_info_json")
    ds, skipped = _skipped(path)
    assert len(ds) == 2 and [(s.record, s.field) for s in skipped] == [
        (where, "reward_info_json")]
    assert len(ak.score(ds)) == 2


def test_jsonl_broken_line_is_numbered(tmp_path, rows):
    path = tmp_path / "episodes.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1])[:50] + "\n"
                    + json.dumps(rows[2]) + "\n")
    _check_canonical(path, record="line 3", field="(top level)", n_good=2,
                     reason="invalid JSON (Unterminated string starting at, column 45)")


def test_jsonl_line_that_is_not_an_object(tmp_path, rows):
    path = tmp_path / "episodes.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n[1, 2]\n")
    _check_canonical(path, record="line 2", field="(top level)", n_good=1,
                     reason="expected an episode object, got a list of 2 item(s)")


def test_json_array_of_episodes_names_the_item(tmp_path, rows):
    bad = dict(rows[1], rollout="1")
    path = tmp_path / "episodes.json"
    path.write_text(json.dumps([rows[0], bad]))
    _check_canonical(path, record=f"{bad['episode_id']} (item 1)", field="rollout", n_good=1,
                     reason="expected an integer, got str '1'")


def test_parquet_bad_role(tmp_path, rows):
    bad = copy.deepcopy(rows[1])
    bad["messages"][3]["role"] = "bot"
    _check_canonical(_parquet(tmp_path, [rows[0], bad]), record=f"{bad['episode_id']} (row 1)",
                     field="messages[3].role", n_good=1,
                     reason="unknown role 'bot'; expected one of "
                            "('system', 'user', 'assistant', 'tool')")


def test_parquet_bad_dynamic(tmp_path, rows):
    bad = _with_preferences(rows[2], "maybe")
    _check_canonical(_parquet(tmp_path, [rows[0], rows[1], bad]),
                     record=f"{bad['episode_id']} (row 2)", field="preferences[0].dynamic",
                     n_good=2,
                     reason="unknown dynamic 'maybe'; expected one of ('stated', "
                            "'hard_underspec', 'soft_underspec', 'unachievable', 'triggered')")


def test_parquet_empty_conversation(tmp_path, rows):
    bad = dict(rows[0], messages=[])
    _check_canonical(_parquet(tmp_path, [bad, rows[1]]), record=f"{bad['episode_id']} (row 0)",
                     field="messages", n_good=1, reason="empty conversation: no messages")


def test_parquet_missing_required_value(tmp_path, rows):
    bad = dict(rows[1], scenario_id=None)
    _check_canonical(_parquet(tmp_path, [rows[0], bad]), record=f"{bad['episode_id']} (row 1)",
                     field="scenario_id", n_good=1, reason="missing required value")


def test_parquet_missing_column(tmp_path, rows):
    schema = ak.EPISODE_FEATURES.arrow_schema
    schema = schema.remove(schema.get_field_index("domain"))
    path = _parquet(tmp_path, [{k: v for k, v in r.items() if k != "domain"} for r in rows],
                    schema)
    _check_canonical(path, record="(whole file)", field="domain", n_good=0,
                     reason="not a canonical episode table: missing column(s) ['domain'] "
                            "(see docs/schema.md)")


def test_parquet_unknown_column(tmp_path, rows):
    schema = ak.EPISODE_FEATURES.arrow_schema.append(pa.field("extra", pa.string()))
    path = _parquet(tmp_path, [dict(r, extra="x") for r in rows], schema)
    _check_canonical(path, record="(whole file)", field="extra", n_good=0,
                     reason="not a canonical episode table: unknown column(s) ['extra'] "
                            "(see docs/schema.md)")


def test_parquet_column_of_the_wrong_type(tmp_path, rows):
    schema = ak.EPISODE_FEATURES.arrow_schema
    schema = schema.set(schema.get_field_index("rollout"), pa.field("rollout", pa.string()))
    path = _parquet(tmp_path, [dict(r, rollout=str(r["rollout"])) for r in rows], schema)
    _check_canonical(path, record="(whole file)", field="rollout", n_good=0,
                     reason="column type string does not match the canonical type int32")


def test_parquet_in_a_folder_only_its_file_is_skipped(tmp_path, rows):
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    schema = ak.EPISODE_FEATURES.arrow_schema.append(pa.field("extra", pa.string()))
    bad = _parquet(bad_dir, [dict(r, extra="x") for r in rows], schema)
    good = _jsonl(tmp_path, rows)
    folder = tmp_path / "mixed"
    folder.mkdir()
    bad.rename(folder / "a.parquet")
    good.rename(folder / "b.jsonl")
    ds, skipped = _skipped(folder)
    assert len(ds) == 3
    assert [(Path(s.source).name, s.record, s.field) for s in skipped] == [
        ("a.parquet", "(whole file)", "extra")]


def test_many_bad_simulations_do_not_split_the_table_into_pieces(tmp_path):
    sims = [_sim(f"s{i}", trial="x" if i % 2 else 0) for i in range(40)]
    ds, skipped = _skipped(_write(tmp_path, _results(*sims)))
    assert len(ds) == 20 and len(skipped) == 20
    assert arrow_table(ds).column("episode_id").num_chunks == 1


@pytest.mark.parametrize("from_records", [0, 10**9])
def test_typed_batches_are_checked_alike_column_wise_or_record_by_record(
        tmp_path, monkeypatch, from_records):
    # a batch of 64 typed records or more is checked as a table, a smaller one record by
    # record: both ways give the same problems, in the same order, for the same records
    sims = [_sim(f"s{i}") for i in range(70)]
    sims[3]["task_id"] = ""
    sims[40]["task_id"] = ""
    path = _write(tmp_path, _results(*sims))
    monkeypatch.setattr(sys.modules["accordkit.ingest.formats.tau2.batch"],
                        "TABLE_CHECKS_FROM_RECORDS",
                        from_records)
    ds, skipped = _skipped(path)
    assert len(ds) == 68
    assert [(s.record, s.field) for s in skipped] == [("s3", "task_id"), ("s40", "task_id")]
    assert skipped[0].reason == "expected non-empty text, got ''"
    assert _error(path).record == "s3"
