"""The README's "Large runs" route on Ray, for every kind of source (issue 30).

``accordkit synth`` -> ``accordkit score --engine ray`` -> ``accordkit report --scores`` on a
dataset folder, and the Ray engine's store against the local engine's on result files, a
dir-format tau2 run and parquet shards: equal tables, equal manifests. Bad input through Ray
is listed in the manifest exactly as the local engine lists it. One local Ray (2 CPUs) serves
the module.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from accordkit.cli import main
from accordkit.engines import score_to_store
from accordkit.store import PartialStoreWarning, read_manifest, read_modes, read_scores

from ..ingest.test_load_errors import _dir_run, _sim

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'accordkit[ray]')")
pytestmark = pytest.mark.slow

#: Manifest fields that say how a store was written, not what it holds.
_HOW = ("engine", "seconds", "num_proc", "nodes")


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    """One local Ray for the module (score_to_store uses a Ray it finds running)."""
    import os

    os.environ.pop("RAY_ADDRESS", None)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _both(sources: list[str], tmp: Path, **kw) -> tuple[dict, dict]:
    """The local and the Ray engine's stores of ``sources``; their manifests."""
    local = score_to_store(sources, out=tmp / "local", progress=False, **kw)
    on_ray = score_to_store(sources, out=tmp / "ray", engine="ray", num_proc=2,
                            progress=False, **kw)
    return local, on_ray


def _assert_same_store(tmp: Path, local: dict, on_ray: dict) -> None:
    assert on_ray["engine"] == "ray" and local["engine"] == "local"
    assert {k: v for k, v in on_ray.items() if k not in _HOW} == \
        {k: v for k, v in local.items() if k not in _HOW}
    for level in ("episode", "preference", "shift"):
        with _warns_if_partial(on_ray):
            from_ray = read_scores(tmp / "ray", level=level)
        with _warns_if_partial(local):
            from_local = read_scores(tmp / "local", level=level)
        pd.testing.assert_frame_equal(from_ray, from_local)
    pd.testing.assert_frame_equal(read_modes(tmp / "ray"), read_modes(tmp / "local"))


def _warns_if_partial(manifest: dict):
    """Reading the scores of a store with failed inputs warns so: expected, and asserted."""
    failed = manifest.get("failed_inputs") or 0
    if not failed:
        return contextlib.nullcontext()
    return pytest.warns(PartialStoreWarning,
                        match=f"{failed} of the {len(manifest['inputs'])} input")


def test_the_readmes_route_on_a_synth_dataset_folder(tmp_path):
    """synth -> score --engine ray -> report --scores, as the README writes it."""
    data, scores = tmp_path / "accord-2k", tmp_path / "accord-2k-scores"
    assert main(["synth", "--episodes", "2400", "--shards", "3", "--out", str(data)]) == 0
    assert (data / "README.md").is_file()                  # a dataset folder with its card
    assert main(["score", str(data), "--out", str(scores), "--engine", "ray",
                 "--num-proc", "2", "--quiet"]) == 0
    local = score_to_store([str(data)], out=tmp_path / "local", progress=False)
    on_ray = read_manifest(scores)
    assert on_ray["episodes"] == local["episodes"] == 2400 and on_ray["failed_inputs"] == 0
    assert [r["source"] for r in on_ray["inputs"]] == [r["source"] for r in local["inputs"]]
    for level in ("episode", "preference", "shift"):
        pd.testing.assert_frame_equal(read_scores(scores, level=level),
                                      read_scores(tmp_path / "local", level=level))
    report = tmp_path / "report"
    assert main(["report", "--scores", str(scores), "--out", str(report),
                 "--notebooks", "accord_results", "--set", "n_resamples=50"]) == 0
    saved = json.loads((report / "results.json").read_text())
    assert [(n["notebook"], n["status"]) for n in saved["notebooks"]] == [
        ("accord_results", "ok")]


def test_result_files_on_ray_equal_the_local_store(tmp_path, acb_dir):
    files = sorted(str(p) for p in acb_dir.glob("*.json") if p.name != "expected_upstream.json")
    local, on_ray = _both(files, tmp_path)
    _assert_same_store(tmp_path, local, on_ray)
    assert local["episodes"] > 0 and len(read_modes(tmp_path / "ray"))


def test_a_dir_format_run_on_ray_equals_the_local_store(tmp_path):
    run = _dir_run(tmp_path, _sim("a"), _sim("b", trial=1), _sim("c", trial=2))
    local, on_ray = _both([str(run)], tmp_path / "s")
    _assert_same_store(tmp_path / "s", local, on_ray)
    assert local["episodes"] == 3 and local["inputs"][0]["source"] == str(run / "results.json")


def test_parquet_shards_in_several_batches_on_ray_equal_the_local_store(tmp_path, sample_dir):
    src = tmp_path / "shards"
    src.mkdir()
    for i, f in enumerate(sorted((sample_dir / "goalshift").rglob("*.parquet"))):
        pq.write_table(pq.read_table(f), src / f"shard-{i}.parquet", row_group_size=20)
    local, on_ray = _both([str(src)], tmp_path / "s", batch_size=40)
    _assert_same_store(tmp_path / "s", local, on_ray)
    assert sum(r["batches"] for r in local["inputs"]) > len(local["inputs"])


def test_bad_input_through_ray_is_listed_as_the_local_engine_lists_it(tmp_path, sample_dir):
    """A corrupt shard, a file that cannot be read, a record with a wrong type: the same
    manifest entries (file, record, field) from either engine."""
    src = tmp_path / "in"
    src.mkdir()
    good = sorted((sample_dir / "goalshift").rglob("*.parquet"))[0]
    shutil.copy(good, src / "good.parquet")
    data = good.read_bytes()
    (src / "corrupt.parquet").write_bytes(data[: len(data) // 2])
    (src / "unreadable.json").write_bytes(b"\x00\x01binary\xff" * 100)
    table = pq.read_table(good)
    rows = [dict(r, episode_id=f"{r['episode_id']}-jsonl") for r in table.slice(0, 3).to_pylist()]
    rows[1]["rollout"] = "first"                          # a record with a wrong type
    (src / "records.jsonl").write_text("\n".join(json.dumps(r, default=str) for r in rows))
    local, on_ray = _both([str(src)], tmp_path / "s")
    by_name = {Path(r["source"]).name: r for r in local["inputs"]}
    assert "unreadable parquet file" in by_name["corrupt.parquet"]["error"]
    assert "not a text file" in by_name["unreadable.json"]["error"]
    (problem,) = by_name["records.jsonl"]["problems"]
    assert problem.startswith(f"file {src / 'records.jsonl'}, record ")
    assert "(line 2), field rollout: expected an integer" in problem
    assert on_ray["inputs"] == local["inputs"]
    assert on_ray["failed_inputs"] == local["failed_inputs"] == 2
    _assert_same_store(tmp_path / "s", local, on_ray)


def test_a_work_item_crosses_as_one_encoded_form(tmp_path, sample_dir):
    """Its dataset-card part, row groups and input survive the trip whole."""
    from accordkit.engines.plan import WorkItem, plan_work

    folder = tmp_path / "ds"
    assert main(["synth", "--episodes", "48", "--shards", "2", "--out", str(folder)]) == 0
    items, _ = plan_work([str(folder)], batch_size=10)
    assert items and all(i.card is not None for i in items if i.kind != "modes")
    batch = pa.table({"item": [i.encode().decode() for i in items]}).to_pandas()
    back = [WorkItem.decode(text) for text in batch["item"]]
    assert back == items
