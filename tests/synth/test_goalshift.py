"""The goal-shift simulator: determinism, coverage of what the metrics need, committed sample."""

from __future__ import annotations

import collections
import json

import datasets
import pyarrow.parquet as pq
import pytest

from accordkit._internal.arrow import arrow_table
from accordkit.save import save
from accordkit.schema import EPISODE_FEATURES, EpisodeValidationError, validate_episode
from accordkit.synth.goalshift import AGENT_MODELS, PERSONA_TEXT, generate_goalshift
from accordkit.testing import build_episode, message


@pytest.fixture(scope="module")
def generated():
    return generate_goalshift(seed=0)


def test_same_seed_gives_identical_output_and_another_seed_differs(generated):
    records, truth = generated
    again, truth_again = generate_goalshift(seed=0)
    assert json.dumps(records) == json.dumps(again)
    assert json.dumps(truth) == json.dumps(truth_again)
    other, _ = generate_goalshift(seed=1)
    assert json.dumps(other) != json.dumps(records)


def test_records_are_canonical_and_ids_unique(generated):
    records, truth = generated
    for rec in records:
        validate_episode(rec)
        assert [m["turn_idx"] for m in rec["messages"]] == list(range(len(rec["messages"])))
    ids = [r["episode_id"] for r in records]
    assert len(set(ids)) == len(ids) == 3 * 12 * len(AGENT_MODELS) * 3
    assert set(ids) == set(truth["episodes"])
    for rec in records:
        assert rec["episode_id"].startswith("agentchangebench/")
        assert rec["scenario_id"] == f"agentchangebench/{rec['domain']}/new/{rec['task_id']}"
        model = rec["agent_model"]
        assert rec["source"] == f"accordkit.synth/goalshift/{rec['domain']}/{model}.json"
        assert (rec["config"], rec["split"], rec["num_trials"]) == (rec["domain"], "test", 3)
    datasets.Dataset.from_list(records, features=EPISODE_FEATURES)   # fits the features


def test_coverage_of_what_the_metrics_need(generated):
    records, truth = generated
    assert {r["domain"] for r in records} == {"banking", "airline", "retail"}
    assert {r["persona"] for r in records} == set(PERSONA_TEXT)
    assert {r["agent_model"] for r in records} == set(AGENT_MODELS)
    assert {len(r["goals"]) for r in records} == {1, 2, 3, 4}        # 0 to 3 shifts
    per_task = collections.Counter(r["scenario_id"] for r in records)
    assert min(per_task.values()) >= 3
    assert {r["rollout"] for r in records} == {0, 1, 2}
    behaviours = collections.Counter(b for e in truth["episodes"].values()
                                     for b in e["behaviours"])
    for name in ("drift", "transfer", "stall", "batch_same", "batch_names", "reverify",
                 "retry", "wrong_params", "float_param", "assistant_meta_tag",
                 "nl_judge_failed"):
        assert behaviours[name] > 0, name
    sources = collections.Counter(e["shift_source"] for e in truth["episodes"].values())
    assert sources["judge"] > 0 and sources["meta"] > 0 and sources["none"] > 0
    assert {r["termination_reason"] for r in records} == {"user_stop", "max_steps"}
    assert any(r["reward"] == 1.0 for r in records)
    assert any(not r["criteria"]["communicate_info"] for r in records)
    assert any(r["criteria"]["nl_assertions"] is None for r in records)
    assert any(r["nl_verdicts"] is None and r["criteria"]["nl_assertions"] for r in records)
    names = {c["name"] for r in records for m in r["messages"] for c in m["tool_calls"] or ()}
    assert "transfer_to_human_agents" in names
    assert all(r["agent_cost"] > 0 and r["user_cost"] > 0 for r in records)


def test_meta_episodes_mark_user_shift_messages(generated):
    records, truth = generated
    for rec in records:
        info = truth["episodes"][rec["episode_id"]]
        marked = [m["turn_idx"] for m in rec["messages"]
                  if m["event"] == "GOAL_SHIFT" and m["role"] == "user"]
        if info["shift_source"] == "meta":
            assert rec["gsrt_judge"] is None
            assert marked == [s["shift_turn"] for s in info["shifts"]]
        else:
            assert marked == []
        if info["shift_source"] == "judge":
            assert [s["turn"] for s in rec["gsrt_judge"]["shifts"]] == \
                [s["shift_turn"] for s in info["shifts"]]


def test_agents_differ(generated):
    _, truth = generated
    by_model = collections.defaultdict(list)
    records, _ = generated
    for rec in records:
        by_model[rec["agent_model"]].append(truth["episodes"][rec["episode_id"]])
    redundant = {m: sum(len(e["redundant_calls"]) for e in eps) for m, eps in by_model.items()}
    assert redundant["sim-persistent"] > 2 * redundant["sim-attentive"]
    tsr = {m: sum(e["tsr_best_match"] for e in eps) / len(eps) for m, eps in by_model.items()}
    assert tsr["sim-attentive"] > tsr["sim-persistent"]


def test_committed_sample_is_regenerated_bit_identically(generated, sample_dir, tmp_path):
    folder = sample_dir / "goalshift"
    if not folder.exists():
        pytest.skip("data/sample/goalshift has not been generated (accordkit synth)")
    records, _ = generated
    save(datasets.Dataset.from_list(records, features=EPISODE_FEATURES), tmp_path)
    committed = sorted(folder.glob("*/*.parquet"))
    assert [p.relative_to(folder) for p in committed] == \
        [p.relative_to(tmp_path) for p in sorted(tmp_path.glob("*/*.parquet"))]
    for path in committed:
        assert path.read_bytes() == (tmp_path / path.relative_to(folder)).read_bytes(), path
    total = sum(pq.read_metadata(p).num_rows for p in committed)
    assert total == len(records)
    assert sum(p.stat().st_size for p in committed) < 3_000_000


def test_builders_validate_and_reject_unknown_fields():
    rec = build_episode([message("assistant", "Hi")], episode_id="agentchangebench/x")
    table = arrow_table(datasets.Dataset.from_list([rec], features=EPISODE_FEATURES))
    assert table.column("episode_id").to_pylist() == ["agentchangebench/x"]
    with pytest.raises(KeyError, match="not canonical episode columns"):
        build_episode([message("assistant", "Hi")], trial=0)
    with pytest.raises(EpisodeValidationError, match="empty conversation"):
        build_episode([])


def test_task_count_is_validated():
    with pytest.raises(ValueError, match="n_tasks_per_domain must be at least 1"):
        generate_goalshift(n_tasks_per_domain=0)
