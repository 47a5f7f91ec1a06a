import json

from accordkit.report.conversation import render_conversation


def _episode():
    return {
        "episode_id": "agentchangebench/x", "scenario_id": "s", "agent_model": "m",
        "method": "llm_agent", "goals": ["cards", "dispute"],
        "messages": [
            {"role": "assistant", "content": "Hi <there>", "turn_idx": 0, "tool_calls": None},
            {"role": "user", "content": "Now a dispute please", "turn_idx": 1,
             "event": "GOAL_SHIFT", "event_json": json.dumps({"to": "dispute", "raw": "x"})},
            {"role": "assistant", "content": None, "turn_idx": 2, "tool_calls": [
                {"id": "c1", "name": "file_dispute", "arguments_json": '{"id": 1}'}]},
            {"role": "tool", "content": "Error: " + "x" * 50, "turn_idx": 3, "error": True},
        ],
        "gsrt_judge": {"start_turn": 0, "start_goal": "cards", "shifts": [
            {"turn": 1, "from_goal": "cards", "to_goal": "dispute", "ack_turn": 2,
             "tool_turn": 2, "outcome_turn": None, "transferred": False}]},
    }


def test_text_is_escaped():
    html = render_conversation(_episode()).html
    assert "Hi &lt;there&gt;" in html and "<there>" not in html


def test_tool_calls_events_and_judge_marks_are_shown():
    html = render_conversation(_episode()).html
    assert "file_dispute(" in html
    assert "GOAL_SHIFT to=dispute" in html
    assert "shift 1: cards → dispute · agent acknowledges" in html
    assert "ak-err" in html


def test_long_tool_results_are_cut_with_length():
    html = render_conversation(_episode(), max_tool_chars=10).html
    assert "more chars]" in html


def test_preferences_are_listed():
    ep = _episode()
    ep["preferences"] = [{"name": "color", "value": "red", "dynamic": "triggered",
                          "trigger": "crimson", "satisfied": False}]
    html = render_conversation(ep).html
    assert "<b>color</b> = red" in html and "trigger crimson" in html
