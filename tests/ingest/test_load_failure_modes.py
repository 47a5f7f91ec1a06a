"""Failure modes found by the red team (issue 11): each reproduced, each now reported.

Every test builds the input of one reproduction and checks that the problem is named (file,
record, field) and that, with ``errors="skip"``, everything else still loads.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import warnings

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import accordkit as ak
from accordkit.cli import main

from .test_load_errors import _error, _results, _sim, _skipped, _write


def _load_quiet(source, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ak.load(source, **kw)


def _good(tmp_path):
    return _write(tmp_path, _results(_sim("ok-1"), _sim("ok-2")), "good.json")


# --------------------------------------------------------------------------- item 6


def test_user_implementation_that_is_a_list_is_a_problem_not_a_crash(tmp_path):
    bad = _write(tmp_path, _results(_sim("s1"), user_info={"implementation": ["a"]}), "bad.json")
    err = _error(bad)
    assert (err.source, err.record, err.field) == (str(bad), "s1", "info.user_info.implementation")
    ds, skipped = _skipped([bad, _good(tmp_path)])
    assert sorted(ds["episode_id"]) == ["tau2/ok-1", "tau2/ok-2"]
    assert [s.source for s in skipped] == [str(bad)]


def test_nested_multi_tool_message_with_empty_inner_list_loads(tmp_path):
    sim = _sim("s1")
    sim["messages"][3] = {"role": "tool", "tool_messages": [{"role": "tool", "tool_messages": []}]}
    ds = _load_quiet(_write(tmp_path, _results(sim)))
    assert len(ds) == 1 and len(ds[0]["messages"]) == 3


def test_nested_multi_tool_message_keeps_every_result(tmp_path):
    """Item 7: the second of two nested results used to be dropped silently."""
    sim = _sim("s1")
    inner = [{"role": "tool", "id": f"c{k}", "content": f"result {k}", "error": False}
             for k in (1, 2)]
    sim["messages"][3] = {"role": "tool", "tool_messages": [
        {"role": "tool", "tool_messages": inner},
        {"role": "tool", "id": "c3", "content": "result 3", "error": False}]}
    msgs = _load_quiet(_write(tmp_path, _results(sim)))[0]["messages"]
    tools = [(m["tool_call_id"], m["content"], m["turn_idx"], m["sub_idx"]) for m in msgs
             if m["role"] == "tool"]
    assert tools == [("c1", "result 1", 3, 0), ("c2", "result 2", 3, 1), ("c3", "result 3", 3, 2)]


def _deep(depth: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(depth):
        value = {"x": value}
    return value


def _at_depth(n: int, fn):
    """Call ``fn`` ``n`` frames deeper than here (the caller's stack decides the limit)."""
    return fn() if n == 0 else _at_depth(n - 1, fn)


def test_deeply_nested_reward_info_stays_inside_its_file(tmp_path):
    deep = _sim("s1")
    deep["reward_info"]["info"] = _deep(min(980, sys.getrecursionlimit() - 60))
    bad = _write(tmp_path, _results(deep, _sim("s2")), "deep.json")
    good = _good(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = _at_depth(40, lambda: ak.load([bad, good], errors="skip"))
    assert {"tau2/ok-1", "tau2/ok-2"} <= set(ds["episode_id"])
    skipped = [s for w in caught if isinstance(w.message, ak.SkippedRecordsWarning)
               for s in w.message.skipped]
    # Either the deep record alone or the deep file as a whole is reported; never lost.
    assert len(ds) + len(skipped) >= 3
    assert all(s.source == str(bad) for s in skipped)
    if "tau2/s1" not in ds["episode_id"]:
        assert skipped and "nested too deeply" in skipped[0].reason


def test_unexpected_exception_in_one_file_becomes_a_problem_naming_it(tmp_path, monkeypatch):
    reader = sys.modules["accordkit.ingest.read"].Reading
    bad = _write(tmp_path, _results(_sim("s1")), "bad.json")
    real = reader._text

    def explode(self, input):
        source = input.name
        if source == str(bad):
            raise TypeError("unhashable type: 'list'")
        return real(self, input)

    monkeypatch.setattr(reader, "_text", explode)
    err = _error(bad)
    assert (err.source, err.record) == (str(bad), "(whole file)")
    assert "TypeError: unhashable type: 'list'" in err.reason
    ds, skipped = _skipped([bad, _good(tmp_path)])
    assert len(ds) == 2 and [s.source for s in skipped] == [str(bad)]


# --------------------------------------------------------------------------- item 8


@pytest.mark.parametrize(("field", "value", "where"), [
    ("reward", float("nan"), "reward_info.reward"),
    ("reward", float("inf"), "reward_info.reward"),
    ("agent_cost", float("nan"), "agent_cost"),
    ("user_cost", float("-inf"), "user_cost"),
])
def test_non_finite_numbers_in_results_are_problems(tmp_path, field, value, where):
    sim = _sim("s1")
    if field == "reward":
        sim["reward_info"]["reward"] = value
    else:
        sim[field] = value
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_results(sim, _sim("s2")), allow_nan=True))
    err = _error(path)
    assert (err.record, err.field) == ("s1", where) and "finite number" in err.reason
    ds, skipped = _skipped(path)
    assert list(ds["episode_id"]) == ["tau2/s2"] and len(skipped) == 1


