"""``ak.load("org/name")``: the same dataset served by a stand-in hub on 127.0.0.1.

The stand-in (:mod:`tests.hub_stub`) answers the endpoints ``datasets`` and
``huggingface_hub`` call; each test lifts ``HF_HUB_OFFLINE`` for itself only and keeps every
cache in its own temporary ``HF_HOME``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import datasets
import huggingface_hub.constants as hconst
import pyarrow as pa
import pytest

import accordkit as ak
from accordkit._internal.arrow import arrow_table

from ..hub_stub import HubStub, use_hub

pytestmark = pytest.mark.network

FILES = ("airline_gemini-2.5-flash_old_checkpoint_1sim.json",
         "retail_gemini-2.5-flash_old_checkpoint_1sim.json")


def _with_configs(ds: datasets.Dataset) -> datasets.Dataset:
    """Put AgentChangeBench rows in config ``acb`` and tau2 rows in config ``tau2``."""
    table = arrow_table(ds)
    configs = ["acb" if b == "agentchangebench" else "tau2" for b in table.column("benchmark")
               .to_pylist()]
    table = table.set_column(table.column_names.index("config"), "config",
                             pa.array(configs, pa.string()))
    return datasets.Dataset(table, info=datasets.DatasetInfo(features=ak.EPISODE_FEATURES))


@pytest.fixture(scope="module")
def repos(acb_dir, tau2_dir, tmp_path_factory):
    """Two revisions of one dataset, saved in hub layout: main (two configs) and v1."""
    root = tmp_path_factory.mktemp("repos")
    full = ak.load([acb_dir / n for n in FILES] + [tau2_dir / "telecom_grok-3_5tasks_1trial.json"])
    ak.save(_with_configs(full), root / "main", title="fixture episodes")
    ak.save(ak.load(acb_dir / FILES[0]), root / "v1", title="fixture episodes v1")
    return {"main": root / "main", "v1": root / "v1"}


@pytest.fixture
def offline_cache(tmp_path, monkeypatch):
    """Local folders are read with every datasets cache in a temporary HF_HOME."""
    use_hub(monkeypatch, None, tmp_path / "hf_local")


@pytest.fixture
def hub(repos, tmp_path, monkeypatch):
    with HubStub({"org/episodes": repos}) as stub:
        use_hub(monkeypatch, stub.endpoint, tmp_path / "hf_home")
        yield stub


def _same(a: datasets.Dataset, b: datasets.Dataset) -> None:
    assert a.features == b.features
    assert a.to_list() == b.to_list()


def test_hub_id_loads_like_the_local_folder(repos, hub, offline_cache):
    local = ak.load(repos["main"])
    remote = ak.load("org/episodes")
    _same(remote, local)
    assert len(remote) == 7
    assert sorted(set(remote["config"])) == ["acb", "tau2"]
    assert set(remote["split"]) == {"train"}
    fetched = {path for _, path in hub.requests}
    assert any(p.endswith("/acb/train-00000-of-00001.parquet") for p in fetched)
    assert any(p.endswith("/tau2/train-00000-of-00001.parquet") for p in fetched)


def test_hub_id_uses_the_temporary_hf_home(repos, hub, tmp_path):
    ak.load("org/episodes")
    assert hconst.HF_HUB_CACHE == str(tmp_path / "hf_home" / "hub")
    assert any((tmp_path / "hf_home" / "hub").rglob("*.parquet"))
    assert any((tmp_path / "hf_home" / "datasets").iterdir())


def test_hub_id_one_config(repos, hub, offline_cache):
    got = ak.load("org/episodes", config="tau2")
    assert len(got) == 5 and set(got["config"]) == {"tau2"}
    _same(got, ak.load(repos["main"], config="tau2"))


def test_revision_pinning_by_tag_and_commit(repos, hub, offline_cache):
    v1 = ak.load("org/episodes", revision="v1")
    _same(v1, ak.load(repos["v1"]))
    assert len(v1) == 1
    by_commit = ak.load("org/episodes", revision=hub.commit("org/episodes", "v1"))
    _same(by_commit, v1)
    assert any(hub.commit("org/episodes", "v1") in path for _, path in hub.requests)


def test_unknown_revision_is_an_error_naming_the_dataset(hub):
    with pytest.raises(ak.EpisodeValidationError) as exc:
        ak.load("org/episodes", revision="v9")
    msg = str(exc.value)
    assert msg.startswith("file org/episodes, record (whole file), field (dataset):")
    assert "v9" in msg


def test_unknown_repo_is_an_error_and_can_be_skipped(hub, acb_dir):
    with pytest.raises(ak.EpisodeValidationError, match="file org/missing, .*could not load"):
        ak.load("org/missing")
    with pytest.warns(ak.SkippedRecordsWarning) as rec:
        ds = ak.load(["org/missing", acb_dir / FILES[0]], errors="skip")
    assert len(ds) == 1
    (w,) = [r.message for r in rec if isinstance(r.message, ak.SkippedRecordsWarning)]
    assert [(s.source, s.record) for s in w.skipped] == [("org/missing", "(whole file)")]


def test_offline_without_cache_says_so(tmp_path, monkeypatch):
    use_hub(monkeypatch, None, tmp_path / "empty_home")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hconst, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ak.EpisodeValidationError, match="HF_HUB_OFFLINE is set"):
            ak.load("org/never-downloaded")


def _go_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hconst, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)


def test_offline_a_cached_dataset_loads_as_it_did_online_at_each_revision(repos, hub,
                                                                          monkeypatch):
    online = {"all": ak.load("org/episodes"), "v1": ak.load("org/episodes", revision="v1"),
              "tau2": ak.load("org/episodes", config="tau2")}
    _go_offline(monkeypatch)
    served = len(hub.requests)
    _same(ak.load("org/episodes"), online["all"])               # every config, not "default"
    _same(ak.load("org/episodes", revision="v1"), online["v1"])   # the pinned rows, not main's
    _same(ak.load("org/episodes", revision=hub.commit("org/episodes", "v1")), online["v1"])
    _same(ak.load("org/episodes", config="tau2"), online["tau2"])
    assert len(hub.requests) == served                          # nothing asked of the hub
    with pytest.raises(ak.EpisodeValidationError, match=r"revision 'v9' is not in the local "
                       r"cache \(the cache holds main, v1\); HF_HUB_OFFLINE=0 downloads it"):
        ak.load("org/episodes", revision="v9")


def test_environment_is_restored_after_the_hub_tests():
    """The stand-in tests must not leak their settings into the rest of the suite."""
    assert not hconst.ENDPOINT.startswith("http://127.0.0.1")
    assert not datasets.config.HF_ENDPOINT.startswith("http://127.0.0.1")
    assert datasets.config.USE_PARQUET_EXPORT is True
    assert Path(hconst.HF_HUB_CACHE).name == "hub"


def test_sample_folders_by_hub_id(sample_dir, tmp_path, monkeypatch):
    """Done-means of issue 2: a sample folder and the same dataset by hub id are identical."""
    folders = sorted(p for p in sample_dir.iterdir() if (p / "README.md").is_file())
    if not folders:
        pytest.skip(f"no hub-layout sample folders under {sample_dir}")
    use_hub(monkeypatch, None, tmp_path / "local_home")
    local = {f.name: ak.load(f) for f in folders}
    with HubStub({f"accordkit/{f.name}": {"main": f} for f in folders}) as stub:
        use_hub(monkeypatch, stub.endpoint, tmp_path / "hub_home")
        for name, expected in local.items():
            _same(ak.load(f"accordkit/{name}"), expected)
