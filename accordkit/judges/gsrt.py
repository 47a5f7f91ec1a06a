"""``gsrt``: goal-shift and acknowledgment detection (the stored ``gsrt_v2`` structure).

One call per episode with a goal sequence. One row per episode: ``item`` = ``"shifts"``,
``verdict`` = the normalised JSON output (``{"start_goal": {...}, "user_goal_shifts":
[...]}``, see :func:`accordkit.verdicts.parse.parse_gsrt`) or ``"invalid"``; convert it to the
canonical ``gsrt_judge`` struct with :func:`accordkit.verdicts.parse.gsrt_struct`. Unlike the
upstream judge, unreadable output is ``invalid``, never an empty (no-shift) result.

The goals come from the task file, so they are untrusted like the conversation: they are
quoted in their own fence, one per line, each escaped and cut at :data:`MAX_GOAL_CHARS`.
The only value written outside a fence is the number of required shifts, checked to be a
whole number (anything else is an error naming the record).
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from typing import Any

from ..benchmarks import judged_by
from ..verdicts.parse import INVALID, parse_gsrt
from .calls import ItemRef, JudgeCall, JudgeSpec
from .prompts import fence_code, fill, load_prompt, quote
from .transcript import indexed_lines, one_line

__all__ = ["SPEC", "ITEM", "MAX_GOAL_CHARS"]

ITEM = "shifts"
#: Longest goal name kept whole in a prompt.
MAX_GOAL_CHARS = 200


def build(episode: Mapping[str, Any]) -> list[JudgeCall]:
    """One call for an episode with a goal sequence; none without goals."""
    goals = list(episode.get("goals") or ())
    if not goals:
        return []
    max_shifts = episode.get("required_shifts")
    if max_shifts is None:
        max_shifts = len(goals) - 1
    if isinstance(max_shifts, bool) or not isinstance(max_shifts, numbers.Real) \
            or not math.isfinite(max_shifts) or max_shifts != int(max_shifts) \
            or max_shifts < 0:
        raise ValueError(f"record {episode.get('episode_id')}, field required_shifts: "
                         f"expected a whole number of at least 0, got "
                         f"{one_line(repr(max_shifts), limit=60)}")
    tpl = load_prompt("gsrt")
    conversation = indexed_lines(episode.get("messages") or ())
    goal_list = "\n".join(one_line(str(g), limit=MAX_GOAL_CHARS) for g in goals)
    code = fence_code(conversation, goal_list)
    user = fill(tpl.user, {"goals": quote("GOALS", goal_list, code),
                           "max_shifts": str(int(max_shifts)),
                           "conversation": quote("CONVERSATION", conversation, code)})
    return [JudgeCall("gsrt", tpl.id, tpl.version,
                      (("system", fill(tpl.system, {"fence": code})), ("user", user)),
                      (ItemRef(episode["episode_id"], ITEM, None),), fence=code)]


def parse(raw: str, call: JudgeCall) -> list[tuple[str, str]]:
    obj = parse_gsrt(raw)
    return [(INVALID if obj is None else json.dumps(obj, ensure_ascii=False), raw)]


SPEC = JudgeSpec(name="gsrt", benchmarks=judged_by("gsrt"), verdicts=(),
                 build=build, parse=parse,
                 has_stored=lambda episode: episode.get("gsrt_judge") is not None)
