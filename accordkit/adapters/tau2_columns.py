"""Canonical messages of typed tau2 simulations, built column by column.

The loader turns a batch of converted simulations into one Arrow table. For simulations
whose messages came from the typed decoder (:func:`~accordkit.adapters.tau2_format.
decode_messages`), building a dict per message and letting Arrow read the dicts back
(``Table.from_pylist``) is most of the conversion's cost. :class:`TypedMessages` keeps a
simulation's typed messages with what conversion computed and checked for them (the JSON
text of each tool call's arguments, each message's event), and :func:`messages_column`
builds the ``messages`` column of a batch straight from them: one pass filling a list per
field, then Arrow arrays from the lists.

The column equals the one ``from_pylist`` builds from :meth:`TypedMessages.records`
(``tests/adapters/test_tau2_columns.py`` checks it on every fixture file), and its rows
keep every message rule of :data:`accordkit.schema.RULES` by construction: the decoder
allows only the four roles and requires a tool call's name, positions are the message
indices, ``kind`` is null, and each arguments text is either written by ``json`` from an
object or was checked to be the text of one (:func:`accordkit.adapters.tau2._arguments_json`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pyarrow as pa

from .tau2_format import Message

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
    from .._arrow import canonical_schema

    return canonical_schema().field("messages").type


def messages_column(items: Sequence[TypedMessages]) -> pa.ListArray:
    """The canonical ``messages`` column of a batch of typed simulations, one row each."""
    roles: list[str] = []
    contents: list[str | None] = []
    turns: list[int] = []
    call_ids: list[str | None] = []
    errors: list[bool | None] = []
    events: list[str | None] = []
    event_texts: list[str | None] = []
    offsets = [0]
    call_offsets = [0]
    no_calls: list[bool] = []
    ids: list[str | None] = []
    names: list[str] = []
    requestors: list[str | None] = []
    arguments: list[str] = []
    for item in items:
        arguments += item.arguments
        marked = item.events
        for idx, msg in enumerate(item.messages):
            roles.append(msg.role)
            contents.append(msg.content)
            turns.append(idx)
            if msg.role == "tool":
                call_ids.append(msg.id)
                errors.append(msg.error)
            else:
                call_ids.append(None)
                errors.append(None)
            if marked and idx in marked:
                event, text = marked[idx]
                events.append(event)
                event_texts.append(text)
            else:
                events.append(None)
                event_texts.append(None)
            calls = msg.tool_calls
            if calls is None:
                no_calls.append(True)
            else:
                no_calls.append(False)
                for call in calls:
                    ids.append(call.id)
                    names.append(call.name)
                    requestors.append(call.requestor)
            call_offsets.append(len(names))
        offsets.append(len(roles))
    if len(arguments) != len(names):  # pragma: no cover - conversion keeps them in step
        raise ValueError("tool-call arguments and tool calls are out of step")
    message = _message_type().value_type
    call = message.field("tool_calls").type.value_type
    string = pa.string()
    n = len(roles)
    tool_calls = pa.ListArray.from_arrays(
        pa.array(call_offsets, pa.int32()),
        pa.StructArray.from_arrays(
            [pa.array(ids, string), pa.array(names, string), pa.array(arguments, string),
             pa.array(requestors, string)], fields=list(call)),
        mask=pa.array(no_calls, pa.bool_()))
    columns = {
        "role": pa.array(roles, string), "content": pa.array(contents, string),
        "turn_idx": pa.array(turns, pa.int32()),
        "sub_idx": pa.array(np.zeros(n, dtype=np.int32)),
        "kind": pa.nulls(n, string), "tool_calls": tool_calls,
        "tool_call_id": pa.array(call_ids, string), "error": pa.array(errors, pa.bool_()),
        "event": pa.array(events, string), "event_json": pa.array(event_texts, string),
    }
    struct = pa.StructArray.from_arrays([columns[f.name] for f in message], fields=list(message))
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), struct)
