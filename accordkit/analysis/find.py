"""``find``: the episodes and turns that match some text, a tool, a role or an action status.

Every message predicate is one Arrow kernel over the flattened messages of all episodes
(:class:`~accordkit.metrics.calls.Transcripts`), so a search over 100,000 episodes takes a
fraction of a second (``benchmarks/results/why_it_failed.md``). Python only touches the
matching rows, to cut their snippets.

A regular expression (``regex=True``) is matched by Arrow's RE2 engine everywhere — the
search and the snippet's match position — never by Python's backtracking :mod:`re`, so the
time is linear in the text whatever the pattern (``(\\w+\\s?)*refund`` on a sentence
without "refund" included). The pattern is RE2's syntax: no backreferences or lookaround.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..metrics.action_diff import STATUSES
from ..metrics.calls import Transcripts, arrow_to_numpy
from ..names import CONFIG_COLUMNS, ROLES

__all__ = ["find", "FIND_COLUMNS", "SNIPPET_CHARS"]

#: Columns of :func:`find`.
FIND_COLUMNS = ["episode_id", "configuration", "turn_idx", "role", "tool", "status",
                "snippet"]
#: Shown for a configuration column the episode does not record (as the report does).
_UNKNOWN = "?"
#: Characters of context on each side of a text match in ``snippet``.
SNIPPET_CHARS = 40


def _names(value: str | Sequence[str] | None, what: str) -> list[str] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value)
    if not items or not all(isinstance(v, str) and v for v in items):
        raise ValueError(f"{what} must be a non-empty string or a list of them, got {value!r}")
    return items


def _spans(texts: list[str | None], needle: str, *, regex: bool,
           case: bool) -> list[tuple[int, int] | None]:
    """``(start, end)`` of the first match in each text (character positions), or None.

    A regular expression is run by Arrow's RE2 (linear time), a plain text by :mod:`re`
    on its escaped form (a literal: no backtracking).

    Examples
    --------
    >>> _spans(["héllo refund", None, "x"], r"ref\\w+", regex=True, case=False)
    [(6, 12), None, None]
    """
    if not regex:
        pattern = re.compile(re.escape(needle), 0 if case else re.IGNORECASE)
        out: list[tuple[int, int] | None] = []
        for text in texts:
            m = pattern.search(text) if text else None
            out.append(m.span() if m else None)
        return out
    arr = pa.array(texts, pa.string())
    starts = pc.find_substring_regex(arr, pattern=needle, ignore_case=not case).to_pylist()
    flags = "" if case else "(?i)"
    # the first match removed: the length lost is the match's length
    cut = pc.replace_substring_regex(arr, pattern=f"{flags}{needle}", replacement="",
                                     max_replacements=1).to_pylist()
    out = []
    for text, start, rest in zip(texts, starts, cut, strict=True):
        if not text or start is None or start < 0 or rest is None:
            out.append(None)
            continue
        lo = len(text.encode("utf-8", "surrogatepass")[:start].decode("utf-8", "ignore"))
        out.append((lo, lo + len(text) - len(rest)))
    return out


def _snippet(text: str | None, span: tuple[int, int] | None, *, searched: bool) -> str | None:
    if not text:
        return text
    if not searched:
        return text if len(text) <= 2 * SNIPPET_CHARS else text[:2 * SNIPPET_CHARS] + " …"
    if span is None:
        return text[:2 * SNIPPET_CHARS]
    lo, hi = max(0, span[0] - SNIPPET_CHARS), min(len(text), span[1] + SNIPPET_CHARS)
    return ("… " if lo else "") + text[lo:hi] + (" …" if hi < len(text) else "")


def find(ds: Any, *, text: str | None = None, tool: str | Sequence[str] | None = None,
         role: str | Sequence[str] | None = None, status: str | Sequence[str] | None = None,
         actions: pd.DataFrame | None = None, regex: bool = False, case: bool = False,
         limit: int | None = None) -> pd.DataFrame:
    """The episodes and turns matching every condition given.

    Parameters
    ----------
    ds : datasets.Dataset or pyarrow.Table
        Canonical episodes.
    text : str, optional
        Text in a message's content or in the arguments of one of its tool calls
        (case-insensitive unless ``case``; a regular expression with ``regex``).
    tool : str or list of str, optional
        A tool called in the message (exact name).
    role : str or list of str, optional
        The message's role (``user``, ``assistant``, ``tool``, ``system``).
    status : str or list of str, optional
        An action-diff status (``matched``, ``wrong_arguments``, ``missing``, ``extra``):
        only episodes with such a row (of ``tool`` when given). Without text and role, the
        rows are the action-diff rows themselves, at the turn of their call (null for a
        missing action).
    actions : pandas.DataFrame, optional
        The episodes' action diff (:func:`accordkit.action_diff` or the store's ``action``
        level); computed when ``status`` needs it and it is not given.
    regex, case : bool
        Read ``text`` as a regular expression; match case.
    limit : int, optional
        At most this many rows (the first, in episode and turn order).

    Returns
    -------
    pandas.DataFrame
        :data:`FIND_COLUMNS`: ``episode_id``, ``configuration`` (the episode's agent model,
        agent implementation, user model and user implementation as the report labels
        them, ``"gpt-4.1 (llm_agent) | user: gpt-4.1 (user_simulator)"``, prefixed with the
        benchmark when the episodes are of several; categorical), ``turn_idx``, ``role``, ``tool`` (the first
        matching call's name, or the action's name for a status row), ``status`` (for a
        status search) and ``snippet`` (the text around the match). Episodes in the
        dataset's order, turns in conversation order.

    Examples
    --------
    >>> from accordkit.testing import build_episode, episode_table, message
    >>> rec = build_episode([message("user", "Please cancel reservation R1."),
    ...                      message("assistant", calls=[("cancel_reservation", {"id": "R1"})]),
    ...                      message("tool", "Cancelled.")])
    >>> find(episode_table(rec), text="cancel", role="user")[["turn_idx", "snippet"]]
       turn_idx                        snippet
    0         0  Please cancel reservation R1.
    >>> find(episode_table(rec), tool="cancel_reservation")["turn_idx"].tolist()
    [1]
    """
    from .._internal.arrow import arrow_table

    table = ds if isinstance(ds, pa.Table) else arrow_table(ds)
    tools = _names(tool, "tool")
    roles = _names(role, "role")
    statuses = _names(status, "status")
    if roles is not None and not set(roles) <= set(ROLES):
        raise ValueError(f"unknown role(s) {sorted(set(roles) - set(ROLES))}; expected some "
                         f"of {ROLES}")
    if statuses is not None and not set(statuses) <= set(STATUSES):
        raise ValueError(f"unknown status(es) {sorted(set(statuses) - set(STATUSES))}; "
                         f"expected some of {STATUSES}")
    if text is not None and (not isinstance(text, str) or not text):
        raise ValueError(f"text must be a non-empty string, got {text!r}")
    if text is None and tools is None and roles is None and statuses is None:
        raise ValueError("find needs at least one of text=, tool=, role=, status=")
    if text is not None and regex:  # a bad pattern is the caller's error, named by Arrow
        try:
            pc.match_substring_regex(pa.array([""]), pattern=text)
        except pa.ArrowInvalid as exc:
            raise ValueError(f"text: not a regular expression RE2 reads ({exc})") from None
    ids = table.column("episode_id")
    # episodes allowed by the status condition, and the matching action rows
    rows_of_status = None
    allowed = None
    if statuses is not None:
        if actions is None:
            from ..metrics.action_diff import action_diff

            actions = action_diff(table)
        rows_of_status = actions[actions["status"].isin(statuses)]
        if tools is not None:
            rows_of_status = rows_of_status[rows_of_status["name"].isin(tools)]
        allowed = set(rows_of_status["episode_id"])
        if text is None and roles is None:
            return _status_rows(table, rows_of_status, limit)
    tr = Transcripts(table)
    n_msg = len(tr.msg_episode)
    keep = np.ones(n_msg, dtype=bool)
    if roles is not None:
        keep &= arrow_to_numpy(pc.is_in(tr.message_field("role"), value_set=pa.array(roles)), False)
    first_tool = None
    if tools is not None:
        hit = arrow_to_numpy(pc.is_in(tr.call_field("name"), value_set=pa.array(tools)), False)
        with_tool = np.zeros(n_msg, dtype=bool)
        with_tool[tr.call_message[hit]] = True
        keep &= with_tool
        first_tool = _first_call_names(tr, hit, n_msg)
    if allowed is not None:
        keep &= np.isin(np.arange(table.num_rows), _positions(ids, allowed))[tr.msg_episode]
    if text is not None:
        in_text = _text_hits(tr.message_chunks("content"), text, regex=regex, case=case)
        args = tr.call_arguments
        in_args = _text_hits(args, text, regex=regex, case=case)
        args_msg = np.zeros(n_msg, dtype=bool)
        args_msg[tr.call_message[in_args]] = True
        keep &= in_text | args_msg
    rows = np.flatnonzero(keep)
    if limit is not None:
        rows = rows[:limit]
    contents = tr.message_values("content", rows).to_pylist()
    spans: list[tuple[int, int] | None] = [None] * len(contents)
    if text is not None:
        spans = _spans(contents, text, regex=regex, case=case)
        # a match in the arguments only: show the arguments of the call that matched
        need = [i for i, span in enumerate(spans) if span is None]
        if need:
            call_text = _call_text_of(tr, rows[need])
            for i, t, span in zip(need, call_text, _spans(call_text, text, regex=regex,
                                                          case=case), strict=True):
                contents[i], spans[i] = t, span
    snippets = [_snippet(c, span, searched=text is not None)
                for c, span in zip(contents, spans, strict=True)]
    out = pd.DataFrame({
        "episode_id": ids.take(pa.array(tr.msg_episode[rows])).to_pylist(),
        "configuration": _configurations(table, tr.msg_episode[rows]),
        "turn_idx": pd.array(tr.msg_turn_idx[rows], dtype="Int64"),
        "role": tr.message_values("role", rows).to_pylist(),
        "tool": [first_tool[r] for r in rows] if first_tool is not None
        else _first_call_names(tr, None, n_msg, rows=rows),
        "status": None,
        "snippet": snippets,
    })
    if rows_of_status is not None:
        joined = rows_of_status.groupby("episode_id")["status"].agg(
            lambda s: ", ".join(sorted(set(s))))
        out["status"] = out["episode_id"].map(joined)
    return out[FIND_COLUMNS]


def _configurations(table: pa.Table, positions: np.ndarray) -> pd.Categorical | list[str]:
    """The configuration label of the episodes at ``positions`` (the report's form:
    ``agent (method) | user: user model (implementation)``, ``?`` for what is not
    recorded; prefixed with the benchmark when the table holds several). Built once per
    episode, in Arrow, then spread over the hits."""
    if not len(positions):
        return []
    unique, inverse = np.unique(np.asarray(positions, dtype=np.int64), return_inverse=True)
    take = pa.array(unique)

    def column(name: str) -> pa.Array:
        if name not in table.column_names:
            return pa.array([_UNKNOWN] * len(unique), pa.string())
        values = pc.cast(table.column(name).take(take), pa.string())
        return pc.fill_null(values, _UNKNOWN)

    agent, method, user, impl = (column(c) for c in CONFIG_COLUMNS)
    labels = pc.binary_join_element_wise(agent, " (", method, ") | user: ", user, " (", impl,
                                         ")", "")
    if "benchmark" in table.column_names and \
            len(pc.unique(table.column("benchmark"))) > 1:
        labels = pc.binary_join_element_wise(column("benchmark"), ": ", labels, "")
    # a handful of labels over many hits: categorical codes, no string per hit
    codes, names = pd.factorize(np.asarray(labels.to_pylist(), dtype=object))
    return pd.Categorical.from_codes(codes[inverse], categories=names)


def _text_hits(values: Any, needle: str, *, regex: bool, case: bool) -> np.ndarray:
    kernel = pc.match_substring_regex if regex else pc.match_substring
    hits = kernel(values, pattern=needle, ignore_case=not case)
    if isinstance(hits, pa.ChunkedArray):
        hits = hits.combine_chunks() if hits.num_chunks != 1 else hits.chunk(0)
    return arrow_to_numpy(hits, False).astype(bool)


def _positions(ids: pa.ChunkedArray, wanted: set[str]) -> np.ndarray:
    mask = pc.is_in(ids, value_set=pa.array(sorted(wanted), pa.string()))
    return np.flatnonzero(arrow_to_numpy(pc.fill_null(mask, False), False))


def _first_call_names(tr: Transcripts, hit: np.ndarray | None, n_msg: int, *,
                      rows: np.ndarray | None = None) -> list[Any]:
    """Per message (or per message of ``rows``): the name of its first call (of those
    ``hit``, when given), or None."""
    names = tr.call_field("name")
    calls = np.arange(len(tr.call_message)) if hit is None else np.flatnonzero(hit)
    if rows is not None:
        wanted = np.zeros(n_msg, dtype=bool)
        wanted[rows] = True
        calls = calls[wanted[tr.call_message[calls]]]
    first = np.full(n_msg, -1, dtype=np.int64)
    # calls are in message order: the first per message wins
    msgs = tr.call_message[calls]
    if len(calls):
        starts = np.r_[True, msgs[1:] != msgs[:-1]]
        first[msgs[starts]] = calls[starts]
    if rows is None:
        out: list[Any] = [None] * n_msg
        idx = np.flatnonzero(first >= 0)
        for m, name in zip(idx.tolist(), names.take(pa.array(first[idx])).to_pylist(),
                           strict=True):
            out[m] = name
        return out
    sel = first[rows]
    if not len(sel) or not (sel >= 0).any():
        return [None] * len(sel)
    got = names.take(pa.array(np.maximum(sel, 0))).to_pylist()
    return [g if s >= 0 else None for g, s in zip(got, sel.tolist(), strict=True)]


def _call_text_of(tr: Transcripts, rows: np.ndarray) -> list[str]:
    """``name(arguments)`` of the calls of each message of ``rows``, joined."""
    wanted = {int(r): i for i, r in enumerate(rows.tolist())}
    out = [""] * len(rows)
    calls = np.flatnonzero(np.isin(tr.call_message, rows))
    if not len(calls):
        return out
    names = tr.call_field("name").take(pa.array(calls)).to_pylist()
    args = tr.call_arguments.take(pa.array(calls)).to_pylist()
    for c, name, arg in zip(calls.tolist(), names, args, strict=True):
        i = wanted[int(tr.call_message[c])]
        out[i] = (out[i] + " " if out[i] else "") + f"{name}({arg})"
    return out


def _status_rows(table: pa.Table, rows: pd.DataFrame, limit: int | None) -> pd.DataFrame:
    """The action-diff rows of a status search, in episode order."""
    order = {e: i for i, e in enumerate(table.column("episode_id").to_pylist())}
    rows = rows.assign(_ep=rows["episode_id"].map(order)).dropna(subset=["_ep"])
    rows = rows.sort_values(["_ep", "turn_idx"], kind="stable", na_position="last")
    if limit is not None:
        rows = rows.head(limit)

    name = rows["name"].astype(str)
    wrong = (name + ": " + rows["diff_args"].astype(str) + " expected "
             + rows["expected_json"].astype(str) + ", got " + rows["actual_json"].astype(str))
    extra = name + "(" + rows["actual_json"].astype(str) + ")"
    snippet = np.where(rows["status"] == "wrong_arguments", wrong,
                       np.where(rows["status"] == "extra", extra, name))
    requestor = rows["requestor"] if "requestor" in rows else pd.Series([None] * len(rows))

    return pd.DataFrame({
        "episode_id": rows["episode_id"].tolist(),
        "configuration": _configurations(table, rows["_ep"].to_numpy(dtype=np.int64)),
        "turn_idx": pd.array(rows["turn_idx"], dtype="Int64"),
        "role": [r if isinstance(r, str) else None for r in requestor],
        "tool": rows["name"].tolist(),
        "status": rows["status"].tolist(),
        "snippet": snippet.tolist(),
    })[FIND_COLUMNS]
