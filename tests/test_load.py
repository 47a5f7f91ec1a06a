"""``ak.load`` on the released fixture files, lists of sources, duplicates and round trips.

Expected values are read from the raw JSON files independently of the adapter (or come from
the fixture READMEs), never copied from the loader's output.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import warnings
from pathlib import Path

import pytest

import accordkit as ak
from accordkit.ingest.report import DuplicateEpisodesWarning, SkippedRecordsWarning
from accordkit.load import SourceNotFoundError

ACB_FILES = {
    "banking_gpt-4.1_13sims_tasks-trimmed.json": 13,
    "airline_gemini-2.5-flash_old_checkpoint_1sim.json": 1,
    "retail_gemini-2.5-flash_old_checkpoint_1sim.json": 1,
    "banking_gpt-4.1_legacy-reward_meta-tags_7sims.json": 7,
    "airline_gpt-4.1_legacy-reward_1sim_142calls.json": 1,
    "retail_gpt-4.1_header-only_0sims.json": 0,
}
TAU2_FILES = {"airline_grok-3_4tasks_4trials.json": 16, "telecom_grok-3_5tasks_1trial.json": 5}
DUP_TASK_FILE = "banking_gpt-4.1_legacy-reward_meta-tags_7sims.json"


def _raw(path: Path) -> dict:
    return json.loads(path.read_text("utf-8"))


def _load_quiet(source, **kw):
    """Load, ignoring the known 'task defined twice' note of the legacy banking file."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*defined 2 times.*")
        return ak.load(source, **kw)


def _persona_table(acb_dir: Path) -> dict:
    spec = acb_dir.parent.parent / "specs" / "acb_personas.json"
    if not spec.exists():
        pytest.skip(f"persona hash table not found at {spec}")
    return json.loads(spec.read_text())["domains"]


def _expected_persona(text, domain: str, table: dict):
    if text is None:
        return None
    if text.strip() in ("EASY_1", "EASY_2", "MEDIUM_1", "MEDIUM_2", "HARD_1", "HARD_2"):
        return text.strip()
    digest = hashlib.sha256(text.strip().encode()).hexdigest()
    return table.get(domain, {}).get(digest, "UNMATCHED")


def _task_for_each_sim(raw: dict) -> list[dict]:
    """Task definition of each simulation: same id, duplicates taken in file order."""
    taken: dict[str, int] = {}
    out = []
    for sim in raw["simulations"]:
        defs = [t for t in raw["tasks"] if str(t["id"]) == str(sim["task_id"])]
        k = taken.get(sim["task_id"], 0)
        taken[sim["task_id"]] = k + 1
        out.append(defs[min(k, len(defs) - 1)])
    return out


# --------------------------------------------------------------------------- counts


@pytest.mark.parametrize(("name", "count"), sorted({**ACB_FILES}.items()))
def test_acb_fixture_episode_count(acb_dir, name, count):
    ds = _load_quiet(acb_dir / name)
    assert len(ds) == count
    assert ds.features == ak.EPISODE_FEATURES


@pytest.mark.parametrize(("name", "count"), sorted(TAU2_FILES.items()))
def test_tau2_fixture_episode_count(tau2_dir, name, count):
    ds = ak.load(tau2_dir / name)
    assert len(ds) == count
    assert set(ds["benchmark"]) == {"tau2"}


def test_all_fixture_files_load_as_one_list(acb_dir, tau2_dir):
    files = [acb_dir / n for n in ACB_FILES] + [tau2_dir / n for n in TAU2_FILES]
    ds = _load_quiet(files)
    assert len(ds) == sum(ACB_FILES.values()) + sum(TAU2_FILES.values()) == 44
    assert len(set(ds["episode_id"])) == 44
    assert sorted(set(ds["source"])) == sorted(str(f) for f in files if "0sims" not in f.name)


def test_header_only_file_gives_empty_dataset_with_all_columns(acb_dir):
    ds = ak.load(acb_dir / "retail_gpt-4.1_header-only_0sims.json")
    assert len(ds) == 0
    assert list(ds.column_names) == list(ak.EPISODE_FEATURES)


