"""ak.find: text, tool, role and status conditions, alone and together."""

from __future__ import annotations

import pandas as pd
import pytest

from accordkit.analysis.find import FIND_COLUMNS, find
from accordkit.metrics.action_diff import action_diff
from accordkit.testing import build_episode, criteria, episode_table, message


def _table():
    a = build_episode([message("user", "Please CANCEL my trip, reservation R1."),
                       message("assistant", calls=[("cancel_reservation", {"id": "R2"})]),
                       message("tool", "Cancelled R2."),
                       message("assistant", "Your trip is cancelled.")],
                      criteria=criteria(actions=[("cancel_reservation", {"id": "R1"})]),
                      benchmark="tau2", episode_id="tau2/a", task_id="ta")
    b = build_episode([message("user", "Book flight HAT001 for me."),
                       message("assistant", calls=[("get_user_details", {"user_id": "u1"}),
                                                   ("book_reservation", {"flight": "HAT001"})]),
                       message("tool", "{}"), message("tool", "{}"),
                       message("assistant", "Booked.")],
                      criteria=criteria(actions=[("book_reservation", {"flight": "HAT001"})]),
                      benchmark="tau2", episode_id="tau2/b", task_id="tb")
    return episode_table(a, b)


def test_text_is_case_insensitive_and_searches_call_arguments():
    out = find(_table(), text="cancel")
    assert list(out.columns) == FIND_COLUMNS
    assert out[["episode_id", "turn_idx"]].values.tolist() == [["tau2/a", 0], ["tau2/a", 2],
                                                               ["tau2/a", 3]]
    # R2 appears only in the arguments of the call (and in the tool reply)
    args = find(_table(), text="\"R2\"")
    assert args["turn_idx"].tolist() == [1]
    assert args.loc[0, "snippet"] == 'cancel_reservation({"id": "R2"})'
    assert args.loc[0, "tool"] == "cancel_reservation"
    assert find(_table(), text="CANCEL", case=True)["turn_idx"].tolist() == [0]
    assert find(_table(), text=r"HAT\d{3}", regex=True)["episode_id"].unique().tolist() == \
        ["tau2/b"]


def test_snippet_cuts_long_text_around_the_match():
    long = "x" * 100 + " needle " + "y" * 100
    rec = build_episode([message("user", long)], episode_id="tau2/l", benchmark="tau2")
    (snippet,) = find(episode_table(rec), text="needle")["snippet"]
    assert snippet.startswith("… ") and snippet.endswith(" …") and "needle" in snippet
    assert len(snippet) < len(long)


def test_tool_and_role_together():
    t = _table()
    assert find(t, tool="book_reservation")["turn_idx"].tolist() == [1]
    assert find(t, tool="book_reservation")["tool"].tolist() == ["book_reservation"]
    assert find(t, role="assistant", text="booked")["episode_id"].tolist() == ["tau2/b"]
    assert find(t, role="tool", tool="book_reservation").empty
    assert len(find(t, role=["user", "tool"])) == 5


def test_status_rows_and_status_with_text():
    t = _table()
    wrong = find(t, status="wrong_arguments")
    assert wrong[["episode_id", "turn_idx", "tool", "status"]].values.tolist() == \
        [["tau2/a", 1, "cancel_reservation", "wrong_arguments"]]
    assert wrong.loc[0, "snippet"] == ('cancel_reservation: id expected {"id": "R1"}, got '
                                       '{"id": "R2"}')
    # text within the episodes with a matched action only
    diff = action_diff(t)
    hits = find(t, status="matched", text="flight", actions=diff)
    assert hits["episode_id"].unique().tolist() == ["tau2/b"]
    assert hits["status"].unique().tolist() == ["matched"]
    assert find(t, status="missing", tool="cancel_reservation").empty


def test_limit_and_bad_arguments():
    assert len(find(_table(), role="tool", limit=2)) == 2
    with pytest.raises(ValueError, match="at least one of"):
        find(_table())
    with pytest.raises(ValueError, match="unknown role"):
        find(_table(), role="bot")
    with pytest.raises(ValueError, match="unknown status"):
        find(_table(), status="failed")
    with pytest.raises(ValueError, match="tool must be"):
        find(_table(), tool="")


def test_find_on_a_dataset(sample_dir):
    import accordkit as ak

    ds = ak.load(sample_dir / "goalshift")
    out = ak.find(ds, tool="transfer_to_human_agents")
    assert len(out) and set(out["tool"]) == {"transfer_to_human_agents"}
    assert isinstance(out["turn_idx"].dtype, pd.Int64Dtype)


def test_each_hit_says_its_configuration():
    """Two configurations (one with an unrecorded user model) and two benchmarks: each hit
    names its configuration as the report labels it."""
    from accordkit.tables.tau2 import with_configuration

    def ep(eid, agent, user, bench="tau2"):
        return build_episode([message("user", "cancel R1"),
                              message("assistant", calls=[("cancel_reservation", {"id": "R1"})]),
                              message("tool", "ok")],
                             criteria=criteria(actions=[("cancel_reservation", {"id": "R1"})]),
                             benchmark=bench, episode_id=eid, task_id="t",
                             agent_model=agent, user_model=user)
    table = episode_table(ep("tau2/x", "gpt-4.1", "gpt-4.1"), ep("tau2/y", "ft-4.1", None))
    hits = find(table, text="cancel", role="user")
    m = table.column("method")[0].as_py() or "?"
    u = table.column("user_implementation")[0].as_py() or "?"
    assert hits["configuration"].tolist() == [f"gpt-4.1 ({m}) | user: gpt-4.1 ({u})",
                                              f"ft-4.1 ({m}) | user: ? ({u})"]
    # the same labels as the report's tables
    frame = pd.DataFrame({c: table.column(c).to_pylist() for c in
                          ("episode_id", "benchmark", "agent_model", "method", "user_model",
                           "user_implementation")})
    labels = with_configuration(frame).set_index("episode_id")["configuration"]
    assert hits["configuration"].tolist() == [labels[e] for e in hits["episode_id"]]
    # a status search names them too
    status = find(table, status="matched")
    assert status["configuration"].tolist() == [labels[e] for e in status["episode_id"]]
    # several benchmarks: prefixed, as the report does
    mixed = episode_table(ep("tau2/x", "gpt-4.1", "gpt-4.1"),
                          ep("acb/y", "gpt-4.1", "gpt-4.1", bench="agentchangebench"))
    got = find(mixed, text="cancel", role="user")["configuration"].tolist()
    assert got[0].startswith("tau2: gpt-4.1") and got[1].startswith("agentchangebench: ")
