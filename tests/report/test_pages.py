"""finish_page on hand-written pages: anchors, contents, notes, paging, offline scripts."""

from __future__ import annotations

from bs4 import BeautifulSoup

from accordkit.report.pages import finish_page


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
    _, none = finish_page(_page(short), page_rows=25)
    assert none.paged_tables == 0 and "<script" not in finish_page(_page(short))[0]


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