def test_folder_of_results_loads_every_file_and_lists_the_other_json(acb_dir):
    """expected_upstream.json is not a results file: an error, or skipped and listed."""
    with pytest.raises(ak.EpisodeValidationError, match="expected_upstream.json"):
        _load_quiet(acb_dir)
    with pytest.warns(SkippedRecordsWarning) as rec:
        ds = _load_quiet(acb_dir, errors="skip")
    assert len(ds) == sum(ACB_FILES.values())
    (w,) = [w.message for w in rec if isinstance(w.message, SkippedRecordsWarning)]
    assert [(Path(s.source).name, s.record) for s in w.skipped] == [
        ("expected_upstream.json", "(whole file)")]


def test_folder_leaves_hidden_copies_out(acb_dir, tmp_path):
    name = "retail_gemini-2.5-flash_old_checkpoint_1sim.json"
    shutil.copy(acb_dir / name, tmp_path / name)
    (tmp_path / ".ipynb_checkpoints").mkdir()
    shutil.copy(acb_dir / name, tmp_path / ".ipynb_checkpoints" / name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DuplicateEpisodesWarning)
        ds = ak.load(tmp_path)
    assert ds["source"] == [str(tmp_path / name)]


def test_results_file_recognised_by_content_not_name(acb_dir, tmp_path):
    odd = tmp_path / "episodes.parquet.txt"
    shutil.copy(acb_dir / "airline_gemini-2.5-flash_old_checkpoint_1sim.json", odd)
    ds = ak.load(odd)
    assert len(ds) == 1 and ds[0]["source"] == str(odd)


# --------------------------------------------------------------------------- ids and content


@pytest.mark.parametrize("name", [n for n, c in ACB_FILES.items() if c])
def test_acb_ids_models_and_goals(acb_dir, name):
    raw = _raw(acb_dir / name)
    ds = _load_quiet(acb_dir / name)
    info = raw["info"]
    domain = info["environment_info"]["domain_name"]
    for row, sim, task in zip(ds, raw["simulations"], _task_for_each_sim(raw), strict=True):
        tid = str(sim["task_id"])
        task_set = "old" if tid.isdigit() else "new"
        assert row["benchmark"] == "agentchangebench"
        assert row["domain"] == domain
        assert row["task_id"] == tid
        assert row["task_set"] == task_set
        assert row["scenario_id"] == f"agentchangebench/{domain}/{task_set}/{tid}"
        assert row["episode_id"] == f"agentchangebench/{sim['id']}"
        assert row["rollout"] == sim["trial"]
        assert row["seed"] == sim["seed"]
        assert row["agent_model"] == info["agent_info"]["llm"]
        assert row["user_model"] == info["user_info"]["llm"]
        assert row["method"] == info["agent_info"]["implementation"]
        assert row["num_trials"] == info["num_trials"]
        assert row["goals"] == task["user_scenario"]["goal_shifts"]["goals"]
        assert row["required_shifts"] == task["user_scenario"]["goal_shifts"]["required_shifts"]
        assert row["termination_reason"] == sim["termination_reason"]
        assert row["reward"] == pytest.approx(sim["reward_info"]["reward"])
        assert row["agent_cost"] == pytest.approx(sim["agent_cost"])
        assert row["user_cost"] == pytest.approx(sim["user_cost"])
        assert json.loads(row["reward_info_json"]) == sim["reward_info"]


def test_task_set_old_and_new(acb_dir):
    old = _load_quiet(acb_dir / "airline_gemini-2.5-flash_old_checkpoint_1sim.json")[0]
    new = _load_quiet(acb_dir / "airline_gpt-4.1_legacy-reward_1sim_142calls.json")[0]
    assert (old["task_set"], old["scenario_id"]) == ("old", "agentchangebench/airline/old/0")
    assert new["task_set"] == "new"
    assert new["scenario_id"].startswith("agentchangebench/airline/new/")


@pytest.mark.parametrize("name", [n for n, c in ACB_FILES.items() if c])
def test_acb_persona_ids_recovered_by_hash(acb_dir, name):
    table = _persona_table(acb_dir)
    raw = _raw(acb_dir / name)
    domain = raw["info"]["environment_info"]["domain_name"]
    ds = _load_quiet(acb_dir / name)
    for row, task in zip(ds, _task_for_each_sim(raw), strict=True):
        text = task["user_scenario"].get("persona")
        assert row["persona"] == _expected_persona(text, domain, table)


