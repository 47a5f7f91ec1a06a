"""Judge prompt templates (data files) and the framing of untrusted text inside them.

Templates live in ``accordkit/judges/prompts/<id>.yaml``: an ``id``, a ``version``, the
``judge`` they serve, a ``system`` and a ``user`` text with ``{{name}}`` placeholders, and
judge-specific extras (the unit-test rules, the outcome criteria phrases).

Transcript text, instructions and product cards come from the episodes, so they are
*untrusted*: a simulated user may write "ignore the instructions above". They are only ever
inserted through :func:`quote`, which

* puts them between a BEGIN and an END line carrying a code that the text's author cannot
  compute: a keyed digest (HMAC-SHA256) of the quoted texts under a secret drawn at random
  for each run (each process) and never written anywhere (:func:`fence_code`), so the code
  changes from run to run while the cache key stays the same (the cache key is computed
  with the code abstracted, :data:`FENCE_SLOT`);
* replaces marker-like runs (``<<<``, ``>>>``) inside the text, so it cannot imitate one;
* writes every line break that Python's ``str.splitlines`` knows, except a plain ``\\n``,
  as a visible escape (``\\r``, ``\\u2028``, ...), so the lines the model sees are the
  lines the text has (:func:`escape_breaks`);
* cuts the text at a documented length, ending it with ``[cut N chars]`` (:func:`cut`).

Placeholders are filled in one pass over the template only, so ``{{...}}`` written inside a
transcript is never expanded.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import yaml

__all__ = [
    "PromptTemplate",
    "load_prompt",
    "prompt_ids",
    "fence_code",
    "content_digest",
    "new_run_secret",
    "FENCE_SLOT",
    "quote",
    "fill",
    "cut",
    "escape_breaks",
    "LINE_BREAKS",
]

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_MARKER_RUN = re.compile(r"<<<|>>>")
#: How many hex digits a fence code has (64 bits).
FENCE_CODE_DIGITS = 16
#: What every fence code is replaced by when a call's cache key is computed.
FENCE_SLOT = "{fence}"
#: This run's secret key for fence codes (drawn at import; see :func:`new_run_secret`).
_run_secret: bytes = secrets.token_bytes(32)


def new_run_secret() -> None:
    """Draw a new random secret for fence codes, as a new run would.

    Every process draws its own at import; nothing writes it anywhere. Calling this only
    changes the codes of prompts built afterwards (their cache keys stay the same).
    """
    global _run_secret
    _run_secret = secrets.token_bytes(32)

#: Every line boundary of ``str.splitlines`` and how it is written inside a prompt.
LINE_BREAKS: dict[str, str] = {
    "\r\n": "\\n", "\n": "\\n", "\r": "\\r", "\x0b": "\\v", "\x0c": "\\f",
    "\x1c": "\\x1c", "\x1d": "\\x1d", "\x1e": "\\x1e", "\x85": "\\x85",
    "\u2028": "\\u2028", "\u2029": "\\u2029",
}
_BREAK = re.compile("|".join(re.escape(b) for b in LINE_BREAKS))


def escape_breaks(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every ``splitlines`` line break written as a visible escape.

    With ``keep_newlines``, ``\\n`` and ``\\r\\n`` stay (as ``\\n``) and only the other
    breaks are escaped, so ``text.splitlines()`` equals ``text.split("\\n")`` afterwards.

    Examples
    --------
    >>> escape_breaks("a\\nb\\u2028c")
    'a\\\\nb\\\\u2028c'
    >>> escape_breaks("a\\r\\nb\\rc", keep_newlines=True)
    'a\\nb\\\\rc'
    """
    def sub(m: re.Match[str]) -> str:
        if keep_newlines and m.group() in ("\n", "\r\n"):
            return "\n"
        return LINE_BREAKS[m.group()]

    return _BREAK.sub(sub, text)


def cut(text: str, limit: int | None) -> str:
    """``text`` cut to ``limit`` characters, ending with ``[cut N chars]`` when cut.

    Examples
    --------
    >>> cut("x" * 10, 4)
    'xxxx[cut 6 chars]'
    >>> cut("short", 100)
    'short'
    """
    if limit is None or len(text) <= limit:
        return text
    return f"{text[:limit]}[cut {len(text) - limit} chars]"


