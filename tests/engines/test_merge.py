"""``score_to_store(merge=True)``: inputs that must be read together give the scores of one load."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import accordkit as ak
from accordkit.engines import score_to_store
from accordkit.engines.merge import repeated_inputs
from accordkit.store import read_manifest, read_modes, read_scores

LEVELS = ("episode", "preference", "shift", "action")


def _same_as_a_load(store: Path, files: list[str], **modes) -> None:
    """Every level of ``store`` equals ak.score of ak.load(files), row for row."""
    loaded, _ = ak.load_with_report(files, errors="skip")   # duplicates said in its report
    for level in LEVELS:
        want = ak.score(loaded, level=level, **modes)
        got = read_scores(store, level=level)
        assert len(got) == len(want), level
        if len(want):
            pd.testing.assert_frame_equal(got, want[got.columns], check_dtype=False)


def test_checkpoints_of_one_run_are_kept_once_as_ak_load_keeps_them(tmp_path, tau2_dir):
    runs = sorted(tau2_dir.glob("*.json"))
    first, other = runs[0], runs[1]
    copy = tmp_path / "copy" / first.name
    copy.parent.mkdir()
    copy.write_bytes(first.read_bytes())                # a checkpoint: the same episodes
    files = [str(first), str(other), str(copy)]
    with pytest.warns(ak.DuplicateEpisodesWarning):
        loaded = ak.load(files)
    manifest = score_to_store(files, out=tmp_path / "s", progress=False, merge=True)
    by_name = {r["source"]: r for r in manifest["inputs"]}
    assert by_name[str(copy)]["episodes"] == 0
    assert by_name[str(copy)]["duplicates"] == len(ak.load(str(first)))
    assert by_name[str(first)]["duplicates"] == 0 and by_name[str(other)]["duplicates"] == 0
    assert manifest["merged"] == [str(first), str(copy)]      # the other input was not read again
    assert manifest["episodes"] == len(loaded)
    _same_as_a_load(tmp_path / "s", files)
    pd.testing.assert_frame_equal(
        read_modes(tmp_path / "s").reset_index(drop=True),
        ak.compare_modes(loaded).reset_index(drop=True), check_dtype=False)


def test_without_merge_the_store_holds_the_episode_twice(tmp_path, tau2_dir):
    first = sorted(tau2_dir.glob("*.json"))[0]
    copy = tmp_path / "copy.json"
    copy.write_bytes(first.read_bytes())
    score_to_store([str(first), str(copy)], out=tmp_path / "s", progress=False)
    assert repeated_inputs(tmp_path / "s") == {0, 1}
    assert "merged" not in read_manifest(tmp_path / "s")


def test_a_copy_of_other_content_is_a_skipped_record_of_its_input(tmp_path, tau2_dir):
    first = sorted(tau2_dir.glob("*.json"))[0]
    data = json.loads(first.read_text())
    changed = dict(data)
    sims = [dict(s) for s in data["simulations"]]
    messages = [dict(m) for m in sims[0]["messages"]]
    messages[0]["content"] = f"{messages[0].get('content')} (edited)"   # other content
    sims[0]["messages"] = messages
    changed["simulations"] = sims
    copy = tmp_path / "copy.json"
    copy.write_text(json.dumps(changed))
    files = [str(first), str(copy)]
    manifest = score_to_store(files, out=tmp_path / "s", progress=False, merge=True)
    rec = {r["source"]: r for r in manifest["inputs"]}[str(copy)]
    assert rec["skipped"] == 1 and "different content" in rec["problems"][0]
    assert rec["duplicates"] == len(sims) - 1 and rec["episodes"] == 0
    _same_as_a_load(tmp_path / "s", files)


def test_a_repeat_inside_one_parquet_file_is_merged(tmp_path, sample_dir):
    src = sorted((sample_dir / "goalshift").rglob("*.parquet"))[0]
    table = pq.read_table(src)
    twice = pa.concat_tables([table, table.slice(0, 5)])   # five episodes again, at the end
    pq.write_table(twice, tmp_path / "twice.parquet", row_group_size=50)
    files = [str(tmp_path / "twice.parquet")]
    manifest = score_to_store(files, out=tmp_path / "s", progress=False, batch_size=50,
                              merge=True)
    assert manifest["inputs"][0]["duplicates"] == 5
    assert manifest["episodes"] == table.num_rows
    _same_as_a_load(tmp_path / "s", files)


def test_a_pooled_mode_scores_a_split_source_as_one_load(tmp_path, sample_dir):
    table = pq.read_table(sorted((sample_dir / "goalshift").rglob("*.parquet"))[0])
    halves = [tmp_path / "part-0.parquet", tmp_path / "part-1.parquet"]
    pq.write_table(table.take(pa.array(range(0, table.num_rows, 2))), halves[0])
    pq.write_table(table.take(pa.array(range(1, table.num_rows, 2))), halves[1])
    files = [str(h) for h in halves]
    manifest = score_to_store(files, out=tmp_path / "s", progress=False,
                              modes={"tcrr_mode": "upstream"}, merge=True)
    assert manifest["merged"] == files and manifest["failed_inputs"] == 0
    _same_as_a_load(tmp_path / "s", files, tcrr_mode="upstream")
    want = ak.compare_modes(ak.load(files))
    pd.testing.assert_frame_equal(read_modes(tmp_path / "s"), want, check_dtype=False)
