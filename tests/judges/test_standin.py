"""Stand-in judge models, the sample verdicts, and the sample judged through the stub."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import accordkit as ak
from accordkit.judges import (
    agreement,
    pass_rates,
    read_verdicts,
    run_judge,
    usersim,
    write_verdicts,
)
from accordkit.judges.standin import (
    STANDIN_MODELS,
    make_sample_verdicts,
    standin_answers,
    standin_reply,
    truth_labels,
)

from .episodes import accord_episode, reveal
from .stub_server import last_user_text


def revealing_episode(eid: str = "e1") -> dict:
    """User turns: 1 states the primary of p1, 3 the fallback of p1, 5 a triggered p2."""
    ep = accord_episode(eid, user_texts=("I want red.", "Blue then.", "Oh, glossy!", "Thanks"))
    ep["preferences"].append({"pref_id": "p2", "name": "finish", "slot": "attribute",
                              "value": None, "dynamic": "triggered", "backoff": None,
                              "trigger": "glossy", "satisfied": None})
    ep["messages"][1].update(reveal("p1", "red", "unachievable"))
    ep["messages"][3].update(reveal("p1", "blue", "unachievable"))
    ep["messages"][5].update(reveal("p2", "glossy", "triggered"))
    return ep


def test_truth_labels_follow_the_reveal_events():
    truth = truth_labels(revealing_episode())
    assert sorted(truth) == [1, 3, 5, 7]
    assert truth[1] == {"test000": "yes", "test001": "yes", "test002": "n/a", "test003": "n/a",
                        "test004": "n/a", "test005": "n/a"}
    assert (truth[3]["test003"], truth[3]["test004"], truth[3]["test001"]) == ("yes", "yes", "n/a")
    assert truth[5]["test005"] == "yes" and truth[5]["test001"] == "n/a"
    assert set(truth[7].values()) == {"yes", "n/a"} and truth[7]["test000"] == "yes"


def test_unknown_pref_in_an_event_names_the_record():
    ep = revealing_episode()
    ep["messages"][1].update(reveal("p9", "red"))
    with pytest.raises(ValueError, match=r"record .*turn 1, field event_json: unknown pref_id"):
        truth_labels(ep)


def test_error_rates_and_determinism():
    eps = [accord_episode(f"e{i}", user_texts=tuple(f"{w} {i}" for w in "abcde"))
           for i in range(400)]
    a = make_sample_verdicts(eps, seed=0)
    pd.testing.assert_frame_equal(a, make_sample_verdicts(eps, seed=0))
    pd.testing.assert_frame_equal(  # independent of episode order
        a.sort_values(["judge_model", "episode_id", "turn_idx", "item"]).reset_index(drop=True),
        make_sample_verdicts(eps[::-1], seed=0)
        .sort_values(["judge_model", "episode_id", "turn_idx", "item"]).reset_index(drop=True))
    assert not a["verdict"].equals(make_sample_verdicts(eps, seed=1)["verdict"])
    truth = {(r["episode_id"], t, k): lab for r in eps for t, labs in truth_labels(r).items()
             for k, lab in labs.items()}
    wrong = a.apply(lambda r: r["verdict"] != truth[(r["episode_id"], r["turn_idx"], r["item"])],
                    axis=1)
    for model, rates in STANDIN_MODELS.items():
        share = wrong[a["judge_model"] == model].mean()
        expected = sum(rates.values()) / len(rates)
        assert abs(share - expected) < 0.01, (model, share, expected)
    assert a["cost_usd"].eq(0).all() and a["cached_at"].isna().all()
    # identical requests (same scenario and dialogue) get identical answers, like a cached judge
    twins = make_sample_verdicts([eps[0], dict(eps[0], episode_id="twin")], seed=0)
    by_episode = twins.groupby("episode_id")["verdict"].apply(list)
    assert by_episode["twin"] == by_episode[eps[0]["episode_id"]]
    assert set(a["prompt_id"]) == {"usersim_tests.shop"}


def test_sample_verdicts_are_bit_identical(sample_dir, tmp_path):
    ds = ak.load(sample_dir / "accord")
    write_verdicts(make_sample_verdicts(ds, seed=0), tmp_path / "a.parquet")
    write_verdicts(make_sample_verdicts(ds, seed=0), tmp_path / "b.parquet")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    committed = sample_dir / "verdicts" / "usersim_tests.parquet"
    if committed.exists():
        assert committed.read_bytes() == (tmp_path / "a.parquet").read_bytes()


def test_sample_judged_end_to_end_through_the_stub(sample_dir, stub, tmp_path, fake_key):
    ds = ak.load(sample_dir / "accord")
    episodes = [r for r in ds.to_list()[::24]]            # every 24th episode: both domains
    assert {r["domain"] for r in episodes} == {"shop", "travel"}
    replies = {}
    for ep in episodes:
        for call in usersim.build(ep):
            turn = call.items[0].turn_idx
            for served in ("judge-a", "judge-b"):
                answers = standin_answers(ep, f"standin/{served}", seed=0)[turn]
                replies[(served, call.messages[1][1])] = standin_reply(answers)
    server = stub(answer=lambda body: replies[(body["model"], last_user_text(body))])
    frames = []
    for served in ("judge-a", "judge-b"):
        run = run_judge(episodes, judge="usersim_tests", model=f"openai/{served}",
                        api_base=server.base_url, cache_dir=tmp_path / "cache", price_in=1.0,
                        price_out=4.0, concurrency=8, progress=False)
        assert run.exit_code == 0 and run.n_invalid == 0
        frames.append(run.verdicts)
    stored = write_verdicts(pd.concat(frames, ignore_index=True), tmp_path / "v.parquet")
    v = read_verdicts(stored)
    assert server.n_requests == len(replies)
    assert (v["cost_usd"] > 0).sum() == len(replies)
    # the verdicts obtained through litellm are the stand-ins' answers, item for item
    expected = make_sample_verdicts(episodes, seed=0)
    key = ["judge_model", "episode_id", "turn_idx", "item"]
    got = v.assign(judge_model="standin/" + v["judge_model"].str.removeprefix("openai/"))
    pd.testing.assert_frame_equal(
        got.sort_values(key)[[*key, "verdict", "prompt_id", "prompt_version"]]
        .reset_index(drop=True),
        expected.sort_values(key)[[*key, "verdict", "prompt_id", "prompt_version"]]
        .reset_index(drop=True))
    # and the reliability tables build from the stored verdicts
    rates = pass_rates(v).set_index(["judge_model", "item"])
    assert rates.loc[("openai/judge-a", "test000"), "pass_rate"] > 0.9
    agree = agreement(v, "openai/judge-a", "openai/judge-b").set_index("item")
    assert agree.loc["all", "n_pairs"] == len(v) // 2
    assert 0.8 < agree.loc["all", "agreement"] < 1.0
    assert json.loads(v["raw"].iloc[0]).keys() == set(usersim.TESTS)


def test_committed_sample_verdicts_build_table6_and_agreement(sample_dir):
    path = Path(sample_dir) / "verdicts" / "usersim_tests.parquet"
    if not path.exists():
        pytest.skip("data/sample/verdicts not generated yet")
    v = read_verdicts(path)
    assert set(v["judge_model"]) == set(STANDIN_MODELS)
    rates = pass_rates(v)
    assert len(rates) == 12 and rates["pass_rate"].between(0.5, 1.0).all()
    agree = agreement(v, "standin/judge-a", "standin/judge-b")
    assert list(agree["item"]) == [*usersim.TESTS, "all"]
    assert agree["n_excluded"].eq(0).all()
