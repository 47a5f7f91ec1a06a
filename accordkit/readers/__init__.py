"""The reader registry: every format :func:`accordkit.load` reads, and how a new one is added.

Each built-in format is one small module here that declares how it recognises its input by
content (``sniff``) and reads it (``read``); :func:`accordkit.load` picks a reader by asking
them in order, by the kind of input:

========== ================================================ =================================
kind       asked with                                       built-in readers, in order
========== ================================================ =================================
folder     the folder's path (or a file's: a dir-format     ``results-folder`` (tau2
           run's metadata file is known by the              ``results.json`` + ``simulations/``),
           ``simulations/`` folder beside it)               ``dataset-folder`` (a dataset card
                                                            naming configs), ``folder`` (any
                                                            other: input by input, see
                                                            :func:`.folder.folder_inputs`)
file       the path and its first :data:`HEAD_BYTES` bytes  registered user readers, then
                                                            ``parquet``, ``results-file``
                                                            (typed decoding), ``json``
document   the parsed JSON value (for the ``json`` reader)  ``results``, ``taubench``,
                                                            ``canonical``; else JSONL
hub        the source text                                  ``hub`` (``org/name``)
========== ================================================ =================================

A built-in reader's ``read`` gets the loader (``accordkit.load._Reader``), which holds the
error policy (``errors="raise" | "skip"``), turns records into checked Arrow tables and
collects what was skipped; a reader may return ``None`` from ``read`` to say "not mine after
all" (the typed ``results-file`` reader does so for anything its decoder refuses), and the
next reader is asked.

Adding a format of your own needs no loader internals. A **user reader** is any object with

* ``name`` — a short name used in messages;
* ``sniff(path, head) -> bool`` — whether it reads this file, judged by content (``head`` is
  the first :data:`HEAD_BYTES` bytes of the file, ``path`` its location);
* ``read(path, *, source) -> iterable`` — the file's episodes: canonical records (dicts with
  the columns of :data:`~accordkit.schema.EPISODE_FEATURES`, missing keys meaning null) and,
  for records it could not convert, the :class:`~accordkit.schema.EpisodeValidationError`
  naming file, record and field. A problem with the file as a whole is raised.

:func:`register` puts it before the built-in file readers. What it yields goes through the
same checks as every other record, under the same error policy, and is cached like any other
text file. The cache key holds each registered reader's ``name`` and, when it has one, its
``version`` attribute: give a reader a ``version`` and change it when the reader's output
changes, or files read before are served from the cache as the old reader read them.

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
>>> [f.name for f in formats("folder")]
['results-folder', 'dataset-folder', 'folder']
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import import_module
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["Reader", "register", "unregister", "registered", "formats", "HEAD_BYTES"]

#: Bytes of the file given to ``sniff``.
HEAD_BYTES = 4096


@runtime_checkable
class Reader(Protocol):
    """A file format :func:`accordkit.load` can read (see the module docstring)."""

    name: str

    def sniff(self, path: Path, head: bytes) -> bool: ...

    def read(self, path: Path, *, source: str) -> Iterable[Any]: ...


_READERS: list[Reader] = []

#: The built-in readers of each kind, in the order they are asked: (module, class).
_BUILTIN: dict[str, tuple[tuple[str, str], ...]] = {
    "folder": (("results", "ResultsFolder"), ("dataset_folder", "DatasetFolder"),
               ("folder", "Folder")),
    "file": (("parquet", "Parquet"), ("results", "ResultsFile"), ("json_file", "JsonFile")),
    "document": (("results", "ResultsDocument"), ("taubench", "TaubenchDocument"),
                 ("canonical", "CanonicalDocument")),
    "hub": (("hub", "Hub"),),
}


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
    """The registered user readers, in the order they are asked."""
    return list(_READERS)


def formats(kind: str) -> list[Any]:
    """The readers :func:`accordkit.load` asks for an input of ``kind``, in order.

    ``kind`` is ``"folder"``, ``"file"``, ``"document"`` or ``"hub"`` (see the module
    docstring); for ``"file"`` the registered user readers come first.
    """
    if kind not in _BUILTIN:
        raise ValueError(f"kind must be one of {sorted(_BUILTIN)}, got {kind!r}")
    # only this kind's modules are imported: a cached load asks the folder readers alone
    found = [getattr(import_module(f"{__name__}.{module}"), cls)()
             for module, cls in _BUILTIN[kind]]
    if kind == "file":
        return [_UserFormat(r) for r in _READERS] + found
    return found


class _UserFormat:
    """A registered user reader, asked like the built-in file readers."""

    cached = True

    def __init__(self, reader: Reader) -> None:
        self.reader, self.name = reader, reader.name

    def sniff(self, path: Path, head: bytes) -> bool:
        return bool(self.reader.sniff(path, head))

    def read(self, loader: Any, path: Path, data: bytes) -> Any:
        table = loader.items(lambda: self.reader.read(path, source=str(path)), str(path))
        loader.read_again(path, data)  # it read the file, not ``data``
        return table
