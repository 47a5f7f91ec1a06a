"""The Ray engine on a cluster of three nodes simulated on this machine (one per session,
shared with tests/judges/test_ray_judge.py: the ``ray_cluster`` fixture of tests/conftest.py).

``accordkit score --engine ray`` runs as a user runs it, with ``RAY_ADDRESS`` naming the
cluster; each store is compared with the local engine's. Timings on the 2-core machine
(quiet / with other test runs beside it): starting the cluster 12 / 45 s, a run 15 / 30 s,
the run with a node killed 25 / 50 s; the module about 1.5 / 3.5 minutes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from accordkit.engines import score_to_store
from accordkit.engines.ray_cluster import LocalCluster
from accordkit.store import read_manifest, read_modes, read_scores

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'accordkit[ray]')")

#: Rows per row group and per batch: about 20 work items over the three nodes.
BATCH = 250


@pytest.fixture
def cluster(ray_cluster):
    """The session's cluster of a head and two worker nodes of one CPU each, shared with
    tests/judges/test_ray_judge.py and whole again before each test (tests/conftest.py)."""
    return ray_cluster


@pytest.fixture(scope="module")
def shards(tmp_path_factory, sample_dir) -> Path:
    """3,000 synthetic AcCoRD episodes and the sample's goal-shift runs as plain parquet
    shards (row groups of 250 rows), each AcCoRD shard with the config and split its
    dataset card gives it."""
    import pyarrow as pa

    from accordkit.synth.sharded import write_accord_shards

    made = tmp_path_factory.mktemp("accord3k")
    write_accord_shards(made, episodes=3000, shards=3, seed=0)
    root = tmp_path_factory.mktemp("shards")
    for f in sorted(made.rglob("*.parquet")):
        table = pq.read_table(f)
        for column, value in (("config", f.parent.name), ("split", "test")):   # as the card
            table = table.set_column(table.column_names.index(column), column,
                                     pa.array([value] * len(table), pa.string()))
        pq.write_table(table, root / f"{f.parent.name}-{f.name}", row_group_size=BATCH)
    for f in sorted((sample_dir / "goalshift").rglob("*.parquet")):
        pq.write_table(pq.read_table(f), root / f"goalshift-{f.parent.name}-{f.name}",
                       row_group_size=BATCH)
    return root


@pytest.fixture(scope="module")
def local_store(tmp_path_factory, shards) -> Path:
    out = tmp_path_factory.mktemp("local") / "store"
    score_to_store([str(shards)], out=out, batch_size=BATCH, progress=False)
    return out


def _score(runs: list, sources: list[str], out: Path, address: str) -> subprocess.Popen:
    """``accordkit score --engine ray`` in a new process, on the cluster at ``address``."""
    env = {**os.environ, "RAY_ADDRESS": address}
    runs.append(subprocess.Popen([sys.executable, "-m", "accordkit.cli", "score", *sources,
                             "--out", str(out), "--engine", "ray", "--batch-size", str(BATCH),
                             "--quiet"], env=env, stdout=subprocess.PIPE,
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


def _finish(proc: subprocess.Popen, *, timeout: float = 600) -> int:
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    if proc.returncode not in (0, 1):
        raise AssertionError(f"accordkit score failed ({proc.returncode}):\n{err[-3000:]}")
    return proc.returncode


def _assert_same_store(store: Path, local: Path) -> None:
    for level in ("episode", "preference", "shift"):
        pd.testing.assert_frame_equal(read_scores(store, level=level),
                                      read_scores(local, level=level))
    pd.testing.assert_frame_equal(read_modes(store), read_modes(local))
    mine, theirs = read_manifest(store), read_manifest(local)
    assert mine["inputs"] == theirs["inputs"]
    assert mine["levels"] == theirs["levels"] and mine["sha256"] == theirs["sha256"]


def _batches_once(manifest: dict) -> list[tuple[int, int]]:
    """Every batch listed by the nodes, checked to be listed by one node only."""
    listed = [tuple(b) for node in manifest["nodes"] for b in node["batches"]]
    assert len(listed) == len(set(listed)), "a batch is listed by two nodes"
    parts = {p for names in manifest["levels"].values() for p in names}
    assert {f"{i:05d}-{b:05d}.parquet" for i, b in listed} == parts
    return listed


def test_work_spreads_over_every_node_and_the_store_equals_the_local_one(
        cluster, shards, local_store, tmp_path, runs):
    started = time.perf_counter()
    proc = _score(runs, [str(shards)], tmp_path / "store", cluster.address)
    assert _finish(proc) == 0
    print(f"scored on {len(cluster.node_ids())} nodes in {time.perf_counter() - started:.1f} s")
    manifest = read_manifest(tmp_path / "store")
    _assert_same_store(tmp_path / "store", local_store)
    nodes = {n["node_id"]: n for n in manifest["nodes"]}
    assert set(nodes) == set(cluster.node_ids())
    for node in nodes.values():
        assert node["alive_at_end"] and node["cpus"] == 1
        assert node["batches"], f"node {node['node_id']} scored nothing"
        assert node["inputs"] == sorted({i for i, _ in node["batches"]})
    _batches_once(manifest)
    assert sum(n["episodes"] for n in nodes.values()) == manifest["episodes"]


def _bad_inputs(folder: Path, shards: Path) -> Path:
    """A good shard, a shard with a corrupt page, a file that is not parquet, a JSON file
    of episodes cut short and JSONL episodes with two records of a wrong type."""
    folder.mkdir()
    first, second, third = (pq.read_table(f) for f in sorted(shards.glob("[st]*-*.parquet"))[:3])
    pq.write_table(first, folder / "good.parquet", row_group_size=BATCH)
    corrupt = folder / "corrupt.parquet"          # other episodes: a store holds each once
    pq.write_table(second, corrupt, row_group_size=BATCH, compression="none")
    meta = pq.ParquetFile(corrupt).metadata
    raw = bytearray(corrupt.read_bytes())
    page = meta.row_group(1).column(5).data_page_offset     # row group 1: the 2nd batch
    raw[page:page + 64] = b"\xff" * 64
    corrupt.write_bytes(bytes(raw))
    (folder / "not-parquet.parquet").write_bytes(b"PAR1 not really")
    rows = third.slice(0, 20).to_pylist()
    text = json.dumps(rows, default=str)
    (folder / "cut-short.json").write_text(text[:len(text) // 2], encoding="utf-8")
    rows[3]["rollout"] = "three"
    rows[7]["completed"] = "yes"
    (folder / "wrong-type.jsonl").write_text(
        "".join(json.dumps(r, default=str) + "\n" for r in rows), encoding="utf-8")
    return folder


def test_bad_inputs_are_listed_as_the_local_engine_lists_them(cluster, shards, tmp_path,
                                                              runs):
    bad = _bad_inputs(tmp_path / "in", shards)
    local = score_to_store([str(bad)], out=tmp_path / "local", batch_size=BATCH,
                           progress=False)
    assert _finish(_score(runs, [str(bad)], tmp_path / "ray", cluster.address)) == 1
    on_ray = read_manifest(tmp_path / "ray")
    assert on_ray["inputs"] == local["inputs"]
    by_name = {Path(r["source"]).name: r for r in on_ray["inputs"]}
    assert by_name["good.parquet"]["error"] is None
    assert by_name["corrupt.parquet"]["error"].startswith("batch 1: ")       # read on a node
    assert by_name["corrupt.parquet"]["episodes"] == \
        pq.ParquetFile(bad / "corrupt.parquet").metadata.num_rows - BATCH
    assert "unreadable parquet file" in by_name["not-parquet.parquet"]["error"]
    assert "truncated JSON" in by_name["cut-short.json"]["error"]
    wrong = by_name["wrong-type.jsonl"]
    assert wrong["skipped"] == 2 and wrong["episodes"] == 18
    first, second = wrong["problems"]
    assert str(bad / "wrong-type.jsonl") in first
    assert "(line 4), field rollout: expected an integer, got str 'three'" in first
    assert "(line 8), field completed: expected true or false, got str 'yes'" in second
    _assert_same_frames(tmp_path / "ray", tmp_path / "local")


def _assert_same_frames(store: Path, local: Path) -> None:
    for level in ("episode", "preference"):
        pd.testing.assert_frame_equal(read_scores(store, level=level, check_inputs=False),
                                      read_scores(local, level=level, check_inputs=False))


def test_a_worker_node_killed_mid_run_loses_nothing(cluster, shards, local_store, tmp_path,
                                                    runs):
    """Ray retries the lost node's items on the nodes left: every batch is scored into the
    store once, the store equals the local one, and the manifest says the node was lost."""
    if not cluster.worker_ids():
        cluster.add_node()
    victim = cluster.worker_ids()[0]
    out = tmp_path / "store"
    total = len(read_manifest(local_store)["levels"]["episode"])
    started = time.perf_counter()
    proc = _score(runs, [str(shards)], out, cluster.address)
    parts: list[Path] = []
    while proc.poll() is None and not parts:       # the first batches are in
        parts = sorted((out / "episodes").glob("*.parquet")) if out.exists() else []
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before a node could be killed"
    cluster.kill_node(victim)
    at_kill = len(list((out / "episodes").glob("*.parquet")))
    assert not (out / "manifest.json").exists() and at_kill < total    # the middle of a run
    assert _finish(proc) == 0
    print(f"killed a node after {at_kill} of {total} batches; run took "
          f"{time.perf_counter() - started:.1f} s")
    manifest = read_manifest(out)
    _assert_same_store(out, local_store)
    listed = _batches_once(manifest)
    assert len(listed) == len(manifest["levels"]["modes"]) + total
    nodes = {n["node_id"]: n for n in manifest["nodes"]}
    assert nodes[victim]["alive_at_end"] is False
    assert all(n["alive_at_end"] for k, n in nodes.items() if k != victim)
    assert sum(bool(n["batches"]) for n in nodes.values()) >= 2
    assert not list(out.rglob(".tmp-*"))          # no half-written part of the lost node


def test_a_cluster_needs_a_node_and_a_cpu():
    with pytest.raises(ValueError, match="at least 1 node and 1 CPU per node"):
        LocalCluster(nodes=0)
    with pytest.raises(ValueError, match="cpus_per_node=0"):
        LocalCluster(nodes=2, cpus_per_node=0)


def _live_children() -> set[int]:
    """Ids of this process's children that still run (zombies, waiting to be reaped, too)."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == os.getpid():
                out.add(int(entry.name))
    return out


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_a_cluster_that_cannot_start_stops_and_reaps_every_process_it_started(monkeypatch):
    """Issue 42: on a loaded machine a node's start times out ("RPC error: Deadline
    Exceeded"); what had started kept running and, collected later, failed an unrelated test
    with a ResourceWarning. Now nothing of it is left, and collecting it warns of nothing."""
    import gc
    import tempfile
    import warnings

    from ray.cluster_utils import Cluster

    from accordkit._internal import ray_cluster

    folders: list[str] = []
    real_mkdtemp = tempfile.mkdtemp

    def mkdtemp(**kw):
        folders.append(real_mkdtemp(**kw))
        return folders[-1]

    def deadline(self, node, timeout=30):
        # the head's processes run, but Cluster() raises: no handle on them is left
        raise RuntimeError("RPC error: Deadline Exceeded")   # not a slow start: no 2nd try

    monkeypatch.setattr(ray_cluster.tempfile, "mkdtemp", mkdtemp)
    monkeypatch.setattr(Cluster, "_wait_for_node", deadline)
    before, tmpdir = _live_children(), os.environ.get("RAY_TMPDIR")
    # on a loaded machine the head itself may time out first: a failed start all the same
    with pytest.raises(Exception, match="Deadline Exceeded|timed out during startup"):
        LocalCluster(nodes=2, cpus_per_node=1)
    (folder,) = folders
    assert ray_cluster.processes_using(folder) == []
    assert _live_children() <= before
    assert not Path(folder).exists() and os.environ.get("RAY_TMPDIR") == tmpdir
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    assert [str(w.message) for w in caught if w.category is ResourceWarning] == []
