"""ak.show: conversations by id, by scores row and by record; summary tables."""

from __future__ import annotations

import re

import pytest

import accordkit as ak
from accordkit.show import find_episode, show


@pytest.fixture(scope="module")
def goalshift(sample_dir):
    return ak.load(str(sample_dir / "goalshift"))


def test_by_id_by_scores_row_and_by_record_render_the_same_conversation(goalshift):
    scores = ak.score(goalshift)
    row = scores.iloc[5]
    by_row = str(show(row, episodes=goalshift))
    by_id = str(show(row["episode_id"], episodes=goalshift))
    record = find_episode(goalshift, row["episode_id"])
    assert by_row == by_id == str(show(record))
    assert record["episode_id"] == row["episode_id"]
    # roles, tool calls and goal-shift marks as the report renders them
    assert "ak-user" in by_id and "ak-assistant" in by_id
    assert "ak-call" in by_id
    if record["gsrt_judge"] and record["gsrt_judge"]["shifts"]:
        assert "user shifts goal" in by_id
    assert show(row, episodes=goalshift)._repr_html_() == by_row


def test_looks_up_in_a_frame_too(goalshift):
    frame = ak.to_frame(goalshift, nested="keep")
    eid = frame["episode_id"].iloc[3]
    assert str(show(eid, episodes=frame)) == str(show(eid, episodes=goalshift))
    with pytest.raises(TypeError, match="nested='keep'"):
        show(eid, episodes=ak.to_frame(goalshift))


def test_accord_preferences_are_listed(sample_dir):
    ds = ak.load(str(sample_dir / "accord"))
    html = str(show(ds[0]))
    assert "preferences" in html and ds[0]["preferences"][0]["name"] in html


def test_unknown_id_and_missing_episodes_say_what_to_do(goalshift):
    with pytest.raises(KeyError, match="no episode with episode_id 'nope' among 216"):
        show("nope", episodes=goalshift)
    with pytest.raises(TypeError, match=r"episodes=ds"):
        show("some-id")
    with pytest.raises(TypeError, match="episode_id, a scores row"):
        show(42)


def test_summary_tables_render_as_in_the_report(sample_dir):
    ds = ak.load(str(sample_dir / "accord"))
    table = ak.summarize(ak.score(ds), ["task_score"], by=["agent_model", "method"],
                         n_resamples=50, seed=1)
    html = str(show(table))
    expected = ak.format_table(table, rows=["agent_model", "method"], columns="metric",
                               fmt="html")
    def strip_ids(text):
        return re.sub(r"T_[0-9a-f]+", "T_", text)

    assert strip_ids(html) == strip_ids(expected)
    first = table.iloc[0]
    assert f"{first['estimate']:.3f}" in html
    with pytest.raises(TypeError, match="ak.summarize / ak.compare"):
        show(ak.score(ds))


def test_a_terminal_repr_is_the_plain_conversation_or_table():
    import pandas as pd

    import accordkit as ak

    ep = {"episode_id": "e1", "messages": [
        {"role": "user", "content": "I need a flight", "turn_idx": 0},
        {"role": "assistant", "content": "", "turn_idx": 1,
         "tool_calls": [{"name": "search", "arguments_json": '{"to": "LIS"}'}]}]}
    text = repr(ak.show(ep))
    assert "[0] user: I need a flight" in text and '→ search({"to": "LIS"})' in text
    assert "<div" not in text and "object at 0x" not in text
    table = ak.summarize(pd.DataFrame({"scenario_id": list("abcd"), "x": [1.0, 0, 1, 1]}), "x",
                         n_resamples=100)
    shown = repr(ak.show(table))
    assert shown.startswith("|") and "0.750 [" in shown           # the mean, with its interval
