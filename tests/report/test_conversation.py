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


# --- conversations that say why they scored what they did (issue 36, item 4) -------------

def _tau2_episode():
    return {
        "episode_id": "tau2/e1", "scenario_id": "tau2/airline/8", "agent_model": "m",
        "method": "llm_agent", "benchmark": "tau2", "reward": 0.0, "reward_basis": ["DB"],
        "reward_info_json": json.dumps({
            "db_check": {"db_match": False},
            "action_checks": [{"action": {"name": "book", "arguments": {"id": 7}},
                               "action_match": True}],
            "communicate_checks": [{"info": "$448", "met": False}]}),
        "tsr_details": {"overall_tsr": 0.5, "action": 1.0, "nl_assertion": 0.0,
                        "communicate_info": None, "weight_action": 0.45,
                        "weight_nl_assertion": 0.3, "weight_communicate_info": 0.25,
                        "has_actions": True, "has_nl_assertions": True,
                        "has_communicate_info": False},
        "nl_verdicts": [{"assertion": "Agent is polite", "met": True,
                         "justification": "It says please."}],
        "criteria": {"actions": [{"name": "book", "arguments_json": '{"id": 7}'}],
                     "action_sets": [], "communicate_info": ["$448"], "nl_assertions": []},
        "instructions": json.dumps({"domain": "airline", "reason_for_call": "Book a flight",
                                    "task_instructions": "Pay with the certificate"}),
        "persona_text": "Terse.",
        "messages": [
            {"role": "assistant", "turn_idx": 0, "content": json.dumps(
                {"message": "Here you go:\\n\\n1. **first**\\n2. second", "confidence": 1})},
            {"role": "user", "turn_idx": 1, "content": "Switch please", "event": "GOAL_SHIFT",
             "event_json": json.dumps({"event": "GOAL_SHIFT", "seq": 1, "from_": "book",
                                       "to": "cancel", "reason": "MANUAL"})},
            {"role": "tool", "turn_idx": 2, "content": json.dumps({"rows": list(range(200))})},
        ],
    }


def test_the_scoring_panel_says_what_the_episode_scored_and_why():
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(render_conversation(_tau2_episode()).html, "html.parser")
    panel = soup.select_one("aside.ak-why")
    text = panel.get_text(" ", strip=True)
    assert "reward 0.000 (basis: DB)" in text
    assert "TSR (stored) 0.500 = action 1.000 × 0.450 + NL 0.000 × 0.300" in text
    tsr = next(li.get_text(" ") for li in panel.find_all("li") if "TSR" in li.get_text())
    assert "communicate" not in tsr                  # a channel the task does not have
    assert "✘ database matches the expected end state" in text
    assert 'expected action book({"id": 7})' in text and "✔ expected action" in text
    assert "✘ communicates $448" in text
    assert "✔ Agent is polite" in text and "It says please." in text
    assert 'book({"id": 7})' in panel.find(string="Expected actions").find_next("ul").text
    assert "task instructions : Pay with the certificate" in text and "Terse." in text
    # and in a terminal
    plain = repr(render_conversation(_tau2_episode()))
    assert "= ✘ database matches the expected end state" in plain


def test_agent_text_is_rendered_as_markdown_not_raw_json():
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(render_conversation(_tau2_episode()).html, "html.parser")
    first = soup.select(".ak-msg")[0]
    assert first.find("strong").get_text() == "first"
    assert [li.get_text() for li in first.find_all("li")] == ["first", "second"]
    assert '{"message"' not in first.get_text() and "\\n" not in first.get_text()
    assert "confidence" in first.get_text()             # the other fields, said once


def test_goal_shifts_are_said_in_words_and_tool_results_fold_open():
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(render_conversation(_tau2_episode(), max_tool_chars=50).html,
                         "html.parser")
    shift = soup.select_one(".ak-shift")
    assert shift.get_text() == "⇄ goal shift 1: book → cancel (MANUAL)"
    assert "GOAL_SHIFT" in shift["title"]                # the raw tag, on hover
    assert shift.find_next_sibling(class_="ak-msg").get_text().startswith("1user")
    tool = soup.select(".ak-msg")[-1]
    folded = tool.find("details")
    assert folded is not None and "more chars]" in folded.summary.get_text()
    assert '"rows": [' in folded.get_text() and "199" in folded.get_text()   # all of it


def test_the_look_is_inline_so_an_untrusted_notebook_keeps_it():
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(render_conversation(_tau2_episode()).html, "html.parser")
    assert soup.find("style") is None
    for msg in soup.select(".ak-msg"):
        assert "background:#" in msg["style"] and "border-left" in msg["style"]
    assert "display:flex" in soup.select_one(".ak-conv")["style"]
    assert "border" in soup.select_one(".ak-why")["style"]


def test_hostile_text_everywhere_is_shown_as_text():
    from bs4 import BeautifulSoup

    from accordkit.report.pages import strip_active_content
    from tests.payloads import MARK, payload

    ep = _tau2_episode()
    ep["messages"][0]["content"] = json.dumps({"message": payload("agent") + (
        f" [x](javascript:window.{MARK}=1) ![i](http://example.org/x.png) <b>raw</b>")})
    ep["messages"][1]["event_json"] = json.dumps({"from_": payload("from"),
                                                  "to": payload("to")})
    ep["messages"][2]["content"] = payload("tool") * 30
    ep["instructions"] = json.dumps({"task_instructions": payload("instr")})
    ep["persona_text"] = payload("persona")
    ep["nl_verdicts"] = [{"assertion": payload("nl"), "met": False,
                          "justification": payload("why")}]
    ep["criteria"]["actions"] = [{"name": payload("act"), "arguments_json": payload("args")}]
    ep["reward_info_json"] = json.dumps({"action_checks": [
        {"action": {"name": payload("check"), "arguments": {"x": payload("arg")}},
         "action_match": False}], "communicate_checks": [{"info": payload("info")}]})
    view = render_conversation(ep, max_tool_chars=40)
    soup = BeautifulSoup(view.html, "html.parser")
    assert strip_active_content(soup) == 0
    assert not soup.find_all(["img", "script", "svg"])
    assert all((a.get("href") or "").startswith(("http://", "https://", "mailto:"))
               for a in soup.find_all("a") if a.get("href"))
    text = soup.get_text(" ")
    for tag in ("agent", "from", "to", "tool", "instr", "persona", "nl", "why", "act",
                "check", "info"):
        assert f"{tag}<img src=x onerror=" in text, tag
    assert "[image: i]" in text


def test_plain_sentences_skip_the_markdown_renderer_with_the_same_html(monkeypatch):
    """A report writes every conversation: a line of plain words is one paragraph, written
    as the renderer writes it, without its cost; anything Markdown or HTML could read goes
    through the renderer."""
    import re

    from accordkit.report import markup

    plain = ["The reservation is cancelled and $448 will be refunded.", "Hello there.",
             "Note: your card ends in 0929, right?", "It's \"done\" at 5% off",
             "  padded words  ", "x/y@z"]
    marked = ["1. first", "Go to http://x.org now", "**bold** move", "a <b>tag</b>",
              "- item", "two\nlines", "R&D", "# title", "snake_case_name", "[a](b)"]
    fast = {t: markup.markdown_html(t) for t in plain + marked}
    assert all(markup._PLAIN_TEXT.fullmatch(t) for t in plain)
    assert not any(markup._PLAIN_TEXT.fullmatch(t) for t in marked)
    monkeypatch.setattr(markup, "_PLAIN_TEXT", re.compile("(?!)"))   # the renderer alone
    assert {t: markup.markdown_html(t) for t in plain + marked} == fast
