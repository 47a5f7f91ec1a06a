"""A scoring engine reads a large input in parts of about ``batch_size`` episodes (issue 35):
the same scores as a load of the whole file, written batch by batch."""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

import accordkit as ak
from accordkit.engines import reading as engine_reading
from accordkit.engines import score_to_store
from accordkit.ingest.formats import json_text
from accordkit.store import read_manifest, read_scores

from ..ingest.test_load_errors import _results, _sim


@pytest.fixture
def large(monkeypatch):
    """Every input counts as large: read in parts, without the cache."""
    monkeypatch.setattr(engine_reading, "CACHED_BYTES", -1)
    monkeypatch.setattr(json_text, "STREAM_BYTES", -1)


def _records(sample_dir, n: int = 60) -> list[dict]:
    rows = ak.load(sample_dir / "accord").to_list()[:n]
    return [json.loads(json.dumps(r)) for r in rows]


def _want(path) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ak.score(ak.load(path, cache=False, errors="skip"))


@pytest.mark.parametrize("layout", ["jsonl", "array"])
def test_a_large_canonical_file_is_scored_in_batches_as_the_whole_file(
        tmp_path, sample_dir, large, layout):
    records = _records(sample_dir)
    records[7]["rollout"] = "first"                        # one bad record, skipped
    path = tmp_path / f"episodes.{'jsonl' if layout == 'jsonl' else 'json'}"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n" if layout == "jsonl"
                    else json.dumps(records))
    manifest = score_to_store([str(path)], out=tmp_path / "s", batch_size=25, progress=False)
    (rec,) = manifest["inputs"]
    assert rec["episodes"] == 59 and rec["skipped"] == 1 and rec["batches"] == 3
    where = "line 8" if layout == "jsonl" else "item 7"
    assert rec["problems"][0].startswith(f"file {path}, record {records[7]['episode_id']} "
                                         f"({where}), field rollout")
    pd.testing.assert_frame_equal(read_scores(tmp_path / "s"), _want(path))


def test_a_large_results_file_is_scored_in_batches_as_the_whole_file(tmp_path, large):
    sims = [_sim(f"s{i}", trial=i % 3, task_id=f"t{i // 3}") for i in range(600)]
    obj = _results(*sims)
    obj["tasks"] = [dict(obj["tasks"][0], id=f"t{i}") for i in range(200)]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(obj))
    manifest = score_to_store([str(path)], out=tmp_path / "s", batch_size=250,
                              progress=False)
    (rec,) = manifest["inputs"]
    assert rec["episodes"] == 600 and rec["batches"] == 3 and rec["error"] is None
    pd.testing.assert_frame_equal(read_scores(tmp_path / "s"), _want(path))
    # its compare_modes table pools every batch of the file, as for the file loaded whole
    from accordkit.store import read_modes

    pd.testing.assert_frame_equal(read_modes(tmp_path / "s"),
                                  ak.compare_modes(ak.load(path, cache=False)),
                                  check_dtype=False)


def test_an_episode_repeated_across_batches_is_scored_once_and_named(tmp_path, sample_dir,
                                                                     large):
    records = _records(sample_dir, 30)
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records + records[:1]) + "\n")
    manifest = score_to_store([str(path)], out=tmp_path / "s", batch_size=10, progress=False)
    (rec,) = manifest["inputs"]
    assert rec["episodes"] == 30 and rec["skipped"] == 1
    assert "line 31), field episode_id: episode id read before" in rec["problems"][0]
    assert read_manifest(tmp_path / "s")["episodes"] == 30


def test_an_episode_repeated_within_one_part_is_scored_once_and_named(tmp_path, sample_dir,
                                                                      large):
    """Both copies fall in one part the reader gives (up to a thousand records)."""
    records = _records(sample_dir, 5)
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records + records[:1]) + "\n")
    manifest = score_to_store([str(path)], out=tmp_path / "s", batch_size=100, progress=False)
    (rec,) = manifest["inputs"]
    assert rec["episodes"] == 5 and rec["skipped"] == 1
    assert "line 6), field episode_id: episode id read before" in rec["problems"][0]
    assert read_manifest(tmp_path / "s")["episodes"] == 5