def test_persona_cases_named_in_the_spec(acb_dir):
    banking = _load_quiet(acb_dir / "banking_gpt-4.1_13sims_tasks-trimmed.json")
    assert set(banking["persona"]) == {"EASY_1", "EASY_2", "MEDIUM_1", "MEDIUM_2", "HARD_1"}
    assert all(t and t.startswith("**Personality") for t in banking["persona_text"])
    legacy = _load_quiet(acb_dir / DUP_TASK_FILE)
    assert legacy["persona"].count("UNMATCHED") == 6  # edited persona wording
    assert legacy["persona"].count("EASY_1") == 1
    raw_id = _load_quiet(acb_dir / "airline_gpt-4.1_legacy-reward_1sim_142calls.json")[0]
    assert (raw_id["persona"], raw_id["persona_text"]) == ("EASY_1", None)
    retail = _load_quiet(acb_dir / "retail_gemini-2.5-flash_old_checkpoint_1sim.json")[0]
    assert (retail["persona"], retail["persona_text"]) == (None, None)


def test_stored_tsr_details(acb_dir):
    counts = {"banking_gpt-4.1_13sims_tasks-trimmed.json": 13,
              "airline_gemini-2.5-flash_old_checkpoint_1sim.json": 1,
              "retail_gemini-2.5-flash_old_checkpoint_1sim.json": 1,
              DUP_TASK_FILE: 0, "airline_gpt-4.1_legacy-reward_1sim_142calls.json": 0}
    for name, n in counts.items():
        raw = _raw(acb_dir / name)
        ds = _load_quiet(acb_dir / name)
        assert sum(d is not None for d in ds["tsr_details"]) == n, name
        for row, sim in zip(ds, raw["simulations"], strict=True):
            src = (sim["reward_info"].get("info") or {}).get("tsr_details")
            if src is None:
                continue
            got = row["tsr_details"]
            assert got["overall_tsr"] == pytest.approx(src["overall_tsr"])
            for key in ("action", "nl_assertion", "communicate_info"):
                assert got[key] == (None if src[key] is None else pytest.approx(src[key]))
                assert got[f"weight_{key}"] == (
                    None if src["weights_used"].get(key) is None
                    else pytest.approx(src["weights_used"][key]))
            assert got["has_actions"] is src["has_actions"]


def test_retail_checkpoint_has_only_the_action_channel(acb_dir):
    row = _load_quiet(acb_dir / "retail_gemini-2.5-flash_old_checkpoint_1sim.json")[0]
    tsr = row["tsr_details"]
    assert tsr["overall_tsr"] == pytest.approx(0.9) == tsr["action"]
    assert tsr["weight_action"] == 1.0
    assert tsr["nl_assertion"] is None and tsr["communicate_info"] is None


def test_stored_gsrt_judge(acb_dir):
    ds = _load_quiet(acb_dir / "banking_gpt-4.1_13sims_tasks-trimmed.json")
    judged = [g for g in ds["gsrt_judge"] if g is not None]
    assert len(judged) == 11
    assert sum(len(g["shifts"]) for g in judged) == 11
    raw = _raw(acb_dir / "banking_gpt-4.1_13sims_tasks-trimmed.json")
    for row, sim in zip(ds, raw["simulations"], strict=True):
        src = sim["reward_info"]["info"].get("gsrt_v2")
        if src is None:
            assert row["gsrt_judge"] is None
            continue
        assert row["gsrt_judge"]["start_turn"] == src["start_goal"]["turn"]
        assert row["gsrt_judge"]["start_goal"] == src["start_goal"]["goal"]
        for got, want in zip(row["gsrt_judge"]["shifts"], src["user_goal_shifts"], strict=True):
            assert (got["turn"], got["from_goal"], got["to_goal"]) == (
                want["turn"], want["from"], want["to"])
            assert got["transferred"] is bool(want["transferred_to_human"])
            assert got["ack_turn"] == want.get("acknowledgment_turn")
            assert got["tool_turn"] == want.get("tool_turn")
            assert got["outcome_turn"] == want.get("outcome_turn")
    assert any(s["transferred"] for g in judged for s in g["shifts"])


def test_checkpoint_gsrt_judge_with_zero_shifts_is_not_null(acb_dir):
    for name in ("airline_gemini-2.5-flash_old_checkpoint_1sim.json",
                 "retail_gemini-2.5-flash_old_checkpoint_1sim.json"):
        judge = _load_quiet(acb_dir / name)[0]["gsrt_judge"]
        assert judge is not None and judge["shifts"] == [], name


