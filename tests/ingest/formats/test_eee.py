"""Every Eval Ever: accordkit writes it (validated against the published schemas), reads its
instance sidecars back as episodes, and reads aggregate records as published scores."""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

import accordkit as ak
from accordkit.interchange import eee_records, write_eee
from accordkit.schema import EpisodeValidationError

from ...conftest import SHARED

EEE_SPECS = SHARED / "specs" / "eee"
STAMP = "1767225600"
FAST = {"timestamp": STAMP, "n_resamples": 2_000, "seed": 3}


@pytest.fixture(scope="module")
def validators():
    """Draft-07 validators of the published schemas (skips when they are absent)."""
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the dev extra")
    if not EEE_SPECS.exists():
        pytest.skip(f"the EEE schemas are not at {EEE_SPECS} (set ACCORDKIT_SHARED)")
    load = lambda name: json.loads((EEE_SPECS / name).read_text())  # noqa: E731
    aggregate, instance = load("eval.schema.json"), load("instance_level_eval.schema.json")
    jsonschema.Draft7Validator.check_schema(aggregate)
    return (jsonschema.Draft7Validator(aggregate), jsonschema.Draft7Validator(instance))


@pytest.fixture(scope="module")
def tau2(tau2_dir):
    return ak.load(tau2_dir)


@pytest.fixture(scope="module")
def written(tau2, tmp_path_factory):
    root = tmp_path_factory.mktemp("eee")
    return root, write_eee(tau2, root, **FAST)


def _lines(aggregate_path: Path) -> list[dict]:
    sidecar = aggregate_path.with_name(aggregate_path.stem + "_samples.jsonl")
    return [json.loads(x) for x in sidecar.read_text(encoding="utf-8").splitlines()]


def _valid(validator, obj) -> list[str]:
    return [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(obj)]


def test_every_file_written_from_the_tau2_fixtures_validates(written, validators):
    root, paths = written
    aggregate_schema, instance_schema = validators
    assert len(paths) == 1, "one configuration (grok-3 agent and user) -> one record"
    (path,) = paths
    assert path.relative_to(root).parts[:4] == ("data", "accordkit-tau2", "xai", "grok-3")
    agg = json.loads(path.read_text())
    assert _valid(aggregate_schema, agg) == []
    lines = _lines(path)
    assert len(lines) == 21
    for line in lines:
        assert _valid(instance_schema, line) == []
    # the sidecar is linked by its repository path, checksum and row count
    link = agg["detailed_evaluation_results"]
    sidecar = root / link["file_path"]
    assert sidecar.is_file() and link["total_rows"] == 21
    assert link["checksum"] == hashlib.sha256(sidecar.read_bytes()).hexdigest()
    assert {line["evaluation_id"] for line in lines} == {agg["evaluation_id"]}
    assert {line["model_id"] for line in lines} == {agg["model_info"]["id"]} == {"xai/grok-3"}


