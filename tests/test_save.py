"""``ak.save``: parquet, JSONL and hub-layout folders read back identically, byte-stable."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import datasets
import pytest

import accordkit as ak
from accordkit.save import dataset_card

from .hub_stub import use_hub

FIXTURES = ("banking_gpt-4.1_legacy-reward_meta-tags_7sims.json",
            "airline_gemini-2.5-flash_old_checkpoint_1sim.json",
            "retail_gemini-2.5-flash_old_checkpoint_1sim.json")


@pytest.fixture(autouse=True)
def _tmp_hf_home(tmp_path, monkeypatch):
    """Keep the datasets cache made by loading folders out of the project cache."""
    use_hub(monkeypatch, None, tmp_path / "hf_home")


@pytest.fixture(scope="module")
def fixture_episodes(acb_dir, tau2_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ak.load([acb_dir / n for n in FIXTURES]
                       + [tau2_dir / "telecom_grok-3_5tasks_1trial.json"])


def _sample_folders(sample_dir: Path) -> list[Path]:
    folders = sorted(p for p in sample_dir.iterdir() if (p / "README.md").is_file())
    if not folders:
        pytest.skip(f"no hub-layout sample folders under {sample_dir}")
    return folders


def _same(a: datasets.Dataset, b: datasets.Dataset) -> None:
    assert a.features == b.features == ak.EPISODE_FEATURES
    assert len(a) == len(b)
    assert a.to_list() == b.to_list()


def _round_trip(folder: Path, tmp_path: Path) -> None:
    base = ak.load(folder)
    assert len(base) > 0
    ak.save(base, tmp_path / "x.parquet")
    ak.save(base, tmp_path / "x.jsonl")
    ak.save(base, tmp_path / "copy")
    _same(ak.load(tmp_path / "x.parquet"), base)
    _same(ak.load(tmp_path / "x.jsonl"), base)
    _same(ak.load(tmp_path / "copy"), base)


def test_fixture_episodes_round_trip(fixture_episodes, tmp_path):
    ak.save(fixture_episodes, tmp_path / "folder")
    _round_trip(tmp_path / "folder", tmp_path)


def test_sample_folders_round_trip(sample_dir, tmp_path):
    for i, folder in enumerate(_sample_folders(sample_dir)):
        _round_trip(folder, tmp_path / str(i))


def test_folder_gets_default_config_and_split(fixture_episodes, tmp_path):
    ak.save(fixture_episodes, tmp_path / "folder")
    assert (tmp_path / "folder" / "default" / "train-00000-of-00001.parquet").is_file()
    back = ak.load(tmp_path / "folder")
    assert set(back["config"]) == {"default"} and set(back["split"]) == {"train"}
    # everything else is what was saved
    drop = ["config", "split"]
    assert back.remove_columns(drop).to_list() == fixture_episodes.remove_columns(drop).to_list()


def test_parquet_and_jsonl_keep_rows_exactly(fixture_episodes, tmp_path):
    ak.save(fixture_episodes, tmp_path / "x.parquet")
    ak.save(fixture_episodes, tmp_path / "x.jsonl")
    _same(ak.load(tmp_path / "x.parquet"), fixture_episodes)
    _same(ak.load(tmp_path / "x.jsonl"), fixture_episodes)
    lines = (tmp_path / "x.jsonl").read_text().splitlines()
    assert len(lines) == len(fixture_episodes) == 14
    assert list(json.loads(lines[0])) == list(ak.EPISODE_FEATURES)


def test_save_honours_a_selection(fixture_episodes, tmp_path):
    """Saving a selected subset writes those rows, not the underlying table."""
    subset = fixture_episodes.select([3, 1])
    ak.save(subset, tmp_path / "s.parquet")
    back = ak.load(tmp_path / "s.parquet")
    assert back["episode_id"] == [fixture_episodes[3]["episode_id"],
                                  fixture_episodes[1]["episode_id"]]


@pytest.mark.parametrize("name", ["x.parquet", "x.jsonl", "folder"])
def test_save_is_deterministic(fixture_episodes, tmp_path, name):
    def written(root: Path) -> dict[str, bytes]:
        out = ak.save(fixture_episodes, root / name)
        files = [out] if out.is_file() else sorted(p for p in out.rglob("*") if p.is_file())
        return {str(p.relative_to(root)): p.read_bytes() for p in files}

    first, second = written(tmp_path / "a"), written(tmp_path / "b")
    assert first == second and first


def test_save_to_folder_twice_replaces_the_parquet_file(fixture_episodes, tmp_path):
    ak.save(fixture_episodes, tmp_path / "f")
    ak.save(fixture_episodes.select(range(2)), tmp_path / "f")
    assert len(list((tmp_path / "f").rglob("*.parquet"))) == 1
    assert len(ak.load(tmp_path / "f")) == 2


def test_dataset_card_declares_configs_and_splits():
    card = dataset_card({("acb", "train"): 3, ("acb", "test"): 1, ("tau2", "train"): 2},
                        title="demo")
    head = card.split("---")[1]
    assert "- config_name: acb" in head and "- config_name: tau2" in head
    assert "    path: acb/test-*.parquet" in head
    assert "| tau2 | train | 2 |" in card


def test_saved_folder_reads_with_plain_datasets(fixture_episodes, tmp_path):
    ak.save(fixture_episodes, tmp_path / "f")
    plain = datasets.load_dataset(str(tmp_path / "f"), "default", split="train")
    assert plain.features == ak.EPISODE_FEATURES
    assert plain["episode_id"] == fixture_episodes["episode_id"]
