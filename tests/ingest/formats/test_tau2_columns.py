"""The messages column built from typed simulations is the one ``from_pylist`` builds.

:func:`accordkit.ingest.formats.tau2.columns.messages_column` replaces, for simulations whose
messages came from the typed decoder, a dict per message and Arrow's reading of them; and
the loader then leaves out the message rules, which such messages keep by construction.
Both claims are checked here: on every released fixture file and on messages made to hold
each case the builder treats apart (no calls, an empty call list, calls in text, events,
tool results with and without an error flag).
"""

from __future__ import annotations

import json
import warnings

import pyarrow as pa
import pytest

import accordkit as ak
from accordkit._internal.arrow import arrow_table
from accordkit.ingest.formats.tau2.columns import TypedMessages, messages_column
from accordkit.ingest.formats.tau2.convert import converted_simulations
from accordkit.ingest.formats.tau2.typed import decode_results
from accordkit.schema import RULES, rule_problem
from accordkit.schema.arrow import canonical_schema

from ...conftest import warns_of_twice_defined_tasks
from ..test_load_errors import _results, _sim, _write

_MESSAGE_RULES = tuple(r for r in RULES if r.path.startswith("messages"))


def _typed(data: bytes, source: str = "run.json") -> list[TypedMessages]:
    """The typed messages of each simulation of a results file (as the loader gets them)."""
    results = decode_results(data)
    assert results is not None, "the typed decoder refused the file"
    out = []
    for _, rec, typed in converted_simulations(results, source=source, shared_criteria=True,
                                               columnar=True):
        assert not isinstance(rec, Exception), rec
        if typed:
            out.append(rec["messages"])
    return out


def _reference(items: list[TypedMessages]) -> pa.Array:
    return pa.array([item.records() for item in items],
                    type=canonical_schema().field("messages").type)


def _fixture_files(acb_dir, tau2_dir) -> list:
    return sorted(p for d in (acb_dir, tau2_dir) for p in d.glob("*.json")
                  if p.name != "expected_upstream.json")


def test_column_equals_from_pylist_on_every_fixture_file(acb_dir, tau2_dir):
    n_messages = 0
    for path in _fixture_files(acb_dir, tau2_dir):
        with warns_of_twice_defined_tasks(path):
            items = _typed(path.read_bytes(), str(path))
        column = messages_column(items)
        assert column.equals(_reference(items)), path.name
        n_messages += sum(len(item) for item in items)
    assert n_messages > 1000  # the fixtures hold real conversations, not a few lines


def test_typed_messages_keep_every_message_rule(acb_dir, tau2_dir):
    for path in _fixture_files(acb_dir, tau2_dir):
        with warns_of_twice_defined_tasks(path):
            items = _typed(path.read_bytes(), str(path))
        for item in items:
            assert rule_problem({"messages": item.records()}, rules=_MESSAGE_RULES) is None


_CASES = [
    {"role": "system", "content": "You are an agent.", "turn_idx": 0},
    {"role": "assistant", "content": None, "tool_calls": [], "turn_idx": 1},
    {"role": "assistant", "content": "two calls", "turn_idx": 2, "tool_calls": [
        {"id": "a", "name": "find", "arguments": {"q": "é", "n": [1, 2.5, None]},
         "requestor": "assistant"},
        {"id": None, "name": "", "arguments": '{"x": true}'}]},
    {"role": "tool", "id": "a", "content": "found", "error": True, "turn_idx": 3},
    {"role": "tool", "id": "b", "content": None, "turn_idx": 4},
    {"role": "user", "content": "now something else", "turn_idx": 5,
     "meta_event": {"event": "GOAL_SHIFT", "from": "a", "to": "b"}},
    {"role": "assistant", "content": "no arguments", "turn_idx": 6,
     "tool_calls": [{"id": "c", "name": "ping", "arguments": None}]},
]


def test_column_equals_from_pylist_on_each_special_case(tmp_path):
    path = _write(tmp_path, _results(_sim("s1", messages=_CASES), _sim("s2")))
    items = _typed(path.read_bytes())
    assert [len(i) for i in items] == [len(_CASES), 4]
    column = messages_column(items)
    assert column.equals(_reference(items))
    first = column[0].as_py()
    assert first[1]["tool_calls"] == [] and first[0]["tool_calls"] is None
    assert [c["arguments_json"] for c in first[2]["tool_calls"]] == [
        json.dumps({"q": "é", "n": [1, 2.5, None]}, ensure_ascii=False), '{"x": true}']
    assert first[3]["error"] is True and first[4]["error"] is None
    assert first[5]["event"] == "GOAL_SHIFT"
    assert json.loads(first[5]["event_json"]) == {"event": "GOAL_SHIFT", "from": "a", "to": "b"}
    assert first[6]["tool_calls"][0]["arguments_json"] == "{}"
    for item in items:
        assert rule_problem({"messages": item.records()}, rules=_MESSAGE_RULES) is None


def test_an_empty_batch_gives_an_empty_column():
    column = messages_column([])
    assert len(column) == 0 and column.type == canonical_schema().field("messages").type


def test_load_gives_the_same_table_with_and_without_the_columnar_build(tmp_path, monkeypatch):
    """End to end: the loader's table when every message goes through dicts instead."""
    path = _write(tmp_path, _results(_sim("s1", messages=_CASES), _sim("s2"), _sim("s3")))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        columnar = arrow_table(ak.load(path, cache=False))
        tau2 = __import__("accordkit.ingest.formats.tau2.convert", fromlist=["_"])
        original = tau2._convert_simulation
        monkeypatch.setattr(tau2, "_convert_simulation",
                            lambda *a, **k: original(*a, **{**k, "columnar": False}))
        plain = arrow_table(ak.load(path, cache=False))
    assert columnar.equals(plain)


def test_a_text_argument_that_is_not_an_object_is_still_its_records_problem(tmp_path):
    bad = [*_CASES[:2], {"role": "assistant", "content": None, "turn_idx": 2,
                         "tool_calls": [{"id": "x", "name": "f", "arguments": "[1, 2]"}]}]
    path = _write(tmp_path, _results(_sim("s1"), _sim("s2", messages=bad)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds, report = ak.load_with_report(path, cache=False, errors="skip")
    assert len(ds) == 1
    (skipped,) = report.skipped
    assert skipped.record == "s2"
    assert skipped.field == "messages[2].tool_calls[0].arguments"
    assert "not an object" in skipped.reason
    with pytest.raises(ak.EpisodeValidationError, match=r"messages\[2\]\.tool_calls\[0\]"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ak.load(path, cache=False)