def test_aggregate_holds_the_headline_metrics_with_intervals(written, tau2):
    _, (path,) = written
    results = {r["evaluation_result_id"]: r for r in json.loads(path.read_text())[
        "evaluation_results"]}
    scores = ak.score(tau2)
    # reward and success per domain, pass^k for k = 1..4 (airline) and k = 1 (telecom)
    assert sorted(results) == sorted(
        [f"tau2.{d}.{m}" for d in ("airline", "telecom") for m in ("reward", "success")]
        + [f"tau2.airline.pass_hat_k.{k}" for k in (1, 2, 3, 4)]
        + ["tau2.telecom.pass_hat_k.1"])
    airline = scores[scores["domain"] == "airline"]
    reward = results["tau2.airline.reward"]["score_details"]
    assert reward["score"] == airline["reward"].mean()          # by hand: the mean of 16
    unc = reward["uncertainty"]
    assert unc["num_samples"] == 16 and unc["num_bootstrap_samples"] == 2_000
    ci = unc["confidence_interval"]
    assert ci["lower"] <= reward["score"] <= ci["upper"] and ci["confidence_level"] == 0.95
    assert "clusters = tasks" in ci["method"]
    table = ak.summarize(airline, ["reward"], cluster="scenario_id", n_resamples=2_000,
                         seed=3)
    assert (ci["lower"], ci["upper"]) == (table["ci_low"][0], table["ci_high"][0])
    # pass^k by hand: per task C(c,k)/C(n,k) averaged over the 4 tasks
    successes = airline.groupby("scenario_id")["success"].sum().tolist()
    from math import comb
    for k in (1, 2, 3, 4):
        by_hand = sum(comb(int(c), k) / comb(4, k) for c in successes) / 4
        got = results[f"tau2.airline.pass_hat_k.{k}"]
        assert got["score_details"]["score"] == pytest.approx(by_hand, abs=1e-15)
        assert got["metric_config"]["metric_parameters"] == {"k": k}
    # telecom: 5 tasks run once each -> 5 episodes behind its reward
    assert results["tau2.telecom.reward"]["score_details"]["uncertainty"]["num_samples"] == 5


def test_the_trial_travels_in_metadata(written, tau2):
    _, (path,) = written
    lines = _lines(path)
    by_episode = {r["episode_id"]: r["rollout"] for r in tau2}
    for line in lines:
        meta = line["metadata"]
        assert meta["trial"] == str(by_episode[meta["episode_id"]])
        assert line["interaction_type"] == "agentic" and line["output"] is None
        assert all(isinstance(v, str) for v in meta.values())


def test_round_trip_gives_the_same_reward_pass_k_and_action_diff(written, tau2):
    root, _ = written
    back = ak.load(root)
    assert back.num_rows == tau2.num_rows
    key = ["episode_id"]
    a = ak.score(tau2).sort_values(key).reset_index(drop=True)
    b = ak.score(back).sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)                      # every metric, bit for bit
    assert a["reward"].to_numpy().tobytes() == b["reward"].to_numpy().tobytes()
    pd.testing.assert_frame_equal(ak.pass_hat_k(a), ak.pass_hat_k(b))
    cols = ["episode_id", "action_id", "status"]
    da = ak.action_diff(tau2)
    db = ak.action_diff(back)
    assert len(da) and set(da["status"]) >= {"matched"}
    pd.testing.assert_frame_equal(da.sort_values(cols).reset_index(drop=True),
                                  db.sort_values(cols).reset_index(drop=True))
    # every canonical field comes back but source (the file the episode was read from)
    rows_a = sorted(tau2.to_list(), key=lambda r: r["episode_id"])
    rows_b = sorted(back.to_list(), key=lambda r: r["episode_id"])
    assert [{k: v for k, v in r.items() if k != "source"} for r in rows_a] == \
        [{k: v for k, v in r.items() if k != "source"} for r in rows_b]
    assert all(r["source"].endswith("_samples.jsonl") for r in rows_b)


def test_writing_is_deterministic_and_save_writes_the_same(tau2, tmp_path, written):
    _, (path,) = written
    out = ak.save(tau2, tmp_path / "eee", format="eee", **FAST)
    again = out / path.relative_to(written[0])
    assert again.read_bytes() == path.read_bytes()
    sidecar = path.with_name(path.stem + "_samples.jsonl")
    assert (again.with_name(again.stem + "_samples.jsonl").read_bytes()
            == sidecar.read_bytes())
    with pytest.raises(ValueError, match="writes a folder"):
        ak.save(tau2, tmp_path / "x.jsonl", format="eee")
    with pytest.raises(ValueError, match="format must be one of"):
        ak.save(tau2, tmp_path / "x", format="csv")
    with pytest.raises(TypeError, match="format='eee' only"):
        ak.save(tau2, tmp_path / "x.parquet", organization="me")


