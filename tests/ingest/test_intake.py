"""Taking in what a read gave (``ingest/intake.py``): the one place that fills the load report
and keeps each episode once, for ``ak.load``, ``load_input`` and an engine's work item."""

from __future__ import annotations

import pyarrow as pa
import pytest

import accordkit as ak
from accordkit.ingest.check import Part
from accordkit.ingest.context import ReadOptions
from accordkit.ingest.intake import Intake, reported
from accordkit.ingest.plan import plan
from accordkit.ingest.read import load_input
from accordkit.ingest.report import FileRead

from .test_load_errors import _results, _sim, _write


def test_one_input_reads_as_a_load_of_it(tmp_path):
    """A results file holding one simulation twice: ``load_input`` and ``ak.load`` fill the
    same report (the episodes counted before the copy was dropped, the copy named)."""
    path = _write(tmp_path, _results(_sim("s1"), _sim("s1"), _sim("s2")))
    ds, report = ak.load_with_report(path, cache=False, errors="skip")
    one, alone = load_input(plan(str(path))[0], cache=False)
    assert one["episode_id"] == ds["episode_id"] == ["tau2/s1", "tau2/s2"]
    assert alone == report
    assert report.counts == {str(path): 3}
    assert report.files == {str(path): FileRead(episodes=3, simulations=3)}
    assert report.duplicates == {"tau2/s1": [str(path), str(path)]}


def _part(ids: list[str], name: str | None = None) -> Part:
    table = pa.table({"episode_id": ids, "source": ["x"] * len(ids)})
    return Part(table, [f"{eid} (line {n})" for n, eid in enumerate(ids, 1)], name)


def test_streamed_parts_keep_the_first_copy_and_count_what_they_keep():
    ctx, report = reported("skip", ReadOptions())
    intake = Intake(ctx, report)
    first = intake.first_copies(_part(["a", "b"]), "big.jsonl")
    second = intake.first_copies(_part(["c", "a", "b"]), "big.jsonl")
    assert first.table["episode_id"].to_pylist() == ["a", "b"]
    assert second.table["episode_id"].to_pylist() == ["c"] and second.labels == ["c (line 1)"]
    assert report.files == {"big.jsonl": FileRead(episodes=3)}
    assert [(s.source, s.record, s.field) for s in report.skipped] == [
        ("big.jsonl", "a (line 2)", "episode_id"), ("big.jsonl", "b (line 3)", "episode_id")]
    assert report.duplicates == {} and report.counts == {}


def test_a_copy_within_one_streamed_part_is_named_too():
    """Two copies in one part (a reader's part holds up to a thousand records) were both
    kept, and the episode scored twice."""
    ctx, report = reported("skip", ReadOptions())
    kept = Intake(ctx, report).first_copies(_part(["a", "b", "a"]), "big.jsonl")
    assert kept.table["episode_id"].to_pylist() == ["a", "b"]
    assert [(s.source, s.record) for s in report.skipped] == [("big.jsonl", "a (line 3)")]
    assert report.files == {"big.jsonl": FileRead(episodes=2)}


def test_a_streamed_copy_is_an_error_when_asked_to_raise():
    ctx, report = reported("raise", ReadOptions())
    intake = Intake(ctx, report)
    intake.first_copies(_part(["a"], "cfg/train"), "hub")
    with pytest.raises(ak.EpisodeValidationError, match="read before from this input") as exc:
        intake.first_copies(_part(["a"], "cfg/train"), "hub")
    assert (exc.value.source, exc.value.record, exc.value.field) == (
        "cfg/train", "a (line 1)", "episode_id")


def test_in_memory_copies_of_other_content_are_problems_of_the_later_record():
    ctx, report = reported("skip", ReadOptions())
    intake = Intake(ctx, report)
    a = pa.table({"episode_id": ["e1", "e2"], "source": ["x", "x"], "agent_model": ["m", "m"]})
    b = pa.table({"episode_id": ["e1"], "source": ["y"], "agent_model": ["other"]})
    kept = intake.once([intake.take("a.jsonl", [Part(a, ["e1 (line 1)", "e2 (line 2)"])]),
                        intake.take("b.jsonl", [Part(b, ["e1 (line 4)"])])])
    assert kept["episode_id"].to_pylist() == ["e1", "e2"]
    assert report.files == {"a.jsonl": FileRead(episodes=2), "b.jsonl": FileRead(episodes=1)}
    assert [(s.source, s.record, s.field) for s in report.skipped] == [
        ("b.jsonl", "e1 (line 4)", "episode_id")]
    assert report.skipped[0].reason == ("episode id also loaded from a.jsonl (e1 (line 1)) with "
                                        "different content (the first copy was kept)")
    assert report.duplicates == {}


def test_rows_taken_in_memory_keep_their_input_for_a_merged_group():
    """A store's merged group (``engines/merge.py``) takes its inputs here and attributes the
    rows kept and dropped to each: the first copies as positions, each row's input, and the
    input that first gave each file (a problem of a later copy is named by its file)."""
    ctx, report = reported("skip", ReadOptions())
    intake = Intake(ctx, report)
    a = pa.table({"episode_id": ["e1", "e2"], "source": ["x", "x"], "agent_model": ["m", "m"]})
    same = pa.table({"episode_id": ["e2"], "source": ["y"], "agent_model": ["m"]})
    other = pa.table({"episode_id": ["e1", "e3"], "source": ["y", "y"],
                      "agent_model": ["other", "m"]})
    tables = [intake.take("a.jsonl", [Part(a, ["e1 (line 1)", "e2 (line 2)"])], origin=4),
              intake.take("b", [Part(same, ["e2 (line 1)"], "b/one.jsonl"),
                                Part(other, ["e1 (line 1)", "e3 (line 2)"], "b/two.jsonl")],
                          origin=7)]
    table = pa.concat_tables(tables)
    assert intake.first_rows(table).tolist() == [0, 1, 4]
    assert intake.origin == [4, 4, 7, 7, 7]
    assert intake.first_input == {"a.jsonl": 4, "b/one.jsonl": 7, "b/two.jsonl": 7}
    assert report.duplicates == {"e2": ["a.jsonl (line 2)", "b/one.jsonl (line 1)"]}
    assert [(s.source, s.record) for s in report.skipped] == [("b/two.jsonl", "e1 (line 1)")]
    assert report.files == {"a.jsonl": FileRead(episodes=2), "b/one.jsonl": FileRead(episodes=1),
                            "b/two.jsonl": FileRead(episodes=2)}
