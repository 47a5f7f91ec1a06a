"""The verdict table: schema, validation messages, parquet round trip, conversions."""

from __future__ import annotations

import json
import math

import pandas as pd
import pyarrow as pa
import pytest

from accordkit.judges.verdicts import (
    VERDICT_COLUMNS,
    attach_verdicts,
    check_verdicts,
    empty_verdicts,
    gsrt_from_verdicts,
    judge_costs,
    nl_verdicts_from_verdicts,
    read_verdicts,
    verdict_frame,
    write_verdicts,
)

from .episodes import GSRT_REPLY, acb_episode, accord_episode


def rows(*specs):
    """Verdict rows from (judge, model, episode, item, turn, verdict, error, cost) tuples."""
    cols = {c: [] for c in VERDICT_COLUMNS}
    for judge, model, eid, item, turn, verdict, error, cost in specs:
        values = {"episode_id": eid, "judge": judge, "judge_model": model, "prompt_id": judge,
                  "prompt_version": "1", "item": item, "turn_idx": turn, "verdict": verdict,
                  "raw": verdict, "error": error, "input_tokens": 10, "output_tokens": 2,
                  "cost_usd": cost, "cached_at": "2026-01-02T03:04:05+00:00"}
        for c in VERDICT_COLUMNS:
            cols[c].append(values[c])
    return verdict_frame(cols)


def test_columns_and_dtypes():
    v = empty_verdicts()
    assert tuple(v.columns) == VERDICT_COLUMNS == (
        "episode_id", "judge", "judge_model", "prompt_id", "prompt_version", "item", "turn_idx",
        "verdict", "raw", "error", "input_tokens", "output_tokens", "cost_usd", "cached_at")
    assert str(v["turn_idx"].dtype) == "Int32" and str(v["cost_usd"].dtype) == "float64"


def test_parquet_round_trip_is_identical(tmp_path):
    v = rows(("usersim_tests", "m", "e", "test000", 1, "yes", None, 0.5),
             ("gsrt", "m", "e", "shifts", None, json.dumps(json.loads(GSRT_REPLY)), None, 1.0),
             ("outcome", "m", "e", "p0", None, None, "Timeout after 10 attempt(s)", math.nan))
    path = write_verdicts(v, tmp_path / "v.parquet")
    back = read_verdicts(path)
    pd.testing.assert_frame_equal(back, v)
    write_verdicts(v, tmp_path / "w.parquet")
    assert (tmp_path / "v.parquet").read_bytes() == (tmp_path / "w.parquet").read_bytes()


@pytest.mark.parametrize("spec, match", [
    (("usersim_tests", "m", "e", "test000", 1, "maybe", None, 0.0), r"row 0, column verdict: 'maybe'"),
    (("outcome", "m", "e", "p0", None, "yes", None, 0.0), "not a outcome verdict"),
    (("gsrt", "m", "e", "shifts", None, "{}", None, 0.0), "row 0, column verdict: not valid goal"),
    (("nl_assertions", "m", "e", "0", None, None, None, 0.0), "row 0: no verdict and no error"),
    (("nl_assertions", "m", None, "0", None, "met", None, 0.0), "row 0, column episode_id"),
])
def test_one_message_per_problem(spec, match):
    with pytest.raises(ValueError, match=match):
        check_verdicts(rows(spec))


def test_missing_column_and_duplicates_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match=r"missing column\(s\) \['cached_at'\]"):
        check_verdicts(empty_verdicts().drop(columns="cached_at"))
    dup = ("usersim_tests", "m", "e", "test000", 1, "yes", None, 0.0)
    with pytest.raises(ValueError, match="duplicate rows for episode e"):
        check_verdicts(rows(dup, dup))
    with pytest.raises(FileNotFoundError, match="no verdict file"):
        read_verdicts(tmp_path / "none.parquet")


def test_judge_costs_sums_per_judge_and_model_and_keeps_unknown_prices_nan():
    v = rows(("outcome", "a", "e", "p0", None, "1", None, 0.25),
             ("outcome", "a", "e", "p1", None, "0", None, 0.5),
             ("outcome", "a", "e", "p2", None, None, "boom", math.nan),
             ("outcome", "b", "e", "p0", None, "1", None, math.nan))
    costs = judge_costs(v).set_index("judge_model")
    assert costs.loc["a", "cost_usd"] == 0.75
    assert costs.loc["a", "n_errors"] == 1 and costs.loc["a", "n_items"] == 3
    assert costs.loc["a", "input_tokens"] == 30
    assert math.isnan(costs.loc["b", "cost_usd"])


