"""TCRR, the tool-call redundancy ratio, in accordkit's per-episode form and both upstream forms.

Spec ``agentchangebench.md`` §3.3. Tool calls are numbered by assistant turn (every assistant
message is a turn; a call gets the number of the latest assistant message). A call's
*identity* is its name plus its normalised arguments. Two rules flag redundant calls:

* **window**: a call in turn ``t`` whose identity occurred in turns ``max(1, t-3) .. t-1``;
* **batch**: within one turn, a group of ``c > 2`` calls adds ``c - 2``.

Modes (``tcrr_mode``):

``"episode"`` (default)
    Per conversation; calls on any message; b2cc83c identities; batch groups are identical
    calls; a call is counted at most once (an identity seen in the window makes all its
    copies in the turn redundant, otherwise the copies beyond two are).
``"upstream_a6a9157"`` (alias ``"upstream"``)
    calissaman/AgentChangeBench at a6a9157: only calls on assistant messages; a6a9157
    identities; batch groups are *function names*; window and batch counts are added; and all
    conversations of one ``source`` file are pooled by assistant-turn number (the upstream
    aggregation bug).
``"upstream_b2cc83c"``
    anoexpected/AgentChangeBench at b2cc83c: calls on any message, b2cc83c identities, batch
    groups are identical calls, counts added, pooled by source file like a6a9157.

In every mode each redundant call is attributed to its episode, so the sum of
``n_redundant_calls`` over a file's episodes divided by the sum of ``n_tcrr_calls`` is that
mode's file-level TCRR.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._internal.arrow import one_array
from .._internal.jsontext import loads
from .calls import Transcripts

__all__ = [
    "TCRR_MODES",
    "WINDOW",
    "BATCH_THRESHOLD",
    "identity_b2cc83c",
    "identity_a6a9157",
    "call_redundancy",
    "tcrr_counts",
    "tcrr_columns",
    "resolve_mode",
]

WINDOW = 3
BATCH_THRESHOLD = 2
TCRR_MODES = ("episode", "upstream_a6a9157", "upstream_b2cc83c", "upstream")
_ALIASES = {"upstream": "upstream_a6a9157"}


def resolve_mode(mode: str) -> str:
    """Validate a ``tcrr_mode`` and resolve the ``"upstream"`` alias."""
    if mode not in TCRR_MODES:
        raise ValueError(f"tcrr_mode must be one of {TCRR_MODES}, got {mode!r}")
    return _ALIASES.get(mode, mode)


# --------------------------------------------------------------------------- identities


def _norm_b2cc83c(params: dict[str, Any]) -> tuple:
    items = []
    for key, value in sorted(params.items()):
        if isinstance(value, dict):
            items.append((key, _norm_b2cc83c(value)))
        elif isinstance(value, list):
            try:
                inner = []
                for item in value:
                    if isinstance(item, dict):
                        inner.append(_norm_b2cc83c(item))
                    elif isinstance(item, list):
                        inner.append(tuple(str(x) for x in item))
                    else:
                        inner.append(item)
                items.append((key, tuple(sorted(inner))))
            except TypeError:
                items.append((key, tuple(str(x) for x in value)))
        else:
            items.append((key, value))
    return tuple(items)


def _norm_a6a9157(params: dict[str, Any]) -> tuple:
    items = []
    for key, value in sorted(params.items()):
        if isinstance(value, dict):
            items.append((key, _norm_a6a9157(value)))
        elif isinstance(value, list):
            try:
                items.append((key, tuple(sorted(value))))
            except TypeError:
                items.append((key, tuple(str(x) for x in value)))
        else:
            items.append((key, value))
    return tuple(items)


def identity_b2cc83c(name: str, arguments: Any) -> tuple:
    """Identity of a call as anoexpected/AgentChangeBench b2cc83c normalises it.

    Dict items are sorted by key (recursively); list items are normalised (dicts
    recursively, inner lists to tuples of ``str``) and sorted, or, when they do not
    compare, kept in order as ``str`` of the raw items. Scalars are kept, so ``1``, ``1.0``
    and ``True`` give equal identities.

    Parameters
    ----------
    name : str
    arguments : dict or str
        Parsed arguments, or JSON text (parsed with key order kept).

    Examples
    --------
    >>> a = identity_b2cc83c("f", '{"b": [2, 1], "a": 1}')
    >>> a == identity_b2cc83c("f", {"a": 1.0, "b": [1, 2]})
    True
    """
    args = loads(arguments) if isinstance(arguments, str) else arguments
    if not isinstance(args, dict):
        return (name, str(args))
    return (name, _norm_b2cc83c(args))


def identity_a6a9157(name: str, arguments: Any) -> tuple:
    """Identity of a call as calissaman/AgentChangeBench a6a9157 normalises it.

    Like :func:`identity_b2cc83c`, but list values are sorted as they are. A list of
    several dicts does not sort and becomes ``str`` of its items (key order matters); a list
    that sorts but holds dicts or lists leaves the identity unhashable, and upstream then
    falls back to ``(name, str(arguments))`` of the raw dict, which this function returns.

    Examples
    --------
    >>> identity_a6a9157("f", '{"x": [{"b": 1, "a": 2}]}')
    ('f', "{'x': [{'b': 1, 'a': 2}]}")
    """
    args = loads(arguments) if isinstance(arguments, str) else arguments
    if not isinstance(args, dict):
        return (name, str(args))
    ident = (name, _norm_a6a9157(args))
    try:
        hash(ident)
    except TypeError:
        return (name, str(args))
    return ident


def _identity_codes(names: pa.Array, arguments: pa.Array, fn: Callable[[str, Any], tuple],
                    where: Callable[[int], str] = str) -> np.ndarray:
    """Integer code per call such that equal codes mean equal identities.

    Only the distinct (name, arguments text) pairs are normalised in Python; ``where(i)``
    names the record of call ``i`` in error messages.
    """
    if len(names) == 0:
        return np.zeros(0, dtype=np.int64)
    joined = pc.binary_join_element_wise(pc.fill_null(names, ""), arguments, "\x1f")
    enc = joined.dictionary_encode()
    idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    codes: dict[tuple, int] = {}
    remap = np.empty(len(enc.dictionary), dtype=np.int64)
    for k, text in enumerate(enc.dictionary.to_pylist()):
        name, _, args = text.partition("\x1f")
        try:
            ident = fn(name, args)
        except json.JSONDecodeError as exc:
            first = int(np.flatnonzero(idx == k)[0])
            raise ValueError(f"{where(first)}: tool call {name!r}: arguments are not JSON "
                             f"text ({exc.msg}): {args[:80]!r}") from None
        remap[k] = codes.setdefault(ident, len(codes))
    return remap[idx]


# --------------------------------------------------------------------------- rules


def _rank_within(keys: list[np.ndarray], order: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                     np.ndarray]:
    """Sort by ``keys`` (then ``order``); return the permutation, group id and rank in group."""
    perm = np.lexsort([order, *reversed(keys)])
    if not len(perm):
        return perm, perm.copy(), perm.copy()
    sorted_keys = [k[perm] for k in keys]
    new = np.zeros(len(perm), dtype=bool)
    new[0] = True
    for k in sorted_keys:
        new[1:] |= k[1:] != k[:-1]
    group = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    rank = np.arange(len(perm)) - starts[group]
    return perm, group, rank


def _window_hits(unit: np.ndarray, ident: np.ndarray, turn: np.ndarray) -> np.ndarray:
    """Whether each call's identity occurred in turns ``max(1, t-3) .. t-1`` of its unit."""
    n = len(unit)
    hit = np.zeros(n, dtype=bool)
    if not n:
        return hit
    # Distinct (unit, identity, turn) triples, sorted; the previous triple of the same
    # (unit, identity) holds the latest earlier turn.
    perm = np.lexsort([turn, ident, unit])
    u, i, t = unit[perm], ident[perm], turn[perm]
    first = np.r_[True, (u[1:] != u[:-1]) | (i[1:] != i[:-1]) | (t[1:] != t[:-1])]
    pos = np.flatnonzero(first)
    gu, gi, gt = u[pos], i[pos], t[pos]
    same = np.r_[False, (gu[1:] == gu[:-1]) & (gi[1:] == gi[:-1])]
    prev_t = np.r_[-1, gt[:-1]]
    ghit = same & (prev_t >= np.maximum(1, gt - WINDOW)) & (prev_t < gt)
    group = np.cumsum(first) - 1
    hit[perm] = ghit[group]
    return hit


