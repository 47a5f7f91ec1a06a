"""Recover AgentChangeBench persona ids from the persona text stored in result files.

Result files hold the full persona text, not its id; the id is found again through a table of
sha256 digests of the public persona texts (``accordkit/resources/acb_personas.json``).
"""

from __future__ import annotations

import hashlib
import json
import pkgutil
import re
from functools import cache

__all__ = ["persona_id", "PERSONA_IDS", "UNMATCHED"]

UNMATCHED = "UNMATCHED"
PERSONA_IDS = ("EASY_1", "EASY_2", "MEDIUM_1", "MEDIUM_2", "HARD_1", "HARD_2")
_TAU2_TAG = re.compile(r"\[PERSONA:([^\]]+)\]\s*$")


@cache
def _table() -> dict[str, dict[str, str]]:
    # pkgutil rather than importlib.resources: the same loader, without importing the
    # resources machinery on the first load of a process (about 2 ms)
    data = pkgutil.get_data("accordkit.resources", "acb_personas.json")
    if data is None:  # pragma: no cover - a loader that cannot give package data
        raise FileNotFoundError("accordkit/resources/acb_personas.json")
    return json.loads(data.decode("utf-8"))["domains"]


def persona_id(text: str | None, *, domain: str, task_id: str | None = None) -> str | None:
    """Return the persona id for a persona text.

    Parameters
    ----------
    text : str or None
        ``user_scenario.persona`` as stored: a full text, a raw id, or None.
    domain : str
        The domain whose persona table is searched.
    task_id : str, optional
        tau2 telecom task ids end in ``[PERSONA:Easy]``; that tag is used when the
        text is not a known AgentChangeBench persona.

    Returns
    -------
    str or None
        ``EASY_1`` ... ``HARD_2`` when the text matches, the text itself when it already is
        an id, the telecom tag when present, ``"UNMATCHED"`` for unknown text, and None
        when there is no persona.

    Examples
    --------
    >>> persona_id("EASY_1", domain="airline")
    'EASY_1'
    >>> persona_id(None, domain="retail") is None
    True
    >>> persona_id("someone new", domain="banking")
    'UNMATCHED'
    """
    tag = _TAU2_TAG.search(task_id or "")
    if text is None or not text.strip():
        return tag.group(1) if tag else None
    stripped = text.strip()
    if stripped in PERSONA_IDS:
        return stripped
    digest = hashlib.sha256(stripped.encode("utf-8")).hexdigest()
    found = _table().get(domain, {}).get(digest)
    if found:
        return found
    return tag.group(1) if tag else UNMATCHED