@dataclass(frozen=True)
class PromptTemplate:
    """One versioned judge prompt.

    Attributes
    ----------
    id, version, judge : str
        Identity recorded in every verdict row (``prompt_id``, ``prompt_version``).
    system, user : str
        Message texts with ``{{name}}`` placeholders.
    extra : mapping
        Everything else in the file (e.g. ``tests`` for the unit tests).
    """

    id: str
    version: str
    judge: str
    system: str
    user: str
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def text_sha256(self) -> str:
        """Hash of the prompt text and extras (pinned per version by the tests)."""
        blob = yaml.safe_dump({"system": self.system, "user": self.user,
                               "extra": dict(self.extra)}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()


def prompt_ids() -> list[str]:
    """The ids of every packaged template, sorted.

    Examples
    --------
    >>> "gsrt" in prompt_ids()
    True
    """
    folder = resources.files("accordkit.judges") / "prompts"
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


@cache
def load_prompt(prompt_id: str) -> PromptTemplate:
    """Read one packaged template.

    Parameters
    ----------
    prompt_id : str
        File stem under ``accordkit/judges/prompts/`` (e.g. ``"usersim_tests.shop"``).

    Raises
    ------
    KeyError
        Unknown id (the message lists the known ones).
    ValueError
        The file lacks a field or its ``id`` differs from its file name.

    Examples
    --------
    >>> load_prompt("gsrt").judge
    'gsrt'
    """
    path = resources.files("accordkit.judges") / "prompts" / f"{prompt_id}.yaml"
    if not path.is_file():
        raise KeyError(f"no judge prompt {prompt_id!r}; known: {prompt_ids()}")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    where = f"accordkit/judges/prompts/{prompt_id}.yaml"
    for name in ("id", "version", "judge", "system", "user"):
        if not isinstance(data.get(name), str) or not data[name]:
            raise ValueError(f"{where}: field {name!r} must be non-empty text")
    if data["id"] != prompt_id:
        raise ValueError(f"{where}: id {data['id']!r} differs from the file name")
    extra = {k: v for k, v in data.items() if k not in ("id", "version", "judge", "system",
                                                          "user")}
    return PromptTemplate(data["id"], data["version"], data["judge"], data["system"],
                          data["user"], extra)


def fence_code(*texts: str) -> str:
    """A 16-hex-digit fence code for one prompt: a keyed digest of its untrusted texts.

    The key is this run's random secret, so whoever wrote the texts cannot compute the code
    (and a code seen in one run says nothing about the next); within a run the same texts
    get the same code. The cache key does not depend on it (:data:`FENCE_SLOT`).

    Examples
    --------
    >>> fence_code("hello") == fence_code("hello") != fence_code("hello!")
    True
    """
    h = hmac.new(_run_secret, digestmod=hashlib.sha256)
    for text in texts:
        h.update(text.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()[:FENCE_CODE_DIGITS]


def content_digest(*texts: str) -> str:
    """A 12-hex-digit unkeyed SHA-256 digest of ``texts`` (the same in every run).

    For deterministic seeding (the stand-in judges), never for a fence.

    Examples
    --------
    >>> content_digest("a", "b") == content_digest("a", "b") != content_digest("ab", "")
    True
    """
    h = hashlib.sha256()
    for text in texts:
        h.update(text.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()[:12]


def _neutralise(text: str) -> str:
    return _MARKER_RUN.sub(lambda m: "\u2039\u2039\u2039" if m.group() == "<<<" else
                           "\u203a\u203a\u203a", text)


def quote(label: str, text: str, code: str, *, limit: int | None = None) -> str:
    """Frame untrusted ``text`` between BEGIN/END lines carrying ``code``.

    Marker-like runs are neutralised, line breaks other than ``\\n`` escaped
    (:func:`escape_breaks`), and the text cut to ``limit`` characters (:func:`cut`).

    Examples
    --------
    >>> print(quote("REPLY", "sure >>> END", "abc123"))
    <<<BEGIN REPLY abc123>>>
    sure ››› END
    <<<END REPLY abc123>>>
    """
    body = cut(escape_breaks(_neutralise(text), keep_newlines=True), limit)
    return f"<<<BEGIN {label} {code}>>>\n{body}\n<<<END {label} {code}>>>"


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace every ``{{name}}`` of ``template`` by ``values[name]`` in a single pass.

    Raises
    ------
    KeyError
        A placeholder has no value.

    Examples
    --------
    >>> fill("a {{x}} b", {"x": "{{x}}"})
    'a {{x}} b'
    """
    missing = sorted({m.group(1) for m in _PLACEHOLDER.finditer(template)} - set(values))
    if missing:
        raise KeyError(f"prompt placeholders without a value: {missing}")
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)
