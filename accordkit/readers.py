"""The reader registry: how :func:`accordkit.load` learns a new file format.

A reader is any object with

* ``name`` — a short name used in messages;
* ``sniff(path, head) -> bool`` — whether it reads this file, judged by content (``head`` is
  the first :data:`HEAD_BYTES` bytes of the file, ``path`` its location);
* ``read(path, *, source) -> iterable`` — the file's episodes: canonical records (dicts with
  the columns of :data:`~accordkit.schema.EPISODE_FEATURES`, missing keys meaning null) and,
  for records it could not convert, the :class:`~accordkit.schema.EpisodeValidationError`
  naming file, record and field. A problem with the file as a whole is raised.

:func:`accordkit.load` asks the registered readers, in registration order, before its
built-in formats (tau2 / AgentChangeBench results, canonical JSON / JSONL, parquet); the
first whose ``sniff`` says yes reads the file. What a reader yields goes through the same
checks as every other record, under the same ``errors="raise" | "skip"`` policy, and is cached
like any other JSON file.

Examples
--------
>>> from accordkit.readers import register, registered, unregister
>>> class Demo:
...     name = "demo"
...     def sniff(self, path, head):
...         return head.startswith(b'{"demo"')
...     def read(self, path, *, source):
...         return []
>>> register(Demo())
>>> [r.name for r in registered()][-1]
'demo'
>>> unregister("demo")
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["Reader", "register", "unregister", "registered", "HEAD_BYTES"]

#: Bytes of the file given to ``sniff``.
HEAD_BYTES = 4096


@runtime_checkable
class Reader(Protocol):
    """A file format :func:`accordkit.load` can read (see the module docstring)."""

    name: str

    def sniff(self, path: Path, head: bytes) -> bool: ...

    def read(self, path: Path, *, source: str) -> Iterable[Any]: ...


_READERS: list[Reader] = []


def register(reader: Reader) -> None:
    """Add ``reader`` (replacing a registered reader of the same name)."""
    if not isinstance(reader, Reader) or not isinstance(getattr(reader, "name", None), str):
        raise TypeError("a reader needs a name, sniff(path, head) and read(path, *, source)")
    unregister(reader.name)
    _READERS.append(reader)


def unregister(name: str) -> None:
    """Remove the reader called ``name`` (no error when there is none)."""
    _READERS[:] = [r for r in _READERS if r.name != name]


def registered() -> list[Reader]:
    """The registered readers, in the order they are asked."""
    return list(_READERS)
