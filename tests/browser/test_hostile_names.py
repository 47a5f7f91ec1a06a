"""A report built from result files whose names are scripts runs none of them in a browser
(issue 35, item 1): every page is opened in headless Chromium, and neither the payloads'
global nor an event-handler attribute nor a console error is found."""

from __future__ import annotations

import pytest

from tests.payloads import MARK

pytestmark = [pytest.mark.slow, pytest.mark.browser]

_HANDLERS = """() => Array.from(document.querySelectorAll('*')).flatMap(e =>
    Array.from(e.attributes).filter(a => a.name.startsWith('on'))
        .map(a => e.tagName + ' ' + a.name))"""


def test_no_payload_runs_on_any_page(hostile_report, visit):
    pages = sorted(hostile_report.glob("*.html"))
    assert len(pages) == 7
    texts = {}
    for page in pages:
        v = visit(page.as_uri())
        v.page.wait_for_timeout(300)          # image errors fire after load
        assert v.page.evaluate(f"() => window.{MARK} === undefined"), page.name
        assert v.page.evaluate(_HANDLERS) == [], page.name
        assert v.errors == [], (page.name, v.errors)
        texts[page.name] = v.page.evaluate("() => document.body.innerText")
    # the names are shown, as text
    assert "onerror=" in texts["tau2_results.html"] and "<script>" in texts["index.html"]


def test_no_payload_runs_in_a_rendered_conversation(hostile_report, visit):
    """Conversations render agent text as Markdown and a panel of checks and instructions
    (issue 36, item 4): opened, with every fold open, nothing ran."""
    pages = sorted((hostile_report / "error_analysis_pages" / "conversations").glob("*.html"))
    # every episode has a page (issue 43): those whose agent text carries the payload
    pages = [p for p in pages if "agenttext&lt;img" in p.read_text("utf-8")]
    assert pages
    for page in pages[:3]:
        v = visit(page.as_uri())
        v.page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        for link in v.page.locator(".ak-msg a").all()[:3]:
            link.click(modifiers=["Control"])     # a neutralised link goes nowhere
        v.page.wait_for_timeout(300)
        assert v.page.evaluate(f"() => window.{MARK} === undefined"), page.name
        assert v.page.evaluate(_HANDLERS) == [], page.name
        assert v.errors == [], (page.name, v.errors)
        text = v.page.evaluate("() => document.body.innerText")
        assert "agenttext<img src=x onerror=" in text and "Why it scored" in text
