"""Record and table checks (:mod:`accordkit.schema.types`, :mod:`accordkit.ingest.check`) and the load report's warning classes."""

from __future__ import annotations

import datasets
import pyarrow as pa
import pytest

import accordkit as ak
from accordkit.ingest.check import check_columns, check_table_types, table_problems
from accordkit.ingest.report import (
    DuplicateEpisodesWarning,
    SkippedRecord,
    SkippedRecordsWarning,
    warn_skipped,
)
from accordkit.schema import empty_episode, record_problem


def _episode(eid: str = "tau2/a", **changes) -> dict:
    rec = empty_episode()
    rec.update(benchmark="tau2", domain="airline", scenario_id="tau2/airline/1", task_id="1",
               rollout=0, episode_id=eid, source="x.json",
               messages=[{"role": "user", "content": "hi", "turn_idx": 0, "sub_idx": 0,
                          "kind": None, "tool_calls": None, "tool_call_id": None,
                          "error": None, "event": None, "event_json": None}])
    rec.update(changes)
    return rec


def _table(*recs: dict) -> pa.Table:
    return pa.Table.from_pylist(list(recs), schema=ak.EPISODE_FEATURES.arrow_schema)


# --------------------------------------------------------------------------- record_problem


def test_record_problem_accepts_a_good_record():
    assert record_problem(_episode()) is None


@pytest.mark.parametrize(("changes", "expected"), [
    ({"rollout": 1.5}, ("rollout", "expected an integer, got float 1.5")),
    ({"rollout": True}, ("rollout", "expected an integer, got bool True")),
    ({"rollout": 2**31}, ("rollout", f"integer {2**31} does not fit in int32")),
    ({"reward": "high"}, ("reward", "expected a number, got str 'high'")),
    ({"reward": False}, ("reward", "expected a number, got bool False")),
    ({"completed": 1}, ("completed", "expected true or false, got int 1")),
    ({"domain": 3}, ("domain", "expected text, got int 3")),
    ({"goals": "abc"}, ("goals", "expected a list, got str 'abc'")),
    ({"goals": ["a", 2]}, ("goals[1]", "expected text, got int 2")),
    ({"criteria": []}, ("criteria", "expected an object, got list []")),
    ({"tsr_details": {"overall": 1.0}},
     ("tsr_details.overall", "unknown field 'overall'; expected one of ['action', "
      "'communicate_info', 'has_actions', 'has_communicate_info', 'has_nl_assertions', "
      "'nl_assertion', 'overall_tsr', 'weight_action', 'weight_communicate_info', "
      "'weight_nl_assertion']")),
])
def test_record_problem_names_the_field(changes, expected):
    assert record_problem(_episode(**changes)) == expected


def test_record_problem_walks_into_nested_lists():
    rec = _episode()
    rec["messages"][0]["tool_calls"] = [{"id": "c", "name": "f", "arguments_json": {"a": 1},
                                         "requestor": None}]
    assert record_problem(rec) == ("messages[0].tool_calls[0].arguments_json",
                                   "expected text, got dict {'a': 1}")


def test_record_problem_allows_missing_nested_keys_as_null():
    rec = _episode()
    rec["messages"] = [{"role": "user", "turn_idx": 0}]
    assert record_problem(rec) is None


# --------------------------------------------------------------------------- tables


def test_check_columns_names_missing_and_unknown():
    names = [c for c in ak.EPISODE_FEATURES if c != "seed"] + ["extra"]
    with pytest.raises(ak.EpisodeValidationError) as exc:
        check_columns(names, source="t.parquet")
    assert exc.value.field == "seed, extra"
    assert "missing column(s) ['seed']; unknown column(s) ['extra']" in str(exc.value)


def test_a_verdict_table_is_named_as_one_and_pointed_to_verdicts():
    from accordkit.judges.verdicts import VERDICT_COLUMNS

    with pytest.raises(ak.EpisodeValidationError) as exc:
        check_columns(list(VERDICT_COLUMNS), source="verdicts/usersim_tests.parquet")
    assert exc.value.field == "(columns)" and exc.value.record == "(whole file)"
    assert "judge verdict table" in exc.value.reason and "--verdicts" in exc.value.reason


def test_a_folder_holding_verdicts_names_the_verdict_file(sample_dir):
    with pytest.raises(ak.EpisodeValidationError, match="judge verdict table") as exc:
        ak.load(sample_dir, cache=False)
    assert exc.value.source.endswith("usersim_tests.parquet")