def test_reward_1e999_is_a_problem(tmp_path):
    text = json.dumps(_results(_sim("s1"))).replace('"reward": 1.0', '"reward": 1e999')
    path = tmp_path / "run.json"
    path.write_text(text)
    err = _error(path)
    assert (err.field, err.reason) == ("reward_info.reward", "expected a finite number, got inf")


def _canonical_rows(tmp_path) -> list[dict]:
    return _load_quiet(_write(tmp_path, _results(_sim("s1"), _sim("s2")), "seed.json")).to_list()


def test_non_finite_reward_in_canonical_jsonl_names_line_and_field(tmp_path):
    rows = _canonical_rows(tmp_path)
    rows[1]["reward"] = float("nan")
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join(json.dumps(r, allow_nan=True) for r in rows) + "\n")
    err = _error(path)
    assert (err.record, err.field) == ("tau2/s2 (line 2)", "reward")


def test_non_finite_numbers_in_parquet_are_problems(tmp_path):
    rows = _canonical_rows(tmp_path)
    rows[0]["reward"] = math.inf
    rows[1]["tsr_details"] = {"overall_tsr": math.nan}
    table = pa.Table.from_pylist(rows, schema=ak.EPISODE_FEATURES.arrow_schema)
    path = tmp_path / "episodes.parquet"
    pq.write_table(table, path)
    ds, skipped = _skipped(path)
    assert len(ds) == 0
    assert [(s.record, s.field) for s in skipped] == [
        ("tau2/s1 (row 0)", "reward"), ("tau2/s2 (row 1)", "tsr_details.overall_tsr")]
    assert all("finite number" in s.reason for s in skipped)


# --------------------------------------------------------------------------- item 9


def test_task_id_missing_from_tasks_is_reported(tmp_path, capsys):
    path = _write(tmp_path, _results(_sim("s1", task_id="nope"), _sim("s2")))
    with pytest.warns(UserWarning, match=r"1 simulation\(s\) name a task id missing from "
                                         r"'tasks' \('nope'\)"):
        ds = ak.load(path)
    assert len(ds) == 2
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 note(s)" in out and "'nope'" in out


# --------------------------------------------------------------------------- item 10


@pytest.mark.parametrize("arguments", ['[1, 2]', '"text"', "3", "null"])
def test_json_text_arguments_that_are_not_objects_are_problems(tmp_path, arguments):
    sim = _sim("s1")
    sim["messages"][2]["tool_calls"][0]["arguments"] = arguments
    path = _write(tmp_path, _results(sim, _sim("s2")))
    err = _error(path)
    assert (err.record, err.field) == ("s1", "messages[2].tool_calls[0].arguments")
    assert "not an object" in err.reason
    ds, _ = _skipped(path)
    assert ak.score(ds)["episode_id"].tolist() == ["tau2/s2"]