def call_redundancy(table: pa.Table, *, mode: str = "episode", pooled: bool | None = None,
                    transcripts: Transcripts | None = None) -> pd.DataFrame:
    """One row per tool call with its turn, whether the mode counts it, and its redundancy.

    Parameters
    ----------
    table : pyarrow.Table
        Canonical episodes.
    mode : str
        A ``tcrr_mode`` (see the module docstring).
    pooled : bool, optional
        Upstream modes only: ``False`` applies that version's rules to each conversation on
        its own (the ``tcrr_*_per_simulation`` figures) instead of pooling by source file.
        Defaults to pooling for the upstream modes.
    transcripts : Transcripts, optional
        A prebuilt :class:`~accordkit.metrics.calls.Transcripts` of ``table``.

    Returns
    -------
    pandas.DataFrame
        Columns ``row`` (episode position), ``turn_idx`` (message position), ``call_index``
        (position within the message), ``name``, ``assistant_turn``, ``counted`` (the mode
        counts this call), ``window`` and ``batch`` (redundant calls the rule attributes to
        this call: 0 or 1 each) and ``redundant`` = ``window + batch`` (at most 1 in
        ``"episode"`` mode, up to 2 in the upstream modes).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from accordkit.schema import EPISODE_FEATURES
    >>> from accordkit.testing import build_episode, message
    >>> call = ("get_balance", {"account": "A1"})
    >>> rec = build_episode([message("assistant", calls=[call]), message("user", "ok"),
    ...                      message("assistant", calls=[call])])
    >>> table = pa.Table.from_pylist([rec], schema=EPISODE_FEATURES.arrow_schema)
    >>> call_redundancy(table)["redundant"].tolist()
    [0, 1]
    """
    tr = transcripts if transcripts is not None else Transcripts(table)
    counted, window, batch = _redundancy_arrays(table, mode=mode, pooled=pooled, tr=tr)
    return pd.DataFrame({
        "row": tr.call_episode,
        "turn_idx": tr.call_turn_idx,
        "call_index": tr.call_index,
        "name": tr.call_name,
        "assistant_turn": tr.call_turn,
        "counted": counted,
        "window": window,
        "batch": batch,
        "redundant": window + batch,
    })