def test_check_table_types_casts_lossless_widths():
    table = _table(_episode())
    i64 = table.column("rollout").cast(pa.int64())
    table = table.set_column(table.column_names.index("rollout"), "rollout", i64)
    out = check_table_types(table, source="t")
    assert out.schema == ak.EPISODE_FEATURES.arrow_schema
    assert out.column("rollout").to_pylist() == [0]


def test_check_table_types_refuses_overflow():
    table = _table(_episode())
    big = pa.chunked_array([pa.array([2**40], pa.int64())])
    table = table.set_column(table.column_names.index("rollout"), "rollout", big)
    with pytest.raises(ak.EpisodeValidationError, match="values do not fit") as exc:
        check_table_types(table, source="t")
    assert exc.value.field == "rollout"


def test_check_table_types_names_a_nested_mismatch():
    schema = ak.EPISODE_FEATURES.arrow_schema
    msg_type = schema.field("messages").type.value_type
    fields = [msg_type.field(i) for i in range(msg_type.num_fields)]
    fields[fields.index(msg_type.field("turn_idx"))] = pa.field("turn_idx", pa.string())
    bad = schema.set(schema.get_field_index("messages"),
                     pa.field("messages", pa.list_(pa.struct(fields))))
    rec = _episode()
    rec["messages"][0]["turn_idx"] = "0"
    table = pa.Table.from_pylist([rec], schema=bad)
    with pytest.raises(ak.EpisodeValidationError) as exc:
        check_table_types(table, source="t")
    assert exc.value.field == "messages[].turn_idx"


def test_table_problems_one_error_per_row_in_row_order():
    bad_kind = _episode("tau2/b")
    bad_kind["messages"][0]["kind"] = "monologue"
    unnamed = _episode("tau2/c")
    unnamed["messages"][0]["tool_calls"] = [{"id": "1", "name": None, "arguments_json": "{}",
                                             "requestor": None}]
    table = _table(_episode(), bad_kind, unnamed, _episode("tau2/d", benchmark="other",
                                                             domain=None))
    found = table_problems(table, source="s.parquet")
    assert [(row, e.record, e.field) for row, e in found] == [
        (1, "tau2/b (row 1)", "messages[0].kind"),
        (2, "tau2/c (row 2)", "messages[0].tool_calls[0].name"),
        (3, "tau2/d (row 3)", "domain"),
    ]
    assert all(e.source == "s.parquet" for _, e in found)


def test_table_problems_accepts_null_kind_and_good_rows():
    assert table_problems(_table(_episode(), _episode("tau2/b")), source="s") == []


def test_table_problems_preference_without_name():
    rec = _episode(preferences=[{"pref_id": "p", "name": None, "dynamic": "stated"}])
    ((row, err),) = table_problems(_table(rec), source="s")
    assert (row, err.field, err.reason) == (0, "preferences[0].name", "a preference needs a name")


# --------------------------------------------------------------------------- warnings


def test_skipped_records_warning_lists_every_record():
    skipped = [SkippedRecord("a.json", "sim-1", "trial", "expected an integer trial"),
               SkippedRecord("b.json", "(whole file)", "(top level)", "empty file")]
    with pytest.warns(SkippedRecordsWarning) as rec:
        warn_skipped(skipped)
    (w,) = rec
    assert w.message.skipped == skipped
    assert str(w.message) == ("skipped 2 bad record(s):\n"
                              "  - file a.json, record sim-1, field trial: expected an integer "
                              "trial\n  - file b.json, record (whole file), field (top level): "
                              "empty file")


def test_no_warning_when_nothing_was_skipped(recwarn):
    warn_skipped([])
    assert len(recwarn) == 0


def test_duplicate_warning_groups_by_sources():
    w = DuplicateEpisodesWarning({"e1": ["a.json", "b.json"], "e2": ["a.json", "b.json"]})
    assert w.duplicates == {"e1": ["a.json", "b.json"], "e2": ["a.json", "b.json"]}
    assert str(w) == ("2 episode(s) loaded more than once with identical content were kept "
                      "once: 2 in a.json and b.json (e1, e2)")


def test_skipped_record_from_error_fills_the_whole_file_label():
    err = ak.EpisodeValidationError("bad", source="x.json", field="(top level)")
    assert SkippedRecord.from_error(err) == SkippedRecord("x.json", "(whole file)",
                                                          "(top level)", "bad")


def test_canonical_features_are_what_record_problem_checks():
    """Every canonical column is walked (a new column without a check would raise here)."""
    rec = {name: None for name in datasets.Features(ak.EPISODE_FEATURES)}
    assert record_problem(rec) is None
