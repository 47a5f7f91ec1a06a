"""``nl_assertions``: AgentChangeBench natural-language assertions, met / not met.

One call per episode lists every assertion of the task (as upstream does) and asks for a
verdict and a short justification each. Rows: ``item`` = the assertion's index as text
("0", "1", ...), ``verdict`` ∈ met / not_met / invalid, ``raw`` = that assertion's JSON
result (with its ``justification``), or the whole reply when it could not be read.

Each assertion is written on one line (whitespace, line breaks included, collapsed) and cut
at :data:`MAX_ASSERTION_CHARS` with ``[cut N chars]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..benchmarks import judged_by
from ..verdicts.parse import parse_nl_results
from .calls import ItemRef, JudgeCall, JudgeSpec
from .prompts import cut, fence_code, fill, load_prompt, quote
from .transcript import indexed_lines

__all__ = ["SPEC", "LABELS", "assertions_of", "MAX_ASSERTION_CHARS"]

LABELS = ("met", "not_met")
#: Longest assertion kept whole in a prompt.
MAX_ASSERTION_CHARS = 1000


def assertions_of(episode: Mapping[str, Any]) -> list[str]:
    """The task's NL assertions (empty when it has none)."""
    return list((episode.get("criteria") or {}).get("nl_assertions") or ())


def build(episode: Mapping[str, Any]) -> list[JudgeCall]:
    """One call covering every assertion of the episode's task; none without assertions."""
    assertions = assertions_of(episode)
    if not assertions:
        return []
    tpl = load_prompt("nl_assertions")
    conversation = indexed_lines(episode.get("messages") or ())
    listing = "\n".join(f"{i}. {cut(' '.join(str(a).split()), MAX_ASSERTION_CHARS)}"
                        for i, a in enumerate(assertions))
    code = fence_code(conversation, listing)
    user = fill(tpl.user, {"assertions": quote("STATEMENTS", listing, code),
                           "conversation": quote("CONVERSATION", conversation, code)})
    items = tuple(ItemRef(episode["episode_id"], str(i), None) for i in range(len(assertions)))
    return [JudgeCall("nl_assertions", tpl.id, tpl.version,
                      (("system", fill(tpl.system, {"fence": code})), ("user", user)), items,
                      {"n": len(assertions)}, fence=code)]


def parse(raw: str, call: JudgeCall) -> list[tuple[str, str]]:
    return parse_nl_results(raw, len(call.items))


SPEC = JudgeSpec(name="nl_assertions", benchmarks=judged_by("nl_assertions"),
                 verdicts=LABELS, build=build, parse=parse,
                 has_stored=lambda episode: episode.get("nl_verdicts") is not None)
