"""Episodes left out at scoring are named in the report as skipped records are (issue 41
item 2's closing note): the summary, the index section (escaped), and --strict."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from accordkit.report.index import _left_out_section
from accordkit.report.skipped import SkippedRecordsError, left_out_summary


def _record(source: str, record: str, field: str | None = "messages[3].tool_calls[0]."
            "arguments_json") -> dict:
    return {"level": "action", "source": source, "record": record, "field": field,
            "reason": "nested deeper than 100 levels; not compared"}


def _manifest(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    a, b = folder / "a.json", folder / "b.json"
    a.write_text("{}")
    b.write_text("{}")
    other = tmp_path / "c.json"
    other.write_text("{}")
    return folder, other, {"inputs": [
        {"source": str(a), "left_out": 2, "left_out_records": [_record(str(a), "tau2/1"),
                                                                 _record(str(a), "tau2/2")]},
        {"source": str(b), "left_out": 0, "left_out_records": []},
        {"source": str(other), "left_out": 25,
         "left_out_records": [_record(str(other), f"tau2/{k}") for k in range(20)]},
        {"source": str(tmp_path / "old.json")},          # a manifest written before the count
    ]}


def test_left_out_episodes_are_summed_per_source_and_named(tmp_path):
    folder, other, manifest = _manifest(tmp_path)
    by_source = left_out_summary(manifest, [str(folder), str(other)])
    assert [(e["source"], e["left_out"], len(e["episodes"])) for e in by_source] == [
        (str(folder), 2, 2), (str(other), 25, 20)]
    assert [e["record"] for e in by_source[0]["episodes"]] == ["tau2/1", "tau2/2"]
    per_input = left_out_summary(manifest)       # a store given: one entry per input
    assert [e["left_out"] for e in per_input] == [2, 25]
    assert left_out_summary({"inputs": [{"source": "x.json", "left_out": 0}]}) == []


def test_the_index_names_each_episode_left_out_as_escaped_text(tmp_path):
    hostile = '<img src=x onerror=alert(1)>"'
    entries = [{"source": "a.json", "left_out": 3, "episodes": [
        _record("a.json", f"tau2/{hostile}", field=f"criteria.actions[0].{hostile}"),
        _record("a.json", "tau2/7", field=None)]}]
    page = _left_out_section(entries)
    soup = BeautifulSoup(page, "html.parser")
    assert soup.find("h2")["id"] == "left-out-at-scoring"
    assert soup.find("img") is None and "<img" not in page      # the names stay text
    cells = [[td.get_text() for td in tr.find_all("td")] for tr in soup.select("tbody tr")]
    assert cells[0] == ["a.json", "action", f"tau2/{hostile}", f"criteria.actions[0].{hostile}",
                        "nested deeper than 100 levels; not compared"]
    assert cells[1][2:4] == ["tau2/7", "–"]
    assert cells[2][1].startswith("… and 1 more")
    assert "3 episode(s) were loaded and scored" in soup.find("p").get_text()
    none = BeautifulSoup(_left_out_section([]), "html.parser")
    assert none.find("p").get_text() == "None: every episode loaded was scored at every level."


def test_strict_names_episodes_left_out_at_scoring():
    left = [{"source": "a.json", "left_out": 1, "episodes": [_record("a.json", "tau2/9")]}]
    skipped = [{"source": "a.json", "episodes": 16, "skipped": 0, "reasons": []}]
    with pytest.raises(SkippedRecordsError) as caught:
        raise SkippedRecordsError(skipped, left)
    assert str(caught.value) == (
        "strict report: 1 episode(s) were left out at scoring\n"
        "  a.json: 1 left out; first: level action: file a.json, record tau2/9, field "
        "messages[3].tool_calls[0].arguments_json: nested deeper than 100 levels; not "
        "compared")
    assert caught.value.left_out == left
    both = SkippedRecordsError([{**skipped[0], "skipped": 2, "reasons": ["file a.json, "
                                                                         "record 3: bad"]}],
                               left)
    assert str(both).startswith("strict report: 2 bad record(s) were skipped and 1 "
                                "episode(s) were left out at scoring\n")
