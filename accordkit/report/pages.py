"""Turn an exported notebook page into a report page people can navigate.

nbconvert's HTML is a faithful copy of the notebook: one long scroll, scripts fetched from
a CDN, warnings wherever a cell printed them. :func:`finish_page` rewrites it, offline:

* every section heading, table and figure gets a stable anchor, and a table of contents
  (``nav.ak-toc``) after the page title links them all;
* warnings a cell printed to stderr (and elements marked ``ak-note``) move into one
  "Notes" box near the top of the page, each linking back to where it was raised;
* a header on top links the report's index and its other pages, with the page's one
  provenance line under it (captions no longer repeat it);
* tables get sticky headers and their first column stays in view when they scroll
  sideways; every table of data is sortable and filterable, and one longer than
  ``page_rows`` rows is paged too, by a small script embedded in the page (no network, no
  dependency); merged row labels are repeated on each row, so that a sorted or filtered
  row still says what it is;
* configuration labels (``model (method) | user: …``) are cut to what tells the rows of
  a table apart, with the full label as their hover text, and the table says once what
  every row shares;
* the page follows the reader's light or dark colour scheme (``prefers-color-scheme``);
* any ``<script src=...>`` pointing off the machine is removed: a report opens offline
  with no failed request and no console error;
* nothing in the page body runs: every script, frame, object and embed the notebook's
  outputs held is removed, and so is every event-handler attribute (``onerror=``) and
  ``javascript:`` link. Values from the data are escaped where they are rendered; this is
  the second line, for anything that slipped through. The third is a Content-Security-Policy
  (:func:`content_security_policy`) that lets only the page's own scripts run, named by
  their sha256;
* no inline style is trusted: the policy names each ``<style>`` element of the page's head
  by its sha256 and allows nothing else (no ``'unsafe-inline'``). A notebook output's own
  ``<style>`` element is removed (pandas' default table rules are in :data:`PAGE_CSS`), and
  every ``style=`` attribute becomes a class of one generated stylesheet, keeping only
  declarations that cannot move or draw over anything else (:func:`seal_page`): an
  escaping slip cannot lay a box of fake numbers over the real ones. Images (and fonts)
  are embedded in the page (``data:``) and none is loaded from a file: for a page opened
  from disk a browser counts every local file as the page's own origin (``'self'``), so
  only embedding keeps the page from showing other files of the disk.

The function is pure (text in, text out), so it is unit-tested without a browser; the
browser tests in ``tests/browser`` check what a reader sees.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["finish_page", "PageOutline", "PAGE_CSS", "PAGE_SCRIPT", "DARK_CSS", "own_script",
           "content_security_policy", "strip_active_content", "pages_header", "seal_page",
           "safe_declarations"]

#: Extra style for report pages (sticky headers, the contents box, the notes box).
PAGE_CSS = """
.ak-toc{border:1px solid #d0d7de;border-radius:6px;padding:.5rem 1rem;margin:1rem 0;
background:#f6f8fa;font-size:13px;max-width:60rem}
.ak-toc ol{margin:.2rem 0 .2rem 1.2rem;padding:0} .ak-toc li{margin:.1rem 0}
.ak-toc .ak-toc-kind{color:#57606a;font-size:11px;margin-right:.3rem}
.ak-notes{border:1px solid #d4a72c;background:#fff8c5;border-radius:6px;padding:.5rem 1rem;
margin:1rem 0;font-size:13px;max-width:60rem}
.ak-notes pre{white-space:pre-wrap;margin:.2rem 0;font-size:12px}
.ak-note-ref{font-size:11px;color:#9a6700}
.jp-RenderedHTMLCommon thead th,.ak-paged thead th{position:sticky;top:0;background:#f6f8fa;
z-index:1}
.ak-scroll{max-height:80vh;overflow:auto}
.ak-table{max-width:100%;overflow-x:auto} .ak-table td,.ak-table th,.ak-short{white-space:nowrap}
.ak-pager{font-size:12px;margin:.3rem 0;display:flex;gap:.5rem;align-items:center}
.ak-pager input{font-size:12px;padding:1px 4px}
.ak-sortable thead tr:last-child th{cursor:pointer}
.ak-sortable th[data-sort=asc]::after{content:" \\25B2";font-size:9px}
.ak-sortable th[data-sort=desc]::after{content:" \\25BC";font-size:9px}
.ak-downloads{font-size:12px;margin:.2rem 0 1rem 0}
.ak-table table tbody tr > :first-child,.ak-table table thead tr > :first-child{
position:sticky;left:0;background:var(--jp-layout-color0,#fff);z-index:1}
.ak-repeat{color:var(--jp-ui-font-color2,#57606a)}
.ak-short{text-decoration:underline dotted;text-underline-offset:3px}
.ak-shared{font-size:12px;color:var(--jp-ui-font-color2,#57606a);margin:.1rem 0 .6rem 0}
.ak-pages{display:flex;flex-wrap:wrap;gap:.2rem 1rem;align-items:baseline;
font:13px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;padding:.5rem 1rem;
border-bottom:1px solid #d0d7de;background:#f6f8fa;color:#24292f}
.ak-pages a{color:#0969da;text-decoration:none} .ak-pages a:hover{text-decoration:underline}
.ak-pages a[aria-current=page]{color:inherit;font-weight:600}
.ak-pages .ak-home{font-weight:600;margin-right:.5rem}
.ak-provenance{font:11px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;color:#57606a;
padding:.25rem 1rem;margin:0;border-bottom:1px solid #d0d7de;overflow-wrap:anywhere}
.dataframe tbody tr th:only-of-type{vertical-align:middle}
.dataframe tbody tr th{vertical-align:top} .dataframe thead th{text-align:right}
.ak-wrap thead th{white-space:normal;vertical-align:bottom;min-width:4rem}
.ak-wrap td{white-space:normal;min-width:4rem;max-width:24rem;overflow-wrap:anywhere}
.ak-ci{font-size:11px;color:var(--jp-ui-font-color2,#57606a);white-space:nowrap}
"""

#: The same pages in a dark colour scheme, when the reader's system asks for one: the
#: notebook theme's colour variables, and the boxes this module adds. Figures keep their
#: white background, so that their black text stays readable.
DARK_CSS = """
@media (prefers-color-scheme: dark){
:root{--jp-layout-color0:#0d1117;--jp-layout-color1:#0d1117;--jp-layout-color2:#161b22;
--jp-layout-color3:#21262d;--jp-layout-color4:#30363d;
--jp-ui-font-color0:#f0f6fc;--jp-ui-font-color1:#e6edf3;--jp-ui-font-color2:#9da7b3;
--jp-ui-font-color3:#7d8590;--jp-content-font-color0:#f0f6fc;--jp-content-font-color1:#e6edf3;
--jp-content-font-color2:#9da7b3;--jp-content-font-color3:#7d8590;
--jp-content-link-color:#58a6ff;--jp-border-color0:#30363d;--jp-border-color1:#30363d;
--jp-border-color2:#21262d;--jp-border-color3:#21262d;--jp-cell-editor-background:#161b22;
--jp-rendermime-table-row-background:#161b22;
--jp-rendermime-table-row-hover-background:#1f2937;--jp-rendermime-error-background:#3b1219;
--jp-mirror-editor-variable-color:#e6edf3;color-scheme:dark}
body,.jp-Notebook{background:#0d1117;color:#e6edf3}
a{color:#58a6ff}
img{background:#fff}
.ak-toc,.ak-pages,.jp-RenderedHTMLCommon thead th,.ak-paged thead th{background:#161b22;
border-color:#30363d;color:#e6edf3}
.ak-pages a{color:#58a6ff} .ak-pages a[aria-current=page]{color:#e6edf3}
.ak-toc .ak-toc-kind,.ak-provenance,.ak-shared,.ak-repeat{color:#9da7b3}
.ak-provenance{border-color:#30363d}
.ak-notes{background:#2b2111;border-color:#9e6a03;color:#e6edf3}
.ak-note-ref{color:#d29922}
.ak-pager input,.ak-pager button{background:#161b22;color:#e6edf3;border:1px solid #30363d}
}
"""

#: The scripts accordkit itself writes into its pages (:func:`own_script`): a page sealed by
#: :func:`seal_page` runs these and no other, whatever else its HTML holds.
_OWN_SCRIPTS: set[str] = set()


def own_script(text: str) -> str:
    """Declare ``text`` one of accordkit's own page scripts, the only scripts a page that
    :func:`seal_page` seals may run (its policy names them by sha256; any other script
    element is removed); returns ``text``.

    Examples
    --------
    >>> own_script("void 0;") == "void 0;"
    True
    """
    _OWN_SCRIPTS.add(text)
    return text


#: Sorts, filters and pages the tables in the browser. Every ``.ak-sortable`` box gets a
#: filter box and sortable headers (click: ascending, again: descending); an ``.ak-paged``
#: box is also paged (size from ``data-page-rows``). Numbers sort as numbers (``1,234`` and
#: ``0.91 [0.82, 0.95]`` too), and the filter reads the full text of shortened labels. Rows
#: stay in the HTML, so a reader without scripts sees all.
PAGE_SCRIPT = own_script("""
(function(){
function num(t){var m=/^\\s*(-?[0-9][0-9,]*\\.?[0-9]*(?:e-?[0-9]+)?)/i.exec(t);
  return m?parseFloat(m[1].replace(/,/g,'')):NaN;}
function setup(box){
  var table=box.querySelector('table'); if(!table||!table.tBodies.length){return;}
  var body=table.tBodies[0], rows=Array.prototype.slice.call(body.rows);
  var paged=box.classList.contains('ak-paged');
  var size=paged?parseInt(box.getAttribute('data-page-rows')||'25',10):rows.length;
  var page=0, shown=rows;
  var bar=document.createElement('div'); bar.className='ak-pager';
  var filter=document.createElement('input'); filter.placeholder='filter rows';
  filter.setAttribute('aria-label','filter rows');
  var prev=document.createElement('button'); prev.textContent='\\u2039 previous';
  var next=document.createElement('button'); next.textContent='next \\u203a';
  var info=document.createElement('span');
  bar.appendChild(filter);
  if(paged){bar.appendChild(prev); bar.appendChild(next);}
  bar.appendChild(info);
  box.insertBefore(bar, box.firstChild);
  function text(r){var t=r.textContent;
    Array.prototype.forEach.call(r.querySelectorAll('[title]'),function(e){t+=' '+e.title;});
    return t.toLowerCase();}
  function draw(){
    var pages=Math.max(1,Math.ceil(shown.length/size)); page=Math.min(page,pages-1);
    rows.forEach(function(r){r.style.display='none';});
    shown.slice(page*size,(page+1)*size).forEach(function(r){r.style.display='';});
    info.textContent=(paged?'rows '+(shown.length?page*size+1:0)+'\\u2013'+
      Math.min((page+1)*size,shown.length)+' of '+shown.length:shown.length+' rows')+
      (shown.length<rows.length?' (filtered from '+rows.length+')':'');
    prev.disabled=page===0; next.disabled=page>=pages-1;
  }
  filter.addEventListener('input',function(){
    var q=filter.value.toLowerCase();
    shown=rows.filter(function(r){return text(r).indexOf(q)>=0;});
    page=0; draw();
  });
  prev.addEventListener('click',function(){page-=1; draw();});
  next.addEventListener('click',function(){page+=1; draw();});
  var heads=table.tHead?table.tHead.rows[table.tHead.rows.length-1].cells:[];
  Array.prototype.forEach.call(heads,function(th,i){
    th.setAttribute('title','sort by this column');
    th.addEventListener('click',function(){
      var asc=th.getAttribute('data-sort')!=='asc';
      Array.prototype.forEach.call(heads,function(h){h.removeAttribute('data-sort');});
      th.setAttribute('data-sort',asc?'asc':'desc');
      function key(r){var c=r.cells[i]; var t=c?c.textContent.trim():'';
        var n=num(t); return isNaN(n)?t.toLowerCase():n;}
      rows.sort(function(a,b){var x=key(a),y=key(b);
        if(typeof x===typeof y){return (x<y?-1:x>y?1:0)*(asc?1:-1);}
        return (typeof x==='number'?-1:1)*(asc?1:-1);});
      rows.forEach(function(r){body.appendChild(r);});
      shown=rows.filter(function(r){return shown.indexOf(r)>=0;}); draw();
    });
  });
  draw();
}
document.querySelectorAll('.ak-sortable').forEach(setup);
})();
""")

_LOCAL_SRC = re.compile(r"^(?!(?:[a-z][a-z0-9+.-]*:)?//)", re.IGNORECASE)

#: Elements that run code or load another document: never kept in a page's body.
_ACTIVE_TAGS = ("script", "iframe", "frame", "frameset", "object", "embed", "applet", "base",
                "meta", "link", "portal")
#: Attributes holding a URL, which may not be ``javascript:`` (nor ``vbscript:``, nor an
#: HTML or SVG document as ``data:``).
_URL_ATTRIBUTES = ("href", "src", "action", "formaction", "xlink:href", "data", "poster",
                   "background", "srcset", "ping")
_BAD_URL = re.compile(r"^\s*(javascript|vbscript|data:\s*(text/html|image/svg|application))",
                      re.IGNORECASE)


def strip_active_content(root) -> int:
    """Remove from ``root`` (a BeautifulSoup tag) everything that could run code: the
    elements of :data:`_ACTIVE_TAGS`, event-handler attributes (``on*``), ``srcdoc``, and
    URL attributes whose value is a script (:data:`_BAD_URL`). Returns how many were removed.

    Examples
    --------
    >>> from bs4 import BeautifulSoup
    >>> soup = BeautifulSoup('<p onclick="x()">a<img src=x onerror=alert(1)>'
    ...                      '<a href=" javascript:alert(1)">b</a><script>alert(1)</script></p>',
    ...                      "html.parser")
    >>> strip_active_content(soup), str(soup)
    (4, '<p>a<img src="x"/><a>b</a></p>')
    """
    removed = 0
    for tag in root.find_all(_ACTIVE_TAGS):
        tag.decompose()
        removed += 1
    for tag in root.find_all(True):
        for name in list(tag.attrs):
            low = name.lower()
            value = tag.attrs[name]
            text = " ".join(value) if isinstance(value, list) else str(value)
            if low.startswith("on") or low == "srcdoc" or (
                    low in _URL_ATTRIBUTES and _BAD_URL.match(text)):
                del tag.attrs[name]
                removed += 1
    return removed


def _hashes(texts) -> list[str]:
    """CSP source expressions naming each text by its sha256."""
    import base64
    import hashlib

    return sorted({"'sha256-" + base64.b64encode(hashlib.sha256(
        text.encode("utf-8")).digest()).decode("ascii") + "'" for text in texts})


def content_security_policy(scripts=(), styles=()) -> str:
    """The Content-Security-Policy of every report page.

    Parameters
    ----------
    scripts : iterable of str
        The exact text of each inline script the page may run.
    styles : iterable of str
        The exact text of each ``<style>`` element the page may apply; no other style
        applies (no style attribute, no stylesheet from a file).

    Examples
    --------
    >>> content_security_policy().split("; ")[:3]
    ["default-src 'none'", "script-src 'none'", "style-src 'none'"]
    """
    scripts, styles = _hashes(scripts), _hashes(styles)
    return "; ".join([
        "default-src 'none'",
        "script-src " + (" ".join(scripts) if scripts else "'none'"),
        "style-src " + (" ".join(styles) if styles else "'none'"),
        "img-src data:",
        "font-src data:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-src 'none'",
        "object-src 'none'",
    ])


#: What a ``style=`` attribute may keep (:func:`safe_declarations`): colours, type, spacing,
#: borders and flow layout. Left out is everything that takes an element out of its place
#: or draws beyond its box (``position``, ``top``, ``inset``, ``z-index``, ``transform``,
#: ``float``, shadows, ``content``, ``clip-path``, filters), and sizes beyond a maximum.
_SAFE_PROPERTIES = frozenset({
    "color", "background", "background-color", "font", "font-family", "font-size",
    "font-weight", "font-style", "line-height", "text-align", "text-decoration",
    "text-underline-offset", "vertical-align", "white-space", "overflow-wrap", "word-break",
    "display", "flex", "flex-wrap", "flex-direction", "gap", "align-items",
    "justify-content", "max-width", "min-width", "max-height", "overflow", "overflow-x",
    "overflow-y", "border", "border-top", "border-right", "border-bottom", "border-left",
    "border-color", "border-style", "border-width", "border-top-color", "border-right-color",
    "border-bottom-color", "border-left-color", "border-radius", "border-collapse",
    "border-spacing", "margin", "margin-top", "margin-right", "margin-bottom",
    "margin-left", "padding", "padding-top", "padding-right", "padding-bottom",
    "padding-left", "cursor", "list-style", "list-style-type", "caption-side",
})
#: ``display`` values a style attribute may set.
_SAFE_DISPLAY = frozenset({"block", "inline", "inline-block", "flex", "inline-flex",
                           "list-item", "table", "table-row", "table-cell"})
#: Values never kept: anything loading, computing or escaping, and negative lengths (a
#: negative margin pulls a box over its neighbours).
_BAD_STYLE_VALUE = re.compile(
    r"url\(|image|expression|attr\(|var\(|env\(|calc\(|\\|/\*|[@<>!{}]|"
    r"(?:^|[\s,(])-\s*\.?\d", re.IGNORECASE)


def safe_declarations(style: str) -> str:
    """The declarations of a ``style=`` attribute that may stay, in order, as
    ``property:value`` joined by ``;`` (empty when none may).

    Examples
    --------
    >>> safe_declarations("color:#57606a; position:fixed; top:0; margin:-40px 0; "
    ...                   "background:url(x.png); font-weight:600")
    'color:#57606a;font-weight:600'
    """
    kept = []
    for part in str(style).split(";"):
        name, colon, value = part.partition(":")
        name, value = name.strip().lower(), value.strip()
        if not colon or not value or name not in _SAFE_PROPERTIES \
                or _BAD_STYLE_VALUE.search(value):
            continue
        if name == "display" and value.lower() not in _SAFE_DISPLAY:
            continue
        kept.append(f"{name}:{value}")
    return ";".join(kept)


def _styles_to_classes(soup) -> str:
    """Replace every ``style=`` attribute under ``soup`` by a class; return their CSS.

    Each distinct set of kept declarations (:func:`safe_declarations`) is one class
    ``ak-s-<digest>``, its declarations ``!important`` so that they win over the page's
    stylesheets as the attribute did.
    """
    import hashlib

    rules: dict[str, str] = {}
    for tag in soup.find_all(style=True):
        kept = safe_declarations(tag["style"])
        del tag["style"]
        if not kept:
            continue
        name = "ak-s-" + hashlib.sha256(kept.encode("utf-8")).hexdigest()[:12]
        rules[name] = ";".join(f"{d}!important" for d in kept.split(";"))
        classes = tag.get("class") or []
        classes = classes.split() if isinstance(classes, str) else list(classes)
        if name not in classes:
            tag["class"] = [*classes, name]
    return "".join(f".{name}{{{css}}}\n" for name, css in sorted(rules.items()))


def _seal(soup, *, own_scripts_only: bool = False) -> None:
    """Make ``soup`` (a whole page) obey its policy, and declare the policy in its head.

    Style elements outside the head are removed, style attributes become classes of one
    stylesheet added to the head (:func:`_styles_to_classes`), and the page's
    Content-Security-Policy, first in the head, names each inline script (that runs) and
    each style element now in the page by its sha256.
    """
    head = soup.head
    if head is None:
        return
    for style in soup.find_all("style"):
        if style.find_parent("head") is None:
            style.decompose()
    css = _styles_to_classes(soup)
    if css:
        tag = soup.new_tag("style")
        tag.string = css
        head.append(tag)
    for old in soup.find_all("meta", attrs={"http-equiv": True}):
        if str(old.get("http-equiv", "")).lower() == "content-security-policy":
            old.decompose()
    if own_scripts_only:   # a page accordkit writes itself runs only accordkit's scripts
        for t in soup.find_all("script"):
            if _runs(t) and (t.get("src") or (t.string or "") not in _OWN_SCRIPTS):
                t.decompose()
    scripts = [t.string or "" for t in soup.find_all("script") if not t.get("src") and _runs(t)]
    styles = [t.string or "" for t in soup.find_all("style")]
    meta = soup.new_tag("meta", attrs={"http-equiv": "Content-Security-Policy",
                                       "content": content_security_policy(scripts, styles)})
    head.insert(0, meta)


def seal_page(html: str) -> str:
    """A whole page (``<html><head>…``) made to obey its Content-Security-Policy, which is
    put first in its head: see :func:`_seal`. Pages written elsewhere than
    :func:`finish_page` (the index, the drill-down pages) pass through it. Such a page is
    accordkit's own from end to end, so it runs only accordkit's own scripts
    (:func:`own_script`): any other script element (one that slipped through escaping) is
    removed, never named in the policy.

    Examples
    --------
    >>> page = seal_page('<html><head><style>p{color:red}</style></head><body>'
    ...                  '<p style="color:blue;position:fixed">x</p><style>p{}</style></body></html>')
    >>> "style=" in page, page.count("<style>"), "position" in page
    (False, 2, False)
    """
    from bs4 import BeautifulSoup

    try:
        return _seal_flat(html)
    except _Unusual:
        pass
    soup = BeautifulSoup(html, "html.parser")
    _seal(soup, own_scripts_only=True)
    return str(soup)


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


def finish_page(html: str, *, page_rows: int = 25, downloads: dict[str, str] | None = None,
                pages: Sequence[tuple[str, str]] = (), current: str | None = None,
                provenance: str | None = None, provenance_href: str | None = None,
                ) -> tuple[str, PageOutline]:
    """Add the pages header, contents, notes, sticky headers and sortable, filterable and
    (when long) paged tables to one exported page.

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

    soup = BeautifulSoup(html, "html.parser")
    downloads = dict(downloads or {})
    outline = PageOutline()
    used = {tag["id"] for tag in soup.find_all(id=True)}

    # 1. nothing fetched from elsewhere
    for script in soup.find_all("script", src=True):
        if not _LOCAL_SRC.match(script["src"]):
            script.decompose()

    # 2. nothing in the body runs code (the page's own script is added at the end)
    body = soup.body or soup
    strip_active_content(body)

    # 3. anchors: section headings, tables, figures (page order)
    n_table = n_figure = 0
    for tag in body.find_all(["h2", "h3", "table", "img"]):
        if tag.name in ("h2", "h3"):
            label = tag.get_text(" ", strip=True).rstrip("¶").strip()
            if not label:
                continue
            if not tag.get("id"):
                tag["id"] = _slug(label, used)
            outline.entries.append(("section", tag["id"], label, int(tag.name[1])))
        elif tag.name == "table":
            if tag.find_parent("table") or tag.find_parent(class_="ak-toc"):
                continue
            n_table += 1
            holder = tag.find_parent(attrs={"data-ak-table": True})
            if holder is not None and holder.get("id"):
                anchor = holder["id"]
            else:
                if not tag.get("id") or tag["id"].startswith("T_"):
                    tag["id"] = _slug("", used, prefix=f"table-{n_table}")
                anchor = tag["id"]
            outline.entries.append(("table", anchor, _label_of_table(tag), 4))
            if tag.find_parent(class_=_NOT_DATA_TABLES) is not None:
                continue
            _repeat_row_labels(tag)
            _shorten_configurations(soup, tag)
            rows = tag.tbody.find_all("tr", recursive=False) if tag.tbody else []
            # rows of two lines (an estimate over its interval) page at half as many
            limit = max(page_rows // 2, 1) if tag.find(class_="ak-ci") else page_rows
            if len(rows) > limit:
                box = soup.new_tag("div", attrs={"class": "ak-sortable ak-paged ak-scroll",
                                                 "data-page-rows": str(limit)})
                tag.wrap(box)
                outline.paged_tables += 1
                outline.sortable_tables += 1
            elif len(rows) > 1:
                tag.wrap(soup.new_tag("div", attrs={"class": "ak-sortable"}))
                outline.sortable_tables += 1
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
            csv = downloads.get(tag.get("data-ak-figure", "")) or downloads.get(label)
            if csv:
                link = soup.new_tag("div", attrs={"class": "ak-downloads"})
                a = soup.new_tag("a", href=csv, download="")
                a.string = "data behind this figure (CSV)"
                link.append(a)
                tag.insert_after(link)

    # 4. CSV links for tables whose wrapper says where their data is
    for wrapper in body.find_all(attrs={"data-csv": True}):
        if wrapper.find(class_="ak-downloads", recursive=False):
            continue
        link = soup.new_tag("div", attrs={"class": "ak-downloads"})
        a = soup.new_tag("a", href=wrapper["data-csv"], download="")
        a.string = "table as CSV"
        link.append(a)
        wrapper.append(link)

    # 5. notes: stderr output and elements marked ak-note, gathered in one box
    notes = body.find_all(attrs={"data-mime-type": "application/vnd.jupyter.stderr"})
    notes += body.find_all(class_="ak-note")
    for node in notes:
        text = node.get_text("\n", strip=True)
        if not text:
            node.decompose()
            continue
        k = len(outline.notes) + 1
        marker = soup.new_tag("a", href=f"#note-{k}-text", id=f"note-{k}",
                              attrs={"class": "ak-note-ref"})
        marker.string = f"[note {k}]"
        node.replace_with(marker)
        outline.notes.append(text)

    # 6. the contents and notes boxes go right after the page title
    title = body.find("h1")
    anchor_point = title if title is not None else None
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
        if anchor_point is not None:
            anchor_point.insert_after(box)
        else:
            body.insert(0, box)
    # the report's pages, and the page's one provenance line, on top of everything
    for part in reversed(pages_header(soup, pages, current=current, provenance=provenance,
                                      provenance_href=provenance_href)):
        body.insert(0, part)

    # 7. style and the paging script, inline
    head_tag = soup.head
    if head_tag is not None:
        style = soup.new_tag("style")
        style.string = PAGE_CSS + DARK_CSS
        head_tag.append(style)
    if outline.sortable_tables:
        script = soup.new_tag("script")
        script.string = PAGE_SCRIPT
        body.append(script)

    # 8. only the scripts and styles now in the page apply (the template's and ours); style
    # attributes become classes of one stylesheet, keeping what cannot draw over others
    _seal(soup)
    return str(soup), outline


def _runs(script) -> bool:
    """Whether the browser executes this script element (data blocks it does not)."""
    kind = (script.get("type") or "").strip().lower()
    return kind in ("", "module", "text/javascript", "application/javascript")


#: Tables that are layout, not data: never sorted, paged or shortened.
_NOT_DATA_TABLES = ("ak-toc", "ak-conv", "ak-head")


def _repeat_row_labels(table) -> int:
    """Give every body row its own copy of the row labels merged over several rows
    (``rowspan``), so that each row says what it is when the table is sorted or filtered.
    The copies are marked ``ak-repeat`` (drawn lighter) and carry no ``id``. Returns how
    many cells were added.

    Examples
    --------
    >>> from bs4 import BeautifulSoup
    >>> soup = BeautifulSoup("<table><tbody><tr><th rowspan=2 id=a>air</th><td>1</td></tr>"
    ...                      "<tr><td>2</td></tr></tbody></table>", "html.parser")
    >>> _repeat_row_labels(soup.table), [r.get_text("|") for r in soup.find_all("tr")]
    (1, ['air|1', 'air|2'])
    """
    if table.tbody is None:
        return 0
    carry: dict[int, tuple[object, int]] = {}
    added = 0
    for tr in table.tbody.find_all("tr", recursive=False):
        cells = tr.find_all(["td", "th"], recursive=False)
        row, col, queue = [], 0, list(cells)
        while queue or col in carry:
            if col in carry:
                cell, left = carry[col]
                clone = copy.copy(cell)
                for attr in ("rowspan", "id"):
                    clone.attrs.pop(attr, None)
                clone["class"] = [*clone.get("class", []), "ak-repeat"]
                row.append(clone)
                added += 1
                if left > 1:
                    carry[col] = (cell, left - 1)
                else:
                    del carry[col]
                col += 1
                continue
            cell = queue.pop(0)
            span = _int(cell.get("rowspan"))
            if span > 1:
                cell.attrs.pop("rowspan")
                carry[col] = (copy.copy(cell), span - 1)
            row.append(cell)
            col += _int(cell.get("colspan"))
        if len(row) != len(cells):
            for cell in cells:
                cell.extract()
            for cell in row:
                tr.append(cell)
    return added


def _int(value) -> int:
    try:
        return max(1, int(value))
    except (TypeError, ValueError):
        return 1


def _shorten_configurations(soup, table) -> int:
    """Cut the configuration labels of a table's body to what tells its rows apart
    (:func:`accordkit.plots.labels.short_labels`), the full label as hover text, and say
    under the table what every row shares. Returns how many cells were shortened."""
    from ..plots.labels import shared_part, short_labels

    if table.tbody is None:
        return 0
    cells = [c for c in table.tbody.find_all(["td", "th"])
             if c.find(True) is None and c.get_text(strip=True)]
    texts = [c.get_text(strip=True) for c in cells]
    short = short_labels(texts)
    changed = 0
    for cell, text in zip(cells, texts, strict=True):
        if short.get(text, text) != text:
            span = soup.new_tag("span", attrs={"class": "ak-short", "title": text})
            span.string = short[text]
            cell.clear()
            cell.append(span)
            changed += 1
    if changed:
        note = soup.new_tag("p", attrs={"class": "ak-shared"})
        note.string = (f"Every configuration here: {shared_part(texts)} (hover a label for "
                       "it in full).")
        (table.find_parent(attrs={"data-ak-table": True}) or table).insert_after(note)
    return changed


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


# --------------------------------------------------------------- sealing without a tree
#: html.parser's tokens in a page this package wrote (text holds no raw ``<``): a tag, or
#: the text up to the next one.
_TOKEN = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:[^<>\"']|\"[^\"]*\"|'[^']*')*)>|[^<]+")
_ATTR = re.compile(r"\s+([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*(\"[^\"]*\"|'[^']*'))?")
#: Elements BeautifulSoup writes without an end tag.
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "keygen",
                   "link", "menuitem", "meta", "param", "source", "track", "wbr", "basefont",
                   "bgsound", "command", "frame", "image", "isindex", "nextid", "spacer"})
#: Attributes BeautifulSoup holds as lists of words (written back one space apart): on
#: every element, and on some.
_LIST_ATTRS = frozenset({"class", "accesskey", "dropzone"})
_LIST_ATTRS_OF = {"a": {"rel", "rev"}, "link": {"rel", "rev"}, "td": {"headers"},
                  "th": {"headers"}, "form": {"accept-charset"}, "object": {"archive"},
                  "area": {"rel"}, "icon": {"sizes"}, "iframe": {"sandbox"},
                  "output": {"for"}}
_WORD = re.compile(r"\S+")
#: The only references this package's escaping writes.
_REFS = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#x27;": "'", "&#39;": "'"}
_REF = re.compile(r"&(?:amp|lt|gt|quot|#x27|#39);")


class _Unusual(Exception):
    """A page :func:`_seal_flat` does not write exactly as the tree would."""


def _unescape(text: str) -> str:
    if "&" not in text:
        return text
    if text.count("&") != len(_REF.findall(text)):
        raise _Unusual
    return _REF.sub(lambda m: _REFS[m.group(0)], text)


def _minimal(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attr_value(value: str) -> str:
    value = _minimal(value)
    if '"' in value:
        if "'" in value:
            return '"' + value.replace('"', "&quot;") + '"'
        return "'" + value + "'"
    return '"' + value + '"'


@functools.lru_cache(maxsize=65_536)
def _flat_tag(name: str, rest: str) -> tuple[str, tuple[str, str] | None, bool, bool]:
    """One start tag (its name and what follows it) as the tree writes it, sealed: its
    text, the class rule its style attribute became (name, CSS) or None, whether it has
    attributes, and whether it is a policy ``<meta>`` (dropped). Tags repeat, so they are
    worked out once each."""
    import hashlib

    if rest.rstrip().endswith("/"):
        if name not in _VOID:
            raise _Unusual
        rest = rest.rstrip()[:-1]
    attrs: dict[str, str] = {}
    at = 0
    for a in _ATTR.finditer(rest):
        if a.start() != at:
            raise _Unusual
        at = a.end()
        key = a.group(1).lower()
        if key in attrs:
            raise _Unusual
        raw = a.group(2)
        attrs[key] = "" if raw is None else _unescape(raw[1:-1])
    if rest[at:].strip():
        raise _Unusual
    lists = _LIST_ATTRS | _LIST_ATTRS_OF.get(name, set())
    for key in lists.intersection(attrs):
        attrs[key] = " ".join(_WORD.findall(attrs[key]))
    rule = None
    if "style" in attrs:
        kept = safe_declarations(attrs.pop("style"))
        if kept:
            cls = "ak-s-" + hashlib.sha256(kept.encode("utf-8")).hexdigest()[:12]
            rule = (cls, ";".join(f"{d}!important" for d in kept.split(";")))
            words = attrs.get("class", "").split()
            if cls not in words:
                attrs["class"] = " ".join([*words, cls])
    skip = name == "meta" and attrs.get("http-equiv", "").lower() == "content-security-policy"
    text = "".join(f" {k}={_attr_value(v)}" for k, v in sorted(attrs.items()))
    return text, rule, bool(attrs), skip


@functools.lru_cache(maxsize=1_024)
def _script_kind(rest: str) -> str:
    """The ``type`` of a script tag that has at most an ``id`` and a ``type``."""
    attrs = {a.group(1).lower(): _unescape((a.group(2) or '""')[1:-1])
             for a in _ATTR.finditer(rest)}
    if not set(attrs) <= {"id", "type"}:
        raise _Unusual
    return attrs.get("type", "")


def _seal_flat(html: str) -> str:
    """:func:`seal_page` for a page as this package writes it, token by token, without
    building BeautifulSoup's tree: the same bytes (a test holds it on every drill-down
    page of the sample). Raises :class:`_Unusual` on anything it does not handle exactly
    (comments, other declarations, raw text outside a head style or a plain script, style
    elements outside the head, references other than the five escaping writes, tags not
    closed in order, a tag a ``/>`` closes), which then takes the tree.
    """
    doctype = "<!DOCTYPE html>"
    if not html.startswith(doctype) or html.find("<!", 1) >= 0 or "<?" in html:
        raise _Unusual
    out: list[str] = [doctype, "\n"]
    rules: dict[str, str] = {}
    scripts: list[str] = []
    styles: list[str] = []
    stack: list[str] = []
    head_end = meta_at = None
    pos, end = len(doctype), len(html)
    lower = None
    while pos < end:
        m = _TOKEN.match(html, pos)
        if m is None:
            raise _Unusual
        pos = m.end()
        if m.group(2) is None:
            piece = m.group(0)
            out.append(_minimal(_unescape(piece)) if "&" in piece or ">" in piece else piece)
            continue
        closing, name, rest = m.group(1), m.group(2).lower(), m.group(3)
        if closing:
            if rest.strip() or not stack or stack[-1] != name:
                raise _Unusual
            stack.pop()
            if name == "head":
                head_end = len(out)
            out.append(f"</{name}>")
            continue
        text, rule, attrs, skip = _flat_tag(name, rest)
        if skip:
            continue
        if rule is not None:
            rules[rule[0]] = rule[1]
        if name in ("script", "style"):
            if lower is None:
                lower = html.lower()
            close = lower.find(f"</{name}", pos)
            if close < 0 or not lower.startswith(f"</{name}>", close):
                raise _Unusual
            body = html[pos:close]
            pos = close + len(name) + 3
            if name == "style":
                if stack != ["html", "head"]:
                    raise _Unusual
                styles.append(body)
            else:
                kind = _script_kind(rest)
                if kind.strip().lower() in ("", "module", "text/javascript",
                                            "application/javascript"):   # as _runs
                    if body not in _OWN_SCRIPTS:
                        raise _Unusual   # the tree removes it
                    scripts.append(body)
            out.append(f"<{name}{text}>{body}</{name}>")
            continue
        out.append(f"<{name}{text}/>" if name in _VOID else f"<{name}{text}>")
        if name not in _VOID:
            stack.append(name)
        if name == "head":
            if stack != ["html", "head"] or meta_at is not None:
                raise _Unusual
            meta_at = len(out)
    if stack or head_end is None or meta_at is None:
        raise _Unusual
    css = "".join(f".{n}{{{c}}}\n" for n, c in sorted(rules.items()))
    if css:
        styles.append(css)
        out.insert(head_end, f"<style>{css}</style>")
    policy = content_security_policy(scripts, styles)
    out.insert(meta_at, f'<meta content={_attr_value(policy)} '
                        'http-equiv="Content-Security-Policy"/>')
    return "".join(out)