def test_gsrt_and_nl_conversions():
    v = rows(("gsrt", "m", "e1", "shifts", None, json.dumps(json.loads(GSRT_REPLY)), None, 0.0),
             ("gsrt", "m", "e2", "shifts", None, "invalid", None, 0.0),
             ("nl_assertions", "m", "e1", "1", None, "not_met", None, 0.0),
             ("nl_assertions", "m", "e1", "0", None, "met", None, 0.0),
             ("nl_assertions", "m", "e2", "0", None, "invalid", None, 0.0))
    v.loc[v["item"] == "0", "raw"] = '{"index": 0, "met": true, "justification": "ok"}'
    gs = gsrt_from_verdicts(v)
    assert list(gs) == ["e1"] and gs["e1"]["shifts"][0]["ack_turn"] == 5
    nl = nl_verdicts_from_verdicts(v, assertions={"e1": ["A0", "A1"]})
    assert nl == {"e1": [{"assertion": "A0", "met": True, "justification": "ok"},
                         {"assertion": "A1", "met": False, "justification": None}]}
    # the rule of attach_verdicts: models that agree count once, disagreeing ones need a pick
    assert list(gsrt_from_verdicts(pd.concat([v, v.assign(judge_model="n")]))) == ["e1"]
    other = json.dumps({"start_goal": {"turn": 1, "goal": "x"}, "user_goal_shifts": []})
    two = pd.concat([v, v.assign(judge_model="n", verdict=v["verdict"].where(
        v["judge"] != "gsrt", other).where(v["episode_id"] == "e1", "invalid"))],
        ignore_index=True)
    with pytest.raises(ValueError, match="conflicting gsrt verdicts for episode 'e1'") as exc:
        gsrt_from_verdicts(two)
    assert "keep the rows of one judge model and prompt version" in str(exc.value)
    assert gsrt_from_verdicts(two, judge_model="n")["e1"]["start_goal"] == "x"


# --------------------------------------------------------------------------- attach_verdicts


def _dataset(*records):
    from accordkit.schema import EPISODE_FEATURES
    from accordkit.schema.arrow import episode_dataset

    return episode_dataset(pa.Table.from_pylist(list(records),
                                                schema=EPISODE_FEATURES.arrow_schema))


def test_attach_fills_missing_fields_and_stored_values_win():
    acc = accord_episode("e1")
    acc["preferences"][1]["satisfied"] = False          # stored: wins over the verdict
    acb = acb_episode("a1")
    ds = _dataset(acc, acb)
    eid, aid = acc["episode_id"], acb["episode_id"]
    v = rows(("outcome", "m", eid, "p0", None, "1", None, 0.0),
             ("outcome", "m", eid, "p1", None, "1", None, 0.0),
             ("outcome", "m", eid, "price", None, "0", None, 0.0),
             ("outcome", "m", eid, "product_type", None, "invalid", None, 0.0),
             ("nl_assertions", "m", aid, "0", None, "met", None, 0.0),
             ("nl_assertions", "m", aid, "1", None, "not_met", None, 0.0),
             ("gsrt", "m", aid, "shifts", None, GSRT_REPLY, None, 0.0),
             ("usersim_tests", "m", eid, "test001", 1, "no", None, 0.0))
    out = attach_verdicts(ds, v)
    assert type(out) is type(ds) and out.num_rows == 2
    a, b = out[0], out[1]
    assert [p["satisfied"] for p in a["preferences"]] == [True, False]
    assert a["price_ok"] is False and a["product_type_ok"] is None   # invalid: not judged
    assert [n["met"] for n in b["nl_verdicts"]] == [True, False]
    assert b["nl_verdicts"][0]["assertion"] == acb["criteria"]["nl_assertions"][0]
    assert b["gsrt_judge"]["shifts"][0]["ack_turn"] == 5
    # The table form gives a table; the input is not modified.
    assert ds[0]["preferences"][0]["satisfied"] is None