def test_export_command_writes_eee(tau2_dir, tmp_path, capsys, validators):
    from accordkit.cli import main

    code = main(["export", str(tau2_dir), "--out", str(tmp_path), "--timestamp", STAMP,
                 "--n-resamples", "500", "--organization", "Example Lab"])
    assert code == 0
    (agg,) = tmp_path.glob("data/*/*/*/*-*.json")
    obj = json.loads(agg.read_text())
    assert obj["source_metadata"]["source_organization_name"] == "Example Lab"
    assert _valid(validators[0], obj) == []
    assert "wrote" in capsys.readouterr().out


def test_judge_model_in_the_metric_config(acb_dir, validators):
    from accordkit.judges.verdicts import VERDICT_COLUMNS, verdict_frame

    ds = ak.load(acb_dir / "banking_gpt-4.1_13sims_tasks-trimmed.json")
    episode = next(r for r in ds if r["criteria"]["nl_assertions"])
    cols = {c: [] for c in VERDICT_COLUMNS}
    for i, _ in enumerate(episode["criteria"]["nl_assertions"]):
        values = {"episode_id": episode["episode_id"], "judge": "nl_assertions",
                  "judge_model": "openai/gpt-4o-mini", "prompt_id": "nl_assertions",
                  "prompt_version": "1", "item": str(i), "turn_idx": None, "verdict": "met",
                  "raw": "met", "error": None, "input_tokens": 1, "output_tokens": 1,
                  "cost_usd": 0.0, "cached_at": "2026-01-02T03:04:05+00:00"}
        for c in VERDICT_COLUMNS:
            cols[c].append(values[c])
    (rec,) = eee_records(ds, verdicts=verdict_frame(cols), **FAST)
    assert _valid(validators[0], rec.aggregate) == []
    by_metric = {r["metric_config"]["metric_name"]: r["metric_config"]
                 for r in rec.aggregate["evaluation_results"]}
    scoring = by_metric["tsr"]["llm_scoring"]
    assert [j["model_info"]["id"] for j in scoring["judges"]] == ["openai/gpt-4o-mini"]
    assert "[system]" in scoring["input_prompt"]
    assert "llm_scoring" not in by_metric["reward"], "the stored reward had no judge"


# --------------------------------------------------------------------------- bad input


def test_a_bad_sidecar_line_is_named_and_the_others_load(written, tmp_path):
    _, (path,) = written
    lines = path.with_name(path.stem + "_samples.jsonl").read_text().splitlines()
    broken = json.loads(lines[2])
    del broken["evaluation"]
    lines[2] = json.dumps(broken)
    lines[5] = "{not json"
    bad = tmp_path / "bad_samples.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(EpisodeValidationError) as err:
        ak.load(bad)
    assert (err.value.source, err.value.record, err.value.field) == (
        str(bad), "line 3", "evaluation")
    with pytest.warns(ak.SkippedRecordsWarning) as caught:
        ds = ak.load(bad, errors="skip")
    assert ds.num_rows == 19
    text = " ".join(str(w.message) for w in caught)
    assert "line 3" in text and "line 6" in text


def test_a_tampered_accordkit_line_names_the_metadata_field(written, tmp_path):
    _, (path,) = written
    line = _lines(path)[0]
    line["metadata"]["accordkit_messages"] = "[]"
    bad = tmp_path / "t_samples.jsonl"
    bad.write_text(json.dumps(line) + "\n")
    with pytest.raises(EpisodeValidationError) as err:
        ak.load(bad)
    assert err.value.field == "metadata.accordkit_messages"
    assert "message extras" in err.value.reason


def _other_line(**over) -> dict:
    line = {
        "schema_version": "0.3.0", "evaluation_id": "tau2-bench-airline/acme/agent-1/1",
        "model_id": "acme/agent-1", "evaluation_name": "tau2-bench airline",
        "sample_id": "7", "interaction_type": "agentic",
        "input": {"raw": "Change my flight", "reference": []}, "output": None,
        "messages": [
            {"turn_idx": 0, "role": "user", "content": "Change my flight"},
            {"turn_idx": 1, "role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "name": "get_reservation_details",
                 "arguments": {"reservation_id": "ABC123"}}]},
            {"turn_idx": 2, "role": "tool", "content": "{}", "tool_call_id": ["c1"]},
        ],
        "answer_attribution": [], "evaluation": {"score": 1.0, "is_correct": True},
        "metadata": {"trial": "2"},
    }
    line.update(over)
    return line


