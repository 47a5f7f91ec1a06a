"""Finishing one exported notebook page: :func:`finish_page` runs :data:`PASSES`, a list of
small named passes, in order, over the page's tree (a :class:`Draft`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .assets import DARK_CSS, PAGE_CSS, PAGE_SCRIPT
from .policy import strip_active_content
from .seal import _seal
from .table_rows import NOT_DATA_TABLES, repeat_row_labels, shorten_configurations

__all__ = ["finish_page", "PageOutline", "Draft", "PASSES", "pages_header"]

#: A ``src`` on this machine (no scheme, no ``//host``).
_LOCAL_SRC = re.compile(r"^(?!(?:[a-z][a-z0-9+.-]*:)?//)", re.IGNORECASE)


@dataclass
class PageOutline:
    """What :func:`finish_page` found: anchors in page order, and the notes it moved."""

    entries: list[tuple[str, str, str, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    paged_tables: int = 0
    sortable_tables: int = 0

    @property
    def anchors(self) -> list[str]:
        """Every anchor id the table of contents links to."""
        return [e[1] for e in self.entries]


def _slug(text: str, used: set[str], prefix: str = "") -> str:
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]
    base = prefix + words if (prefix or words) else "item"
    slug, n = base, 2
    while slug in used:
        slug, n = f"{base}-{n}", n + 1
    used.add(slug)
    return slug


def _short(label: str, limit: int = 90) -> str:
    """First sentence of a caption, cut to ``limit`` characters."""
    first = re.split(r"(?<=[a-z0-9)])\. ", label, maxsplit=1)[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"


def nav_empty_lists(ol):
    """Nested lists of the contents box that stayed empty."""
    return [sub for sub in ol.find_all("ol") if not sub.find("li")]


def _label_of_table(table) -> str:
    caption = table.find("caption")
    if caption and caption.get_text(strip=True):
        return caption.get_text(" ", strip=True)
    heads = [th.get_text(" ", strip=True) for th in table.find_all("th")[:4]]
    return "table of " + ", ".join(h for h in heads if h) if any(heads) else "table"


def _figure_label(img, index: int) -> str:
    alt = (img.get("alt") or "").strip()
    if alt and alt.lower() not in ("no description has been provided for this image", "png"):
        return alt
    # the nearest heading above the figure names it best
    heading = img.find_previous(["h2", "h3"])
    text = heading.get_text(" ", strip=True).rstrip("¶").strip() if heading else ""
    return f"figure {index}" + (f": {text}" if text else "")



@dataclass
class Draft:
    """A page between two passes of :func:`finish_page`: its tree, what the passes found so
    far, and the options the page was finished with."""

    soup: Any
    page_rows: int = 25
    downloads: dict[str, str] = field(default_factory=dict)
    pages: Sequence[tuple[str, str]] = ()
    current: str | None = None
    provenance: str | None = None
    provenance_href: str | None = None
    outline: PageOutline = field(default_factory=PageOutline)
    #: Sections, tables and figures in page order (kind, tag, label; a figure's label is
    #: read when it is anchored), as :func:`find_parts` found them.
    parts: list[tuple[str, Any, str]] = field(default_factory=list)
    #: The tables among :attr:`parts` that hold data (sorted, paged, shortened).
    data_tables: list[Any] = field(default_factory=list)
    #: Each figure and its label, as :func:`anchor_parts` named it.
    figures: list[tuple[Any, str]] = field(default_factory=list)
    #: Every id the page held before any pass ran, and each anchor given since.
    used: set[str] = field(init=False)

    def __post_init__(self) -> None:
        self.used = {tag["id"] for tag in self.soup.find_all(id=True)}

    @property
    def body(self):
        """The page's ``<body>`` (the whole tree for a fragment without one)."""
        return self.soup.body or self.soup


def drop_remote_scripts(page: Draft) -> None:
    """Nothing is fetched from elsewhere: remove every ``<script src=...>`` that points off
    the machine (nbconvert's require.js and MathJax from a CDN); local ones stay."""
    for script in page.soup.find_all("script", src=True):
        if not _LOCAL_SRC.match(script["src"]):
            script.decompose()


