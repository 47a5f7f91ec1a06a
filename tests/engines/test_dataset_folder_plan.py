"""A dataset folder is scored into a store from the files its card names, as ak.load reads it."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import accordkit as ak
from accordkit.engines import plan_work, score_to_store
from accordkit.store import read_scores

from ..ingest.test_load_canonical import _ep


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    datasets.disable_progress_bars()


def _parquet(path: Path, ids: list[int], **kw) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [dict(_ep(i), config=None, split=None, **kw) for i in ids]
    pq.write_table(pa.Table.from_pylist(rows, schema=ak.EPISODE_FEATURES.arrow_schema), path,
                   row_group_size=2)


def _jsonl(path: Path, ids: list[int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(_ep(i)) + "\n" for i in ids), "utf-8")


@pytest.fixture
def folder(tmp_path) -> Path:
    """Two configs (one by data_dir), two splits, and files the card does not name."""
    root = tmp_path / "ds"
    _parquet(root / "main" / "train-0.parquet", [1, 2, 3, 4, 5], source=None)
    _parquet(root / "main" / "test-0.parquet", [6, 7])
    _jsonl(root / "extra" / "data" / "train.jsonl", [8, 9])
    # not named by the card: a raw copy, and notes; a folder read file by file takes them
    _jsonl(root / "raw" / "copy.jsonl", [1, 2, 3])
    _parquet(root / "old" / "v0.parquet", [20, 21])
    (root / "README.md").write_text(
        "---\nconfigs:\n"
        "- config_name: main\n  data_files:\n"
        "  - split: train\n    path: main/train-*.parquet\n"
        "  - split: test\n    path: main/test-*.parquet\n"
        "- config_name: extra\n  data_dir: extra\n"
        "---\n# a dataset\n", "utf-8")
    return root


@pytest.mark.parametrize("split", [None, "train"])
def test_store_holds_what_a_load_of_the_folder_holds(tmp_path, folder, split):
    # the episodes have no judged preferences: scoring them (whole, then batch by batch) says so
    with pytest.warns(UserWarning, match="completed AcCoRD episode.s. have no outcome"):
        want = ak.score(ak.load(folder, split=split, cache=False))
    with pytest.warns(UserWarning, match="completed AcCoRD episode.s. have no outcome"):
        manifest = score_to_store([str(folder)], out=tmp_path / "store", batch_size=2,
                                  progress=False, split=split)
    got = read_scores(tmp_path / "store", level="episode")
    assert manifest["failed_inputs"] == 0 and manifest["skipped"] == 0
    assert sorted(got["episode_id"]) == sorted(want["episode_id"])
    assert len(got) == (9 if split is None else 7)       # none of raw/ and old/
    pd.testing.assert_frame_equal(got.set_index("episode_id").sort_index(),
                                  want.set_index("episode_id").sort_index()[
                                      got.set_index("episode_id").columns],
                                  check_dtype=False)


def test_a_data_file_reads_as_in_a_load_of_its_folder(folder):
    whole = ak.load(folder, cache=False).to_pandas().set_index("episode_id")
    path = folder / "main" / "train-0.parquet"
    from accordkit.ingest.plan import plan
    from accordkit.ingest.read import load_input

    (input,) = [i for i in plan([str(folder)]) if i.path == str(path)]
    one, report = load_input(input, errors="raise")
    one = one.to_pandas().set_index("episode_id")
    assert not report.skipped and len(one) == 5
    pd.testing.assert_frame_equal(one, whole.loc[one.index])
    assert set(one["source"]) == {str(folder)} and set(one["split"]) == {"train"}


def test_plan_names_the_cards_files_with_their_config_and_split(folder):
    items, inputs = plan_work([str(folder)], batch_size=2)
    assert [Path(r.source).relative_to(folder.resolve()).as_posix() for r in inputs] == [
        "main/train-0.parquet", "main/test-0.parquet", "extra/data/train.jsonl"]
    cards = {(Path(i.source).name, i.card.config, i.card.split)
             for i in items if i.kind != "modes"}
    assert cards == {("train-0.parquet", "main", "train"), ("test-0.parquet", "main", "test"),
                     ("train.jsonl", "extra", "train")}
    (modes,) = [i for i in items if i.kind == "modes"]
    assert [c.split for c in modes.cards] == ["train", "test"]


def test_an_unknown_split_is_the_folders_error_in_the_manifest(tmp_path, folder):
    manifest = score_to_store([str(folder)], out=tmp_path / "store", progress=False,
                              split="validation")
    (record,) = manifest["inputs"]
    assert record["source"] == str(folder.resolve())
    assert "no split 'validation'" in record["error"] and "'train', 'test'" in record["error"]
    assert manifest["episodes"] == 0
