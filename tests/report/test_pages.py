"""finish_page on hand-written pages: anchors, contents, notes, paging, offline scripts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from accordkit.report.pages import PASSES, finish_page
from accordkit.report.pages.finish import Draft


def _page(body: str, head: str = "") -> str:
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"


def _rows(n: int) -> str:
    return "".join(f"<tr><td>r{i}</td><td>{i}</td></tr>" for i in range(n))


def test_contents_link_sections_tables_and_figures_in_page_order():
    html = _page("<h1 id='t'>Title</h1><h2>First part</h2>"
                 "<table><caption>Main table. Estimate [95% CI]</caption>"
                 f"<thead><tr><th>a</th><th>b</th></tr></thead><tbody>{_rows(2)}</tbody></table>"
                 "<h2>Second</h2><img src='data:image/png;base64,AAAA' alt=''>")
    page, outline = finish_page(html)
    assert outline.entries == [
        ("section", "first-part", "First part", 2),
        ("table", "table-1", "Main table. Estimate [95% CI]", 4),
        ("section", "second", "Second", 2),
        ("figure", "figure-1", "figure 1: Second", 4),
    ]
    soup = BeautifulSoup(page, "html.parser")
    nav = soup.select_one("nav.ak-toc")
    assert nav.find_previous("h1").get("id") == "t"     # right after the title
    assert [a["href"] for a in nav.find_all("a")] == ["#first-part", "#table-1", "#second",
                                                       "#figure-1"]
    assert nav.find("a", href="#table-1").get_text() == "Main table"   # first sentence
    for anchor in outline.anchors:
        assert soup.find(id=anchor) is not None


def test_existing_ids_are_kept_and_duplicates_made_unique():
    html = _page("<h2 id='keep'>A</h2><h2>B</h2><h2>B</h2>")
    _, outline = finish_page(html)
    assert outline.anchors == ["keep", "b", "b-2"]


def test_stderr_output_moves_into_one_notes_box_with_back_links():
    html = _page("<h1>T</h1><div data-mime-type='application/vnd.jupyter.stderr'>"
                 "<pre>UserWarning: few clusters</pre></div>"
                 "<div class='ak-note'>cell 3 skipped: no shifts</div>")
    page, outline = finish_page(html)
    assert outline.notes == ["UserWarning: few clusters", "cell 3 skipped: no shifts"]
    soup = BeautifulSoup(page, "html.parser")
    box = soup.select_one("details.ak-notes")
    assert "Notes (2)" in box.summary.get_text()
    assert [a["href"] for a in soup.select("a.ak-note-ref")] == ["#note-1-text", "#note-2-text"]
    assert soup.find(id="note-1-text").get_text().startswith("[1] UserWarning")
    assert soup.find(attrs={"data-mime-type": "application/vnd.jupyter.stderr"}) is None


def test_only_long_tables_are_paged_and_the_script_is_inline():
    short = f"<table><tbody>{_rows(25)}</tbody></table>"
    long = f"<table><tbody>{_rows(26)}</tbody></table>"
    page, outline = finish_page(_page(short + long), page_rows=25)
    soup = BeautifulSoup(page, "html.parser")
    assert outline.paged_tables == 1
    paged = soup.select(".ak-paged")
    assert len(paged) == 1 and paged[0]["data-page-rows"] == "25"
    assert len(paged[0].find_all("tr")) == 26           # every row stays in the HTML
    scripts = soup.find_all("script")
    assert len(scripts) == 1 and not scripts[0].get("src")
    # a short table is not paged; since issue 36 it is sortable and filterable (the one
    # inline script); a page of one-row tables has nothing to sort and no script
    _, none = finish_page(_page(short), page_rows=25)
    assert none.paged_tables == 0 and none.sortable_tables == 1
    one_row = f"<table><tbody>{_rows(1)}</tbody></table>"
    assert "<script" not in finish_page(_page(one_row))[0]


def test_scripts_from_other_hosts_are_removed_local_ones_kept():
    head = ("<script src='https://cdn.example.org/require.js'></script>"
            "<script src='//cdn.example.org/mathjax.js'></script>"
            "<script src='static/local.js'></script>")
    page, _ = finish_page(_page("<p>x</p>", head))
    soup = BeautifulSoup(page, "html.parser")
    assert [s["src"] for s in soup.find_all("script", src=True)] == ["static/local.js"]


def test_csv_links_for_wrapped_tables_and_named_figures():
    html = _page("<div data-csv='tables/nb__main.csv'><table><tr><td>1</td></tr></table></div>"
                 "<img src='x.png' data-ak-figure='nb__fig' alt='a figure'>")
    page, _ = finish_page(html, downloads={"nb__fig": "tables/nb__fig.csv"})
    soup = BeautifulSoup(page, "html.parser")
    links = [a["href"] for a in soup.select(".ak-downloads a")]
    assert sorted(links) == ["tables/nb__fig.csv", "tables/nb__main.csv"]


def test_a_page_without_title_or_sections_still_gets_its_boxes():
    page, outline = finish_page(_page("<table><tr><td>1</td></tr></table>"))
    soup = BeautifulSoup(page, "html.parser")
    assert outline.anchors == ["table-1"]
    assert soup.body.contents[0].name == "nav"


# --- pages that navigate (issue 36, item 5) ------------------------------------------------

def test_every_table_of_data_is_sortable_at_any_length_and_layout_tables_are_not():
    tables = (f"<table><tbody>{_rows(2)}</tbody></table>"
              f"<div class='ak-conv'><table class='ak-head'><tbody>{_rows(3)}</tbody></table>"
              "</div>")
    page, outline = finish_page(_page(tables))
    soup = BeautifulSoup(page, "html.parser")
    assert outline.sortable_tables == 1 and outline.paged_tables == 0
    assert len(soup.select(".ak-sortable table")) == 1
    assert soup.select_one(".ak-conv").find_parent(class_="ak-sortable") is None


def test_merged_row_labels_are_repeated_on_every_row():
    table = ("<table><thead><tr><th>domain</th><th>x</th></tr></thead><tbody>"
             "<tr><th rowspan='2' id='T_row0'>airline</th><td>1</td></tr><tr><td>2</td></tr>"
             "<tr><th>retail</th><td>3</td></tr></tbody></table>")
    soup = BeautifulSoup(finish_page(_page(table))[0], "html.parser")
    rows = [[c.get_text() for c in tr.find_all(["th", "td"])] for tr in soup.tbody("tr")]
    assert rows == [["airline", "1"], ["airline", "2"], ["retail", "3"]]
    assert len(soup.find_all(id="T_row0")) == 1 and soup.select(".ak-repeat")


def test_configuration_labels_are_short_with_the_full_label_on_hover():
    full = ["m1 (llm_agent) | user: u (user_simulator)",
            "m2 (llm_agent) | user: u (user_simulator)"]
    table = ("<div data-ak-table='t'><table><tbody>"
             + "".join(f"<tr><th>{f}</th><td>0.5</td></tr>" for f in full)
             + "</tbody></table></div>")
    soup = BeautifulSoup(finish_page(_page(table))[0], "html.parser")
    spans = soup.select("span.ak-short")
    assert [(s.get_text(), s["title"]) for s in spans] == [("m1", full[0]), ("m2", full[1])]
    assert "agent implementation llm_agent; user u (user_simulator)" in \
        soup.select_one(".ak-shared").get_text()


def test_a_header_links_every_page_and_the_one_provenance_line():
    pages = [("index.html", "accordkit report"), ("a.html", "A results"),
             ("b.html", "B <results>")]
    page, _ = finish_page(_page("<h1>A</h1><p>x</p>"), pages=pages, current="a.html",
                          provenance="accordkit 0.1.0; seed=0", provenance_href="provenance.json")
    soup = BeautifulSoup(page, "html.parser")
    nav = soup.body.contents[0]
    assert nav.name == "nav" and "ak-pages" in nav["class"]
    assert [(a["href"], a.get_text()) for a in nav("a")] == pages
    assert nav.find("a", attrs={"aria-current": "page"})["href"] == "a.html"
    line = soup.select(".ak-provenance")
    assert len(line) == 1 and "accordkit 0.1.0; seed=0" in line[0].get_text()
    assert line[0].a["href"] == "provenance.json"


def test_the_header_marks_the_current_page_on_a_page_with_contents():
    """The contents box is built before the header: the page's own link is still marked
    (the contents' list once took the name of the current page, and no page with a
    section, table or figure marked its link)."""
    pages = [("index.html", "Report"), ("a.html", "A"), ("b.html", "B")]
    page, outline = finish_page(_page("<h1>A</h1><h2>S</h2><table><tr><td>1</td></tr></table>"),
                                pages=pages, current="a.html")
    nav = BeautifulSoup(page, "html.parser").select_one("nav.ak-pages")
    assert outline.anchors == ["s", "table-1"]
    assert [a["href"] for a in nav.find_all("a", attrs={"aria-current": "page"})] == ["a.html"]


def test_the_page_follows_a_dark_colour_scheme():
    page, _ = finish_page(_page("<p>x</p>"))
    style = BeautifulSoup(page, "html.parser").head.style.string
    assert "@media (prefers-color-scheme: dark)" in style and "--jp-layout-color0:#0d1117" in style


def _policy(soup) -> dict[str, list[str]]:
    meta = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})
    assert soup.head.contents[0] is meta, "the policy comes first in the head"
    return {d.split()[0]: d.split()[1:] for d in meta["content"].split("; ")}


def test_no_inline_style_is_trusted_and_images_are_embedded_only():
    # the reproduction: style-src 'unsafe-inline' let an escaping slip lay a box of fake
    # numbers over the real ones; img-src file: let a page show any file of the disk
    import base64
    import hashlib

    overlay = ("position:fixed;top:0;left:0;z-index:9;background:#fff;"
               "transform:translate(0,0);margin:-300px 0 0 0;box-shadow:0 0 0 999px #fff")
    html = _page(f"<h1>R</h1><div style='{overlay};color:#b00020'>0.99</div>"
                 "<p style='margin:4px 0;font-weight:600'>kept</p>"
                 "<style>td{visibility:hidden}</style>"
                 f"<table><thead><tr style='text-align: right;'><th>a</th></tr></thead>"
                 f"<tbody>{_rows(2)}</tbody></table>",
                 head="<style>body{margin:0}</style>")
    page, _ = finish_page(html)
    soup = BeautifulSoup(page, "html.parser")
    policy = _policy(soup)
    assert "'unsafe-inline'" not in policy["style-src"] and "'unsafe-hashes'" not in \
        policy["style-src"]
    assert policy["img-src"] == ["data:"] and policy["font-src"] == ["data:"]
    assert "file:" not in page.split("<body")[0]
    styles = [t.string for t in soup.find_all("style")]
    assert all(t.find_parent("head") for t in soup.find_all("style"))
    assert sorted(policy["style-src"]) == sorted(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in styles)
    assert not soup.find_all(style=True), "no style attribute is left to be refused"
    assert "visibility" not in page     # an output's own <style> is gone
    generated, body = styles[-1], str(soup.body)
    assert generated.startswith(".ak-s-")
    for word in ("position", "z-index", "transform", "-300px", "box-shadow", "top:0"):
        assert word not in generated and word not in body, word
    box = soup.find(string="0.99").parent
    (name,) = [c for c in box["class"] if c.startswith("ak-s-")]
    assert f".{name}{{background:#fff!important;color:#b00020!important}}" in page
    kept = soup.find(string="kept").parent
    assert any(c.startswith("ak-s-") for c in kept["class"])


def test_safe_declarations_keep_only_what_stays_in_its_box():
    from accordkit.report.pages import safe_declarations

    assert safe_declarations("display:flex;gap:14px;flex-wrap:wrap") == \
        "display:flex;gap:14px;flex-wrap:wrap"
    expected = {"display:none": "", "background:url(file:///etc/passwd)": "",
                "color:var(--x)": "", "width:calc(100% + 9px)": "", "margin-left:-.5em": "",
                "float:left": "", "inset:0": "", "content:'1.00'": "",
                "font-size:12px!important": "", "color:red;}p{color:blue": "color:red",
                "background-image:image-set('x.png' 1x)": "",
                "text-shadow:200px 0 #000": "", "opacity:0": ""}
    assert {bad: safe_declarations(bad) for bad in expected} == expected


def test_pages_written_outside_finish_page_are_sealed_too(tmp_path):
    from accordkit.report.drilldown import PAGE_STYLE
    from accordkit.report.drilldown import _page as drill_page

    page = drill_page("Conversation <x>", "<div style='position:absolute;color:red'>n</div>")
    soup = BeautifulSoup(page, "html.parser")
    policy = _policy(soup)
    assert "'unsafe-inline'" not in policy["style-src"] and len(policy["style-src"]) == 2
    assert PAGE_STYLE in [t.string for t in soup.find_all("style")][0]
    assert not soup.find_all(style=True) and "position:absolute" not in page


def _sealed_by_the_tree(html: str) -> str:
    from accordkit.report.pages.seal import _seal

    soup = BeautifulSoup(html, "html.parser")
    _seal(soup, own_scripts_only=True)   # as seal_page seals a page accordkit writes
    return str(soup)


def test_a_page_is_sealed_token_by_token_to_the_same_bytes_as_the_tree(monkeypatch):
    from accordkit.report import drilldown, pages
    from accordkit.report.conversation import render_conversation
    from accordkit.report.drilldown import BACK_SCRIPT, _page
    from accordkit.report.pages import seal as sealing
    from tests.payloads import payload
    from tests.report.test_conversation import _tau2_episode

    ep = _tau2_episode()
    ep["messages"][0]["content"] = json.dumps({"message": payload("agent") + (
        " **bold** 'q' \"dq\" a & b > c [x](https://example.org/?a=1&b=2)")})
    ep["messages"][2]["content"] = payload("tool") * 30
    ep["persona_text"] = payload("persona") + " it's \"quoted\""
    body = render_conversation(ep, max_tool_chars=40, anchors=True).html
    body += ("<details open><summary title='say \"hi\"'>s</summary><br><img src=\"data:,\"/>"
             "<p class=' a  b ' style=\"color:red;position:fixed\">x &#x27; &quot;</p>"
             "<span style='position:fixed'>gone</span><a rel=' noopener  nofollow' href='#m'>l</a>"
             "<td headers='a   b'>c</td></details>")
    monkeypatch.setattr(drilldown, "seal_page", lambda page: page)   # the page as given
    html = _page("Conversation <x> & 'y'", body, nav=[("../index.html", "Report index")],
                 crumbs=[("../episodes.html", "All episodes"), (None, "x")],
                 scripts=[BACK_SCRIPT], back="../episodes.html")
    html = html.replace("</main>", "</main><script id='d' type='application/json'>"
                                   '{"a": "<b>"}</script><script type="module">'
                                   f"{pages.PAGE_SCRIPT}</script>")
    flat = sealing._seal_flat(html)
    assert flat == _sealed_by_the_tree(html)
    assert "style=" not in flat and flat.count("ak-s-") > 10
    assert len(_policy(BeautifulSoup(flat, "html.parser"))["script-src"]) == 2
    raw = html.replace("<details open>", "<details open style='color:blue'>")
    assert sealing._seal_flat(raw) == _sealed_by_the_tree(raw)


def test_a_page_the_tokens_do_not_cover_takes_the_tree():
    from accordkit.report import pages
    from accordkit.report.pages import seal as sealing

    head = ('<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title>'
            "<style>p{color:red}</style></head><body>")
    for odd in ("<!-- c -->", "<style>p{}</style>", "a &nbsp; b", "</div>", "<div/>",
                "<p a=1>x</p>", "<script src='x.js'></script>",
                "<p style='color:red' style='color:blue'>x</p>", "a < b"):
        html = head + odd + "</body></html>"
        with pytest.raises(sealing._Unusual):
            sealing._seal_flat(html)
        assert pages.seal_page(html) == _sealed_by_the_tree(html)


def test_tables_of_two_line_rows_page_at_half_the_rows():
    """A taxonomy cell is an estimate over its interval (two lines): such a table pages at
    half the rows, so that it stays within one screen (issue 43)."""
    def table(n, cell):
        rows = "".join(f"<tr><th>r{i}</th><td>{cell}</td></tr>" for i in range(n))
        return (f"<html><head></head><body><h1>P</h1><h2>S</h2><table><thead><tr><th>a</th>"
                f"<th>b</th></tr></thead><tbody>{rows}</tbody></table></body></html>")

    two = '0.500<br><span class="ak-ci">[0.4, 0.6]</span>'
    page, outline = finish_page(table(13, two), page_rows=25)
    assert outline.paged_tables == 1 and 'data-page-rows="12"' in page
    _, outline = finish_page(table(12, two), page_rows=25)
    assert outline.paged_tables == 0
    _, outline = finish_page(table(13, "0.500 [0.4, 0.6]"), page_rows=25)
    assert outline.paged_tables == 0


def test_a_page_accordkit_writes_runs_only_its_own_scripts():
    """A script that reached a drill-down page's HTML through an escaping slip is removed,
    whether the page is sealed token by token or through the tree, and the policy names
    only accordkit's own scripts (issue 41, the pages' second line)."""
    import base64
    import hashlib

    from accordkit.report.drilldown import BACK_SCRIPT
    from accordkit.report.pages import PAGE_SCRIPT, seal_page

    def sha(text):
        return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    hostile = "alert(document.cookie)"
    for extra in ("", "<!-- a comment: the tree path -->"):
        page = ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>"
                f"<p>{extra}x</p><script>{hostile}</script><script>{PAGE_SCRIPT}</script>"
                f"<script src=\"evil.js\"></script><script>{BACK_SCRIPT}</script>"
                '<script type="application/json" id="d">{"a": 1}</script></body></html>')
        sealed = seal_page(page)
        soup = BeautifulSoup(sealed, "html.parser")
        bodies = [t.string or "" for t in soup.find_all("script")]
        assert hostile not in sealed and "evil.js" not in sealed
        assert PAGE_SCRIPT in bodies and BACK_SCRIPT in bodies and '{"a": 1}' in bodies
        policy = soup.find("meta", attrs={"http-equiv": "Content-Security-Policy"})["content"]
        assert sha(PAGE_SCRIPT) in policy and sha(BACK_SCRIPT) in policy
        assert sha(hostile) not in policy


def _documented_passes() -> list[str]:
    """The passes docs/report.md lists under "How a page is finished", in its order."""
    text = (Path(__file__).parents[2] / "docs" / "report.md").read_text(encoding="utf-8")
    section = text.split("### How a page is finished", 1)[1].split("\n#", 1)[0]
    return re.findall(r"^\d+\. `(\w+)`:", section, flags=re.MULTILINE)


def test_the_passes_and_their_order_are_what_the_docs_say():
    names = [step.__name__ for step in PASSES]
    assert names == _documented_passes()
    assert names[:2] == ["drop_remote_scripts", "strip_body"]   # before anything is read
    assert names[-1] == "declare_policy"   # sealing sees every script and style added
    assert all(step.__doc__ and step.__doc__.strip() for step in PASSES)


def test_finish_page_is_its_passes_run_in_order():
    """A page finished pass by pass, each named, is the page finish_page writes; after
    ``strip_body`` the notebook's script is gone, and only ``declare_policy`` adds the
    policy."""
    html = _page("<h1>T</h1><h2>S</h2><script>alert(1)</script><table><tbody>"
                 f"{_rows(30)}</tbody></table>"
                 "<div data-mime-type='application/vnd.jupyter.stderr'>careful</div>")
    page = Draft(BeautifulSoup(html, "html.parser"), pages=[("index.html", "R")])
    seen = {}
    for step in PASSES:
        step(page)
        seen[step.__name__] = str(page.soup)
    assert "alert(1)" in html and "alert(1)" not in seen["strip_body"]
    assert "Content-Security-Policy" not in seen["add_style_and_script"]
    assert "Content-Security-Policy" in seen["declare_policy"]
    assert 'data-page-rows="25"' in seen["shape_tables"] and 'id="s"' in seen["anchor_parts"]
    assert (str(page.soup), page.outline) == finish_page(html, pages=[("index.html", "R")])
    assert page.outline.notes == ["careful"] and page.outline.paged_tables == 1
