"""`accordkit report --scores DIR`: every table from stored scores, transcripts untouched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

import accordkit as ak
from accordkit.report.runner import build_report
from accordkit.store import fetch_episodes, read_manifest

pytestmark = pytest.mark.slow
SMALL = {"n_resamples": 200, "seed": 1}


@pytest.fixture(scope="module")
def store(tmp_path_factory, sample_dir):
    root = tmp_path_factory.mktemp("from_store")
    inputs = root / "inputs"
    shutil.copytree(sample_dir / "accord", inputs / "accord")
    shutil.copytree(sample_dir / "goalshift", inputs / "goalshift")
    ak.write_scores([inputs / "accord", inputs / "goalshift"], root / "scores")
    return root


def test_tables_from_the_store_equal_a_report_from_the_transcripts(store):
    nbs = ["accord_results", "compare_models"]
    direct = build_report([str(store / "inputs" / "accord"), str(store / "inputs" / "goalshift")],
                          out=store / "direct", params=SMALL, notebooks=nbs, progress=False,
                          verdicts=[])
    stored = build_report(out=store / "stored", params=SMALL, notebooks=nbs, progress=False,
                          scores=store / "scores")
    assert [r.status for r in direct] == [r.status for r in stored] == ["ok", "ok"], \
        [(r.notebook, r.reason) for r in [*direct, *stored] if r.status != "ok"]
    tables = sorted(p.name for p in (store / "direct" / "tables").glob("*.csv"))
    assert tables and tables == sorted(p.name for p in (store / "stored" / "tables").glob("*.csv"))
    for name in tables:
        pd.testing.assert_frame_equal(pd.read_csv(store / "direct" / "tables" / name),
                                      pd.read_csv(store / "stored" / "tables" / name))


def test_score_tables_need_no_transcripts_and_drill_down_fetches_by_id(store, tmp_path):
    # move the transcripts away: table notebooks still run from the store alone
    moved = tmp_path / "elsewhere"
    shutil.move(str(store / "inputs"), moved)
    try:
        nbs = ["accord_results", "goalshift_results", "tau2_results", "compare_models",
               "reliability"]
        res = build_report(out=tmp_path / "rep", params=SMALL, progress=False,
                           scores=store / "scores", notebooks=nbs)
        assert {r.notebook: r.status for r in res} == dict.fromkeys(nbs, "ok"), \
            [(r.notebook, r.reason) for r in res if r.status != "ok"]
        # the tables that once read transcripts: upstream modes and tau2's stored checks
        tables = tmp_path / "rep" / "tables"
        modes = pd.read_csv(tables / "goalshift_results__default_vs_upstream.csv")
        assert len(modes) and {"tcrr", "tsr"} <= set(modes["metric"])
        assert len(pd.read_csv(tables / "tau2_results__reward_checks.csv"))
    finally:
        shutil.move(str(moved), store / "inputs")
    # with the transcripts back, only the episodes asked for are read
    ids = ak.read_scores(store / "scores")["episode_id"].iloc[[3, 500, 700]].tolist()
    got = fetch_episodes(store / "scores", ids)
    assert got["episode_id"] == ids
    assert len(got[0]["messages"]) > 0


def test_a_report_from_sources_scores_them_into_its_store_by_batches(store, tmp_path):
    src = [str(store / "inputs" / "accord"), str(store / "inputs" / "goalshift")]
    res = build_report(src, out=tmp_path / "rep", params=SMALL, progress=False, verdicts=[],
                       notebooks=["accord_results"])
    assert [r.status for r in res] == ["ok"]
    manifest = read_manifest(tmp_path / "rep" / "scores")
    assert manifest["engine"] == "local" and manifest["episodes"] == 576 + 216
    # the same scores as the store written by `accordkit score`
    pd.testing.assert_frame_equal(ak.read_scores(tmp_path / "rep" / "scores"),
                                  ak.read_scores(store / "scores"))
    assert len(ak.read_modes(tmp_path / "rep" / "scores"))
    skipped = {e["source"]: e for e in res.skipped}
    assert set(skipped) == set(src) and skipped[src[0]]["episodes"] == 576


def test_inputs_holding_one_episode_twice_are_merged_as_ak_load_does(tmp_path, tau2_dir):
    # the same run under two names (checkpoints of one run): the episodes count once
    one = sorted(tau2_dir.glob("*.json"))[0]
    copy = tmp_path / "copy" / one.name
    copy.parent.mkdir()
    copy.write_bytes(one.read_bytes())
    res = build_report([str(one), str(copy)], out=tmp_path / "rep", params=SMALL,
                       progress=False, notebooks=["tau2_results"])
    assert [r.status for r in res] == ["ok"]
    store = tmp_path / "rep" / "scores"
    # one route: the report scored its sources into its store, reading the two inputs
    # together (as one load) to keep each episode once
    assert read_manifest(store)["merged"] == [str(one), str(copy)]
    ids = ak.read_scores(store)["episode_id"]
    assert not ids.duplicated().any() and len(ids) == len(ak.load(str(one)))


def test_a_folder_that_is_not_a_store_is_refused(tmp_path):
    from accordkit.cli import main

    assert main(["report", "--scores", str(tmp_path), "--out", str(tmp_path / "r")]) == 1


def test_a_store_with_an_episode_twice_is_refused(tmp_path, tau2_dir, capsys):
    from accordkit.cli import main

    run = sorted(tau2_dir.glob("*.json"))[0]
    copy = tmp_path / "checkpoint.json"
    shutil.copy(run, copy)                     # two checkpoints of one run
    ak.write_scores([run, copy], tmp_path / "scores")
    assert main(["report", "--scores", str(tmp_path / "scores"), "--out",
                 str(tmp_path / "rep")]) == 1
    err = capsys.readouterr().err
    assert "more than once" in err and "--source" in err
    assert not (tmp_path / "rep").exists()


def test_a_changed_input_is_said_and_provenance_names_the_scored_bytes(tmp_path, sample_dir):
    import json

    from accordkit.report.runner import StoreChangedWarning

    shutil.copytree(sample_dir / "goalshift", tmp_path / "goalshift")
    ak.write_scores([tmp_path / "goalshift"], tmp_path / "scores", shop_type_gate=True)
    first = read_manifest(tmp_path / "scores")["inputs"][0]
    Path(first["source"]).write_bytes(Path(first["source"]).read_bytes() + b"\n")
    with pytest.warns(StoreChangedWarning, match="1 input"):
        build_report(out=tmp_path / "rep", params=SMALL, notebooks=["goalshift_results"],
                     progress=False, scores=tmp_path / "scores")
    prov = json.loads((tmp_path / "rep" / "provenance.json").read_text())
    scored = {r["source"]: r for r in prov["score_store"]["inputs"]}
    assert scored[first["source"]]["sha256"] == first["sha256"]
    assert scored[first["source"]]["changed"] is True
    assert prov["score_store"]["modes"]["shop_type_gate"] is True
    assert prov["parameters"]["shop_type_gate"] is True


def test_inputs_of_unchanged_size_and_time_are_not_read_again(tmp_path, monkeypatch):
    import os

    from accordkit import store
    from accordkit._internal import files as _files

    f = tmp_path / "run.json"
    f.write_text("x" * 100)
    st = f.stat()
    rec = {"source": str(f), "sha256": _files.file_sha256(f), "size": st.st_size,
           "mtime_ns": st.st_mtime_ns}

    def no_reading(path):
        raise AssertionError(f"{path} was hashed again")

    monkeypatch.setattr(_files, "file_sha256", no_reading)
    assert store.scored_inputs({"inputs": [rec]})[0]["changed"] is False
    monkeypatch.undo()
    f.write_text("y" * 100)                                  # same size, new content
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert store.scored_inputs({"inputs": [rec]})[0]["changed"] is True
    f.chmod(0)
    if not os.access(f, os.R_OK):                            # root reads anyway
        out = store.scored_inputs({"inputs": [rec]})[0]
        assert out["changed"] is None and "PermissionError" in out["unchecked"]


@pytest.mark.parametrize("params", [
    {"tcrr_mode": "upstream"},
    {"grid": {"tcrr_mode": ["episode", "upstream"]}},
    {"shop_type_gate": True},
])
def test_modes_other_than_the_stores_are_refused_before_anything_runs(store, params):
    """The tables of a store are its modes': asking for others used to run silently with
    the store's."""
    from accordkit.report.runner import StoreModesError

    out = store / "modes-refused"
    with pytest.raises(StoreModesError, match="was scored with"):
        build_report(out=out, params=params, progress=False, scores=store / "scores")
    assert not out.exists()


def test_the_stores_own_modes_may_be_named(store):
    from accordkit.report.runner import store_modes_conflict

    modes = read_manifest(store / "scores")["modes"]
    assert store_modes_conflict(modes, dict(modes)) == []


def test_the_cli_calls_it_a_usage_error(store, capsys):
    from accordkit.cli import main

    code = main(["report", "--scores", str(store / "scores"), "--out",
                 str(store / "cli-refused"), "--set", "action_mode=upstream"])
    assert code == 64
    assert "action_mode='upstream'" in capsys.readouterr().err


def test_another_name_of_the_stores_tcrr_mode_is_the_same_mode():
    from accordkit.report.runner import store_modes_conflict

    assert store_modes_conflict({"tcrr_mode": "upstream"},
                                {"tcrr_mode": "upstream_a6a9157"}) == []
    assert store_modes_conflict({"tcrr_mode": "upstream_a6a9157"},
                                {"grid": {"tcrr_mode": ["upstream"]}}) == []