def test_another_producers_sidecar_maps_by_its_evaluation_name(tmp_path, validators):
    lines = [_other_line(), _other_line(sample_id="8", metadata={"epoch": "0"},
                                        evaluation={"score": 0.0, "is_correct": False})]
    for line in lines:
        assert _valid(validators[1], line) == []
    path = tmp_path / "0b5e4c3a-1f2d-4e5f-8a9b-0c1d2e3f4a5b_samples.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    ds = ak.load(path)
    first, second = ds[0], ds[1]
    assert (first["benchmark"], first["domain"], first["task_id"], first["rollout"]) == (
        "tau2", "airline", "7", 2)
    assert second["rollout"] == 0 and second["reward"] == 0.0
    call = first["messages"][1]["tool_calls"][0]
    assert json.loads(call["arguments_json"]) == {"reservation_id": "ABC123"}
    assert first["messages"][2]["tool_call_id"] == "c1"
    assert first["agent_model"] == "acme/agent-1"


def test_an_evaluation_accordkit_cannot_name_asks_for_metadata(tmp_path):
    path = tmp_path / "x_samples.jsonl"
    path.write_text(json.dumps(_other_line(evaluation_name="gsm8k", evaluation_id="g/1"))
                    + "\n")
    with pytest.raises(EpisodeValidationError) as err:
        ak.load(path)
    assert err.value.field == "evaluation_name" and "metadata=" in err.value.reason
    ds = ak.load(path, metadata={"benchmark": "tau2", "domain": "retail"})
    assert (ds[0]["benchmark"], ds[0]["domain"]) == ("tau2", "retail")


def test_a_bad_role_is_named(tmp_path):
    line = _other_line()
    line["messages"][0]["role"] = "narrator"
    path = tmp_path / "r_samples.jsonl"
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(EpisodeValidationError) as err:
        ak.load(path)
    assert err.value.field == "messages[0].role"


def test_an_aggregate_alone_loads_as_no_episodes_with_a_note(written, tmp_path):
    _, (path,) = written
    alone = tmp_path / path.name
    alone.write_bytes(path.read_bytes())
    with pytest.warns(UserWarning, match="read_published"):
        ds = ak.load(alone)
    assert ds.num_rows == 0


# --------------------------------------------------------------------------- published


def _hal_record(model: str, score: float, scaffold: str) -> dict:
    """An aggregate record in the shape HAL's leaderboard records are published in."""
    return {
        "schema_version": "0.3.0",
        "evaluation_id": f"hal-taubench-airline/{scaffold}/{model}/1777366846.6",
        "retrieved_timestamp": "1777366846.6",
        "source_metadata": {"source_name": "HAL Leaderboard — TAU-bench Airline",
                            "source_type": "documentation",
                            "source_organization_name": "Princeton SAgE Team",
                            "evaluator_relationship": "third_party"},
        "eval_library": {"name": "HAL", "version": "unknown"},
        "model_info": {"name": model, "id": f"openai/{model}", "developer": "openai",
                       "additional_details": {"deployment_type": "unknown",
                                              "model_availability": "closed_weights",
                                              "agent_scaffold": scaffold,
                                              "total_cost_usd": "52.78"}},
        "evaluation_results": [{
            "evaluation_name": "TAU-bench Airline",
            "source_data": {"source_type": "url", "dataset_name": "TAU-bench Airline",
                            "url": ["https://github.com/sierra-research/tau-bench"]},
            "metric_config": {"evaluation_description": "Task success rate",
                              "lower_is_better": False, "score_type": "continuous",
                              "min_score": 0.0, "max_score": 1.0},
            "score_details": {"score": score, "details": {"accuracy_raw": f"{score:.0%}"}},
        }],
    }


