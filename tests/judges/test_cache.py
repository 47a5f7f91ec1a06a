"""The judges' own cache: keys that change with every input, atomic entries."""

from __future__ import annotations

import json
import os

import pytest

from accordkit.judges.cache import JudgeCache, cache_key, default_cache_dir
from accordkit.judges.calls import JudgeCall


def _call(**changes):
    base = {"judge": "gsrt", "prompt_id": "gsrt", "prompt_version": "1",
            "messages": (("system", "s"), ("user", "u")), "items": ()}
    base.update(changes)
    return JudgeCall(**base)


def test_key_changes_with_each_component():
    k = cache_key(_call(), model="m", params={"temperature": 0})
    assert len(k) == 64
    assert cache_key(_call(), model="m", params={"temperature": 0}) == k
    others = [
        cache_key(_call(judge="nl_assertions"), model="m", params={"temperature": 0}),
        cache_key(_call(prompt_version="2"), model="m", params={"temperature": 0}),
        cache_key(_call(prompt_id="x"), model="m", params={"temperature": 0}),
        cache_key(_call(messages=(("system", "s"), ("user", "u2"))), model="m",
                  params={"temperature": 0}),
        cache_key(_call(), model="m2", params={"temperature": 0}),
        cache_key(_call(), model="m", params={"temperature": 0.5}),
        cache_key(_call(), model="m", params={"temperature": 0, "max_tokens": 5}),
    ]
    assert len({k, *others}) == len(others) + 1


def test_key_ignores_which_items_share_the_request():
    assert cache_key(_call(items=()), model="m", params={}) == \
        cache_key(_call(items=("anything",)), model="m", params={})


def test_put_get_roundtrip_and_layout(tmp_path):
    cache = JudgeCache(tmp_path)
    key = "ab" + "0" * 62
    path = cache.put("gsrt", key, {"raw": "x", "input_tokens": 3})
    assert path == tmp_path / "gsrt" / "ab" / f"{key}.json"
    assert cache.get("gsrt", key) == {"raw": "x", "input_tokens": 3, "key": key}
    assert cache.get("gsrt", "cd" + "0" * 62) is None
    assert len(cache) == 1
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".tmp-")]


def test_unreadable_or_foreign_entries_are_misses(tmp_path):
    cache = JudgeCache(tmp_path)
    key = "ab" + "1" * 62
    path = cache.path("gsrt", key)
    path.parent.mkdir(parents=True)
    path.write_text('{"raw": "trunc')
    assert cache.get("gsrt", key) is None
    path.write_text(json.dumps({"raw": "x", "key": "other"}))
    assert cache.get("gsrt", key) is None


@pytest.mark.parametrize("bad", [
    {"input_tokens": 3},                                  # no reply text
    {"raw": None}, {"raw": ["yes"]}, {"raw": 1},
    {"raw": "yes", "input_tokens": "12k"}, {"raw": "yes", "output_tokens": -1},
    {"raw": "yes", "input_tokens": True}, {"raw": "yes", "input_tokens": 2.5},
    {"raw": "yes", "cost_usd": "0.1"}, {"raw": "yes", "cost_usd": -0.5},
    {"raw": "yes", "cost_usd": float("nan")},
    {"raw": "yes", "cached_at": "yesterday"}, {"raw": "yes", "cached_at": 5},
])
def test_an_entry_that_parses_but_is_not_a_reply_is_a_miss(tmp_path, bad):
    cache = JudgeCache(tmp_path)
    key = "ab" + "2" * 62
    path = cache.path("gsrt", key)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({**bad, "key": key}))
    assert cache.get("gsrt", key) is None
    good = {"raw": "yes", "input_tokens": 3, "output_tokens": 0, "cost_usd": 0,
            "cached_at": "2026-12-02T06:00:00+00:00"}
    path.write_text(json.dumps({**good, "key": key}))
    assert cache.get("gsrt", key)["raw"] == "yes"


def test_default_dir_follows_env(monkeypatch, tmp_path):
    monkeypatch.setenv("ACCORDKIT_JUDGE_CACHE", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("ACCORDKIT_JUDGE_CACHE")
    monkeypatch.chdir(tmp_path)
    assert default_cache_dir() == tmp_path / ".cache" / "judges"
    assert os.fspath(default_cache_dir()).endswith(os.path.join(".cache", "judges"))