def test_task_params_that_are_not_objects_are_problems(tmp_path):
    obj = _results(_sim("s1"))
    obj["tasks"][0]["evaluation_criteria"]["action_sets"] = [
        {"action_id": "a", "allowed_tools": [{"function_name": "f", "params": "[1]"}]}]
    err = _error(_write(tmp_path, obj))
    assert err.field == "task.evaluation_criteria.action_sets[0].allowed_tools[0].params"


def test_canonical_arguments_json_not_an_object_names_record_and_field(tmp_path):
    rows = _canonical_rows(tmp_path)
    rows[0]["messages"][2]["tool_calls"][0]["arguments_json"] = "[1, 2]"
    path = tmp_path / "episodes.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    err = _error(path)
    assert (err.record, err.field) == ("tau2/s1 (line 1)",
                                       "messages[2].tool_calls[0].arguments_json")
    table = pa.Table.from_pylist(rows, schema=ak.EPISODE_FEATURES.arrow_schema)
    pq.write_table(table, tmp_path / "episodes.parquet")
    ds, skipped = _skipped(tmp_path / "episodes.parquet")
    assert list(ds["episode_id"]) == ["tau2/s2"]
    assert [(s.record, s.field) for s in skipped] == [
        ("tau2/s1 (row 0)", "messages[2].tool_calls[0].arguments_json")]
    assert ak.score(ds)["episode_id"].tolist() == ["tau2/s2"]


# --------------------------------------------------------------------------- item 11 + stale


def test_parquet_only_folder_is_read_file_by_file(tmp_path):
    rows = _canonical_rows(tmp_path)
    folder = tmp_path / "tables"
    folder.mkdir()
    for i, row in enumerate(rows):
        pq.write_table(pa.Table.from_pylist([row], schema=ak.EPISODE_FEATURES.arrow_schema),
                       folder / f"part-{i}.parquet")
    (folder / "part-9.parquet").write_bytes(b"PAR1 this is not parquet")
    err = _error(folder)
    assert err.source == str(folder / "part-9.parquet") and "HF_HUB_OFFLINE" not in str(err)
    ds, skipped = _skipped(folder)
    assert sorted(ds["episode_id"]) == ["tau2/s1", "tau2/s2"]
    assert [s.source for s in skipped] == [str(folder / "part-9.parquet")]


def test_local_dataset_folder_is_never_served_stale(tmp_path, sample_dir):
    """A changed file in a dataset folder is seen by the next load (no stale cache)."""
    folder = tmp_path / "accord"
    shutil.copytree(sample_dir / "accord", folder)
    before = _load_quiet(folder)
    assert set(before["config"]) == {"shop", "travel"} and set(before["split"]) == {"test"}
    target = folder / "shop" / "test-00000-of-00001.parquet"
    table = pq.read_table(target)
    rewards = pc.multiply(pc.fill_null(table.column("reward"), 0.0), 0.0)
    pq.write_table(table.set_column(table.schema.get_field_index("reward"), "reward",
                                    rewards).slice(0, 5), target)
    after = _load_quiet(folder)
    shop = [r for r, c in zip(after["reward"], after["config"], strict=True) if c == "shop"]
    assert len(shop) == 5 and set(shop) == {0.0}
    assert len(after) == len(before) - (len(before.filter(lambda r: r["config"] == "shop")) - 5)


def test_dataset_folder_selects_config_and_split_from_its_card(sample_dir):
    ds = _load_quiet(sample_dir / "accord", config="travel")
    assert set(ds["config"]) == {"travel"} and len(ds) > 0
    with pytest.raises(ak.EpisodeValidationError, match="no config 'nope'"):
        _load_quiet(sample_dir / "accord", config="nope")


# --------------------------------------------------------------------------- item 12