def test_read_published_gives_a_tidy_frame(tmp_path, validators, written):
    folder = tmp_path / "data" / "hal-taubench-airline" / "openai"
    records = [_hal_record("gpt-5", 0.3, "HAL Generalist Agent"),
               _hal_record("o3", 0.52, "TAU-bench Tool Calling")]
    for i, rec in enumerate(records):
        assert _valid(validators[0], rec) == []
        (folder / rec["model_info"]["name"]).mkdir(parents=True)
        (folder / rec["model_info"]["name"] / f"{i}.json").write_text(json.dumps(rec))
    (folder / "notes.json").write_text("[1, 2]")          # not a record: passed over
    frame = ak.read_published(tmp_path)
    assert list(frame.columns) == list(
        __import__("accordkit.ingest.formats.eee", fromlist=["x"]).PUBLISHED_COLUMNS)
    assert frame["score"].tolist() == [0.3, 0.52]
    assert frame["model_id"].tolist() == ["openai/gpt-5", "openai/o3"]
    assert frame["agent_scaffold"].tolist() == ["HAL Generalist Agent",
                                                "TAU-bench Tool Calling"]
    assert set(frame["benchmark"]) == {"taubench"} and set(frame["domain"]) == {"airline"}
    assert frame["ci_low"].isna().all(), "HAL publishes no interval: none is invented"
    # accordkit's own records: one row per result, the intervals and k kept
    _, (path,) = written
    ours = ak.read_published(path)
    passk = ours[ours["metric_id"] == "pass_hat_k"]
    assert passk["k"].tolist() == [1, 2, 3, 4, 1]
    row = ours[ours["evaluation_result_id"] == "tau2.airline.reward"].iloc[0]
    assert row["ci_low"] <= row["score"] <= row["ci_high"]
    assert row["num_bootstrap_samples"] == 2_000 and row["benchmark"] == "tau2"


def test_read_published_names_a_bad_record(tmp_path):
    rec = _hal_record("gpt-5", 0.3, "HAL")
    rec["evaluation_results"][0]["score_details"]["score"] = "high"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(rec))
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_hal_record("o3", 0.5, "HAL")))
    with pytest.raises(EpisodeValidationError) as err:
        ak.read_published([bad, good])
    assert (err.value.source, err.value.record, err.value.field) == (
        str(bad), "evaluation_results[0]", "score_details.score")
    with pytest.warns(UserWarning, match="bad.json"):
        frame = ak.read_published([bad, good], errors="skip")
    assert frame["score"].tolist() == [0.5]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(EpisodeValidationError, match="no such file"):
            ak.read_published(tmp_path / "missing.json")


@pytest.mark.parametrize("part", ["accord", "goalshift"])
def test_every_benchmark_of_the_sample_writes_valid_eee_and_reads_back(part, sample_dir,
                                                                       tmp_path, validators):
    ds = ak.load(sample_dir / part)
    paths = write_eee(ds, tmp_path, timestamp=STAMP, n_resamples=200)
    assert len(paths) == ds.to_pandas().groupby(
        ["benchmark", "agent_model", "method", "user_model", "user_implementation"],
        dropna=False).ngroups
    for path in paths:
        assert _valid(validators[0], json.loads(path.read_text())) == []
        assert all(_valid(validators[1], line) == [] for line in _lines(path))
    a = ak.score(ds).sort_values("episode_id").reset_index(drop=True)
    b = ak.score(ak.load(tmp_path)).sort_values("episode_id").reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    if part == "accord":        # no reward: the episode's score is its task_score
        line = _lines(paths[0])[0]
        row = a.set_index("episode_id").loc[line["metadata"]["episode_id"]]
        assert line["evaluation"]["score"] == row["task_score"]
