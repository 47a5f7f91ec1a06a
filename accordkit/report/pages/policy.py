"""What a report page may hold and run: active content stripped from a page's body, the
Content-Security-Policy every page declares, and the ``style=`` declarations a page keeps."""

from __future__ import annotations

import re

__all__ = ["strip_active_content", "content_security_policy", "safe_declarations"]

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

def _runs(script) -> bool:
    """Whether the browser executes this script element (data blocks it does not)."""
    kind = (script.get("type") or "").strip().lower()
    return kind in ("", "module", "text/javascript", "application/javascript")
