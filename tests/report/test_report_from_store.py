"""`accordkit report --scores DIR`: every table from stored scores, transcripts untouched."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

import accordkit as ak
from accordkit.report.runner import build_report
from accordkit.store import fetch_episodes

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
    assert [r.status for r in direct] == [r.status for r in stored] == ["ok", "ok"]
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
        res = build_report(out=tmp_path / "rep", params=SMALL, progress=False,
                           scores=store / "scores",
                           notebooks=["accord_results", "compare_models", "reliability"])
        assert {r.notebook: r.status for r in res} == {
            "accord_results": "ok", "compare_models": "ok", "reliability": "ok"}
    finally:
        shutil.move(str(moved), store / "inputs")
    # with the transcripts back, only the episodes asked for are read
    ids = ak.read_scores(store / "scores")["episode_id"].iloc[[3, 500, 700]].tolist()
    got = fetch_episodes(store / "scores", ids)
    assert got["episode_id"] == ids
    assert len(got[0]["messages"]) > 0


def test_a_folder_that_is_not_a_store_is_refused(tmp_path):
    from accordkit.cli import main

    assert main(["report", "--scores", str(tmp_path), "--out", str(tmp_path / "r")]) == 1
