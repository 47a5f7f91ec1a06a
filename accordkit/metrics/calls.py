"""Shared extraction of messages and tool calls from a table of canonical episodes.

The goal-shift metrics all start from the same flattened view of the transcripts: one
entry per message (with its episode, role, position and assistant-turn number) and one
entry per tool call (with the message it sits on). Building it once with Arrow's list
kernels keeps every metric vectorised; only the columns a metric needs are turned into
Python objects.

Conventions (spec ``agentchangebench.md`` §3.3): the assistant messages of an episode are
numbered 1, 2, 3, ... (text-only messages count), and every message gets the number of
the latest assistant message at or before it (0 before the first one). A tool call gets the
number of the message it sits on, whatever that message's role.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._internal.arrow import one_array, take_rows

__all__ = ["Transcripts", "arrow_to_numpy", "group_starts", "positions_in_runs", "join_positions", "last_positions",
           "text_codes"]


def arrow_to_numpy(arr: pa.Array | pa.ChunkedArray, fill: Any = None) -> np.ndarray:
    """An Arrow array as numpy, its nulls first filled with ``fill`` (when given)."""
    if fill is not None:
        arr = pc.fill_null(arr, fill)
    return arr.to_numpy(zero_copy_only=False)


def group_starts(sizes: np.ndarray) -> np.ndarray:
    """Start offset of each group in a flat array made of consecutive groups of ``sizes``.

    >>> group_starts(np.array([2, 0, 3])).tolist()
    [0, 2, 2]
    """
    out = np.zeros(len(sizes), dtype=np.int64)
    if len(sizes) > 1:
        np.cumsum(sizes[:-1], out=out[1:])
    return out


def positions_in_runs(keys: np.ndarray) -> np.ndarray:
    """0, 1, 2, ... within each run of equal consecutive values of ``keys``.

    >>> positions_in_runs(np.array([4, 4, 7, 4, 4, 4])).tolist()
    [0, 1, 0, 0, 1, 2]
    """
    n = len(keys)
    if not n:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    sizes = np.diff(np.r_[starts, n])
    return np.arange(n, dtype=np.int64) - np.repeat(starts, sizes)


def join_positions(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair ``(i, j)`` with ``left[i] == right[j]``: an inner join on integer keys.

    Pairs come in ``left`` order, and in ``right`` order within one ``left`` entry. A sort
    and two binary searches, so the cost is the same few numpy calls for 10 keys or 10
    million (a pandas merge costs about a millisecond before it reads a key).

    Examples
    --------
    >>> i, j = join_positions(np.array([7, 5, 9]), np.array([5, 7, 7, 1]))
    >>> i.tolist(), j.tolist()
    ([0, 0, 1], [1, 2, 0])
    """
    order = np.argsort(right, kind="stable")
    ranked = right[order]
    lo = np.searchsorted(ranked, left, side="left")
    counts = np.searchsorted(ranked, left, side="right") - lo
    li = np.repeat(np.arange(len(left), dtype=np.int64), counts)
    within = np.arange(len(li), dtype=np.int64) - np.repeat(group_starts(counts), counts)
    return li, order[np.repeat(lo, counts) + within]


def last_positions(keys: np.ndarray) -> np.ndarray:
    """Sorted positions of the last occurrence of each distinct key.

    >>> last_positions(np.array([4, 2, 4, 3, 2])).tolist()
    [2, 3, 4]
    """
    back = keys[::-1]
    _, first = np.unique(back, return_index=True)
    return np.sort(len(keys) - 1 - first)


def text_codes(*arrays: pa.Array) -> tuple[list[np.ndarray], pa.Array]:
    """Integer codes of text values, shared across ``arrays``, and the text of each code.

    Equal text gets an equal code; nulls get -1. One dictionary encoding of the arrays
    together.

    >>> codes, texts = text_codes(pa.array(["a", None, "b"]), pa.array(["b", "c"]))
    >>> [c.tolist() for c in codes], texts.to_pylist()
    ([[0, -1, 1], [1, 2]], ['a', 'b', 'c'])
    """
    joined = pa.chunked_array([a.cast(pa.string()) for a in arrays], type=pa.string())
    encoded = joined.combine_chunks().dictionary_encode()
    codes = arrow_to_numpy(pc.fill_null(encoded.indices, -1)).astype(np.int64)
    out, start = [], 0
    for arr in arrays:
        out.append(codes[start:start + len(arr)])
        start += len(arr)
    return out, encoded.dictionary


