"""Marks to show on a rendered conversation: where it left the expected path, what the
action diff found at each call, and every review error at its message.

:func:`conversation_marks` turns an episode's rows of the action diff and of the review
tables into ``{turn_idx: [label, ...]}``, which
:func:`accordkit.report.conversation.render_conversation` and :func:`accordkit.show`
(``marks=``) show beside the messages. Labels are plain text (the renderer escapes them).
A mark with no message (a missing action, a review error that names no turn) goes under
:data:`NO_TURN`, which the renderer shows above the conversation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from ..metrics.reviews import ReviewTables

__all__ = ["conversation_marks", "NO_TURN", "MAX_REASON_CHARS"]

#: The key of marks that belong to no single message.
NO_TURN = -1
#: Longest review reasoning kept in a mark.
MAX_REASON_CHARS = 240


def _cut(text: Any, limit: int = MAX_REASON_CHARS) -> str:
    text = "" if text is None or (isinstance(text, float) and pd.isna(text)) else str(text)
    return text if len(text) <= limit else text[:limit] + "…"


def _turn(value: Any) -> int:
    return NO_TURN if value is None or pd.isna(value) else int(value)


def conversation_marks(episode_id: str, *, actions: pd.DataFrame | None = None,
                       reviews: ReviewTables | None = None) -> dict[int, list[str]]:
    """Marks for one episode's conversation, by ``turn_idx``.

    Parameters
    ----------
    episode_id : str
    actions : pandas.DataFrame, optional
        The action diff (any episodes; this one's rows are used).
    reviews : ReviewTables, optional
        Stored or judged reviews.

    Returns
    -------
    dict of int to list of str
        ``first divergence (<reason>)`` at the diverging turn; ``wrong arguments: <tool>
        (<arguments>)``, ``unrequested write: <tool>`` and ``matched after a hand-off``
        at the calls; ``missing: <tool>`` under :data:`NO_TURN`; and ``<review> ·
        <source> · <severity> · <fault type>: <reasoning>`` for each review error.

    Examples
    --------
    >>> import pandas as pd
    >>> diff = pd.DataFrame({"episode_id": ["e", "e"], "status": ["wrong_arguments", "missing"],
    ...                      "name": ["book", "pay"], "diff_args": ["cabin", None],
    ...                      "turn_idx": pd.array([4, None], "Int64"),
    ...                      "after_transfer": pd.array([False, None], "boolean"),
    ...                      "first_divergence_turn": pd.array([4, 4], "Int64"),
    ...                      "divergence_reason": ["wrong_arguments"] * 2})
    >>> conversation_marks("e", actions=diff)
    {4: ['first divergence (wrong_arguments)', 'wrong arguments: book (cabin)'], -1: ['missing: pay']}
    """
    marks: dict[int, list[str]] = {}

    def add(turn: int, label: str) -> None:
        marks.setdefault(turn, []).append(label)

    if actions is not None and len(actions):
        rows = actions[actions["episode_id"] == episode_id]
        if len(rows):
            first = rows.iloc[0]
            if pd.notna(first.get("divergence_reason")):
                add(_turn(first.get("first_divergence_turn")),
                    f"first divergence ({first['divergence_reason']})")
        for _, row in rows.iterrows():
            status, name = row["status"], row["name"]
            if status == "wrong_arguments":
                add(_turn(row["turn_idx"]), f"wrong arguments: {name} ({row['diff_args']})")
            elif status == "extra":
                add(_turn(row["turn_idx"]), f"unrequested write: {name}")
            elif status == "missing":
                add(NO_TURN, f"missing: {name}")
            elif status == "matched" and row.get("after_transfer") is True:
                add(_turn(row["turn_idx"]), f"matched after a hand-off: {name}")
    if reviews is not None and len(reviews.errors):
        errors = reviews.errors[reviews.errors["episode_id"] == episode_id]
        for _, err in errors.iterrows():
            parts = [err["review"], err["source"], err["severity"], err["fault_type"]]
            head = " · ".join(str(p) for p in parts if p is not None and not pd.isna(p))
            add(_turn(err["turn_idx"]), f"{head}: {_cut(err['reasoning'])}")
    return marks


def merge_marks(*parts: Mapping[int, list[str]] | None) -> dict[int, list[str]]:
    """Several mark mappings as one (labels of a turn in the order given)."""
    out: dict[int, list[str]] = {}
    for part in parts:
        for turn, labels in (part or {}).items():
            out.setdefault(int(turn), []).extend(labels)
    return out