def _redundancy_arrays(table: pa.Table, *, mode: str, pooled: bool | None,
                       tr: Transcripts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``counted``, ``window`` and ``batch`` of every tool call (:func:`call_redundancy`)."""
    mode = resolve_mode(mode)
    if mode == "episode" and pooled:
        raise ValueError("tcrr_mode='episode' is per conversation; pooled=True applies to the "
                         "upstream modes only")
    pooled = mode != "episode" if pooled is None else pooled
    n = len(tr.call_episode)
    counted = tr.call_on_assistant.copy() if mode == "upstream_a6a9157" else np.ones(n, bool)
    names = tr.call_field("name")
    fn = identity_a6a9157 if mode == "upstream_a6a9157" else identity_b2cc83c

    def where(i: int) -> str:
        ep = int(tr.call_episode[i])
        return (f"file {table.column('source')[ep]}, record {table.column('episode_id')[ep]}, "
                f"field messages[{tr.call_turn_idx[i]}].tool_calls[{tr.call_index[i]}]"
                ".arguments_json")

    ident = _identity_codes(names, tr.call_arguments, fn, where)
    turn = tr.call_turn
    window = np.zeros(n, dtype=np.int64)
    batch = np.zeros(n, dtype=np.int64)
    sel = np.flatnonzero(counted)
    if pooled:
        unit, order = _pooling(table, tr)
    else:
        unit, order = tr.call_episode, tr.call_order
    u, i, t, o = unit[sel], ident[sel], turn[sel], order[sel]
    hit = _window_hits(u, i, t)
    if mode == "episode":
        perm, _, rank = _rank_within([u, t, i], o)
        flag = np.zeros(len(sel), dtype=bool)
        flag[perm] = hit[perm] | (rank >= BATCH_THRESHOLD)
        window[sel] = (hit & flag).astype(np.int64)
        batch[sel] = (~hit & flag).astype(np.int64)
    else:
        group_key = tr.call_name_codes[sel] if mode == "upstream_a6a9157" else i
        perm, _, rank = _rank_within([u, t, group_key], o)
        excess = np.zeros(len(sel), dtype=bool)
        excess[perm] = rank >= BATCH_THRESHOLD
        window[sel] = hit.astype(np.int64)
        batch[sel] = excess.astype(np.int64)
    return counted, window, batch


def _pooling(table: pa.Table, tr: Transcripts) -> tuple[np.ndarray, np.ndarray]:
    """Pooling unit (source file) and upstream concatenation order of every call.

    Upstream concatenates the calls of a file's simulations task by task (tasks in order of
    first appearance), simulations in file order within a task.
    """
    n_rows = table.num_rows
    source = one_array(pc.fill_null(table.column("source"), "")).dictionary_encode()
    src = source.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    task = one_array(pc.fill_null(table.column("task_id"), "")).dictionary_encode()
    tsk = task.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    rows = np.arange(n_rows)
    # the first row of each (source, task): the first occurrence of its key
    _, first, inverse = np.unique(src * (int(tsk.max(initial=0)) + 1) + tsk,
                                  return_index=True, return_inverse=True)
    first_seen = first[inverse.reshape(-1)]
    row_rank = np.empty(n_rows, dtype=np.int64)
    row_rank[np.lexsort([rows, first_seen, src])] = np.arange(n_rows)
    ep = tr.call_episode
    order = row_rank[ep] * (int(tr.calls_per_episode.max(initial=0)) + 1) + tr.call_order
    return src[ep], order


def tcrr_counts(table: pa.Table, *, mode: str = "episode", pooled: bool | None = None,
                transcripts: Transcripts | None = None) -> pd.DataFrame:
    """Per-episode TCRR counts under one mode (``pooled`` as in :func:`call_redundancy`).

    Returns
    -------
    pandas.DataFrame
        One row per row of ``table``: ``tcrr`` (float, NaN when the mode counts no call),
        ``n_redundant_calls`` and ``n_tcrr_calls`` (``Int64``).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from accordkit.schema import EPISODE_FEATURES
    >>> from accordkit.testing import build_episode, message
    >>> call = ("search", {"q": "x"})
    >>> rec = build_episode([message("assistant", calls=[call, call, call])])
    >>> table = pa.Table.from_pylist([rec], schema=EPISODE_FEATURES.arrow_schema)
    >>> out = tcrr_counts(table)
    >>> round(float(out["tcrr"].iloc[0]), 4), int(out["n_redundant_calls"].iloc[0])
    (0.3333, 1)
    """
    tr = transcripts if transcripts is not None else Transcripts(table)
    return pd.DataFrame(tcrr_columns(table, mode=mode, pooled=pooled, transcripts=tr))


def tcrr_columns(table: pa.Table, *, mode: str, transcripts: Transcripts,
                 pooled: bool | None = None) -> dict[str, Any]:
    """:func:`tcrr_counts`' columns, as arrays (one row per episode of ``table``)."""
    tr = transcripts
    counted, window, batch = _redundancy_arrays(table, mode=mode, pooled=pooled, tr=tr)
    n = tr.n_episodes
    total = np.bincount(tr.call_episode, weights=counted, minlength=n).astype(np.int64)
    red = np.bincount(tr.call_episode, weights=(window + batch) * counted,
                      minlength=n).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(total > 0, red / np.maximum(total, 1), np.nan)
    none = np.zeros(n, dtype=bool)
    return {
        "tcrr": ratio.astype("float64"),
        "n_redundant_calls": pd.arrays.IntegerArray(red, none.copy()),
        "n_tcrr_calls": pd.arrays.IntegerArray(total, none),
    }
