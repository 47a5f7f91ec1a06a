"""Sharded synthetic sets: same scenarios as a full run, deterministic, loadable."""

from __future__ import annotations

import hashlib

import pyarrow.parquet as pq
import pytest

import accordkit as ak
from accordkit.synth import accord
from accordkit.synth.sharded import (
    EPISODES_PER_SCENARIO,
    _counters_before,
    scenario_range,
    write_accord_shards,
)


@pytest.mark.parametrize("domain", ["shop", "travel"])
def test_a_range_of_scenarios_equals_the_same_slice_of_a_full_run(domain):
    full = accord._scenarios(3, domain, 40)
    part = scenario_range(3, domain, 17, 33)
    assert [s.task_id for s in part] == [s.task_id for s in full[17:33]]
    assert part == full[17:33]


def test_counters_match_the_simulators_after_any_prefix():
    for domain in ("shop", "travel"):
        counters: dict[str, int] = {}
        make = accord._shop_scenario if domain == "shop" else accord._travel_scenario
        import numpy as np

        for i in range(30):
            assert _counters_before(domain, i) == {k: v for k, v in counters.items() if v}
            make(np.random.default_rng(i), i, counters)


def _digest(paths):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def test_shards_are_deterministic_and_independent_of_processes(tmp_path):
    one = write_accord_shards(tmp_path / "a", episodes=300, shards=4, seed=1, num_proc=1)
    two = write_accord_shards(tmp_path / "b", episodes=300, shards=4, seed=1, num_proc=2)
    assert _digest(one) == _digest(two)
    files = [p for p in one if p.suffix == ".parquet"]
    assert len(files) == 4
    n = sum(pq.ParquetFile(p).metadata.num_rows for p in files)
    # 300 episodes round up to whole scenarios, split between two domains
    assert n == 2 * -(-300 // (2 * EPISODES_PER_SCENARIO)) * EPISODES_PER_SCENARIO


def test_the_folder_loads_and_scores_with_distinct_episodes(tmp_path):
    write_accord_shards(tmp_path, episodes=240, shards=2, seed=0)
    ds = ak.load(str(tmp_path))
    assert len(ds) == 240
    assert len(set(ds["episode_id"])) == 240
    assert len(set(ds["scenario_id"])) == 240 // EPISODES_PER_SCENARIO
    scores = ak.score(ds)
    assert scores["completed"].notna().all()


def test_a_shard_appears_whole_or_not_at_all(tmp_path, monkeypatch):
    # a failure after a first row group was written leaves neither the shard nor a temp file
    from accordkit.synth import sharded

    real = accord._episode
    calls = {"n": 0}

    def failing(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 3 * EPISODES_PER_SCENARIO:
            raise OSError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(sharded, "ROW_GROUP_SIZE", 2 * EPISODES_PER_SCENARIO)
    monkeypatch.setattr(accord, "_episode", failing)
    path = tmp_path / "test-00000-of-00001.parquet"
    with pytest.raises(OSError, match="disk full"):
        sharded._shard(0, "shop", 0, 10, str(path))
    assert calls["n"] > 2 * EPISODES_PER_SCENARIO       # a row group had been written
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(accord, "_episode", real)
    assert sharded._shard(0, "shop", 0, 10, str(path)) == (str(path), 10 * EPISODES_PER_SCENARIO)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_synth_shows_a_progress_bar_of_its_shards_when_asked(tmp_path, capsys):
    """`accordkit synth` runs for minutes on large runs: a bar counts the shards (on a
    terminal by default; asked for here, where stderr is captured)."""
    write_accord_shards(tmp_path / "on", episodes=24, shards=2, seed=0, progress=True)
    err = capsys.readouterr().err
    assert "synth" in err and "2/2" in err and "shard" in err
    write_accord_shards(tmp_path / "off", episodes=24, shards=2, seed=0, progress=False)
    assert capsys.readouterr().err == ""
    assert (tmp_path / "on" / "shop" / "test-00000-of-00001.parquet").read_bytes() == \
        (tmp_path / "off" / "shop" / "test-00000-of-00001.parquet").read_bytes()
