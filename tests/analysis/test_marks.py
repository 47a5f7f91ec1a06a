"""Marks on a rendered conversation: the divergence, the action diff, the review errors."""

from __future__ import annotations

import accordkit as ak
from accordkit.analysis.marks import NO_TURN, conversation_marks, merge_marks
from accordkit.ingest.formats.tau2.reviews import stored_reviews
from accordkit.metrics.action_diff import action_diff
from accordkit.metrics.reviews import reviews_from_json
from accordkit.testing import build_episode, criteria, episode_table, message


def _episode():
    return build_episode(
        [message("user", "Cancel R1"),
         message("assistant", calls=[("cancel_reservation", {"id": "R2"})]),
         message("tool", "ok"),
         message("assistant", calls=[("transfer_to_human_agents", {})]),
         message("user", "Bye")],
        criteria=criteria(actions=[("cancel_reservation", {"id": "R1"}),
                                   ("refund", {"id": "R1"})]),
        benchmark="tau2", episode_id="tau2/e1")


def _reviews():
    text = stored_reviews({"review": {"has_errors": True, "errors": [
        {"source": "agent", "severity": "critical", "error_tags": ["tool_call_argument_error"],
         "turn_idx": 1, "reasoning": "cancelled R2 instead of <b>R1</b>"},
        {"source": "user", "severity": "minor", "reasoning": "left early"}]}})
    return reviews_from_json(["tau2/e1"], [text])


def test_marks_of_an_episode():
    rec = _episode()
    marks = conversation_marks("tau2/e1", actions=action_diff(episode_table(rec)),
                               reviews=_reviews())
    assert marks[1] == ["first divergence (wrong_arguments)",
                        "wrong arguments: cancel_reservation (id)",
                        "review · agent · critical · wrong_argument: cancelled R2 instead of "
                        "<b>R1</b>"]
    assert marks[NO_TURN] == ["missing: refund", "review · user · minor · other: left early"]
    assert conversation_marks("tau2/other", actions=action_diff(episode_table(rec))) == {}
    assert merge_marks({1: ["a"]}, None, {1: ["b"], 2: ["c"]}) == {1: ["a", "b"], 2: ["c"]}


def test_show_marks_the_conversation_and_escapes_the_labels():
    rec = _episode()
    view = ak.show(rec, actions=action_diff(episode_table(rec)), reviews=_reviews())
    html = str(view)
    assert "first divergence (wrong_arguments)" in html
    assert "&lt;b&gt;R1&lt;/b&gt;" in html and "<b>R1</b>" not in html
    assert "missing: refund" in html
    text = repr(view)
    assert "    ! first divergence (wrong_arguments)" in text
    assert "! missing: refund" in text
    # by id, from the episodes
    from accordkit.schema.arrow import episode_dataset

    by_id = ak.show("tau2/e1", episodes=episode_dataset(episode_table(rec)),
                    marks={3: ["look here"]})
    assert "look here" in str(by_id)


def test_a_mark_at_a_turn_the_transcript_lacks_is_listed_not_lost():
    rec = _episode()
    view = ak.show(rec, marks={42: ["review says turn 42"], 1: ["here"]})
    assert "(turn 42) review says turn 42" in str(view)
    assert "! (turn 42) review says turn 42" in repr(view)
    assert "    ! here" in repr(view)
