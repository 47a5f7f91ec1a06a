"""Hub-layout dataset folders (a ``README.md`` card naming configs) read like the hub does.

Each folder is built by hand in ``tmp_path``; where practical the rows are compared with
``datasets.load_dataset(folder)`` on the same folder, offline, with a cache in ``tmp_path``.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import accordkit as ak
from accordkit.ingest.formats.dataset_card import card_configs, data_files

from .test_load_canonical import _ep


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))
    datasets.disable_progress_bars()


def _parquet(path: Path, ids: list[int]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist([_ep(i) for i in ids], schema=ak.EPISODE_FEATURES.arrow_schema)
    pq.write_table(table, path)
    return path


def _jsonl(path: Path, ids: list[int]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(_ep(i)) + "\n" for i in ids), "utf-8")
    return path


def _card(folder: Path, configs: str, *, bom: bool = False) -> None:
    text = "---\nconfigs:\n" + configs + "---\n# a dataset\n"
    (folder / "README.md").write_text(("\ufeff" if bom else "") + text, "utf-8")


def _ours(folder: Path, **kw) -> dict[tuple[str, str], list[str]]:
    """(config, split) -> episode ids, as accordkit loads the folder."""
    ds = ak.load(folder, cache=False, **kw)
    out: dict[tuple[str, str], list[str]] = {}
    for c, s, e in zip(ds["config"], ds["split"], ds["episode_id"], strict=True):
        out.setdefault((c, s), []).append(e)
    return out


def _hubs(folder: Path, tmp_path: Path) -> dict[tuple[str, str], list[str]]:
    """(config, split) -> episode ids, as datasets.load_dataset loads the folder."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for config in datasets.get_dataset_config_names(str(folder)):
            loaded = datasets.load_dataset(str(folder), config, cache_dir=str(tmp_path / "hf"))
            for split, ds in loaded.items():
                out[(config, split)] = list(ds["episode_id"])
    return out


def test_recursive_double_star_finds_files_at_any_depth(tmp_path):
    folder = tmp_path / "ds"
    _parquet(folder / "data" / "x" / "train.parquet", [0, 1])
    _parquet(folder / "data" / "top.parquet", [2])
    _card(folder, "- config_name: c1\n  data_files:\n  - split: train\n    path: data/**\n")
    assert _ours(folder) == _hubs(folder, tmp_path) == {("c1", "train"): ["e2", "e0", "e1"]}


def test_data_dir_without_data_files_uses_the_default_split_names(tmp_path):
    folder = tmp_path / "ds"
    _parquet(folder / "data" / "train.parquet", [0, 1])
    _parquet(folder / "data" / "test.parquet", [2])
    _parquet(folder / "other" / "train.parquet", [9])
    _card(folder, "- config_name: c1\n  data_dir: data\n")
    ours = _ours(folder)
    assert ours == {("c1", "train"): ["e0", "e1"], ("c1", "test"): ["e2"]}
    assert ours == _hubs(folder, tmp_path)


def test_data_dir_with_data_files_is_their_base(tmp_path):
    folder = tmp_path / "ds"
    _parquet(folder / "data" / "a.parquet", [0])
    _parquet(folder / "a.parquet", [9])
    _card(folder, "- config_name: c1\n  data_dir: data\n  data_files: a.parquet\n")
    assert _ours(folder) == {("c1", "train"): ["e0"]} == _hubs(folder, tmp_path)


def test_jsonl_data_files_are_read_as_json_lines(tmp_path):
    folder = tmp_path / "ds"
    _jsonl(folder / "data" / "train.jsonl", [0, 1])
    _card(folder, "- config_name: c1\n  data_files: data/*.jsonl\n")
    assert _ours(folder) == {("c1", "train"): ["e0", "e1"]} == _hubs(folder, tmp_path)
    ds = ak.load(folder, cache=False)
    assert ds.features == ak.EPISODE_FEATURES and ds["source"] == ["hand", "hand"]


