"""``ak.show``: look at one conversation, or one result table, inline in JupyterLab.

It renders what the HTML report renders, with the same code: conversations through
:func:`accordkit.report.conversation.render_conversation` (roles, tool calls and results,
preference reveals, goal shifts marked) and interval tables through
:func:`accordkit.tables.format_table`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .stats import COMPARE_COLUMNS, SUMMARY_COLUMNS

__all__ = ["show", "find_episode"]

#: Columns of a summary / comparison table that are not grouping keys.
_STAT_COLUMNS = frozenset(SUMMARY_COLUMNS) | frozenset(COMPARE_COLUMNS)


def find_episode(episodes: Any, episode_id: str) -> dict[str, Any]:
    """Return the canonical record with ``episode_id`` from a dataset or a frame.

    Parameters
    ----------
    episodes : datasets.Dataset or pandas.DataFrame
        Canonical episodes, as :func:`accordkit.load` or :func:`accordkit.to_frame` give.
    episode_id : str
        The ``episode_id`` to look up.

    Raises
    ------
    KeyError
        When no episode has that id (the message names it and the number searched).
    """
    import pandas as pd

    if isinstance(episodes, pd.DataFrame):
        if "messages" not in episodes.columns:
            raise TypeError("this frame has no 'messages' column: pass the dataset itself, "
                            "or ak.to_frame(ds, nested='keep')")
        hits = episodes.index[episodes["episode_id"] == episode_id]
        if len(hits):
            return {k: _plain(v) for k, v in episodes.loc[hits[0]].items()}
        n = len(episodes)
    else:
        import pyarrow.compute as pc

        from ._internal.arrow import arrow_table

        table = arrow_table(episodes)
        mask = pc.equal(table.column("episode_id"), episode_id).to_numpy(zero_copy_only=False)
        found = mask.nonzero()[0]
        if len(found):
            return episodes[int(found[0])]
        n = table.num_rows
    raise KeyError(f"no episode with episode_id {episode_id!r} among {n} episodes")


def _plain(value: Any) -> Any:
    """pandas/numpy values of a frame row as the plain Python a dataset record holds."""
    import numpy as np
    import pandas as pd

    if isinstance(value, np.ndarray | list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        return value.item()
    return value


def _is_summary(frame: Any) -> bool:
    return hasattr(frame, "columns") and {"metric", "estimate"} <= set(frame.columns)


def show(item: Any, *, episodes: Any = None, rows: Any = None, columns: Any = "metric",
         max_tool_chars: int = 400, digits: int = 3, marks: Any = None,
         actions: Any = None, reviews: Any = None) -> Any:
    """Render one conversation or one result table as the report shows it.

    Parameters
    ----------
    item : str, mapping, pandas.Series or pandas.DataFrame
        * an ``episode_id`` (give ``episodes``);
        * a row of a scores frame (``ak.score(...)``) or of ``ak.to_frame(...)`` — a
          ``Series`` with ``episode_id``; its conversation is looked up in ``episodes``
          unless the row carries ``messages`` itself;
        * a canonical record (``ds[i]``);
        * a table from :func:`accordkit.summarize` or :func:`accordkit.compare`, shown
          with intervals as in the report.
    episodes : datasets.Dataset or pandas.DataFrame, optional
        Where conversations are looked up by id.
    rows, columns : str or list of str, optional
        For tables: the row and column labels (default: every grouping column as rows,
        metrics as columns).
    max_tool_chars : int, default 400
        Tool results longer than this are cut (the length is shown).
    digits : int, default 3
        Decimals in tables.
    marks : mapping of int to list of str, optional
        Labels to mark at messages, by ``turn_idx`` (``-1``: above the conversation).
    actions, reviews : optional
        An action diff (:func:`accordkit.action_diff`) and review tables
        (:func:`accordkit.review_tables`): the conversation is shown with its first
        divergence, the action diff's findings and every review error marked at their
        messages (:func:`accordkit.analysis.marks.conversation_marks`).

    Returns
    -------
    object
        Displayed by Jupyter as HTML; ``str()`` of it is the HTML text, and its ``repr``
        (what a terminal REPL prints) plain text: the messages, or the table in Markdown.

    Raises
    ------
    TypeError
        When a conversation is asked for by id without ``episodes``.
    KeyError
        When the id is not among ``episodes``.

    Examples
    --------
    >>> ep = {"episode_id": "e1", "messages": [
    ...     {"role": "user", "content": "I need a flight", "turn_idx": 0}]}
    >>> "I need a flight" in str(show(ep))
    True
    """
    import pandas as pd

    from .report.conversation import ConversationView, render_conversation

    if isinstance(item, pd.DataFrame):
        if not _is_summary(item):
            raise TypeError("show() renders tables from ak.summarize / ak.compare (with "
                            "'metric' and 'estimate' columns); display other frames directly")
        from .tables import format_table

        keys = [c for c in item.columns if c not in _STAT_COLUMNS]
        row_keys = rows if rows is not None else (keys or None)
        if not row_keys:
            item = item.assign(table="all")
            row_keys = ["table"]
        return ConversationView(
            format_table(item, rows=row_keys, columns=columns, fmt="html", digits=digits),
            format_table(item, rows=row_keys, columns=columns, fmt="markdown", digits=digits))
    if isinstance(item, pd.Series):
        item = item.to_dict()

    def marked(episode_id: Any) -> Any:
        if actions is None and reviews is None:
            return marks
        from .analysis.marks import conversation_marks, merge_marks

        return merge_marks(conversation_marks(str(episode_id), actions=actions,
                                              reviews=reviews), marks)

    if isinstance(item, Mapping) and item.get("messages") is not None:
        return render_conversation(item, max_tool_chars=max_tool_chars,
                                   marks=marked(item.get("episode_id")))
    episode_id = item.get("episode_id") if isinstance(item, Mapping) else item
    if not isinstance(episode_id, str):
        raise TypeError(f"show() takes an episode_id, a scores row, a record or a summary "
                        f"table; got {type(item).__name__}")
    if episodes is None:
        raise TypeError(f"show({episode_id!r}) needs the episodes to look it up in: "
                        "ak.show(episode_id, episodes=ds) with ds = ak.load(...)")
    return render_conversation(find_episode(episodes, episode_id),
                               max_tool_chars=max_tool_chars, marks=marked(episode_id))
