"""`accordkit score --out` on files one of whose analyses cannot be made for every episode
(issue 40 item 1, issue 41 item 2): the headline scores of every episode are stored, and the
action diff of every episode it can make."""

from __future__ import annotations

import json
import re

import pytest
from bs4 import BeautifulSoup

import accordkit as ak
from accordkit.cli import main
from accordkit.metrics.action_diff import ActionDiffWarning
from accordkit.store import PartialStoreWarning
from tests.metrics import tau2_shapes as shapes

AIRLINE = "airline_grok-3_4tasks_4trials.json"


def test_score_out_keeps_every_episode_of_a_file_with_deep_arguments(tmp_path, tau2_dir,
                                                                     capsys):
    raw = shapes.read(tau2_dir / AIRLINE)
    path = shapes.write(shapes.deep_arguments(raw, 9), tmp_path / "deep.json")
    record = f"tau2/{raw['simulations'][9]['id']}"
    out = tmp_path / "store"
    with pytest.warns(ActionDiffWarning, match=rf"left out 1 episode.*record {record}, field "
                                               r"messages\[\d+\]\.tool_calls\[0\]"):
        code = main(["score", str(path), "--out", str(out), "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "scored 16 episodes" in printed    # before: 0 of 16
    # the store says which episode its action level lacks, and the summary prints it
    assert re.search(rf"left out 1 episode\(s\) .* level action: file .*deep.json, record "
                     rf"{record}, field messages\[\d+\]\.tool_calls\[0\]\.arguments_json: "
                     r"nested deeper than 100 levels; not compared; see left_out_records",
                     printed)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["left_out"] == 1 and manifest["inputs"][0]["left_out"] == 1
    (left,) = manifest["inputs"][0]["left_out_records"]
    assert (left["level"], left["record"], left["source"]) == ("action", record, str(path))
    assert left["field"].endswith(".tool_calls[0].arguments_json")
    assert len(ak.read_scores(out, level="episode")) == 16   # every episode: no warning
    with pytest.warns(PartialStoreWarning, match=rf"1 episode\(s\) of the score store .* left "
                                                 rf"out of level 'action' .*record {record}"):
        actions = ak.read_scores(out, level="action")
    assert actions["episode_id"].nunique() == 15 and record not in set(actions["episode_id"])
    # the note is the manifest's, not the parts': no part's metadata carries it
    assert not any(b"left_out" in p.read_bytes() for p in (out / "actions").glob("*.parquet"))


def test_a_merged_store_names_the_episode_left_out_once_under_its_input(tmp_path, tau2_dir):
    """Two checkpoints of one run (merge=True, as the report scores): the episode is kept
    once, so it is left out once, under the input it was kept from."""
    from accordkit.engines import score_to_store

    raw = shapes.read(tau2_dir / AIRLINE)
    first = shapes.write(shapes.deep_arguments(raw, 9), tmp_path / "first.json")
    again = shapes.write(shapes.deep_arguments(raw, 9), tmp_path / "again.json")
    record = f"tau2/{raw['simulations'][9]['id']}"
    with pytest.warns(ActionDiffWarning, match=record):
        manifest = score_to_store([str(first), str(again)], out=tmp_path / "store",
                                  merge=True, progress=False)
    assert manifest["merged"] == [str(first), str(again)] and manifest["left_out"] == 1
    kept, repeat = manifest["inputs"]
    assert (kept["left_out"], repeat["left_out"], repeat["left_out_records"]) == (1, 0, [])
    assert [(r["record"], r["source"]) for r in kept["left_out_records"]] == [(record,
                                                                              str(first))]


def test_score_out_of_a_renumbered_file_diffs_every_episode(tmp_path, tau2_dir, capsys):
    raw = shapes.read(tau2_dir / AIRLINE)
    path = shapes.write(shapes.renumbered(raw), tmp_path / "renumbered.json")
    out = tmp_path / "store"
    with pytest.warns(ActionDiffWarning, match="16 of 16 simulations store checks made on "
                                               "other tasks than this file's"):
        assert main(["score", str(path), "--out", str(out), "--quiet"]) == 0
    assert "scored 16 episodes" in capsys.readouterr().out
    actions = ak.read_scores(out, level="action")
    assert actions["episode_id"].nunique() == 16
    assert actions["agrees_with_stored"].dropna().all()
    assert actions["agrees_with_stored"].notna().sum() == len(shapes.stored_matches(raw))


def test_strict_report_refuses_an_episode_left_out_at_scoring(tmp_path, tau2_dir, capsys):
    """--strict treats an episode scoring left out of a level as a skipped record: exit 2,
    naming it, before any notebook runs and with nothing written."""
    raw = shapes.read(tau2_dir / AIRLINE)
    path = shapes.write(shapes.deep_arguments(raw, 9), tmp_path / "deep.json")
    record = f"tau2/{raw['simulations'][9]['id']}"
    out = tmp_path / "report"
    with pytest.warns(ActionDiffWarning, match=record):
        code = main(["report", "--source", str(path), "--out", str(out), "--strict",
                     "--notebooks", "tau2_results"])
    assert code == 2
    err = capsys.readouterr().err
    assert "strict report: 1 episode(s) were left out at scoring" in err
    assert re.search(rf"1 left out; first: level action: file .*deep.json, record {record}, "
                     r"field messages\[\d+\]\.tool_calls\[0\]\.arguments_json: nested "
                     r"deeper than 100 levels", err)
    assert not out.exists()


def public_shapes(raw):
    """One file with every shape at once: renumbered task ids, a fork's task with
    ``actions: null`` and ``acceptable_outcomes``, a simulation without a tool call, and one
    whose arguments nest 500 levels."""
    made = shapes.renumbered(raw)
    made = shapes.acceptable_outcomes(made, "8")
    made = shapes.without_calls(made, [6])
    return shapes.deep_arguments(made, 9)


@pytest.mark.slow
def test_report_on_the_public_shapes_exits_0_with_the_deep_record_named(tmp_path, tau2_dir):
    raw = shapes.read(tau2_dir / AIRLINE)
    path = shapes.write(public_shapes(raw), tmp_path / "public_shapes.json")
    record = f"tau2/{raw['simulations'][9]['id']}"
    out = tmp_path / "report"
    with pytest.warns(ActionDiffWarning) as said:
        code = main(["report", "--source", str(path), "--out", str(out),
                     "--set", "n_resamples=200"])
    assert code == 0      # before: "no episode could be read", exit 1
    texts = [str(w.message) for w in said if issubclass(w.category, ActionDiffWarning)]
    assert any("12 of 16 simulations store checks made on other tasks than this file's" in t
               for t in texts)
    assert any("4 of 16 simulations store action checks while their task lists no expected "
               "actions" in t for t in texts)
    assert any("left out 1 episode(s)" in t and f"record {record}, field messages[" in t
               for t in texts)
    ran = {r["notebook"]: r["status"] for r in
           json.loads((out / "results.json").read_text())["notebooks"]
           if r["status"] != "skipped"}
    assert ran == {"tau2_results": "ok", "reliability": "ok", "error_analysis": "ok"}
    assert all((out / f"{name}.html").is_file() for name in ran)
    store = out / "scores"
    assert len(ak.read_scores(store, level="episode")) == 16
    with pytest.warns(PartialStoreWarning, match=record):
        actions = ak.read_scores(store, level="action")
    assert actions["episode_id"].nunique() == 15 and record not in set(actions["episode_id"])
    # the simulation without a tool call: its expected actions (stored gold) all missing
    bare = actions[actions["episode_id"] == f"tau2/{raw['simulations'][6]['id']}"]
    assert len(bare) == 5 and set(bare["status"]) == {"missing"}
    notes = json.loads((store / "manifest.json").read_text())["inputs"][0]["notes"]
    assert any("acceptable_outcomes" in n for n in notes)
    # the deep record is named on the page, in results.json and provenance.json, not only
    # on stderr; the warning stays
    saved = json.loads((out / "results.json").read_text())
    (entry,) = saved["left_out_at_scoring"]
    assert entry["source"] == str(path) and entry["left_out"] == 1
    (left,) = entry["episodes"]
    assert (left["level"], left["record"]) == ("action", record)
    assert re.fullmatch(r"messages\[\d+\]\.tool_calls\[0\]\.arguments_json", left["field"])
    assert left["reason"] == "nested deeper than 100 levels; not compared"
    assert json.loads((out / "provenance.json").read_text())["left_out_at_scoring"] == \
        saved["left_out_at_scoring"]
    assert saved["skipped_records"][0]["skipped"] == 0      # loaded: not a skipped record
    soup = BeautifulSoup((out / "index.html").read_text(), "html.parser")
    section = soup.find("h2", id="left-out-at-scoring")
    assert section is not None and section.get_text() == "Left out at scoring"
    row = [td.get_text() for td in section.find_next("table").select("tbody td")]
    assert row[1:4] == ["action", record, left["field"]] and row[0].endswith("public_shapes.json")
    assert "16 episodes · 0 bad record(s) skipped · 1 episode(s) left out at scoring" in \
        " ".join(soup.select_one("p.sub").get_text().split())
