"""The error analysis's own pages in headless Chromium: the episodes page (search, sort,
filter, a link to a conversation and back to the list as it was left), a flip side by side,
and both colour schemes on every kind of page, with no console error (a refused script or
style is one) and no request."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..report.test_drilldown import _setup

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> Path:
    """A report folder holding the drill-down pages of six episodes (hostile names)."""
    out = tmp_path_factory.mktemp("error_analysis_pages")
    dd, episodes, _ = _setup(out)
    dd.episodes_page()
    task = episodes["scenario_id"].iloc[0]
    dd.episode_list("flip_t0", "flip", episodes.loc[episodes["scenario_id"] == task,
                                                    "episode_id"])
    for name in ("index.html", "error_analysis.html"):   # the pages the header links to
        (out / name).write_text("<!DOCTYPE html><html><head></head><body>page</body></html>")
    return out / "error_analysis_pages"


def _clean(v) -> None:
    assert v.errors == [] and v.failed == []


def _rows(v) -> list[str]:
    return v.page.evaluate(
        "Array.from(document.querySelectorAll('#ak-episodes tbody tr'))"
        ".filter(r => !r.hidden).map(r => r.cells[0].textContent)")


def test_search_sort_follow_a_conversation_and_come_back(visit, pages):
    v = visit((pages / "episodes.html").as_uri())
    _clean(v)
    assert len(_rows(v)) == 6
    assert "6 of 6 episodes shown" in v.page.inner_text("#ak-count")
    # search the transcripts: the wrong argument R9 is in the odd episodes' calls
    v.page.fill("#ak-text", "r9")
    assert len(_rows(v)) == 3
    hits = v.page.locator("#ak-hits li")
    assert hits.count() == 3 and "turn 1" in hits.first.inner_text()
    # a status search, as ak.find(status=...) answers it
    v.page.fill("#ak-text", "")
    v.page.select_option("#ak-status", "wrong_arguments")
    assert len(_rows(v)) == 3
    v.page.select_option("#ak-status", "")
    v.page.select_option("#ak-role", "user")
    v.page.fill("#ak-text", "cancel r1")
    assert len(_rows(v)) == 6
    v.page.select_option("#ak-outcome", "fail")
    assert len(_rows(v)) == 3
    # sort by trial, twice: descending
    v.page.select_option("#ak-outcome", "")
    v.page.click("#ak-episodes thead th:nth-child(5)")
    v.page.click("#ak-episodes thead th:nth-child(5)")
    trials = v.page.evaluate("Array.from(document.querySelectorAll('#ak-episodes tbody tr'))"
                             ".map(r => r.cells[4].textContent)")
    assert trials == ["5", "4", "3", "2", "1", "0"]
    assert "sort=4d" in v.page.url and "text=cancel%20r1" in v.page.url
    # to a conversation (a hit links to its turn) and back to the list as it was left
    v.page.click("#ak-hits li a >> nth=0")
    v.page.wait_for_load_state("load")
    assert "/conversations/" in v.page.url and v.page.url.endswith("#turn-0")
    assert v.page.inner_text("#ak-back") == "All episodes"
    _clean(v)
    v.page.click("#ak-back")
    v.page.wait_for_load_state("load")
    assert v.page.url.split("#")[0].endswith("/episodes.html")
    assert v.page.input_value("#ak-text") == "cancel r1"
    assert v.page.input_value("#ak-role") == "user"
    assert v.page.evaluate("document.querySelector('#ak-episodes tbody tr')"
                           ".cells[4].textContent") == "5"
    _clean(v)


def test_a_flip_opens_side_by_side_and_comes_back_to_its_list(visit, pages):
    v = visit((pages / "episodes" / "flip_t0.html").as_uri())
    _clean(v)
    v.page.click("p.ak-flip-link a")
    v.page.wait_for_load_state("load")
    assert "/flips/" in v.page.url
    heads = v.page.locator(".ak-side-head")
    assert heads.count() == 2
    left, right = (heads.nth(i).bounding_box() for i in (0, 1))
    assert right["x"] > left["x"] + left["width"] - 1 and abs(right["y"] - left["y"]) < 1
    # aligned: both sides' first divergence row starts at the same height
    line = v.page.locator(".ak-divergence").bounding_box()
    after = [v.page.locator(".ak-flip > .ak-side").nth(i).bounding_box() for i in (2, 3)]
    assert after[0]["y"] == after[1]["y"] > line["y"]
    _clean(v)
    v.page.click("#ak-back")
    v.page.wait_for_load_state("load")
    assert v.page.url.endswith("/episodes/flip_t0.html")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_kind_of_page_in_both_colour_schemes(browser, pages, scheme):
    kinds = {"episodes": pages / "episodes.html",
             "list": pages / "episodes" / "flip_t0.html",
             "conversation": next((pages / "conversations").glob("*.html")),
             "flip": next((pages / "flips").glob("*.html"))}
    for kind, path in kinds.items():
        page = browser.new_page(color_scheme=scheme, viewport={"width": 1280, "height": 900})
        errors = []
        page.on("console", lambda m, errors=errors: m.type == "error" and errors.append(m.text))
        page.goto(path.as_uri(), wait_until="load")
        try:
            assert errors == [], kind
            body = page.evaluate("getComputedStyle(document.body).backgroundColor")
            dark = body == "rgb(13, 17, 23)"
            assert dark == (scheme == "dark"), (kind, body)
            assert page.locator("nav.ak-pages a").count() >= 2, kind
            assert page.locator("nav.ak-crumbs").count() == 1, kind
            msg = page.locator(".ak-msg")
            if msg.count():
                colour = msg.first.evaluate("e => getComputedStyle(e).backgroundColor")
                channels = [int(x) for x in colour[colour.index("(") + 1:-1].split(",")[:3]]
                assert (max(channels) < 100) == (scheme == "dark"), (kind, colour)
        finally:
            page.close()
