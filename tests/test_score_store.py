"""The score store (``accordkit score --out``, ``ak.write_scores`` / ``ak.read_scores``) and
``accordkit score``'s one-line errors."""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest

import accordkit as ak
from accordkit.cli import main
from accordkit.store import IncompleteStoreError, StoreChangedWarning

from .conftest import FIXTURES, _need


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_round_trip_equals_score_on_the_sample(tmp_path, sample_dir):
    sources = [sample_dir / "accord", sample_dir / "goalshift"]
    manifest_path = ak.write_scores(sources, tmp_path / "store")
    ds = ak.load(sources)
    back = ak.read_scores(tmp_path / "store", level=None)
    assert sorted(back) == ["episode", "preference", "shift"]
    for level, frame in back.items():
        want = ak.score(ds, level=level)
        assert len(want) > 0
        pd.testing.assert_frame_equal(frame, want)
    pd.testing.assert_frame_equal(ak.read_scores(tmp_path / "store", level="shift"),
                                  back["shift"])
    manifest = json.loads(manifest_path.read_text())
    assert manifest["accordkit_version"] == ak.__version__
    assert manifest["modes"] == {"tcrr_mode": "episode", "action_mode": "best_match",
                                 "shop_type_gate": False}
    assert manifest["episodes"] == len(ds)
    # a folder is listed file by file, each with its sha256 and episode count
    first = manifest["inputs"][0]
    assert first["source"].startswith(str(sources[0]))
    assert first["sha256"] == _sha(type(sources[0])(first["source"]))
    assert sum(i["episodes"] for i in manifest["inputs"]) == len(back["episode"])


def test_modes_are_recorded_and_used(tmp_path):
    path = _need(FIXTURES / "agentchangebench" / "banking_gpt-4.1_13sims_tasks-trimmed.json")
    store = tmp_path / "s"
    manifest = json.loads(ak.write_scores(path, store, tcrr_mode="upstream").read_text())
    assert manifest["modes"]["tcrr_mode"] == "upstream"
    rec = manifest["inputs"][0]
    assert (rec["source"], rec["sha256"], rec["episodes"]) == (str(path), _sha(path), 13)
    pd.testing.assert_frame_equal(ak.read_scores(store, level="episode"),
                                  ak.score(ak.load(path), tcrr_mode="upstream"))


def test_taubench_and_header_only_sources(tmp_path):
    tau = _need(FIXTURES / "taubench" / "airline_gpt-4o_3tasks_4trials.json")
    empty = _need(FIXTURES / "agentchangebench" / "retail_gpt-4.1_header-only_0sims.json")
    ak.write_scores([tau], tmp_path / "tau", metadata={"agent_model": "gpt-4o"})
    episodes = ak.read_scores(tmp_path / "tau", level="episode")
    assert set(episodes["agent_model"]) == {"gpt-4o"} and len(episodes) == 12
    ak.write_scores(empty, tmp_path / "empty")
    back = ak.read_scores(tmp_path / "empty", level=None)
    for level, frame in back.items():
        pd.testing.assert_frame_equal(frame, ak.score(ak.load(empty), level=level))
        assert frame.empty


def test_skipped_records_are_in_the_manifest(tmp_path):
    tau = _need(FIXTURES / "taubench" / "airline_gpt-4o_3tasks_4trials.json")
    records = json.loads(tau.read_text())
    del records[3]["traj"]
    bad = tmp_path / "gpt-4o-airline.json"
    bad.write_text(json.dumps(records))
    manifest = json.loads(ak.write_scores(bad, tmp_path / "s", errors="skip").read_text())
    assert manifest["episodes"] == 11 and manifest["skipped"] == 1
    (rec,) = manifest["inputs"]
    assert rec["skipped"] == 1
    assert rec["problems"][0].startswith(f"file {bad}, record task 0 trial 1 (item 3), "
                                         "field traj")


def test_read_scores_refuses_what_it_cannot_trust(tmp_path, sample_dir):
    with pytest.raises(IncompleteStoreError, match="not a finished score store"):
        ak.read_scores(tmp_path)
    ak.write_scores(sample_dir / "goalshift", tmp_path / "s")
    with pytest.raises(ValueError, match="level must be one of"):
        ak.read_scores(tmp_path / "s", level="turn")
    table = next((tmp_path / "s" / "shifts").glob("*.parquet"))
    pd.read_parquet(table).head(3).to_parquet(table, index=False)
    with pytest.raises(IncompleteStoreError, match="sha256 differs"):
        ak.read_scores(tmp_path / "s", level="shift")


