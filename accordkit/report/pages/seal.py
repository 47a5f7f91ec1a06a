"""Sealing a whole page: it is made to obey the Content-Security-Policy put first in its
head (:func:`seal_page`), through BeautifulSoup's tree or, for a page as accordkit writes
it, token by token to the same bytes."""

from __future__ import annotations

import functools
import re

from .assets import _OWN_SCRIPTS
from .policy import _runs, content_security_policy, safe_declarations

__all__ = ["seal_page"]


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
