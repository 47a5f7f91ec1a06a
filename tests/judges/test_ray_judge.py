"""``accordkit judge --engine ray`` on a cluster of three nodes simulated on this machine,
against the stand-in server (tests/judges/stub_server.py), whose request log counts calls.

One cluster per session, shared with tests/engines/test_ray_cluster.py (the ``ray_cluster``
fixture of tests/conftest.py: started with a fake API key in its environment, which every
node inherits, as nodes started by ``ray start`` inherit the keys of their shell). Timings on
the 2-core machine (quiet / with other test runs beside it): starting the cluster 12 / 45 s,
each judge run on it 15 / 35 s; the module about 1.5 / 2.5 minutes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import datasets
import pandas as pd
import pytest

import accordkit as ak
from accordkit.judges import run_judge
from accordkit.judges.cache import JudgeCache
from accordkit.judges.runner import in_shard
from accordkit.judges.verdicts import read_verdicts, write_verdicts
from accordkit.schema import EPISODE_FEATURES

from .episodes import FAKE_KEY, acb_episode
from .stub_server import last_user_text

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'accordkit[ray]')")
pytestmark = [pytest.mark.network]

#: 30 requests a shard, 2 at a time, 0.5 s each: a shard takes 7.5 s, so that every shard
#: is still answering when the last one's node has started its worker.
N_EPISODES = 90
LATENCY = 0.5
SHARDS = 3
CONCURRENCY = 2
PRICE = {"price_in": 500.0, "price_out": 1500.0}       # USD per million tokens


@pytest.fixture
def cluster(ray_cluster):
    """The session's cluster of a head and two worker nodes of one CPU, started with the fake
    API key in its environment (which every node inherits) and whole again before each test;
    shared with tests/engines/test_ray_cluster.py (tests/conftest.py)."""
    return ray_cluster


@pytest.fixture(scope="module")
def episodes(tmp_path_factory) -> Path:
    recs = [acb_episode(f"ep{i}") for i in range(N_EPISODES)]
    return ak.save(datasets.Dataset.from_list(recs, features=EPISODE_FEATURES),
                   tmp_path_factory.mktemp("judge_ray") / "episodes.parquet")


def _judge(runs: list, source: Path, out: Path, cache: Path, server, address: str,
           *extra: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "accordkit.cli", "judge", str(source), "--judge", "gsrt",
           "--model", "openai/stub-judge", "--api-base", server.base_url, "--cache", str(cache),
           "--price-in", str(PRICE["price_in"]), "--price-out", str(PRICE["price_out"]),
           "--engine", "ray", "--shards", str(SHARDS), "--concurrency", str(CONCURRENCY),
           "--no-progress", "-o", str(out), *extra]
    env = {**os.environ, "RAY_ADDRESS": address, "HF_HUB_OFFLINE": "1"}
    env.pop("OPENAI_API_KEY", None)     # the driver needs none: the nodes have theirs
    runs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True))
    return runs[-1]


@pytest.fixture
def runs():
    """The command-line runs a test starts; any still running when it ends (a failed
    assertion) is killed."""
    procs: list[subprocess.Popen] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _finish(proc: subprocess.Popen) -> tuple[int, str]:
    try:
        _, err = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    return proc.returncode, err


def _prompt(text: str) -> str:
    """A prompt with its fence code (random per process, so per shard attempt) abstracted:
    one request, whichever process built it (as its cache key says)."""
    return re.sub(r"^(<<<(?:BEGIN|END) [A-Z]+ )[0-9a-f]{16}(>>>)$", r"\1{fence}\2", text,
                  flags=re.MULTILINE)


def _stored_prompts(cache: Path) -> dict[str, str]:
    """``prompt text -> cache key`` of the answers stored in ``cache``."""
    out = {}
    for path in JudgeCache(cache).entries():
        entry = json.loads(path.read_text(encoding="utf-8"))
        out[_prompt(entry["messages"][-1]["content"])] = path.stem
    return out


def _stable(v: pd.DataFrame) -> pd.DataFrame:
    keys = ["episode_id", "item", "turn_idx"]
    return v.drop(columns=["cached_at"]).sort_values(keys).reset_index(drop=True)


def _local(episodes: Path, tmp_path: Path, server, **options) -> pd.DataFrame:
    return run_judge(ak.load(str(episodes)), judge="gsrt", model="openai/stub-judge",
                     api_base=server.base_url, cache_dir=tmp_path / "local-cache",
                     progress=False, **PRICE, **options).verdicts


def test_a_killed_node_asks_no_answered_prompt_again(cluster, episodes, tmp_path, stub,
                                                     fake_key, runs):
    """A worker node is killed while every shard is answering: Ray runs its shard again on
    a node left, which takes the answers the lost attempt stored from the cache. Counted at
    the server, no prompt answered before the kill is asked after it; only calls that were
    in flight on the lost node are asked twice."""
    if not cluster.worker_ids():
        cluster.add_node()
    server = stub(latency=LATENCY)
    cache, out = tmp_path / "cache", tmp_path / "verdicts.parquet"
    started = time.perf_counter()
    proc = _judge(runs, episodes, out, cache, server, cluster.address)
    per_shard = N_EPISODES // SHARDS

    def answered_per_shard() -> list[int]:
        keys = _stored_prompts(cache).values()
        return [sum(in_shard(k, (i, SHARDS)) for k in keys) for i in range(1, SHARDS + 1)]

    counts = [0] * SHARDS
    while proc.poll() is None and min(counts) < 2:         # every shard is answering
        time.sleep(0.05)
        counts = answered_per_shard()
    assert proc.poll() is None, f"the run ended before a node could be killed: {counts}"
    assert max(counts) < per_shard - CONCURRENCY, f"a shard was done already: {counts}"
    kill_at = time.monotonic()
    cluster.kill_node(cluster.worker_ids()[0])
    answered = _stored_prompts(cache)
    n_before = len([t for t in server.times if t < kill_at])
    code, err = _finish(proc)
    assert code == 0, err[-3000:]
    print(f"killed a node after {sorted(counts)} answers per shard; run took "
          f"{time.perf_counter() - started:.1f} s")
    texts = [_prompt(t) for t in server.request_texts()]
    asked = pd.Series(texts).value_counts()
    twice = set(asked[asked > 1].index)
    assert not twice & set(answered), "a prompt answered before the kill was asked again"
    assert all(asked[t] == 2 and texts.index(t) < n_before for t in twice), \
        [(asked[t], texts.index(t), n_before) for t in twice]
    assert len(twice) <= CONCURRENCY                    # the lost node's calls in flight
    assert len(asked) == N_EPISODES
    # the lost attempt's answers came from the cache
    found = re.search(r"requests (\d+): (\d+) from cache, (\d+) called", err)
    assert found, err[-2000:]
    n_requests, n_cached, n_called = map(int, found.groups())
    assert n_requests == N_EPISODES and n_cached >= 2 and n_cached + n_called == N_EPISODES
    assert not list(cache.glob("*/*/*.claim"))       # the lost attempt's claims are gone
    v = read_verdicts(out)
    assert v["error"].isna().all() and len(v) == N_EPISODES
    local = _local(episodes, tmp_path, stub())
    pd.testing.assert_frame_equal(_stable(v), _stable(local))
    assert v.attrs["judge_job"] == read_verdicts(                 # the whole job, as one run
        write_verdicts(local, tmp_path / "local.parquet")).attrs["judge_job"]
    # the key, in the nodes' environment only, is in no artifact and no log of the cluster
    files = [p for root in (tmp_path, cluster.temp_dir) for p in root.rglob("*")
             if p.is_file() and not p.is_symlink()]
    assert len(files) > N_EPISODES
    leaked = [p for p in files if FAKE_KEY.encode() in _read(p)]
    assert leaked == []


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:             # a socket, a file removed meanwhile
        return b""


def _cost(body: dict) -> float:
    """USD of one request as the stand-in server bills it (its token counts, our price)."""
    n_in = sum(len(str(m.get("content") or "")) for m in body["messages"]) // 4
    from .episodes import GSRT_REPLY

    n_out = max(1, len(GSRT_REPLY) // 4)
    return (n_in * PRICE["price_in"] + n_out * PRICE["price_out"]) / 1e6


def test_one_cost_cap_holds_over_every_shard_and_a_rerun_resumes(cluster, episodes, tmp_path,
                                                                 stub, fake_key, runs):
    """--max-cost caps the whole run, not each shard: what the server billed stays under
    it; a second run over the same cache (here a local one) asks only for what the first
    did not get."""
    server = stub()
    full = sum(_cost({"messages": [{"content": m} for m in _messages(episodes)[k]]})
               for k in range(N_EPISODES))
    cap = round(full * 0.4, 6)
    cache, out = tmp_path / "cache", tmp_path / "verdicts.parquet"
    code, err = _finish(_judge(runs, episodes, out, cache, server, cluster.address,
                               "--max-cost", str(cap)))
    assert code == 2, err[-3000:]                 # some items not requested: run again
    billed = sum(_cost(b) for b in server.requests)
    first = [_prompt(t) for t in server.request_texts()]
    assert 0 < len(first) < N_EPISODES and billed <= cap
    v = read_verdicts(out)
    assert v["error"].str.contains("not requested: max_cost", na=False).sum() == \
        N_EPISODES - len(first)
    assert v["cost_usd"].sum() == pytest.approx(billed)
    again = run_judge(ak.load(str(episodes)), judge="gsrt", model="openai/stub-judge",
                      api_base=server.base_url, cache_dir=cache, progress=False, **PRICE)
    assert again.exit_code == 0 and again.n_cached == len(first)
    second = [_prompt(t) for t in server.request_texts()[len(first):]]
    assert not set(first) & set(second) and len(first) + len(second) == N_EPISODES
    assert {_prompt(last_user_text(b)) for b in server.requests} == set(_stored_prompts(cache))


def _messages(episodes: Path) -> list[list[str]]:
    """The message texts of each gsrt request, built as the judge builds them."""
    from accordkit.judges.registry import get_judge

    spec = get_judge("gsrt")
    calls = [c for ep in ak.load(str(episodes)).to_list() for c in spec.build(ep)]
    return [[content for _, content in call.messages] for call in calls]


@pytest.mark.parametrize(("options", "message"), [
    ({"shard": "1/2"}, "shard and the ray engine do not go together"),
    ({"shards": 0}, "shards must be a positive integer"),
    ({"max_cost": 1.0, "model": "openai/no-such-price"}, "max_cost needs a price"),
    ({"concurrency": 0}, "concurrency must be a positive integer"),
])
def test_bad_options_are_refused_before_ray_starts(options, message, tmp_path):
    from accordkit.judges.ray_judge import run_judge_on_ray

    kwargs = {"judge": "gsrt", "model": "openai/stub-judge", "cache_dir": tmp_path, **PRICE,
              **options}
    if "max_cost" in options:
        kwargs.pop("price_in"), kwargs.pop("price_out")
    with pytest.raises(ValueError, match=message):
        run_judge_on_ray([acb_episode("x")], **kwargs)
    assert not ray.is_initialized()