def test_stored_nl_verdicts(acb_dir):
    for name in ("banking_gpt-4.1_13sims_tasks-trimmed.json", DUP_TASK_FILE,
                 "airline_gpt-4.1_legacy-reward_1sim_142calls.json"):
        raw = _raw(acb_dir / name)
        ds = _load_quiet(acb_dir / name)
        for row, sim in zip(ds, raw["simulations"], strict=True):
            src = sim["reward_info"].get("nl_assertions")
            if src is None:
                assert row["nl_verdicts"] is None
                continue
            assert [(v["assertion"], v["met"], v["justification"]) for v in row["nl_verdicts"]] \
                == [(v["nl_assertion"], v["met"], v["justification"]) for v in src]
    banking = _load_quiet(acb_dir / "banking_gpt-4.1_13sims_tasks-trimmed.json")
    assert [len(v) for v in banking["nl_verdicts"]] == [3] * 10 + [2] * 3


def test_meta_events_are_kept_with_their_details(acb_dir):
    raw = _raw(acb_dir / DUP_TASK_FILE)
    ds = _load_quiet(acb_dir / DUP_TASK_FILE)
    want = [(s["id"], i, m["role"], m["meta_event"]["event"], m.get("meta_error"))
            for s in raw["simulations"] for i, m in enumerate(s["messages"]) if m.get("meta_event")]
    got = []
    for row in ds:
        for m in row["messages"]:
            if m["event"] is not None:
                detail = json.loads(m["event_json"])
                got.append((row["episode_id"].split("/", 1)[1], m["turn_idx"], m["role"],
                            m["event"], detail.get("meta_error")))
    assert got == want
    assert len(got) == 7 and {g[3] for g in got} == {"GOAL_SHIFT"}
    user_shift = next(g for g in got if g[2] == "user")
    assert user_shift[4] == "MISSING_FIELDS:seq,from"


@pytest.mark.parametrize("name", [n for n, c in ACB_FILES.items() if c])
def test_messages_keep_their_source_positions(acb_dir, name):
    raw = _raw(acb_dir / name)
    ds = _load_quiet(acb_dir / name)
    for row, sim in zip(ds, raw["simulations"], strict=True):
        msgs = row["messages"]
        assert [m["turn_idx"] for m in msgs] == list(range(len(sim["messages"])))
        assert [m["role"] for m in msgs] == [m["role"] for m in sim["messages"]]
        assert [m["content"] for m in msgs] == [m.get("content") for m in sim["messages"]]
        n_calls = sum(len(m.get("tool_calls") or []) for m in sim["messages"])
        assert sum(len(m["tool_calls"] or []) for m in msgs) == n_calls


def test_142_tool_calls_are_all_kept(acb_dir):
    row = _load_quiet(acb_dir / "airline_gpt-4.1_legacy-reward_1sim_142calls.json")[0]
    calls = [c for m in row["messages"] for c in (m["tool_calls"] or [])]
    assert len(calls) == 142
    assert all(isinstance(json.loads(c["arguments_json"]), dict) for c in calls)


def test_task_defined_twice_is_matched_in_file_order(acb_dir):
    with pytest.warns(UserWarning, match="defined 2 times with different content"):
        ds = ak.load(acb_dir / DUP_TASK_FILE)
    raw = _raw(acb_dir / DUP_TASK_FILE)
    dup_id = "banking_wire_medium_1_statements_timepressure_001_custom"
    sims = [s for s in raw["simulations"] if s["task_id"] == dup_id]
    defs = [t for t in raw["tasks"] if t["id"] == dup_id]
    assert len(sims) == len(defs) == 2
    rows = {r["episode_id"]: r for r in ds}
    for sim, task in zip(sims, defs, strict=True):
        row = rows[f"agentchangebench/{sim['id']}"]
        if sim["reward_info"]["info"].get("note") == "No evaluation criteria":
            assert task["evaluation_criteria"] is None
            # a known task with no checks: empty criteria (null would mean an unknown task)
            assert row["criteria"]["actions"] == [] and row["criteria"]["action_sets"] == []
            assert not row["criteria"]["nl_assertions"]
        else:
            ec = task["evaluation_criteria"]
            assert [a["name"] for a in row["criteria"]["actions"]] == [
                a["name"] for a in ec["actions"]]
            assert row["criteria"]["nl_assertions"] == ec["nl_assertions"]
    assert sum(rows[f"agentchangebench/{s['id']}"]["criteria"]["actions"] == []
               for s in sims) == 1


# --------------------------------------------------------------------------- duplicates


