"""The scripted AcCoRD simulator: schema, transcript conventions, dynamics, determinism."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import datasets
import pandas as pd
import pytest

from accordkit.schema import DYNAMICS, EPISODE_FEATURES, validate_episode
from accordkit.synth.accord import (
    AGENT_MODELS,
    METHODS,
    N_ROLLOUTS,
    SOURCE,
    USER_MODEL,
    generate_accord,
)


@pytest.fixture(scope="module")
def generated():
    return generate_accord(seed=0)


@pytest.fixture(scope="module")
def records(generated):
    return generated[0]


@pytest.fixture(scope="module")
def truth(generated):
    return generated[1]


def test_shape_and_ids(records):
    assert len(records) == 2 * 24 * len(AGENT_MODELS) * len(METHODS) * N_ROLLOUTS
    for rec in records:
        assert set(rec) == set(EPISODE_FEATURES)
        validate_episode(rec)
        assert rec["benchmark"] == "accord" and rec["source"] == SOURCE
        assert rec["user_model"] == USER_MODEL and rec["split"] == "test"
        assert rec["config"] == rec["domain"] in ("shop", "travel")
        assert rec["scenario_id"] == f"accord/{rec['domain']}/{rec['task_id']}"
        assert rec["episode_id"] == (f"{rec['scenario_id']}/{rec['agent_model']}/"
                                     f"{rec['method']}/{rec['rollout']}")
        assert rec["persona"] and rec["persona_text"] and rec["persona_text"] in \
            rec["instructions"]
        assert rec["goals"] is None and rec["gsrt_judge"] is None
    assert len({r["episode_id"] for r in records}) == len(records)
    per_domain = Counter(r["domain"] for r in records if r["rollout"] == 0
                         and r["agent_model"] == AGENT_MODELS[0] and r["method"] == "react")
    assert per_domain == {"shop": 24, "travel": 24}
    # The records build a dataset with the canonical features.
    ds = datasets.Dataset.from_list(records[:10], features=EPISODE_FEATURES)
    assert ds.num_rows == 10


def test_every_dynamic_in_each_domain(records):
    for domain in ("shop", "travel"):
        seen = Counter(p["dynamic"] for r in records if r["domain"] == domain
                       for p in r["preferences"])
        assert set(seen) == set(DYNAMICS), domain
    for r in records:
        assert r["preferences"], "zero-preference scenarios belong to hand-written tests"
        for p in r["preferences"]:
            assert (p["backoff"] is not None) == (p["dynamic"] == "unachievable")
            assert (p["trigger"] is not None) == (p["dynamic"] == "triggered")
            assert p["value"] is not None


def test_judgments_only_for_completed_episodes(records):
    done = [r for r in records if r["completed"]]
    assert 0 < len(done) < len(records)
    for r in records:
        judged = [p["satisfied"] is not None for p in r["preferences"]]
        assert all(judged) if r["completed"] else not any(judged)
    shop = [r for r in records if r["domain"] == "shop"]
    assert all((r["product_type_ok"] is not None) == r["completed"] for r in shop)
    assert any(r["product_type_ok"] is False for r in shop)
    assert any(r["price_ok"] is False for r in shop)
    assert all(r["product_type_ok"] is None and r["price_ok"] is None
               for r in records if r["domain"] == "travel")


def test_outcomes(records):
    for r in records:
        if r["domain"] == "shop" and r["completed"]:
            out = json.loads(r["outcome_json"])
            assert set(out) == {"item_id", "name", "price", "selected_options", "attributes"}
        elif r["domain"] == "travel" and r["completed"]:
            out = json.loads(r["outcome_json"])
            assert set(out) == {"bookings"} and out["bookings"]
    # Some travel episodes stop with a travel domain unbooked.
    partial = [r for r in records if r["domain"] == "travel" and r["outcome_json"]
               and not r["completed"]]
    assert partial


def test_transcript_conventions(records):
    actions = {"shop": {"search", "click", "buy"}, "travel": {"search", "book"}}
    for r in records:
        msgs = r["messages"]
        assert msgs[0]["role"] == "assistant" and msgs[0]["kind"] == "greeting"
        assert [m["turn_idx"] for m in msgs] == list(range(len(msgs)))
        assert all(m["sub_idx"] == 0 for m in msgs)
        for i, m in enumerate(msgs):
            if m["kind"] == "action":
                assert m["role"] == "assistant" and len(m["tool_calls"]) == 1
                call = m["tool_calls"][0]
                assert call["requestor"] == "assistant" and call["name"] in actions[r["domain"]]
                json.loads(call["arguments_json"])
                nxt = msgs[i + 1]
                assert nxt["role"] == "tool" and nxt["kind"] == "observation"
                assert nxt["tool_call_id"] == call["id"]
            elif m["role"] in ("user", "assistant") and m["kind"] != "greeting":
                assert m["kind"] == "utterance" and m["tool_calls"] is None and m["content"]
    assert any(m["error"] for r in records for m in r["messages"])  # a bad booking id


def _reveals(rec):
    for i, m in enumerate(rec["messages"]):
        if m["event"] is not None:
            assert m["event"] == "PREFERENCE_REVEAL" and m["role"] == "user"
            yield i, json.loads(m["event_json"])


def test_reveal_events_follow_the_dynamics(records):
    n = Counter()
    for r in records:
        prefs = {p["pref_id"]: p for p in r["preferences"]}
        msgs = r["messages"]
        for i, ev in _reveals(r):
            assert set(ev) == {"pref_id", "name", "dynamic", "value"}
            p = prefs[ev["pref_id"]]
            assert (ev["name"], ev["dynamic"]) == (p["name"], p["dynamic"])
            before = msgs[i - 1]
            assert before["role"] == "assistant" and before["kind"] == "utterance"
            assert p["dynamic"] != "stated"
            if p["dynamic"] == "unachievable" and ev["value"] == p["backoff"]:
                # The backoff comes only after the agent says the primary is unavailable.
                assert p["value"] in before["content"]
                n["backoff"] += 1
            elif p["dynamic"] == "triggered":
                assert ev["value"] == p["trigger"] and p["trigger"] in before["content"]
                n["triggered"] += 1
            else:
                assert ev["value"] == p["value"]
                n[p["dynamic"]] += 1
    assert min(n[k] for k in ("backoff", "triggered", "hard_underspec", "soft_underspec",
                              "unachievable")) >= 5


def test_ground_truth_frame(records, truth):
    assert len(truth) == sum(len(r["preferences"]) for r in records)
    assert truth["satisfied"].dtype == "boolean"
    recs = {r["episode_id"]: r for r in records}
    for row in truth.itertuples():
        p = next(p for p in recs[row.episode_id]["preferences"] if p["pref_id"] == row.pref_id)
        assert (pd.isna(row.satisfied) and p["satisfied"] is None) or \
            row.satisfied == p["satisfied"]
    # Hidden triggered preferences are revealed only when surfaced.
    trig = truth[truth["dynamic"] == "triggered"]
    assert (trig["revealed"] <= trig["surfaced"]).all() and trig["surfaced"].any()
    never_asks = truth[(truth.agent_model == "sim-basic-1") & (truth.method == "react")]
    assert not never_asks["elicited"].any()


def test_rollouts_and_agents_differ(records):
    by_key: dict[tuple, list[dict]] = {}
    for r in records:
        by_key.setdefault((r["scenario_id"], r["agent_model"], r["method"]), []).append(r)
    differing = sum(len({json.dumps(r["messages"]) for r in group}) > 1
                    for group in by_key.values())
    assert differing >= 0.8 * len(by_key)
    assert all(len({r["seed"] for r in group}) == N_ROLLOUTS for group in by_key.values())
    asked = Counter()
    for r in records:
        asked[r["agent_model"], r["method"]] += sum(
            m["role"] == "assistant" and m["kind"] == "utterance" and "?" in m["content"]
            for m in r["messages"])
    assert asked["sim-basic-1", "react"] < asked["sim-basic-1", "uncreact"]
    assert asked["sim-careful-1", "react"] < asked["sim-careful-1", "uncreact"]


def test_same_seed_same_records_other_seed_differs():
    a, ta = generate_accord(seed=7, n_scenarios=3)
    b, tb = generate_accord(seed=7, n_scenarios=3)
    assert json.dumps(a) == json.dumps(b)
    pd.testing.assert_frame_equal(ta, tb)
    c, _ = generate_accord(seed=8, n_scenarios=3)
    assert json.dumps(a) != json.dumps(c)


def test_committed_sample_is_current(sample_dir, tmp_path):
    from accordkit.synth.write import write_sample

    committed = sample_dir / "accord"
    if not committed.exists():
        pytest.skip("data/sample/accord has not been generated")
    write_sample(tmp_path, seed=0, parts=["accord"])
    fresh = tmp_path / "accord"
    names = sorted(p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(committed) for p in committed.rglob("*")
                           if p.is_file())
    for name in names:
        assert (fresh / name).read_bytes() == Path(committed, name).read_bytes(), name


@pytest.mark.parametrize("kwargs, match", [
    ({"seed": -1}, "seed must be a non-negative integer"),
    ({"seed": 1.5}, "seed must be a non-negative integer"),
    ({"n_scenarios": 0}, "n_scenarios must be a positive integer"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        generate_accord(**kwargs)