class Transcripts:
    """Flattened messages and tool calls of the episodes in ``table``.

    Parameters
    ----------
    table : pyarrow.Table
        Canonical episodes (at least the ``messages`` column).

    Attributes
    ----------
    n_episodes : int
        Number of rows of ``table``.
    msg_episode : ndarray of int64
        Row of each flattened message.
    msg_role : ndarray of str
        Role of each message (see also :meth:`role_is`).
    msg_turn_idx : ndarray of int64
        Stored ``turn_idx`` (message position in the source transcript).
    msg_assistant_turn : ndarray of int64
        Number of assistant messages up to and including this one, within its episode.
    call_* : ndarray
        One entry per tool call: ``call_episode``, ``call_message`` (index into the
        flattened messages), ``call_turn`` (assistant-turn number), ``call_turn_idx``,
        ``call_on_assistant``, ``call_index`` (position within its message) and
        ``call_order`` (position among the calls of its episode).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from accordkit.schema import EPISODE_FEATURES
    >>> from accordkit.testing import build_episode, message
    >>> rec = build_episode([message("assistant", "Hi"),
    ...                      message("assistant", calls=[("lookup", {"id": 1})])])
    >>> t = Transcripts(pa.Table.from_pylist([rec], schema=EPISODE_FEATURES.arrow_schema))
    >>> t.msg_assistant_turn.tolist(), t.call_turn.tolist()
    ([1, 2], [2])
    """

    def __init__(self, table: pa.Table) -> None:
        self.n_episodes = table.num_rows
        # chunk by chunk, never joined: a field is joined when asked for (message_field),
        # and a large one only at the rows asked for (message_values)
        messages = table.column("messages")
        self.msg_counts = arrow_to_numpy(pc.list_value_length(messages), fill=0).astype(np.int64)
        self._flat = pc.list_flatten(messages)
        self.msg_episode = np.repeat(np.arange(self.n_episodes, dtype=np.int64), self.msg_counts)
        self.msg_start = group_starts(self.msg_counts)
        self._role = pc.struct_field(self._flat, "role")
        self.msg_turn_idx = arrow_to_numpy(pc.struct_field(self._flat, "turn_idx"), fill=-1).astype(np.int64)
        is_asst = self.role_is("assistant")
        cum = np.cumsum(is_asst, dtype=np.int64)
        before = cum - is_asst  # assistant messages strictly before each message
        base = before[self.msg_start[self.msg_counts > 0]]
        offset = np.zeros(self.n_episodes, dtype=np.int64)
        offset[self.msg_counts > 0] = base
        self.msg_assistant_turn = cum - offset[self.msg_episode]
        self.msg_is_assistant = is_asst

    # ----------------------------------------------------------------- message fields
    def role_is(self, role: str) -> np.ndarray:
        """Boolean mask of the flattened messages with this role."""
        return arrow_to_numpy(pc.equal(self._role, role), fill=False).astype(bool)

    @cached_property
    def msg_role(self) -> np.ndarray:
        return arrow_to_numpy(self._role, fill="")

    def message_field(self, name: str) -> pa.Array:
        """One field of every flattened message, as one Arrow array (for small fields)."""
        return one_array(self.message_chunks(name))

    def message_chunks(self, name: str) -> pa.ChunkedArray | pa.Array:
        """One field of every flattened message, chunk by chunk as loaded (no copy): for
        element-wise kernels over a large field (the text of every message)."""
        return pc.struct_field(self._flat, name)

    def message_values(self, name: str, rows: np.ndarray) -> pa.Array:
        """One field of the flattened messages at ``rows`` (positions among them), taken
        from each chunk without joining the field (see :func:`~accordkit._internal.arrow.take_rows`)."""
        return take_rows(self.message_chunks(name), rows)

    # ----------------------------------------------------------------- tool calls
    @cached_property
    def _calls(self) -> tuple[pa.Array, np.ndarray]:
        lists = self.message_chunks("tool_calls")
        flat = one_array(pc.list_flatten(lists))
        parent = arrow_to_numpy(pc.list_parent_indices(lists)).astype(np.int64)
        return flat, parent

    @cached_property
    def call_message(self) -> np.ndarray:
        return self._calls[1]

    @cached_property
    def call_episode(self) -> np.ndarray:
        return self.msg_episode[self.call_message]

    @cached_property
    def call_turn(self) -> np.ndarray:
        return self.msg_assistant_turn[self.call_message]

    @cached_property
    def call_turn_idx(self) -> np.ndarray:
        return self.msg_turn_idx[self.call_message]

    @cached_property
    def call_on_assistant(self) -> np.ndarray:
        return self.msg_is_assistant[self.call_message]

    @cached_property
    def call_index(self) -> np.ndarray:
        """Position of each call within its message (0, 1, ...)."""
        return positions_in_runs(self.call_message)

    @cached_property
    def calls_per_episode(self) -> np.ndarray:
        return np.bincount(self.call_episode, minlength=self.n_episodes).astype(np.int64)

    @cached_property
    def call_order(self) -> np.ndarray:
        """Position of each call among the calls of its episode (conversation order)."""
        starts = group_starts(self.calls_per_episode)
        return np.arange(len(self.call_episode), dtype=np.int64) - starts[self.call_episode]

    def call_field(self, name: str) -> pa.Array:
        """One field of every flattened tool call (``id``, ``name``, ``arguments_json``...)."""
        return pc.struct_field(self._calls[0], name)

    @cached_property
    def _call_names(self) -> pa.DictionaryArray:
        return pc.fill_null(self.call_field("name"), "").dictionary_encode()

    @cached_property
    def call_name(self) -> pd.Categorical:
        """Tool name of each call (a categorical: cheap to build for many calls)."""
        enc = self._call_names
        return pd.Categorical.from_codes(self.call_name_codes,
                                         categories=pd.Index(enc.dictionary.to_pylist(),
                                                             dtype=object), validate=False)

    @cached_property
    def call_name_codes(self) -> np.ndarray:
        """Integer code per call; equal codes mean equal tool names."""
        return arrow_to_numpy(self._call_names.indices).astype(np.int64)

    @cached_property
    def call_arguments(self) -> pa.Array:
        """Arguments as JSON text; a missing value reads as ``"{}"``."""
        return pc.fill_null(self.call_field("arguments_json"), "{}")
