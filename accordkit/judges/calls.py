"""What a judge asks: one :class:`JudgeCall` per LLM request, covering one or more items.

A judge (:class:`JudgeSpec`) turns an episode into calls and a reply into verdicts. The
runner never looks inside: it renders nothing, it only sends ``messages`` and hands the
reply back to ``spec.parse``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .prompts import FENCE_SLOT

__all__ = ["ItemRef", "JudgeCall", "JudgeSpec"]


@dataclass(frozen=True)
class ItemRef:
    """One judged item: one row of the verdict table."""

    episode_id: str
    item: str
    turn_idx: int | None = None


@dataclass(frozen=True)
class JudgeCall:
    """One request to the judge model.

    Attributes
    ----------
    judge, prompt_id, prompt_version : str
        Which judge and template produced it.
    messages : tuple of (role, content)
        The fully rendered chat messages.
    items : tuple of ItemRef
        The verdict rows its reply fills (one for most judges; one per assertion for
        ``nl_assertions``).
    context : mapping
        What the parser needs besides the reply (e.g. the number of assertions).
    fence : str
        The fence code written in ``messages`` (random per run); the cache key replaces it
        by :data:`accordkit.judges.prompts.FENCE_SLOT`, so a resumed run finds its replies.
    """

    judge: str
    prompt_id: str
    prompt_version: str
    messages: tuple[tuple[str, str], ...]
    items: tuple[ItemRef, ...]
    context: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    fence: str = ""

    def chat(self) -> list[dict[str, str]]:
        """The messages in the chat-completions format."""
        return [{"role": role, "content": content} for role, content in self.messages]

    def chat_for_key(self) -> list[dict[str, str]]:
        """:meth:`chat` with the fence code replaced by a fixed slot (what the cache key
        hashes: the same request in every run)."""
        if not self.fence:
            return self.chat()
        return [{"role": role, "content": content.replace(self.fence, FENCE_SLOT)}
                for role, content in self.messages]


#: ``parse(raw_reply, call) -> [(verdict, raw_for_row), ...]`` aligned with ``call.items``.
Parser = Callable[[str, JudgeCall], list[tuple[str, str]]]


@dataclass(frozen=True)
class JudgeSpec:
    """A judge: how to build its calls and read its replies.

    Attributes
    ----------
    name : str
        The ``judge`` column value.
    benchmarks : tuple of str
        Episode benchmarks it applies to (others are skipped).
    verdicts : tuple of str
        Valid verdicts besides ``"invalid"`` (for ``gsrt``: empty, the verdict is JSON).
    build : callable
        ``build(episode: dict) -> list[JudgeCall]``.
    parse : callable
        See :data:`Parser`.
    has_stored : callable
        ``has_stored(episode) -> bool``: the episode already holds this judge's output
        (skipped unless ``skip_stored=False``).
    """

    name: str
    benchmarks: tuple[str, ...]
    verdicts: tuple[str, ...]
    build: Callable[[Mapping[str, Any]], list[JudgeCall]]
    parse: Parser
    has_stored: Callable[[Mapping[str, Any]], bool]
