"""Message text as a reader should see it: the agent's words as Markdown, sanitised.

An agent message is often not plain text: AgentChangeBench agents answer with a JSON object
(``{"message": "...", ...}``) whose text, shown raw, is one line of escaped ``\\n``; many
agents write Markdown (lists, bold, tables, code). :func:`agent_text` finds the words;
:func:`markdown_html` renders them.

The text comes from the data, so it is hostile: the Markdown renderer (mistune, through
nbconvert) escapes any HTML in it and neutralises ``javascript:`` links; bleach then keeps
only the few elements and attributes a message needs, with ``http``, ``https`` and
``mailto`` links only; images become their text (``[image: alt]``: nothing is fetched).
Every element then gets its look as an inline ``style`` attribute, which a notebook opened
untrusted keeps (it drops ``<style>`` elements).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["agent_text", "markdown_html", "INLINE_STYLES"]

#: Elements and attributes a rendered message may hold (bleach's allow-list).
_TAGS = frozenset({"p", "br", "strong", "b", "em", "i", "del", "s", "code", "pre", "ul", "ol",
                   "li", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "a", "table",
                   "thead", "tbody", "tr", "th", "td", "hr", "span"})
_ATTRIBUTES = {"a": ["href", "title"], "th": ["align"], "td": ["align"]}
_PROTOCOLS = frozenset({"http", "https", "mailto"})
#: Text that Markdown renders as one plain paragraph: one line of letters, digits, spaces and
#: sentence punctuation (no markup character, no ``://``, no entity, no line break).
_PLAIN_TEXT = re.compile(r"[ \t]*[A-Za-z][A-Za-z0-9 ,.;?$%'\"/@]*(?:[:][A-Za-z0-9 ,.;?$%'\"@]+)*"
                         r"[ \t]*")
_LINK = re.compile(r"^\s*(https?://|mailto:)", re.IGNORECASE)

#: The look of each element, as inline styles (see the module docstring).
INLINE_STYLES = {
    "p": "margin:2px 0",
    "pre": "white-space:pre-wrap;overflow-wrap:anywhere;background:#eaeef2;padding:4px 6px;"
           "border-radius:4px;margin:4px 0;font-size:12px",
    "code": "font-family:ui-monospace,SFMono-Regular,Menlo,monospace;background:#eaeef2;"
            "padding:0 3px;border-radius:3px;font-size:12px",
    "ul": "margin:2px 0;padding-left:20px", "ol": "margin:2px 0;padding-left:20px",
    "blockquote": "margin:4px 0;padding-left:8px;border-left:3px solid #d0d7de;color:#57606a",
    "table": "border-collapse:collapse;margin:4px 0;font-size:12px",
    "th": "border:1px solid #d0d7de;padding:2px 6px;background:#f6f8fa",
    "td": "border:1px solid #d0d7de;padding:2px 6px",
    "h1": "font-size:15px;margin:4px 0", "h2": "font-size:14px;margin:4px 0",
    "h3": "font-size:13px;margin:4px 0", "h4": "font-size:13px;margin:4px 0",
    "h5": "font-size:13px;margin:4px 0", "h6": "font-size:13px;margin:4px 0",
    "a": "color:#0969da",
}


def agent_text(content: str | None) -> tuple[str, dict[str, Any]]:
    """The words of an agent message, and the other fields of a structured answer.

    A message that is a JSON object with a text ``message`` (AgentChangeBench's agents)
    gives that text and its other fields; any other message is its own text. Text whose
    line breaks were escaped twice (a literal ``\\n``, and no real line break) gets them
    back.

    Examples
    --------
    >>> agent_text('{"message": "Hello\\\\nthere", "action": "none"}')
    ('Hello\\nthere', {'action': 'none'})
    >>> agent_text("1. first\\\\n2. second")
    ('1. first\\n2. second', {})
    >>> agent_text(None)
    ('', {})
    """
    text = content or ""
    extra: dict[str, Any] = {}
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict) and isinstance(data.get("message"), str):
            text = data["message"]
            extra = {k: v for k, v in data.items() if k != "message"}
    if "\\n" in text and "\n" not in text:
        text = text.replace("\\r\\n", "\n").replace("\\n", "\n").replace("\\t", "\t")
    return text, extra


def markdown_html(text: str) -> str:
    """``text`` rendered as Markdown and sanitised (see the module docstring), with inline
    styles.

    Examples
    --------
    >>> markdown_html("**ok** <img src=x onerror=alert(1)> [x](javascript:alert(1))")
    '<p style="margin:2px 0"><strong>ok</strong> &lt;img src=x onerror=alert(1)&gt; <a style="color:#0969da">x</a></p>'
    >>> markdown_html("![chart](http://example.org/a.png)")
    '<p style="margin:2px 0">[image: chart]</p>'
    """
    if _PLAIN_TEXT.fullmatch(text) and text.strip() and not text.strip()[0].isdigit():
        # one line of words (no character Markdown or HTML reads): one paragraph, as the
        # renderer writes it, without its cost (a report writes every conversation)
        return f'<p style="{INLINE_STYLES["p"]}">{text.strip()}</p>'
    import bleach
    import mistune
    from bs4 import BeautifulSoup

    rendered = mistune.create_markdown(escape=True, plugins=["strikethrough", "table"])(text)
    soup = BeautifulSoup(rendered, "html.parser")
    for img in soup.find_all("img"):   # nothing is fetched: an image is its text
        img.replace_with(f"[image: {img.get('alt') or 'no description'}]")
    clean = bleach.clean(str(soup), tags=_TAGS, attributes=_ATTRIBUTES, protocols=_PROTOCOLS,
                         strip=True)
    soup = BeautifulSoup(clean, "html.parser")
    for tag in soup.find_all(True):
        if tag.name in INLINE_STYLES:
            tag["style"] = INLINE_STYLES[tag.name]
        if tag.name == "a":   # only links out of the page (no fragment of the report)
            if _LINK.match(tag.get("href") or ""):
                tag["rel"] = "nofollow noopener noreferrer"
                tag["target"] = "_blank"
            else:
                tag.attrs.pop("href", None)
    if soup.pre is not None:   # code inside a block keeps the block's look alone
        for code in soup.select("pre code"):
            del code["style"]
    return str(soup).strip()