def _later_checkpoint(src: Path, tmp_path: Path) -> Path:
    """A copy of ``src`` with one more simulation appended (a later checkpoint of the run)."""
    raw = _raw(src)
    extra = json.loads(json.dumps(raw["simulations"][0]))
    extra["id"] = extra["id"][:-4] + "beef"
    extra["trial"] = 1
    raw["simulations"].append(extra)
    out = tmp_path / f"later_{src.name}"
    out.write_text(json.dumps(raw), "utf-8")
    return out


def test_checkpoints_of_one_run_give_each_episode_once(acb_dir, tmp_path):
    early = acb_dir / "airline_gemini-2.5-flash_old_checkpoint_1sim.json"
    later = _later_checkpoint(early, tmp_path)
    with pytest.warns(DuplicateEpisodesWarning) as rec:
        ds = ak.load([early, later])
    assert len(ds) == 2
    assert len(set(ds["episode_id"])) == 2
    (w,) = [r.message for r in rec if isinstance(r.message, DuplicateEpisodesWarning)]
    assert str(early) in str(w) and str(later) in str(w)
    eid = f"agentchangebench/{_raw(early)['simulations'][0]['id']}"
    assert w.duplicates == {eid: [str(early), str(later)]}
    # the copy that is kept comes from the first source
    assert ds.filter(lambda r: r["episode_id"] == eid)[0]["source"] == str(early)


def test_same_episode_id_with_different_content_is_an_error(acb_dir, tmp_path):
    early = acb_dir / "airline_gemini-2.5-flash_old_checkpoint_1sim.json"
    raw = _raw(early)
    raw["simulations"][0]["reward_info"]["reward"] = 0.5
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(raw))
    eid = f"agentchangebench/{raw['simulations'][0]['id']}"
    with pytest.raises(ak.EpisodeValidationError) as exc:
        ak.load([early, changed])
    msg = str(exc.value)
    assert f"file {changed}" in msg and f"record {eid}" in msg and "field episode_id" in msg
    assert f"also loaded from {early} with different content" in msg


def test_conflicting_duplicate_is_reported_as_skipped(acb_dir, tmp_path):
    early = acb_dir / "airline_gemini-2.5-flash_old_checkpoint_1sim.json"
    raw = _raw(early)
    raw["simulations"][0]["messages"][1]["content"] = "something else"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(raw))
    with pytest.warns(SkippedRecordsWarning) as rec:
        ds = ak.load([early, changed], errors="skip")
    assert len(ds) == 1 and ds[0]["source"] == str(early)
    (w,) = [r.message for r in rec if isinstance(r.message, SkippedRecordsWarning)]
    assert [(s.source, s.record, s.field) for s in w.skipped] == [
        (str(changed), f"agentchangebench/{raw['simulations'][0]['id']}", "episode_id")]


def test_report_counts_sources_and_duplicates(acb_dir, tmp_path):
    early = acb_dir / "airline_gemini-2.5-flash_old_checkpoint_1sim.json"
    later = _later_checkpoint(early, tmp_path)
    ds, report = ak.load_with_report([early, later])
    assert report.counts == {str(early): 1, str(later): 2}
    assert len(report.duplicates) == 1 and report.skipped == []
    assert len(ds) == 2


# --------------------------------------------------------------------------- sources


def test_missing_path_that_is_not_a_hub_id():
    with pytest.raises(SourceNotFoundError) as exc:
        ak.load("no/such/results.json")
    assert isinstance(exc.value, FileNotFoundError)
    assert "file no/such/results.json, record (whole file), field (path)" in str(exc.value)


def test_is_hub_id():
    assert ak.is_hub_id("org/name")
    assert ak.is_hub_id("org/name.v2")
    assert not ak.is_hub_id("results/run.json")
    assert not ak.is_hub_id("a/b/c")
    assert not ak.is_hub_id("just-a-name")


def test_existing_local_path_is_never_a_hub_id(tmp_path, monkeypatch):
    (tmp_path / "org").mkdir()
    (tmp_path / "org" / "name").mkdir()
    monkeypatch.chdir(tmp_path)
    assert not ak.is_hub_id("org/name")


def test_errors_argument_is_checked(acb_dir):
    with pytest.raises(ValueError, match="errors must be 'raise' or 'skip'"):
        ak.load(acb_dir / "retail_gpt-4.1_header-only_0sims.json", errors="ignore")
    with pytest.raises(ValueError, match="no source given"):
        ak.load([])