def test_jsonl_round_trip_keeps_unicode_line_separators(tmp_path):
    sims = [_sim(f"s{i}") for i in range(4)]
    for sim, text in zip(sims, ("a\u2028b", "c\u0085d", "e\u2029f\rg", "h\x1ci"), strict=True):
        sim["messages"][1]["content"] = text
    ds = _load_quiet(_write(tmp_path, _results(*sims)))
    out = tmp_path / "episodes.jsonl"
    ak.save(ds, out)
    back = _load_quiet(out)
    assert back["episode_id"] == ds["episode_id"]
    assert [m[1]["content"] for m in back["messages"]] == [m[1]["content"]
                                                           for m in ds["messages"]]


# --------------------------------------------------------------------------- item 13


def test_one_non_utf8_byte_is_replaced_and_its_record_reported(tmp_path):
    sims = [_sim("s1"), _sim("s2")]
    sims[1]["messages"][1]["content"] = "caf\u00e9 MARK"
    path = tmp_path / "run.json"
    path.write_bytes(json.dumps(_results(*sims), indent=1).encode().replace(b"MARK", b"\xff"))
    with pytest.warns(UserWarning, match=r"not UTF-8 were replaced by U\+FFFD \(line \d+\); "
                                         r"record\(s\) affected: tau2/s2"):
        ds = ak.load(path)
    assert ds["episode_id"] == ["tau2/s1", "tau2/s2"]
    assert ds[1]["messages"][1]["content"] == "caf\u00e9 \ufffd"


def test_non_utf8_byte_in_jsonl_names_the_line(tmp_path):
    rows = _canonical_rows(tmp_path)
    rows[1]["messages"][1]["content"] = "MARK"
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(("\n".join(json.dumps(r) for r in rows) + "\n").encode()
                     .replace(b"MARK", b"\xfe"))
    with pytest.warns(UserWarning, match=r"\(line 2\); record\(s\) affected: line 2"):
        ds = ak.load(path)
    assert len(ds) == 2


def test_jsonl_whose_first_lines_are_bad_is_read_as_jsonl(tmp_path):
    rows = _canonical_rows(tmp_path)
    path = tmp_path / "episodes.jsonl"
    lines = ["{broken", "not json at all", "[1, 2", "{\"also\": ", "}}", "garbage"]
    path.write_text("\n".join(lines + [json.dumps(r) for r in rows]) + "\n")
    ds, skipped = _skipped(path)
    assert sorted(ds["episode_id"]) == ["tau2/s1", "tau2/s2"]
    assert [s.record for s in skipped] == [f"line {n}" for n in range(1, 7)]


# --------------------------------------------------------------------------- item 16


def test_duplicate_canonical_id_names_file_and_line_not_stored_source(tmp_path):
    rows = _canonical_rows(tmp_path)
    first = tmp_path / "a.jsonl"
    first.write_text(json.dumps(rows[0]) + "\n" + json.dumps(rows[1]) + "\n")
    changed = dict(rows[0], reward=0.25)
    second = tmp_path / "b.jsonl"
    second.write_text(json.dumps(rows[1]) + "\n" + json.dumps(changed) + "\n")
    err = _error([first, second])
    assert (err.source, err.record) == (str(second), "tau2/s1 (line 2)")
    assert f"also loaded from {first} (tau2/s1 (line 1)) with different content" in err.reason


# --------------------------------------------------------------------------- validate (issue 10)


def test_validate_summarises_per_file_and_caps_repeated_reasons(tmp_path, capsys):
    sims = [_sim(f"s{i}", trial="x") for i in range(7)] + [_sim("fine")]
    bad = _write(tmp_path, _results(*sims), "bad.json")
    assert main(["validate", str(bad), str(_good(tmp_path))]) == 1
    out = capsys.readouterr().out
    assert f"{bad}: 1 episode(s), 7 skipped" in out
    assert "7 x trial: expected an integer trial, got 'x'" in out
    assert out.count("field trial: expected an integer trial") == 3
    assert "... and 4 more with this reason in this file" in out
    assert "good.json: 2 episode(s), 0 skipped" in out


def test_validate_header_only_file_says_so(acb_dir, capsys):
    assert main(["validate", str(acb_dir / "retail_gpt-4.1_header-only_0sims.json")]) == 0
    out = capsys.readouterr().out
    assert "header only: 0 simulations" in out
