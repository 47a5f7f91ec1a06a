"""Dir-format tau2 runs inside folders, and metadata files not named ``results.json``.

A dir-format run is a metadata file (a results object without simulations) beside a
``simulations/`` folder of one file per simulation (spec: a path is dir-format if it is a
folder, or a file with a sibling ``simulations/`` folder). A folder holding such runs gives
each as one input, read by the ``results-folder`` reader, and :func:`accordkit.load` and the
scoring plan (:func:`accordkit.engines.plan.expand_sources`) find the same inputs. The runs
are tiny synthetic ones (the builders of ``test_load_errors``), and one test splits the real
airline fixture (skipped when the shared fixtures are absent).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import accordkit as ak
from accordkit.engines import score_to_store
from accordkit.engines.plan import expand_sources, plan_work
from accordkit.ingest.formats.folder import folder_inputs

from ..hub_stub import use_hub
from .test_load_errors import _error, _results, _sim


@pytest.fixture(autouse=True)
def _tmp_hf_home(tmp_path, monkeypatch):
    use_hub(monkeypatch, None, tmp_path / "hf_home")


def _write(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), "utf-8")
    return path


def _run(folder: Path, *sims: dict, name: str = "results.json", index: bool = True) -> Path:
    """A dir-format run in ``folder``: metadata file ``name`` + ``simulations/<id>.json``."""
    meta = _results()
    del meta["simulations"]
    if index:
        meta["simulation_index"] = [{"id": s["id"], "task_id": s["task_id"]} for s in sims]
    (folder / "simulations").mkdir(parents=True, exist_ok=True)
    for s in sims:
        _write(folder / "simulations" / f"{s['id']}.json", s)
    return _write(folder / name, meta)


def _load(source, **kw):
    """``ak.load(source, errors="skip")``: the dataset and the skipped records' (file,
    record, field)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds, report = ak.load_with_report(source, errors="skip", **kw)
    return ds, [(s.source, s.record, s.field) for s in report.skipped]


@pytest.fixture
def runs(tmp_path) -> Path:
    """Two dir-format runs side by side (as tau2 writes them) and a plain results file."""
    root = tmp_path / "simulations"
    _run(root / "20260101_airline_a", _sim("a1"), _sim("a2", trial=1))
    _run(root / "20260102_airline_b", _sim("b1"), _sim("b2", trial=1), _sim("b3", trial=2))
    _write(root / "plain.json", _results(_sim("p1")))
    (root / "README.md").write_text("not an input")
    return root


# --------------------------------------------------------------------------- bug A: folders of runs


def test_a_folder_of_dir_format_runs_reads_each_run_once(runs):
    ds, skipped = _load(runs)
    assert skipped == []
    assert sorted(ds["episode_id"]) == ["tau2/a1", "tau2/a2", "tau2/b1", "tau2/b2", "tau2/b3",
                                        "tau2/p1"]
    assert ak.load(runs)["episode_id"] == ds["episode_id"]          # errors="raise" agrees


def test_a_run_inside_a_folder_reads_as_the_run_folder_itself(runs):
    run = runs / "20260101_airline_a"
    alone = ak.load(run)
    _, report = ak.load_with_report(runs)
    assert report.files[str(run)].episodes == len(alone) == 2
    assert report.files[str(run)].simulations == 2
    assert str(run / "simulations" / "a1.json") not in report.files


def test_the_plan_finds_the_inputs_the_loader_reads(runs):
    want = [runs / "20260101_airline_a" / "results.json",
            runs / "20260102_airline_b" / "results.json", runs / "plain.json"]
    assert folder_inputs(runs) == want
    assert expand_sources([str(runs)]) == [str(p.resolve()) for p in want]
    items, inputs = plan_work([str(runs)])
    assert [r.error for r in inputs] == [None] * 3 and len(items) == 3
    # a run folder given on its own is the same one input
    run = runs / "20260101_airline_a"
    assert expand_sources([str(run)]) == [str((run / "results.json").resolve())]


def test_report_scoring_of_the_folder_gives_the_loaders_episodes_and_no_skips(runs, tmp_path):
    manifest = score_to_store([str(runs)], out=tmp_path / "store", progress=False)
    assert manifest["failed_inputs"] == 0 and manifest["skipped"] == 0
    assert manifest["episodes"] == len(ak.load(runs)) == 6
    assert all(not r["problems"] for r in manifest["inputs"])


def test_a_run_folder_holding_other_files_reads_them_too(runs):
    # the run folder and its parent find the same inputs: the run, and the file beside it
    run = runs / "20260101_airline_a"
    _write(run / "extra.json", _results(_sim("x1")))
    assert folder_inputs(run) == [run / "extra.json", run / "results.json"]
    assert sorted(ak.load(run)["episode_id"]) == ["tau2/a1", "tau2/a2", "tau2/x1"]
    assert "tau2/x1" in ak.load(runs)["episode_id"]


def test_an_unclaimed_simulations_folder_is_read_file_by_file(tmp_path):
    # tau2's own data/ folder: simulations/ holds monolithic runs, nothing beside it claims it
    root = tmp_path / "data"
    _write(root / "simulations" / "run1.json", _results(_sim("s1")))
    _write(root / "notes.jsonl", {"not": "results"})
    assert folder_inputs(root) == [root / "notes.jsonl", root / "simulations" / "run1.json"]
    ds, skipped = _load(root / "simulations")
    assert ds["episode_id"] == ["tau2/s1"] and skipped == []


