"""``outcome``: AcCoRD-Shop purchase criteria, one 0/1 call per criterion.

Items: every preference (``item`` = ``pref_id``) judged against the value the purchase must
match — the backoff for an unachievable preference, the trigger value for a triggered one,
the stated value otherwise (a soft-underspecified preference without a value is not judged)
— plus ``"product_type"`` and ``"price"``, judged against the customer's request. Only
completed shop episodes with a stored purchase (``outcome_json``) are judged: AcCoRD-Travel is
scored exactly, without a judge.

Length caps (the rest replaced by ``[cut N chars]``): :data:`MAX_CARD_CHARS` for the
product card, :data:`MAX_CRITERION_CHARS` for one requirement.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..benchmarks import judged_by
from ..verdicts.parse import parse_label
from .calls import ItemRef, JudgeCall, JudgeSpec
from .prompts import PromptTemplate, fence_code, fill, load_prompt, quote

__all__ = ["SPEC", "LABELS", "target_value", "criteria", "product_card", "MAX_CARD_CHARS",
           "MAX_CRITERION_CHARS"]

LABELS = ("1", "0")
#: Longest product card kept whole in a prompt.
MAX_CARD_CHARS = 4000
#: Longest requirement (criterion) text kept whole in a prompt.
MAX_CRITERION_CHARS = 4000


def target_value(pref: Mapping[str, Any]) -> str | None:
    """The value a purchase must match for one preference (``None``: not judged).

    Examples
    --------
    >>> target_value({"dynamic": "unachievable", "value": "red", "backoff": "blue"})
    'blue'
    >>> target_value({"dynamic": "soft_underspec", "value": None}) is None
    True
    """
    dynamic = pref.get("dynamic")
    if dynamic == "unachievable":
        return pref.get("backoff") or None
    if dynamic == "triggered":
        return pref.get("trigger") or pref.get("value") or None
    return pref.get("value") or None


def product_card(outcome: Mapping[str, Any]) -> str:
    """The purchased product as labelled lines (every stored field, options last)."""
    labels = {"name": "Name", "item_id": "Item id", "description": "Description",
              "price": "Price", "attributes": "Attributes", "features": "Features",
              "selected_options": "Options selected at purchase"}
    lines = []
    for key in sorted(outcome, key=lambda k: (list(labels).index(k) if k in labels else 50, k)):
        value = outcome[key]
        if isinstance(value, Mapping):
            value = ", ".join(f"{k}: {v}" for k, v in value.items()) or "(none)"
        elif isinstance(value, list):
            value = ", ".join(map(str, value)) or "(none)"
        lines.append(f"{labels.get(key, key)}: {value}")
    return "\n".join(lines)


def criteria(episode: Mapping[str, Any], tpl: PromptTemplate) -> list[tuple[str, str]]:
    """``(item, criterion text)`` for every judged criterion of a shop episode."""
    phrases = tpl.extra["criteria"]
    request = str(episode.get("persona_text") or episode.get("instructions") or "")
    out = [("product_type", fill(phrases["product_type"], {"request": request})),
           ("price", fill(phrases["price"], {"request": request}))]
    for pref in episode.get("preferences") or ():
        value = target_value(pref)
        if value is None:
            continue
        slot = pref.get("slot") or ""
        if slot == "attribute":
            text = fill(phrases["attribute"], {"value": value})
        elif slot.startswith("option:"):
            text = fill(phrases["option"], {"name": slot.split(":", 1)[1], "value": value})
        else:
            text = fill(phrases["other"], {"name": pref.get("name") or slot, "value": value})
        out.append((str(pref["pref_id"]), text))
    return out


def build(episode: Mapping[str, Any]) -> list[JudgeCall]:
    """One call per criterion of a completed shop episode; none for other episodes."""
    if episode.get("domain") != "shop" or not episode.get("outcome_json"):
        return []
    try:
        outcome = json.loads(episode["outcome_json"])
    except json.JSONDecodeError as exc:
        raise ValueError(f"record {episode.get('episode_id')}, field outcome_json: "
                         f"not valid JSON ({exc})") from None
    if not isinstance(outcome, Mapping):
        raise ValueError(f"record {episode.get('episode_id')}, field outcome_json: expected "
                         f"an object, got {type(outcome).__name__}")
    tpl = load_prompt("outcome.shop")
    card = product_card(outcome)
    calls = []
    for item, criterion in criteria(episode, tpl):
        code = fence_code(card, criterion)
        user = fill(tpl.user, {
            "product": quote("PRODUCT", card, code, limit=MAX_CARD_CHARS),
            "criterion": quote("REQUIREMENT", criterion, code, limit=MAX_CRITERION_CHARS)})
        calls.append(JudgeCall("outcome", tpl.id, tpl.version,
                               (("system", fill(tpl.system, {"fence": code})), ("user", user)),
                               (ItemRef(episode["episode_id"], item, None),), fence=code))
    return calls


def parse(raw: str, call: JudgeCall) -> list[tuple[str, str]]:
    return [(parse_label(raw, LABELS), raw)]


def _has_stored(episode: Mapping[str, Any]) -> bool:
    return any(p.get("satisfied") is not None for p in episode.get("preferences") or ())


SPEC = JudgeSpec(name="outcome", benchmarks=judged_by("outcome"), verdicts=LABELS,
                 build=build, parse=parse, has_stored=_has_stored)
