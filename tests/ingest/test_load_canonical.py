"""Canonical episode inputs (JSON / JSONL, parquet): values at the edges of their types.

Every input is a few hand-built episodes written to ``tmp_path``; each problem must name the
file, the record and the field, and with ``errors="skip"`` the other records must load.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import accordkit as ak
from accordkit.ingest.check import cast_table
from accordkit.ingest.report import SkippedRecordsWarning
from accordkit.schema import FLOAT_EXACT_INT, empty_episode


def _ep(i: int, **changes) -> dict:
    return empty_episode() | {
        "benchmark": "accord", "domain": "shop", "scenario_id": f"accord/shop/s{i}",
        "task_id": f"s{i}", "episode_id": f"e{i}", "source": "hand", "completed": True,
        "rollout": 0, "messages": [{"role": "user", "content": "hi", "turn_idx": 0}],
    } | changes


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return path


def _table(records: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(records, schema=ak.EPISODE_FEATURES.arrow_schema)


def _with_column(table: pa.Table, name: str, values: pa.Array) -> pa.Table:
    return table.set_column(table.column_names.index(name), name, values)


def _skip(source, **kw):
    """(dataset, skipped records) of a load with errors="skip"."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = ak.load(source, errors="skip", cache=False, **kw)
    skipped = [w.message for w in caught if isinstance(w.message, SkippedRecordsWarning)]
    return ds, (skipped[0].skipped if skipped else [])


# --------------------------------------------------------------------------- huge integers


@pytest.mark.parametrize(("field", "value", "path"), [
    ("agent_cost", 2**64, "agent_cost"),
    ("reward", 10**400, "reward"),
    ("reward", -(2**62 + 1), "reward"),
    ("tsr_details", {"overall_tsr": 2**63}, "tsr_details.overall_tsr"),
])
def test_huge_integer_in_a_float_field_is_a_problem_of_its_record(tmp_path, field, value, path):
    src = _jsonl(tmp_path / "eps.jsonl", [_ep(0), _ep(1, **{field: value}), _ep(2)])
    with pytest.raises(ak.EpisodeValidationError) as exc:
        ak.load(src, cache=False)
    err = exc.value
    assert (err.source, err.record, err.field) == (str(src), "e1 (line 2)", path)
    assert "out of range for a float field" in err.reason
    ds, skipped = _skip(src)
    assert ds["episode_id"] == ["e0", "e2"]
    assert [(s.record, s.field) for s in skipped] == [("e1 (line 2)", path)]


def test_integers_up_to_2_53_in_a_float_field_load_exactly(tmp_path):
    # (user_cost, not reward: a reward must lie in [0, 1], accordkit.names.REWARD_RANGE)
    src = _jsonl(tmp_path / "eps.jsonl", [_ep(0, user_cost=FLOAT_EXACT_INT),
                                          _ep(1, user_cost=-FLOAT_EXACT_INT, agent_cost=3)])
    ds = ak.load(src, cache=False)
    assert ds["user_cost"] == [float(2**53), -float(2**53)] and ds["agent_cost"] == [None, 3.0]


def test_a_very_long_integer_is_shortened_in_the_message(tmp_path):
    src = _jsonl(tmp_path / "eps.jsonl", [_ep(0, user_cost=10**400)])
    with pytest.raises(ak.EpisodeValidationError, match=r"1000\.\.\.0000 \(401 digits\)"):
        ak.load(src, cache=False)


def test_an_integer_too_long_to_parse_is_a_problem_of_its_line(tmp_path):
    src = tmp_path / "eps.jsonl"
    bad = json.dumps(_ep(1)).replace('"reward": null', '"reward": 1' + "0" * 5000)
    src.write_text(json.dumps(_ep(0)) + "\n" + bad + "\n" + json.dumps(_ep(2)) + "\n", "utf-8")
    ds, skipped = _skip(src)
    assert ds["episode_id"] == ["e0", "e2"]
    assert [(s.record, s.field) for s in skipped] == [("line 2", "(top level)")]


# --------------------------------------------------------------------------- parquet values


@pytest.mark.parametrize(("column", "values", "reason"), [
    ("rollout", pa.array([0, 2**31, 1], pa.int64()), "integer 2147483648 does not fit in int32"),
    ("seed", pa.array([1, 2**64 - 1, 2], pa.uint64()),
     "integer 18446744073709551615 does not fit in int64"),
    ("reward", pa.array([1, 2**62 + 1, 0], pa.int64()),
     "integer 4611686018427387905 is out of range for a float field"),
])
def test_parquet_value_out_of_range_is_a_problem_of_its_row(tmp_path, column, values, reason):
    table = _with_column(_table([_ep(0), _ep(1), _ep(2)]), column, values)
    src = tmp_path / "eps.parquet"
    pq.write_table(table, src)
    with pytest.raises(ak.EpisodeValidationError) as exc:
        ak.load(src)
    err = exc.value
    assert (err.source, err.record, err.field) == (str(src), "e1 (row 1)", column)
    assert err.reason.startswith(reason)
    ds, skipped = _skip(src)
    assert ds["episode_id"] == ["e0", "e2"]
    assert ds[column] == [values[0].as_py(), values[2].as_py()]
    assert [(s.source, s.record, s.field) for s in skipped] == [(str(src), "e1 (row 1)", column)]