def test_attach_rule_for_missing_and_conflicting_rows():
    acb = acb_episode("a1")
    ds = _dataset(acb)
    aid = acb["episode_id"]
    # An error row (no verdict) for one assertion: the NL set is incomplete, nothing filled.
    v = rows(("nl_assertions", "m", aid, "0", None, "met", None, 0.0),
             ("nl_assertions", "m", aid, "1", None, None, "timeout", 0.0))
    assert attach_verdicts(ds, v)[0]["nl_verdicts"] is None or \
        attach_verdicts(ds, v)[0]["nl_verdicts"] == []
    # Two models that agree count once; two that disagree need judge_model=.
    agree = rows(("gsrt", "a", aid, "shifts", None, GSRT_REPLY, None, 0.0),
                 ("gsrt", "b", aid, "shifts", None, GSRT_REPLY, None, 0.0))
    assert attach_verdicts(ds, agree)[0]["gsrt_judge"]["start_goal"] == "cards"
    other = json.dumps({"start_goal": {"turn": 1, "goal": "x"}, "user_goal_shifts": []})
    clash = rows(("gsrt", "a", aid, "shifts", None, GSRT_REPLY, None, 0.0),
                 ("gsrt", "b", aid, "shifts", None, other, None, 0.0))
    with pytest.raises(ValueError, match=r"conflicting gsrt verdicts .* \['a', 'b'\]"):
        attach_verdicts(ds, clash)
    assert attach_verdicts(ds, clash, judge_model="b")[0]["gsrt_judge"]["start_goal"] == "x"
    with pytest.raises(ValueError, match="not valid goal-shift judge output"):
        attach_verdicts(ds, rows(("gsrt", "a", aid, "shifts", None, "{}", None, 0.0)))


def test_gsrt_verdicts_reach_the_shift_frame():
    import accordkit as ak

    acb = acb_episode("a1")
    ds = _dataset(acb)
    v = rows(("gsrt", "m", acb["episode_id"], "shifts", None, GSRT_REPLY, None, 0.0))
    without = ak.score(ds, level="shift")
    shifts = ak.score(ds, level="shift", verdicts=v)
    assert len(shifts) == 1 and shifts.loc[0, "gsrt_ack"] == 1
    assert len(without) == 0 or without["gsrt_ack"].isna().all()
    episode = ak.score(ds, verdicts=v).iloc[0]
    assert episode["n_shifts"] == 1


def test_cli_score_attaches_verdicts_to_a_table_as_the_api_does(tmp_path):
    import accordkit as ak
    from accordkit.cli import main
    from accordkit.judges.verdicts import write_verdicts

    acb = acb_episode("a1")
    source = tmp_path / "episodes.jsonl"
    source.write_text(json.dumps(acb) + "\n", "utf-8")
    verdicts = write_verdicts(rows(("gsrt", "m", acb["episode_id"], "shifts", None, GSRT_REPLY,
                                    None, 0.0)), tmp_path / "v.parquet")
    out = tmp_path / "shifts.csv"
    assert main(["score", str(source), "--level", "shift", "--verdicts", str(verdicts),
                 "-o", str(out)]) == 0
    got = pd.read_csv(out)
    want = ak.score(ak.load(source, cache=False), level="shift",
                    verdicts=ak.read_verdicts(verdicts))
    assert len(got) == len(want) == 1 and got.loc[0, "gsrt_ack"] == want.loc[0, "gsrt_ack"] == 1


def test_a_rerun_file_read_with_the_first_run_keeps_the_answers(tmp_path):
    from accordkit.judges import MergeConflictError
    from accordkit.judges.verdicts import write_verdicts

    answered = rows(("gsrt", "m", "e1", "shifts", None, GSRT_REPLY, None, 0.1))
    failed = answered.assign(verdict=None, error="RateLimitError after 10 attempt(s)")
    first = write_verdicts(failed, tmp_path / "first.parquet")
    again = write_verdicts(answered, tmp_path / "again.parquet")
    both = read_verdicts([first, again])
    assert len(both) == 1 and both.loc[0, "verdict"] == GSRT_REPLY and pd.isna(both.loc[0, "error"])
    assert len(read_verdicts([again, again])) == 1             # the same file twice: once
    other = json.dumps({"start_goal": {"turn": 1, "goal": "x"}, "user_goal_shifts": []})
    clash = write_verdicts(answered.assign(verdict=other), tmp_path / "clash.parquet")
    with pytest.raises(MergeConflictError):
        read_verdicts([again, clash])