@pytest.mark.parametrize(("edit", "message"), [
    (lambda m: [], "expected a JSON object, found list"),
    (lambda m: {**m, "levels": None}, "field 'levels'"),
    (lambda m: {**m, "levels": {"episode": [1]}}, "field 'levels'"),
    (lambda m: {**m, "sha256": []}, "field 'sha256'"),
    (lambda m: {k: v for k, v in m.items() if k != "inputs"}, "field 'inputs'"),
    (lambda m: {**m, "episodes": "216"}, "field 'episodes'"),
    # a part left out of the list: its rows would be lost without a word
    (lambda m: {**m, "levels": {**m["levels"], "episode": m["levels"]["episode"][1:]}},
     "lists 2 episode part"),
])
def test_a_damaged_manifest_is_refused_with_what_is_wrong(tmp_path, sample_dir, edit,
                                                         message):
    store = tmp_path / "s"
    ak.write_scores(sample_dir / "goalshift", store)
    path = store / "manifest.json"
    path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    with pytest.raises(IncompleteStoreError, match=message):
        ak.read_scores(store)


def test_cli_out_writes_the_store(tmp_path, sample_dir, capsys):
    assert main(["score", str(sample_dir / "goalshift"), "--out", str(tmp_path / "s"),
                 "--quiet"]) == 0
    assert "scored 216 episodes" in capsys.readouterr().out
    assert (tmp_path / "s" / "manifest.json").is_file()
    pd.testing.assert_frame_equal(ak.read_scores(tmp_path / "s", level="episode"),
                                  ak.score(ak.load(sample_dir / "goalshift")))


def test_cli_bad_input_is_one_line_and_exit_1(tmp_path, capsys):
    bad = tmp_path / "broken.json"
    bad.write_text('{"info": ')
    assert main(["score", str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("accordkit score: error: file ")
    assert "invalid or truncated JSON" in err[0]
    assert main(["score", str(tmp_path / "missing.json"), "--out", str(tmp_path / "s")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no such file or folder" in err[0]
    assert not (tmp_path / "s").exists()


def test_columns_come_in_ak_score_order_whatever_the_input_order(tmp_path, sample_dir):
    sources = [sample_dir / "goalshift", sample_dir / "accord"]     # goal-shift first
    ak.write_scores(sources, tmp_path / "s")
    want = ak.score(ak.load(sources))
    got = ak.read_scores(tmp_path / "s")
    assert list(got.columns) == list(want.columns)
    assert list(ak.read_scores(tmp_path / "s", categorical=True).columns) == list(want.columns)


def test_read_scores_says_when_an_input_changed_since_it_was_scored(tmp_path, sample_dir):
    import shutil
    import warnings

    shutil.copytree(sample_dir / "goalshift", tmp_path / "in")
    ak.write_scores(tmp_path / "in", tmp_path / "s")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # unchanged: nothing to say
        ak.read_scores(tmp_path / "s", level=None)
    first = json.loads((tmp_path / "s" / "manifest.json").read_text())["inputs"][0]["source"]
    with open(first, "ab") as fh:
        fh.write(b"\n")
    with pytest.warns(StoreChangedWarning, match="1 input"):
        ak.read_scores(tmp_path / "s")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ak.read_scores(tmp_path / "s", check_inputs=False)


def test_an_unchanged_input_is_hashed_at_most_once_per_process(tmp_path, sample_dir,
                                                               monkeypatch):
    import os
    import shutil
    import time

    from accordkit import store
    from accordkit._internal import files as _files
    from accordkit.store import format as store_format

    shutil.copytree(sample_dir / "goalshift", tmp_path / "in")
    ak.write_scores(tmp_path / "in", tmp_path / "s")
    inputs = json.loads((tmp_path / "s" / "manifest.json").read_text())["inputs"]
    for rec in inputs:  # touched: same bytes, another time
        os.utime(rec["source"], ns=(rec["mtime_ns"] + 10**9, rec["mtime_ns"] + 10**9))
    hashed = []
    real = _files.file_sha256
    monkeypatch.setattr(_files, "file_sha256", lambda p: hashed.append(p) or real(p))
    store._sha256_now.cache_clear()
    monkeypatch.setattr(store_format, "_RACY_NS", 50_000_000)   # 2 s on a real machine
    time.sleep(0.1)   # a file touched a moment ago is hashed again
    for _ in range(3):
        ak.read_scores(tmp_path / "s")
    assert len(hashed) == len(inputs), "each touched input read once, and found unchanged"
