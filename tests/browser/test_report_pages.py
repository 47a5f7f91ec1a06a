"""What a reader of the HTML report sees, checked in headless Chromium.

Every page of the sample report and of the released-files report opens offline with no
console error and no failed request; every link, anchor and image resolves; each notebook
page has a table of contents whose anchors exist; no table is taller than one screen
unless it is paged. A full-page screenshot of each page is written under the test's
temporary folder (kept by pytest for inspection).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

pytestmark = [pytest.mark.browser]
SCREEN_HEIGHT = 900


# sample_report and fixture_report: built once per session in tests/conftest.py (shared
# with tests/report/test_runner.py)


def _pages(report: Path) -> list[Path]:
    pages = sorted(report.glob("*.html"))
    assert any(p.name == "index.html" for p in pages)
    return pages


def _has_anchor(v, fragment: str) -> bool:
    """As a browser resolves a fragment: the id as written, then percent-decoded."""
    return v.page.evaluate("ids => ids.some(id => document.getElementById(id) !== null)",
                           [fragment, unquote(fragment)])


def _check_page(visit, page: Path, shots: Path) -> list[str]:
    """Open one page; return every problem found (empty when the page is fine)."""
    problems = []
    v = visit(page.as_uri(), viewport=(1280, SCREEN_HEIGHT))
    v.screenshot(shots / f"{page.parent.name}__{page.stem}.png")
    problems += [f"console {kind}: {text}" for kind, text in v.errors]
    problems += [f"request failed: {url}" for url in v.failed]
    for src, width in v.page.evaluate(
            "Array.from(document.images).map(i => [i.getAttribute('src').slice(0, 80),"
            " i.naturalWidth])"):
        if not width:
            problems.append(f"image does not display: {src}")
    for href in v.page.evaluate(
            "Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))"):
        parsed = urlparse(href)
        if parsed.scheme in ("http", "https", "mailto"):
            continue
        target = page if not parsed.path else (page.parent / unquote(parsed.path))
        if not target.exists():
            problems.append(f"broken link: {href}")
            continue
        if parsed.fragment and target == page:
            if not _has_anchor(v, parsed.fragment):
                problems.append(f"missing anchor: {href}")
    if page.name != "index.html":
        toc = v.page.evaluate(
            "Array.from(document.querySelectorAll('nav.ak-toc a')).map(a => a.getAttribute('href'))")
        if not toc:
            problems.append("no table of contents")
        for href in toc:
            if not _has_anchor(v, href.lstrip("#")):
                problems.append(f"contents entry without target: {href}")
        tall = v.page.evaluate(
            "Array.from(document.querySelectorAll('table'))"
            ".filter(t => !t.closest('.ak-paged') && !t.closest('details:not([open])'))"
            f".filter(t => t.getBoundingClientRect().height > {SCREEN_HEIGHT})"
            ".map(t => (t.id || '?') + ' ' + Math.round(t.getBoundingClientRect().height))")
        problems += [f"table taller than one screen and not paged: {t}" for t in tall]
    return problems


def test_every_sample_page_reads_cleanly(visit, sample_report, tmp_path):
    problems = {p.name: _check_page(visit, p, tmp_path) for p in _pages(sample_report.out)}
    assert {k: v for k, v in problems.items() if v} == {}
    assert len(list(tmp_path.glob("*.png"))) == len(problems)


def test_every_fixture_page_reads_cleanly(visit, fixture_report, tmp_path):
    problems = {p.name: _check_page(visit, p, tmp_path) for p in _pages(fixture_report.out)}
    assert {k: v for k, v in problems.items() if v} == {}


def test_long_tables_page_and_filter(visit, sample_report):
    """The paged table shows one page of rows; the filter narrows them; sorting works."""
    v = visit((sample_report.out / "goalshift_results.html").as_uri())
    box = v.page.locator(".ak-paged").first
    assert box.count() == 1
    visible = box.locator("tbody tr:visible")
    total = box.locator("tbody tr").count()
    assert total > 25 and visible.count() == 25
    box.locator("input").fill("sim-persistent")
    shown = box.locator("tbody tr:visible")
    assert 0 < shown.count() <= 25
    assert all("sim-persistent" in shown.nth(i).inner_text() for i in range(shown.count()))
    assert "filtered from" in box.locator(".ak-pager span").inner_text()
    assert v.errors == []


def test_index_leads_with_the_headline_numbers_of_results_json(visit, sample_report):
    """The numbers a reader sees first are the ones stored for scripts, and link to tables."""
    import json

    stored = json.loads((sample_report.out / "results.json").read_text())["headline"]
    assert {r["benchmark"] for r in stored} == {
        "AcCoRD", "AgentChangeBench TSR",
        "tau2 format (tau2-bench, AgentChangeBench, τ-bench)"}
    v = visit((sample_report.out / "index.html").as_uri())
    shown = v.page.evaluate(
        "Array.from(document.querySelectorAll('a.headline-value'))"
        ".map(a => [a.getAttribute('href'), a.textContent, a.dataset.estimate])")
    assert len(shown) == len(stored)
    for (href, text, raw), row in zip(shown, stored, strict=True):
        assert href == row["href"]
        assert text == f"{row['estimate']:.3f}" and float(raw) == row["estimate"]
    # each headline links to the table it was read from, which exists on its page
    page, anchor = stored[0]["href"].split("#")
    target = visit((sample_report.out / page).as_uri())
    assert target.page.evaluate("id => document.getElementById(id) !== null", anchor)
    # the headline section comes before the list of notebooks
    order = v.page.evaluate("Array.from(document.querySelectorAll('h2')).map(h => h.id)")
    assert order.index("headline") < order.index("notebooks")
    assert v.page.locator(".thumbs img").count() >= 2


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_kind_of_page_follows_the_colour_scheme(browser, sample_report, scheme):
    """The index, a notebook page and each kind of error-analysis page (all episodes, a
    cell's episodes, a conversation, a flip side by side) in the reader's colour scheme,
    with nothing refused by the policy (issue 43)."""
    out = sample_report.out
    root = out / "error_analysis_pages"
    kinds = {"index": out / "index.html",
             "notebook": out / "error_analysis.html",
             "episodes": root / "episodes.html",
             "list": next((root / "episodes").glob("*.html")),
             "conversation": next((root / "conversations").glob("*.html")),
             "flip": next((root / "flips").glob("*.html"))}
    for kind, path in kinds.items():
        page = browser.new_page(color_scheme=scheme, viewport={"width": 1280, "height": 900})
        errors = []
        page.on("console", lambda m, errors=errors: m.type == "error" and errors.append(m.text))
        page.goto(path.as_uri(), wait_until="load")
        try:
            assert errors == [], (kind, errors)
            colour = page.evaluate("getComputedStyle(document.body).backgroundColor")
            channels = [float(x) for x in colour[colour.index("(") + 1:-1].split(",")]
            if len(channels) == 4 and channels[3] == 0:   # transparent: the canvas, white
                channels = [255.0, 255.0, 255.0]
            assert (max(channels[:3]) < 60) == (scheme == "dark"), (kind, colour)
            assert page.locator("nav.ak-pages a").count() >= 2, kind
        finally:
            page.close()
