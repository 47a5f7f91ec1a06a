"""The Ray engine writes the same store as the local engine (a local 2-CPU Ray)."""

from __future__ import annotations

import socket
import time

import pandas as pd
import pyarrow.parquet as pq
import pytest

from accordkit.engines import score_to_store
from accordkit.engines.run import RayUnreachableError
from accordkit.store import PartialStoreWarning, read_manifest, read_modes, read_scores

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'accordkit[ray]')")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def shards(tmp_path_factory, sample_dir):
    root = tmp_path_factory.mktemp("ray_shards")
    files = sorted(p for p in sample_dir.rglob("*.parquet") if "verdicts" not in str(p))
    for i, src in enumerate(files):
        pq.write_table(pq.read_table(src), root / f"shard-{i:02d}.parquet", row_group_size=100)
    (root / "broken.parquet").write_bytes(b"PAR1 not really")
    return root


def test_ray_store_equals_local_store_row_for_row(tmp_path, shards, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    local = score_to_store([str(shards)], out=tmp_path / "local", num_proc=1,
                           batch_size=100, progress=False)
    ray_m = score_to_store([str(shards)], out=tmp_path / "ray", engine="ray", num_proc=2,
                           batch_size=100, progress=False)
    assert not ray.is_initialized()                       # the local Ray it started is gone
    assert ray_m["engine"] == "ray" and local["engine"] == "local"
    strip = ("engine", "seconds", "levels", "num_proc", "nodes")
    assert {k: v for k, v in ray_m.items() if k not in strip} == \
        {k: v for k, v in local.items() if k not in strip}
    assert ray_m["levels"] == local["levels"]
    # one local node, which scored every batch (the parts of every level)
    (node,) = ray_m["nodes"]
    assert node["alive_at_end"] and node["episodes"] == local["episodes"]
    assert {f"{i:05d}-{b:05d}.parquet" for i, b in node["batches"]} == \
        {p for parts in ray_m["levels"].values() for p in parts}
    for level in ("episode", "preference", "shift"):
        # the broken shard makes both stores partial: reading them says so
        with pytest.warns(PartialStoreWarning, match="1 of the 6 input"):
            from_ray = read_scores(tmp_path / "ray", level=level)
        with pytest.warns(PartialStoreWarning, match="1 of the 6 input"):
            from_local = read_scores(tmp_path / "local", level=level)
        pd.testing.assert_frame_equal(from_ray, from_local)
    modes = read_modes(tmp_path / "ray")
    assert len(modes)                                     # the goal-shift shards' table
    pd.testing.assert_frame_equal(modes, read_modes(tmp_path / "local"))
    broken = [r for r in read_manifest(tmp_path / "ray")["inputs"]
              if r["source"].endswith("broken.parquet")]
    assert broken and "unreadable parquet file" in broken[0]["error"]


def test_an_unreachable_ray_address_fails_fast(tmp_path, shards, monkeypatch):
    with socket.socket() as s:              # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("RAY_ADDRESS", f"ray://127.0.0.1:{port}")
    started = time.monotonic()
    with pytest.raises(RayUnreachableError, match="cannot reach the Ray cluster"):
        score_to_store([str(shards / "shard-00.parquet")], out=tmp_path / "s", engine="ray",
                       progress=False)
    assert time.monotonic() - started < 15
    monkeypatch.setenv("RAY_ADDRESS", "not-an-address")
    with pytest.raises(RayUnreachableError, match="host:port"):
        score_to_store([str(shards / "shard-00.parquet")], out=tmp_path / "t", engine="ray",
                       progress=False)