def test_each_data_file_is_read_by_its_own_format(tmp_path):
    folder = tmp_path / "ds"
    _jsonl(folder / "data" / "a.jsonl", [0])
    _parquet(folder / "data" / "b.parquet", [1])
    (folder / "data" / "c.json").write_text(json.dumps([_ep(2, source=None)]), "utf-8")
    (folder / "data" / "notes.txt").write_text("not data", "utf-8")
    _card(folder, "- config_name: c1\n  data_files:\n  - split: test\n    path: data/*\n")
    ds = ak.load(folder, cache=False)
    assert ds["episode_id"] == ["e0", "e1", "e2"]
    assert set(ds["config"]) == {"c1"} and set(ds["split"]) == {"test"}
    # a missing source is the folder, as for parquet rows
    assert ds["source"] == ["hand", "hand", str(folder)]


def test_a_bad_line_in_a_jsonl_data_file_names_the_line(tmp_path):
    folder = tmp_path / "ds"
    f = _jsonl(folder / "data" / "train.jsonl", [0, 1])
    f.write_text(f.read_text() + json.dumps(_ep(2, rollout=1.5)) + "\n", "utf-8")
    _card(folder, "- config_name: c1\n  data_files: data/*.jsonl\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = ak.load(folder, errors="skip", cache=False)
    assert ds["episode_id"] == ["e0", "e1"]
    (w,) = [c.message for c in caught if isinstance(c.message, ak.SkippedRecordsWarning)]
    assert [(s.source, s.record, s.field) for s in w.skipped] == [
        (str(f), "e2 (line 3)", "rollout")]


def test_card_with_a_byte_order_mark_is_a_card(tmp_path):
    folder = tmp_path / "ds"
    _parquet(folder / "data" / "train.parquet", [0, 1])
    _card(folder, "- config_name: c1\n  data_files: data/*.parquet\n", bom=True)
    assert _ours(folder) == {("c1", "train"): ["e0", "e1"]} == _hubs(folder, tmp_path)


def test_hidden_files_and_folders_matched_by_a_pattern_are_left_out(tmp_path):
    folder = tmp_path / "ds"
    _parquet(folder / "default" / "train.parquet", [0])
    _parquet(folder / "default" / ".ipynb_checkpoints" / "train-checkpoint.parquet", [1])
    _parquet(folder / "default" / ".hidden.parquet", [2])
    _parquet(folder / "__pycache__" / "x.parquet", [3])
    _card(folder, '- config_name: default\n  data_files:\n  - split: train\n'
                  '    path: "**/*.parquet"\n')
    assert _ours(folder) == {("default", "train"): ["e0"]} == _hubs(folder, tmp_path)


def test_a_pattern_that_names_a_hidden_folder_reads_it(tmp_path):
    folder = tmp_path / "ds"
    _parquet(folder / ".data" / "train.parquet", [0])
    _card(folder, "- config_name: c1\n  data_files: .data/*.parquet\n")
    assert _ours(folder) == {("c1", "train"): ["e0"]}


def test_saved_folder_reads_as_the_hub_does(tmp_path):
    src = _jsonl(tmp_path / "eps.jsonl", [0, 1, 2])
    folder = tmp_path / "saved"
    ak.save(ak.load(src, cache=False), folder)
    assert _ours(folder) == _hubs(folder, tmp_path) == {("default", "train"): ["e0", "e1", "e2"]}


def test_data_files_helper_resolves_like_the_hub(tmp_path):
    for name in ("data/a/x.parquet", "data/y.jsonl", "data/.c/z.parquet", "data/n.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).touch()
    got = [str(p.relative_to(tmp_path)) for p in data_files(tmp_path, ["data/**", "data/*"])]
    assert got == ["data/a/x.parquet", "data/y.jsonl"]


def test_card_configs_puts_data_dir_before_the_patterns(tmp_path):
    _card(tmp_path, "- config_name: a\n  data_dir: sub\n  data_files: '*.parquet'\n"
                    "- config_name: b\n  data_files:\n  - split: test\n    path: [x.jsonl]\n")
    assert card_configs(tmp_path) == {"a": {"train": ["sub/*.parquet"]},
                                      "b": {"test": ["x.jsonl"]}}


def test_data_dir_outside_the_folder_is_refused(tmp_path):
    _card(tmp_path, "- config_name: a\n  data_dir: ../elsewhere\n")
    with pytest.raises(ak.EpisodeValidationError) as exc:
        card_configs(tmp_path)
    assert exc.value.field == "configs[0].data_dir"


def test_data_dir_with_no_data_is_a_problem(tmp_path):
    (tmp_path / "empty").mkdir()
    _card(tmp_path, "- config_name: a\n  data_dir: empty\n")
    with pytest.raises(ak.EpisodeValidationError, match="config a: no data files found"):
        ak.load(tmp_path, cache=False)


# --------------------------------------------------------------------------- split=


def test_unknown_split_names_the_splits_that_exist(tmp_path):
    folder = tmp_path / "ds"
    _parquet(folder / "a" / "train.parquet", [0])
    _parquet(folder / "a" / "test.parquet", [1])
    _parquet(folder / "b" / "dev.parquet", [2])
    _card(folder, "- config_name: a\n  data_files:\n  - split: train\n    path: a/train.parquet\n"
                  "  - split: test\n    path: a/test.parquet\n"
                  "- config_name: b\n  data_files:\n  - split: dev\n    path: b/dev.parquet\n")
    with pytest.raises(ak.EpisodeValidationError) as exc:
        ak.load(folder, split="validation", cache=False)
    assert exc.value.field == "(split)" and exc.value.record == "(whole file)"
    assert "no split 'validation'" in str(exc.value) and "['train', 'test', 'dev']" in str(exc.value)
    with pytest.raises(ak.EpisodeValidationError, match=r"config 'b' .*\['dev'\]"):
        ak.load(folder, config="b", split="train", cache=False)
    # a split of one config only: read from the configs that have it
    assert _ours(folder, split="dev") == {("b", "dev"): ["e2"]}
    with pytest.raises(ValueError, match="Unknown split"):
        datasets.load_dataset(str(folder), "a", split="validation",
                              cache_dir=str(tmp_path / "hf"))


def test_unknown_split_can_be_skipped(tmp_path):
    folder = tmp_path / "ds"
    _parquet(folder / "d" / "train.parquet", [0])
    _card(folder, "- config_name: d\n  data_files: d/*.parquet\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = ak.load(folder, split="test", errors="skip", cache=False)
    assert len(ds) == 0
    (w,) = [c.message for c in caught if isinstance(c.message, ak.SkippedRecordsWarning)]
    assert w.skipped[0].field == "(split)"


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
@pytest.mark.parametrize(("kw", "asked"), [({"split": "test"}, "split 'test'"),
                                           ({"config": "c1"}, "config 'c1'")])
def test_canonical_file_with_no_row_of_the_selection_warns(tmp_path, fmt, kw, asked):
    src = _jsonl(tmp_path / "eps.jsonl", [0, 1])
    if fmt == "parquet":
        src = _parquet(tmp_path / "eps.parquet", [0, 1])
    with pytest.warns(UserWarning, match=f"no record has {asked}, so none was loaded") as rec:
        ds = ak.load(src, cache=False, **kw)
    assert len(ds) == 0
    assert any("the file holds config None, split None" in str(w.message) for w in rec)


def test_canonical_file_with_matching_rows_gives_no_note(tmp_path):
    records = [_ep(0, config="c1", split="train"), _ep(1, config="c1", split="test")]
    src = tmp_path / "eps.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    ds, report = ak.load_with_report(src, split="test", cache=False)
    assert ds["episode_id"] == ["e1"] and report.notes == []


def test_the_note_is_replayed_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ACCORDKIT_CACHE_DIR", str(tmp_path / "cache"))
    src = _jsonl(tmp_path / "eps.jsonl", [0])
    for _ in range(2):
        _, report = ak.load_with_report(src, split="test")
        assert len(report.notes) == 1 and "no record has split 'test'" in report.notes[0]


def test_copy_of_a_folder_elsewhere_is_independent(tmp_path):
    folder = tmp_path / "ds"
    _jsonl(folder / "data" / "train.jsonl", [0])
    _card(folder, "- config_name: c1\n  data_files: data/*.jsonl\n")
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    _jsonl(copy / "data" / "train.jsonl", [5])
    assert _ours(folder) == {("c1", "train"): ["e0"]}
    assert _ours(copy) == {("c1", "train"): ["e5"]}