def test_a_broken_simulation_in_a_run_inside_a_folder_is_named_once(runs):
    sim_file = runs / "20260102_airline_b" / "simulations" / "b2.json"
    sim_file.write_text(sim_file.read_text()[:30])
    ds, skipped = _load(runs)
    assert skipped == [(str(sim_file), "b2", "(top level)")]
    assert len(ds) == 5


# --------------------------------------------------------------------------- bug B: other names


def test_a_metadata_file_of_another_name_reads_its_simulations(tmp_path):
    root = tmp_path / "root"
    meta = _run(root, _sim("a"), _sim("b", trial=1), name="airline_run.json")
    _write(root / "plain.json", _results(_sim("p1")))
    assert ak.load(meta)["episode_id"] == ["tau2/a", "tau2/b"]
    ds, skipped = _load(root)
    assert skipped == [] and sorted(ds["episode_id"]) == ["tau2/a", "tau2/b", "tau2/p1"]
    assert folder_inputs(root) == [meta, root / "plain.json"]
    assert expand_sources([str(root)]) == [str(meta.resolve()),
                                           str((root / "plain.json").resolve())]


def test_a_metadata_file_of_another_name_without_an_index(tmp_path):
    meta = _run(tmp_path / "root", _sim("a"), name="run.json", index=False)
    assert ak.load(meta)["episode_id"] == ["tau2/a"]


def test_its_index_is_checked_against_the_files(tmp_path):
    meta = _run(tmp_path / "root", _sim("a"), _sim("b", trial=1), name="run.json")
    (meta.parent / "simulations" / "b.json").unlink()
    # the run is named by its folder, as a results.json run is
    assert str(_error(meta)) == (f"file {meta.parent}, record (whole file), "
                                 "field simulation_index: "
                                 "simulation_index and simulations/ disagree: missing ['b'], "
                                 "extra []")


def test_its_broken_simulation_is_named_and_the_others_load(tmp_path):
    meta = _run(tmp_path / "root", _sim("a"), _sim("b", trial=1), name="run.json")
    sim_file = meta.parent / "simulations" / "b.json"
    sim_file.write_text("{")
    ds, skipped = _load(meta)
    assert ds["episode_id"] == ["tau2/a"] and skipped == [(str(sim_file), "b", "(top level)")]


def test_results_files_sharing_one_simulations_folder_are_errors_not_empty_runs(tmp_path):
    root = tmp_path / "root"
    a = _run(root, _sim("a"), name="a_run.json")
    b = _run(root, _sim("b"), name="b_run.json")
    _write(root / "plain.json", _results(_sim("p1")))
    err = _error(a)
    assert str(err).startswith(f"file {a}, record (whole file), field simulations: "
                               "dir-format metadata beside a simulations/ folder claimed by "
                               "several files (a_run.json, b_run.json)")
    ds, skipped = _load(root)
    # exactly the two claimants are skipped; the shared simulations are not read one by one
    assert skipped == [(str(a), "(whole file)", "simulations"),
                       (str(b), "(whole file)", "simulations")]
    assert ds["episode_id"] == ["tau2/p1"]


def test_beside_results_json_another_metadata_file_is_an_error(tmp_path):
    run = tmp_path / "run"
    _run(run, _sim("a"))
    other = _run(run, name="copy.json", index=False)
    assert ak.load(run / "results.json")["episode_id"] == ["tau2/a"]
    assert str(_error(other)).startswith(
        f"file {other}, record (whole file), field simulations: dir-format metadata beside a "
        "simulations/ folder that belongs to results.json")
    ds, skipped = _load(run)
    assert ds["episode_id"] == ["tau2/a"]
    assert skipped == [(str(other), "(whole file)", "simulations")]


def test_a_results_file_with_simulations_beside_a_simulations_folder_is_its_own(tmp_path):
    # only a results object without simulations claims the folder beside it
    root = tmp_path / "root"
    mono = _write(root / "mono.json", _results(_sim("m1")))
    _write(root / "simulations" / "other.json", _results(_sim("o1")))
    assert ak.load(mono)["episode_id"] == ["tau2/m1"]
    assert sorted(ak.load(root)["episode_id"]) == ["tau2/m1", "tau2/o1"]


# --------------------------------------------------------------------------- the real fixture


def test_the_airline_fixture_split_into_runs_in_a_folder(tmp_path, tau2_dir):
    fixture = tau2_dir / "airline_grok-3_4tasks_4trials.json"
    whole = ak.load(fixture)
    meta = json.loads(fixture.read_text("utf-8"))
    sims = meta.pop("simulations")
    root = tmp_path / "data" / "simulations"
    for folder, name in ((root / "20260101_airline_run", "results.json"),
                         (root / "renamed", "airline_grok-3.json")):
        _write(folder / name, meta)
        for s in sims:
            _write(folder / "simulations" / f"{s['id']}.json", s)
    _write(root / "flat.json", json.loads(fixture.read_text("utf-8")))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds, report = ak.load_with_report(root, errors="skip")
    assert report.skipped == []
    # the three copies give the same 16 episodes each (merged as duplicates)
    assert {src: read.episodes for src, read in report.files.items()} == {
        str(root / "20260101_airline_run"): 16, str(root / "renamed"): 16,
        str(root / "flat.json"): 16}
    assert sorted(ds["episode_id"]) == sorted(whole["episode_id"])
    assert sorted(ak.load(root / "renamed" / "airline_grok-3.json")["episode_id"]) == sorted(
        whole["episode_id"])
