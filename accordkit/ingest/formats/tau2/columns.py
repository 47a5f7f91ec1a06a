"""Canonical messages of typed tau2 simulations, built column by column.

The loader turns a batch of converted simulations into one Arrow table. For simulations
whose messages came from the typed decoder (:func:`~accordkit.ingest.formats.tau2.typed.
decode_messages`), building a dict per message and letting Arrow read the dicts back
(``Table.from_pylist``) is most of the conversion's cost. :class:`TypedMessages` keeps a
simulation's typed messages with what conversion computed and checked for them (the JSON
text of each tool call's arguments, each message's event), and :func:`messages_column`
builds the ``messages`` column of a batch straight from them: one pass filling a list per
field, then Arrow arrays from the lists.

The column equals the one ``from_pylist`` builds from :meth:`TypedMessages.records`
(``tests/ingest/formats/test_tau2_columns.py`` checks it on every fixture file), and its rows
keep every message rule of :data:`accordkit.schema.RULES` by construction: the decoder
allows only the four roles and requires a tool call's name, positions are the message
indices, ``kind`` is null, and each arguments text is either written by ``json`` from an
object or was checked to be the text of one (:func:`accordkit.ingest.formats.tau2.convert._arguments_json`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .typed import Message

__all__ = ["TypedMessages", "messages_column"]


@dataclass(slots=True)
class TypedMessages:
    """One simulation's typed messages, ready to be written as canonical messages.

    Attributes
    ----------
    messages : list of Message
        As the typed decoder gave them.
    arguments : list of str
        The JSON text of every tool call's arguments, in message then call order.
    events : dict
        ``{message index: (event, event JSON)}`` for the messages with a ``meta_event``.
    """

    messages: list[Message]
    arguments: list[str]
    events: dict[int, tuple[str | None, str | None]]

    def __len__(self) -> int:
        return len(self.messages)

    def records(self) -> list[dict[str, Any]]:
        """The canonical messages as dicts (for the per-record checks and their errors)."""
        out = []
        args = iter(self.arguments)
        for idx, msg in enumerate(self.messages):
            calls = None
            if msg.tool_calls is not None:
                calls = [{"id": c.id, "name": c.name, "arguments_json": next(args),
                          "requestor": c.requestor} for c in msg.tool_calls]
            event, event_json = self.events.get(idx, (None, None))
            tool = msg.role == "tool"
            out.append({"role": msg.role, "content": msg.content, "turn_idx": idx,
                        "sub_idx": 0, "kind": None, "tool_calls": calls,
                        "tool_call_id": msg.id if tool else None,
                        "error": msg.error if tool else None, "event": event,
                        "event_json": event_json})
        return out


@cache
def _message_type() -> pa.DataType:
    from ....schema.arrow import canonical_schema

    return canonical_schema().field("messages").type


def messages_column(items: Sequence[TypedMessages]) -> pa.ListArray:
    """The canonical ``messages`` column of a batch of typed simulations, one row each.

    Each field is one list comprehension over the batch's messages (or tool calls) and one
    Arrow array; positions come from the offsets, a tool message's id and error flag are
    kept by a mask of the roles.
    """
    counts = [len(item.messages) for item in items]
    msgs = [msg for item in items for msg in item.messages]
    n = len(msgs)
    string = pa.string()
    roles = pa.array([msg.role for msg in msgs], string)
    # a tool message's id and error flag; other roles keep neither
    is_tool = pc.equal(roles, "tool")
    call_ids = pc.if_else(is_tool, pa.array([msg.id for msg in msgs], string),
                          pa.scalar(None, string))
    errors = pc.if_else(is_tool, pa.array([msg.error for msg in msgs], pa.bool_()),
                        pa.scalar(None, pa.bool_()))
    starts = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    turns = np.arange(n, dtype=np.int32) - np.repeat(starts[:-1], counts).astype(np.int32)
    events: list[str | None] = [None] * n
    event_texts: list[str | None] = [None] * n
    for item, start in zip(items, starts.tolist(), strict=False):
        for idx, (event, text) in item.events.items():
            events[start + idx] = event
            event_texts[start + idx] = text
    call_lists = [msg.tool_calls for msg in msgs]
    calls = [call for listed in call_lists if listed for call in listed]
    arguments = [text for item in items for text in item.arguments]
    if len(arguments) != len(calls):  # pragma: no cover - conversion keeps them in step
        raise ValueError("tool-call arguments and tool calls are out of step")
    call_offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum([len(listed) if listed else 0 for listed in call_lists], out=call_offsets[1:])
    message = _message_type().value_type
    call = message.field("tool_calls").type.value_type
    tool_calls = pa.ListArray.from_arrays(
        pa.array(call_offsets),
        pa.StructArray.from_arrays(
            [pa.array([c.id for c in calls], string), pa.array([c.name for c in calls], string),
             pa.array(arguments, string), pa.array([c.requestor for c in calls], string)],
            fields=list(call)),
        mask=pa.array([listed is None for listed in call_lists], pa.bool_()))
    columns = {
        "role": roles, "content": pa.array([msg.content for msg in msgs], string),
        "turn_idx": pa.array(turns), "sub_idx": pa.array(np.zeros(n, dtype=np.int32)),
        "kind": pa.nulls(n, string), "tool_calls": tool_calls, "tool_call_id": call_ids,
        "error": errors, "event": pa.array(events, string),
        "event_json": pa.array(event_texts, string),
    }
    struct = pa.StructArray.from_arrays([columns[f.name] for f in message], fields=list(message))
    return pa.ListArray.from_arrays(pa.array(starts.astype(np.int32)), struct)