def strip_body(page: Draft) -> None:
    """Nothing in the body runs: remove every script, frame, object and embed, event-handler
    attribute and ``javascript:`` link the notebook's outputs hold
    (:func:`~.policy.strip_active_content`). The page's own script comes later
    (:func:`add_style_and_script`)."""
    strip_active_content(page.body)


def find_parts(page: Draft) -> None:
    """Find the page's sections (``h2``, ``h3`` with text), tables and figures in page
    order, and the tables among them that hold data. A table is named here by its caption
    or first header cells, before :func:`shape_tables` repeats or shortens them; a table
    inside another or in a layout box (contents, conversation, header) is no table of data."""
    for tag in page.body.find_all(["h2", "h3", "table", "img"]):
        if tag.name in ("h2", "h3"):
            label = tag.get_text(" ", strip=True).rstrip("¶").strip()
            if label:
                page.parts.append(("section", tag, label))
        elif tag.name == "table":
            if tag.find_parent("table") or tag.find_parent(class_="ak-toc"):
                continue
            page.parts.append(("table", tag, _label_of_table(tag)))
            if tag.find_parent(class_=NOT_DATA_TABLES) is None:
                page.data_tables.append(tag)
        else:
            page.parts.append(("figure", tag, ""))


def shape_tables(page: Draft) -> None:
    """Make every table of data readable when sorted or filtered, and sortable: a row label
    merged over several rows is repeated on each, configuration labels are cut to what
    tells the rows apart, and the table goes in an ``ak-sortable`` box, paged
    (``ak-paged``) when it has more than ``page_rows`` body rows (half as many when its
    rows are an estimate over its interval, two lines each)."""
    soup, outline = page.soup, page.outline
    for table in page.data_tables:
        repeat_row_labels(table)
        shorten_configurations(soup, table)
        rows = table.tbody.find_all("tr", recursive=False) if table.tbody else []
        limit = max(page.page_rows // 2, 1) if table.find(class_="ak-ci") else page.page_rows
        if len(rows) > limit:
            box = soup.new_tag("div", attrs={"class": "ak-sortable ak-paged ak-scroll",
                                             "data-page-rows": str(limit)})
            table.wrap(box)
            outline.paged_tables += 1
            outline.sortable_tables += 1
        elif len(rows) > 1:
            table.wrap(soup.new_tag("div", attrs={"class": "ak-sortable"}))
            outline.sortable_tables += 1


def anchor_parts(page: Draft) -> None:
    """Give every section, table and figure a stable anchor and an entry of the outline, in
    page order. An id the page has is kept (a table's or figure's wrapper id first);
    pandas' generated ``T_...`` ids are replaced. A figure is named by its ``alt`` text or
    the nearest heading above it, the name also becoming its ``alt`` when it had none."""
    outline, used = page.outline, page.used
    n_table = n_figure = 0
    for kind, tag, label in page.parts:
        if kind == "section":
            if not tag.get("id"):
                tag["id"] = _slug(label, used)
            outline.entries.append(("section", tag["id"], label, int(tag.name[1])))
        elif kind == "table":
            n_table += 1
            holder = tag.find_parent(attrs={"data-ak-table": True})
            if holder is not None and holder.get("id"):
                anchor = holder["id"]
            else:
                if not tag.get("id") or tag["id"].startswith("T_"):
                    tag["id"] = _slug("", used, prefix=f"table-{n_table}")
                anchor = tag["id"]
            outline.entries.append(("table", anchor, label, 4))
        else:
            n_figure += 1
            holder = tag.find_parent("figure")
            if holder is not None and holder.get("id"):
                anchor = holder["id"]
            else:
                if not tag.get("id"):
                    tag["id"] = _slug("", used, prefix=f"figure-{n_figure}")
                anchor = tag["id"]
            label = _figure_label(tag, n_figure)
            if not (tag.get("alt") or "").strip() or tag.get("alt", "").startswith("No descr"):
                tag["alt"] = label
            outline.entries.append(("figure", anchor, label, 4))
            page.figures.append((tag, label))


def link_downloads(page: Draft) -> None:
    """Put a CSV link under each figure ``downloads`` names (by its ``data-ak-figure`` name
    or its label), and in each wrapper whose ``data-csv`` says where its table's data is
    (unless a link is there already)."""
    soup = page.soup
    for img, label in page.figures:
        csv = page.downloads.get(img.get("data-ak-figure", "")) or page.downloads.get(label)
        if csv:
            link = soup.new_tag("div", attrs={"class": "ak-downloads"})
            a = soup.new_tag("a", href=csv, download="")
            a.string = "data behind this figure (CSV)"
            link.append(a)
            img.insert_after(link)
    for wrapper in page.body.find_all(attrs={"data-csv": True}):
        if wrapper.find(class_="ak-downloads", recursive=False):
            continue
        link = soup.new_tag("div", attrs={"class": "ak-downloads"})
        a = soup.new_tag("a", href=wrapper["data-csv"], download="")
        a.string = "table as CSV"
        link.append(a)
        wrapper.append(link)


def gather_notes(page: Draft) -> None:
    """Move what a cell printed to stderr, and every element marked ``ak-note``, into the
    outline's notes, leaving a numbered link ``[note k]`` where each was; an empty one is
    removed."""
    body, outline = page.body, page.outline
    notes = body.find_all(attrs={"data-mime-type": "application/vnd.jupyter.stderr"})
    notes += body.find_all(class_="ak-note")
    for node in notes:
        text = node.get_text("\n", strip=True)
        if not text:
            node.decompose()
            continue
        k = len(outline.notes) + 1
        marker = page.soup.new_tag("a", href=f"#note-{k}-text", id=f"note-{k}",
                                   attrs={"class": "ak-note-ref"})
        marker.string = f"[note {k}]"
        node.replace_with(marker)
        outline.notes.append(text)


def place_boxes(page: Draft) -> None:
    """Put the contents box (``nav.ak-toc``: sections, and under each its tables and
    figures) and the notes box (``details.ak-notes``) right after the page title, or first
    in a page without one."""
    soup, body, outline = page.soup, page.body, page.outline
    title = body.find("h1")
    boxes = []
    if outline.entries:
        nav = soup.new_tag("nav", attrs={"class": "ak-toc", "aria-label": "contents"})
        head = soup.new_tag("strong")
        head.string = "Contents"
        nav.append(head)
        ol = soup.new_tag("ol")
        under = ol   # the list of the section being filled
        for kind, anchor, label, _level in outline.entries:
            li = soup.new_tag("li")
            if kind != "section":
                span = soup.new_tag("span", attrs={"class": "ak-toc-kind"})
                span.string = kind
                li.append(span)
            a = soup.new_tag("a", href=f"#{anchor}")
            a.string = _short(label)
            li.append(a)
            if kind == "section":
                ol.append(li)
                under = soup.new_tag("ol")
                li.append(under)
            else:
                under.append(li)
        for empty in nav_empty_lists(ol):
            empty.decompose()
        nav.append(ol)
        boxes.append(nav)
    if outline.notes:
        box = soup.new_tag("details", attrs={"class": "ak-notes", "open": ""})
        summary = soup.new_tag("summary")
        summary.string = f"Notes ({len(outline.notes)}): warnings raised while this page was built"
        box.append(summary)
        for i, text in enumerate(outline.notes, start=1):
            pre = soup.new_tag("pre", id=f"note-{i}-text")
            pre.string = f"[{i}] {text}"
            box.append(pre)
        boxes.append(box)
    for box in reversed(boxes):
        if title is not None:
            title.insert_after(box)
        else:
            body.insert(0, box)


def add_header(page: Draft) -> None:
    """Put the report's pages (the index first, this page marked) and the page's one
    provenance line on top of everything (:func:`pages_header`)."""
    for part in reversed(pages_header(page.soup, page.pages, current=page.current,
                                      provenance=page.provenance,
                                      provenance_href=page.provenance_href)):
        page.body.insert(0, part)


def add_style_and_script(page: Draft) -> None:
    """Put the page's style (light and dark) in its head and, when a table is sortable, the
    script that sorts, filters and pages tables at the end of its body, both inline."""
    soup = page.soup
    if soup.head is not None:
        style = soup.new_tag("style")
        style.string = PAGE_CSS + DARK_CSS
        soup.head.append(style)
    if page.outline.sortable_tables:
        script = soup.new_tag("script")
        script.string = PAGE_SCRIPT
        page.body.append(script)


def declare_policy(page: Draft) -> None:
    """Only the scripts and styles now in the page apply (the template's and accordkit's),
    named by sha256 in the Content-Security-Policy put first in its head; every ``style=``
    attribute becomes a class of one stylesheet, keeping what cannot draw over others
    (:func:`~.seal._seal`)."""
    _seal(page.soup)


#: The passes of :func:`finish_page`, in the order they run (docs/report.md lists them).
PASSES: tuple[Callable[[Draft], None], ...] = (
    drop_remote_scripts,
    strip_body,
    find_parts,
    shape_tables,
    anchor_parts,
    link_downloads,
    gather_notes,
    place_boxes,
    add_header,
    add_style_and_script,
    declare_policy,
)


def finish_page(html: str, *, page_rows: int = 25, downloads: dict[str, str] | None = None,
                pages: Sequence[tuple[str, str]] = (), current: str | None = None,
                provenance: str | None = None, provenance_href: str | None = None,
                ) -> tuple[str, PageOutline]:
    """Add the pages header, contents, notes, sticky headers and sortable, filterable and
    (when long) paged tables to one exported page, by running :data:`PASSES` in order.

    Parameters
    ----------
    html : str
        A page as nbconvert writes it (any template).
    page_rows : int, default 25
        Tables with more body rows than this are paged in the browser.
    downloads : dict of str to str, optional
        For figures: image ``alt`` or ``data-ak-figure`` name -> relative CSV path, shown
        as a download link under the figure. Tables whose wrapper carries ``data-csv``
        get their link without it.
    pages : sequence of (href, title), optional
        The report's pages, index first, linked from a header on top of the page.
    current : str, optional
        The href of this page among ``pages`` (marked, not a link away).
    provenance : str, optional
        The page's provenance line, shown once under the header.
    provenance_href : str, optional
        Where the full provenance record is (linked after the line).

    Returns
    -------
    html : str
        The finished page.
    outline : PageOutline
        Anchors (kind, id, label, level) in page order and the notes moved to the box.

    Examples
    --------
    >>> page, outline = finish_page("<html><head></head><body><h1>R</h1><h2>A</h2>"
    ...                             "<table><tr><td>1</td></tr></table></body></html>")
    >>> outline.anchors
    ['a', 'table-1']
    >>> 'class="ak-toc"' in page
    True
    """
    from bs4 import BeautifulSoup

    page = Draft(BeautifulSoup(html, "html.parser"), page_rows=page_rows,
                 downloads=dict(downloads or {}), pages=pages, current=current,
                 provenance=provenance, provenance_href=provenance_href)
    for step in PASSES:
        step(page)
    return str(page.soup), page.outline


def pages_header(soup, pages: Sequence[tuple[str, str]], *, current: str | None = None,
                 provenance: str | None = None, provenance_href: str | None = None) -> list:
    """The header of a report page: a ``nav.ak-pages`` linking every page (the index
    first), and the page's provenance line under it. Empty when there is neither.

    Examples
    --------
    >>> from bs4 import BeautifulSoup
    >>> soup = BeautifulSoup("", "html.parser")
    >>> nav, = pages_header(soup, [("index.html", "Report"), ("a.html", "A <b>")],
    ...                     current="a.html")
    >>> str(nav)
    '<nav aria-label="report pages" class="ak-pages"><a class="ak-home" href="index.html">Report</a><a aria-current="page" href="a.html">A &lt;b&gt;</a></nav>'
    """
    parts = []
    if pages:
        nav = soup.new_tag("nav", attrs={"class": "ak-pages", "aria-label": "report pages"})
        for i, (href, title) in enumerate(pages):
            attrs = {"href": href}
            if i == 0:
                attrs["class"] = "ak-home"
            if href == current:
                attrs["aria-current"] = "page"
            link = soup.new_tag("a", attrs=attrs)
            link.string = title
            nav.append(link)
        parts.append(nav)
    if provenance:
        line = soup.new_tag("p", attrs={"class": "ak-provenance"})
        line.append(f"Provenance: {provenance}")
        if provenance_href:
            line.append(" · ")
            link = soup.new_tag("a", href=provenance_href)
            link.string = "full record"
            line.append(link)
        parts.append(line)
    return parts
