"""The tau2 / AgentChangeBench results format as typed ``msgspec`` structs (the fast path).

A results file is decoded by compiled, validating ``msgspec`` decoders. A file of up to
:data:`ONE_PASS_BYTES` is decoded in one pass into a :class:`DecodedResults`, its
simulations' messages typed :class:`Message` structs already (every type checked on the
way: role, content, tool calls, error flag). A larger file, or one that pass refuses, is
decoded in two steps:

1. :func:`decode_results` reads the file into a :class:`Results` whose simulations keep
   their header fields as plain values and their ``messages`` as :class:`msgspec.Raw` — a
   zero-copy slice of the file's bytes, not yet parsed;
2. :func:`decode_messages` parses one simulation's messages when it is converted, so one
   simulation the typed decoder refuses leaves the others typed.

Only the fields accordkit reads are declared; other keys are skipped without being built.
The typed path is an accelerator, not a second set of rules: whenever a decoder refuses
something (a wrong type, a multi-tool message, bytes that are not UTF-8, a byte-order mark,
a number out of range), :func:`decode_results` / :func:`decode_messages` return ``None``
and the caller reads that file or simulation with ``json`` and the general converter in
:mod:`accordkit.ingest.formats.tau2.convert`, which names the file, record and field of any problem.
So the typed path may be stricter than the general one, never more lenient.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ..text import is_utf8

__all__ = ["Results", "DecodedResults", "Simulation", "DecodedSimulation", "Message", "ToolCall",
           "decode_results", "decode_messages", "ONE_PASS_BYTES"]


class _Get:
    """``get(key)`` as on a dict, so the general converter's helpers accept a struct."""

    __slots__ = ()

    def get(self, key: str, default: Any = None) -> Any:
        value = getattr(self, key, default)
        return default if value is msgspec.UNSET else value


class ToolCall(msgspec.Struct, _Get):
    """A tool call an agent or user made; ``arguments`` is an object or its JSON text."""

    name: str
    id: str | None = None
    arguments: dict[str, Any] | str | None = None
    requestor: str | None = None


class Message(msgspec.Struct, _Get):
    """One message of a simulation, with the fields the canonical message is built from."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    id: str | None = None
    error: bool | None = None
    meta_event: dict[str, Any] | None = None
    meta_error: Any = None
    #: Present on a multi-tool message, which the general converter flattens.
    tool_messages: Any = msgspec.UNSET


class Simulation(msgspec.Struct, _Get):
    """A simulation's header as plain values; ``messages`` still undecoded (or None)."""

    id: Any = None
    task_id: Any = None
    trial: Any = None
    seed: Any = None
    messages: msgspec.Raw = None  # type: ignore[assignment] - absent key: None
    ticks: Any = None
    reward_info: Any = None
    termination_reason: Any = None
    agent_cost: Any = None
    user_cost: Any = None
    review: Any = None
    user_only_review: Any = None
    hallucination_check: Any = None


class DecodedSimulation(Simulation):
    """A simulation of a file decoded in one pass: its messages typed already (or None)."""

    messages: list[Message] | None = None  # type: ignore[assignment]


class Results(msgspec.Struct):
    """A results file: ``info`` and ``tasks`` as plain values, typed simulations."""

    info: Any = None
    tasks: Any = None
    simulations: list[Simulation] | None = None

    def as_object(self) -> dict[str, Any]:
        """The parts the converter reads, keyed as in the file (absent keys left out)."""
        return {"info": self.info, "tasks": self.tasks, "simulations": self.simulations}


class DecodedResults(Results):
    """A results file decoded in one pass (:data:`ONE_PASS_BYTES`)."""

    simulations: list[DecodedSimulation] | None = None  # type: ignore[assignment]


#: A file of at most this many bytes is decoded in one pass, messages included (on the 21
#: result files of ``benchmarks/data_path.py``, 36 ms instead of 43 ms in two steps); a
#: larger one keeps each simulation's messages undecoded until it is converted, so that it
#: never holds all its messages as objects at once.
ONE_PASS_BYTES = 32 << 20

_RESULTS = msgspec.json.Decoder(Results)
_DECODED = msgspec.json.Decoder(DecodedResults)
_MESSAGES = msgspec.json.Decoder(list[Message])


def decode_results(data: bytes | memoryview) -> Results | None:
    """Decode a results file, or None when the typed decoder refuses it.

    ``None`` also covers files that are not results objects at all; the caller then reads
    the file the general way, which says what is wrong with it.
    """
    if not is_utf8(data):
        return None  # messages are sliced undecoded: check the bytes up front
    results = None
    if len(data) <= ONE_PASS_BYTES:
        try:
            results = _DECODED.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            pass  # a simulation the typed decoder refuses: the others are still typed
        else:
            if any(_multi_tool(msg) for sim in results.simulations or ()
                   for msg in sim.messages or ()):
                results = None  # the general converter flattens those: two steps
    if results is None:
        try:
            results = _RESULTS.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return None
    if not isinstance(results.info, dict) or (results.simulations is None
                                              and results.tasks is None):
        return None
    return results


def _multi_tool(msg: Message) -> bool:
    """Whether ``msg`` is a multi-tool message (several tool results in one)."""
    return msg.tool_messages is not msgspec.UNSET and msg.role == "tool" and msg.id is None


def decode_messages(raw: msgspec.Raw) -> list[Message] | None:
    """A simulation's messages as typed structs, or None when the typed decoder refuses them."""
    try:
        messages = _MESSAGES.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    if any(_multi_tool(msg) for msg in messages):
        return None  # a multi-tool message: the general converter flattens it
    return messages