def _messages_with(table: pa.Table, child: str, make) -> pa.Table:
    """``table`` with the ``messages`` struct field ``child`` replaced by ``make(values)``."""
    msgs = table.column("messages").combine_chunks()
    structs = msgs.values
    names = [structs.type.field(i).name for i in range(structs.type.num_fields)]
    children = [make(structs.field(n)) if n == child else structs.field(n) for n in names]
    new = pa.ListArray.from_arrays(msgs.offsets, pa.StructArray.from_arrays(children, names),
                                   mask=msgs.is_null())
    return _with_column(table, "messages", new)


def test_parquet_nested_value_out_of_range_names_its_position(tmp_path):
    two = [{"role": "user", "content": "a", "turn_idx": 0},
           {"role": "assistant", "content": "b", "turn_idx": 1}]
    table = _messages_with(_table([_ep(0), _ep(1, messages=two)]), "turn_idx",
                           lambda v: pa.array([0, 0, 2**40], pa.int64()))
    src = tmp_path / "eps.parquet"
    pq.write_table(table, src)
    ds, skipped = _skip(src)
    assert ds["episode_id"] == ["e0"]
    assert [(s.record, s.field) for s in skipped] == [("e1 (row 1)", "messages[1].turn_idx")]


def test_parquet_problems_of_cast_and_rules_come_in_row_order(tmp_path):
    table = _table([_ep(0, benchmark="nope"), _ep(1), _ep(2), _ep(3, domain=None)])
    table = _with_column(table, "rollout", pa.array([0, 2**40, 0, 0], pa.int64()))
    src = tmp_path / "eps.parquet"
    pq.write_table(table, src)
    ds, skipped = _skip(src)
    assert ds["episode_id"] == ["e2"]
    assert [(s.record, s.field) for s in skipped] == [
        ("e0 (row 0)", "benchmark"), ("e1 (row 1)", "rollout"), ("e3 (row 3)", "domain")]


def test_cast_table_returns_the_rows_that_fit():
    table = _with_column(_table([_ep(0), _ep(1)]), "rollout", pa.array([2**31, 5], pa.int64()))
    out, problems = cast_table(table, source="t")
    assert out.schema == ak.EPISODE_FEATURES.arrow_schema and out["rollout"].to_pylist() == [5]
    assert [(r, e.record, e.field) for r, e in problems] == [(0, "e0 (row 0)", "rollout")]


def test_parquet_float_column_given_as_integers_within_2_53_loads(tmp_path):
    # (user_cost, not reward: a reward must lie in [0, 1], accordkit.names.REWARD_RANGE)
    table = _with_column(_table([_ep(0), _ep(1)]), "user_cost",
                         pa.array([2**53, -3], pa.int64()))
    src = tmp_path / "eps.parquet"
    pq.write_table(table, src)
    assert ak.load(src)["user_cost"] == [float(2**53), -3.0]


# --------------------------------------------------------------------------- dictionaries


def test_pandas_categorical_columns_are_decoded(tmp_path):
    src = _jsonl(tmp_path / "eps.jsonl", [_ep(0, agent_model="m1"), _ep(1, agent_model="m2"),
                                          _ep(2, agent_model="m1")])
    df = ak.to_frame(ak.load(src, cache=False), nested="keep")
    df["agent_model"] = df["agent_model"].astype("category")
    df["domain"] = pd.Categorical(df["domain"])
    out = tmp_path / "cat.parquet"
    df.to_parquet(out)
    assert pa.types.is_dictionary(pq.read_schema(out).field("agent_model").type)
    ds = ak.load(out)
    assert ds["agent_model"] == ["m1", "m2", "m1"] and ds["domain"] == ["shop"] * 3
    assert ds.features == ak.EPISODE_FEATURES


def test_dictionary_text_inside_nested_columns_is_decoded(tmp_path):
    table = _messages_with(_table([_ep(0), _ep(1, goals=["a", "b"])]), "role",
                           lambda v: v.dictionary_encode())
    goals = pa.ListArray.from_arrays([0, 0, 2], pa.array(["a", "b"]).dictionary_encode(),
                                     mask=pa.array([True, False]))
    table = _with_column(table, "goals", goals)
    src = tmp_path / "eps.parquet"
    pq.write_table(table, src)
    assert pa.types.is_dictionary(pq.read_schema(src).field("goals").type.value_type)
    ds = ak.load(src)
    assert [m[0]["role"] for m in ds["messages"]] == ["user", "user"]
    assert ds["goals"] == [None, ["a", "b"]]


def test_polars_categorical_columns_are_decoded(tmp_path):
    pl = pytest.importorskip("polars")
    table = _table([_ep(0, agent_model="m1"), _ep(1, agent_model="m2")])
    frame = pl.from_arrow(table).with_columns(pl.col("agent_model").cast(pl.Categorical))
    src = tmp_path / "eps.parquet"
    frame.write_parquet(src)
    assert ak.load(src)["agent_model"] == ["m1", "m2"]


def test_dictionary_of_large_strings_with_unsigned_indices_is_decoded(tmp_path):
    # what polars writes for a Categorical column
    table = _table([_ep(0, agent_model="m1"), _ep(1, agent_model="m2")])
    models = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.uint32()),
                                            pa.array(["m1", "m2"], pa.large_string()))
    src = tmp_path / "eps.parquet"
    pq.write_table(_with_column(table, "agent_model", models), src)
    assert ak.load(src)["agent_model"] == ["m1", "m2"]


def test_parquet_with_huge_float_integer_is_not_a_whole_file_problem(tmp_path):
    # the dataset-wide cast of the column fails; only the row that holds the value is out
    n = 40
    rewards = np.zeros(n, dtype=np.int64)
    rewards[[3, 31]] = 2**60
    table = _with_column(_table([_ep(i) for i in range(n)]), "reward", pa.array(rewards))
    src = tmp_path / "eps.parquet"
    pq.write_table(table, src)
    ds, skipped = _skip(src)
    assert len(ds) == n - 2 and [s.record for s in skipped] == ["e3 (row 3)", "e31 (row 31)"]


# --------------------------------------------------------------------------- labels


def test_one_record_jsonl_file_names_line_1(tmp_path):
    src = _jsonl(tmp_path / "one.jsonl", [_ep(0, rollout=1.5)])
    ds, skipped = _skip(src)
    assert len(ds) == 0 and [(s.record, s.field) for s in skipped] == [("e0 (line 1)", "rollout")]
    good = _jsonl(tmp_path / "good.jsonl", [_ep(0)])
    assert ak.load(good, cache=False)["episode_id"] == ["e0"]


def test_one_record_jsonl_with_an_unknown_field_names_line_1(tmp_path):
    src = tmp_path / "one.jsonl"
    src.write_text(json.dumps({"hello": 1}) + "\n", "utf-8")
    with pytest.raises(ak.EpisodeValidationError) as exc:
        ak.load(src, cache=False)
    assert exc.value.record == "line 1" and exc.value.field == "hello"


def test_one_episode_object_in_a_json_file_is_still_item_0(tmp_path):
    src = tmp_path / "one.json"
    src.write_text(json.dumps(_ep(0, rollout=1.5)), "utf-8")
    with pytest.raises(ak.EpisodeValidationError) as exc:
        ak.load(src, cache=False)
    assert exc.value.record == "e0 (item 0)"


# --------------------------------------------------------------------------- duplicates


def test_identical_duplicates_name_the_files_and_positions_not_the_source_field(tmp_path):
    eps = [_ep(0), _ep(1)]
    first = tmp_path / "a.parquet"
    pq.write_table(_table(eps), first)
    second = _jsonl(tmp_path / "b.jsonl", [_ep(5), *eps])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = ak.load([first, second], cache=False)
    assert ds["episode_id"] == ["e0", "e1", "e5"]
    (w,) = [c.message for c in caught if isinstance(c.message, ak.DuplicateEpisodesWarning)]
    assert w.duplicates == {"e0": [f"{first} (row 0)", f"{second} (line 2)"],
                            "e1": [f"{first} (row 1)", f"{second} (line 3)"]}
    assert f"2 in {first} and {second} (e0 at row 0, line 2; e1 at row 1, line 3)" in str(w)
    assert "hand" not in str(w)
    _, report = ak.load_with_report([first, second], cache=False)
    assert report.duplicates == w.duplicates


def test_duplicate_within_one_file_names_both_lines(tmp_path):
    src = _jsonl(tmp_path / "a.jsonl", [_ep(0), _ep(1), _ep(0)])
    _, report = ak.load_with_report(src, cache=False)
    assert report.duplicates == {"e0": [f"{src} (line 1)", f"{src} (line 3)"]}
