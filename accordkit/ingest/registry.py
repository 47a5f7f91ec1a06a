"""The readers a load asks, in order, by kind of input; and the user readers registered.

========== ================================================ =================================
kind       asked with                                       readers, in order
========== ================================================ =================================
folder     a local path, by the plan (a folder, or a file   ``results-folder`` (a tau2 run),
           that stands for a dir-format run)                ``dataset-folder`` (a dataset
                                                            card naming configs), ``folder``
file       an input (its first bytes: ``Input.head``)       registered user readers, then
                                                            ``parquet``, ``inspect``
                                                            (Inspect logs), ``results-file``
                                                            (typed decoding), ``eee`` (Every
                                                            Eval Ever), ``json``
document   the parsed JSON value (by the ``json`` reader)   ``results``, ``taubench``,
                                                            ``canonical``; else JSON Lines
run        a dir-format tau2 run input                      ``results-folder``
hub        a hub dataset input                              ``hub``
========== ================================================ =================================

The *folder* entries are the plan's rules for what a path holds (:mod:`accordkit.ingest.plan`):
each has ``sniff(path)`` and ``inputs(path, ...)``. The others are readers
(:mod:`accordkit.ingest.contract`). Readers never see this registry: the corridor
(:mod:`accordkit.ingest.read`) asks it for them.

A user reader is registered with :func:`register` (the public face is
:mod:`accordkit.readers`). Readers written for the first contract, ``sniff(path, head)`` and
``read(path, *, source)``, are still taken, and asked as readers of the current contract.
"""

from __future__ import annotations

import inspect
from importlib import import_module
from typing import Any

from .contract import Reader
from .inputs import HEAD_BYTES, Input

__all__ = ["register", "unregister", "registered", "formats", "KINDS", "HEAD_BYTES",
           "UserReader"]

#: The built-in entries of each kind, in the order they are asked: (module, class), modules
#: relative to :mod:`accordkit.ingest.formats` (or absolute, during the move).
_BUILTIN: dict[str, tuple[tuple[str, str], ...]] = {
    "document": (),
    "folder": (("accordkit.ingest.formats.folder", "RunRule"),
               ("accordkit.ingest.formats.folder", "DatasetFolderRule"),
               ("accordkit.ingest.formats.folder", "FolderRule")),
    "file": (("accordkit.ingest.formats.parquet", "Parquet"),
             ("accordkit.ingest.formats.inspect", "InspectLog"),
             ("accordkit.ingest.formats.tau2", "ResultsFile"),
             ("accordkit.ingest.formats.eee", "EeeFile"),
             ("accordkit.ingest.formats.json_text", "JsonFile")),
    "run": (("accordkit.ingest.formats.tau2", "ResultsRun"),),
    "hub": (("accordkit.ingest.formats.hub", "Hub"),),
}
KINDS = tuple(_BUILTIN)

_USER: list[UserReader] = []


class UserReader:
    """A registered reader, asked as the built-in file readers are.

    Readers of the first contract (``sniff(path, head)``, ``read(path, *, source)``) are
    asked through it with the input's path, first bytes and name.
    """

    cached = True
    #: the reader reads its file itself (not the bytes the loader read): the loader checks
    #: afterwards that the file did not change meanwhile (see accordkit.ingest.read)
    reads_itself = True

    def __init__(self, reader: Any) -> None:
        self.reader, self.name = reader, reader.name
        self.first_contract = _first_contract(reader)

    @property
    def version(self) -> str:
        return str(getattr(self.reader, "version", ""))

    def sniff(self, input: Input) -> bool:
        if self.first_contract:
            return bool(self.reader.sniff(input.local, input.head(HEAD_BYTES)))
        return bool(self.reader.sniff(input))

    def read(self, input: Input, ctx: Any) -> Any:
        if self.first_contract:
            return self.reader.read(input.local, source=input.name)
        return self.reader.read(input, ctx)


def _first_contract(reader: Any) -> bool:
    """Whether ``reader`` was written for the first contract: ``sniff(path, head)``."""
    try:
        params = inspect.signature(reader.sniff).parameters
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return False
    return len([p for p in params.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]) >= 2


def register(reader: Any) -> None:
    """Add ``reader`` (replacing a registered reader of the same name)."""
    if not isinstance(reader, Reader) or not isinstance(getattr(reader, "name", None), str):
        raise TypeError("a reader needs a name, sniff(input) and read(input, ctx) "
                        "(or sniff(path, head) and read(path, *, source))")
    unregister(reader.name)
    _USER.append(UserReader(reader))


def unregister(name: str) -> None:
    """Remove the reader called ``name`` (no error when there is none)."""
    _USER[:] = [r for r in _USER if r.name != name]


def registered() -> list[Any]:
    """The registered user readers (as given), in the order they are asked."""
    return [r.reader for r in _USER]


def user_readers() -> list[UserReader]:
    """The registered user readers as the corridor asks them."""
    return list(_USER)


def formats(kind: str) -> list[Any]:
    """The entries asked for an input of ``kind``, in order (see the module docstring);
    for ``"file"`` the registered user readers come first."""
    if kind not in _BUILTIN:
        raise ValueError(f"kind must be one of {sorted(_BUILTIN)}, got {kind!r}")
    if kind == "document":  # the json reader's own list (one home)
        return import_module("accordkit.ingest.formats.json_text").documents()
    # only this kind's modules are imported: a cached load asks the folder rules alone
    found = [getattr(import_module(module), cls)() for module, cls in _BUILTIN[kind]]
    if kind == "file":
        return [*_USER, *found]
    return found


def cache_key() -> list[list[str]]:
    """The registered readers as part of every episode cache key: ``[name, version]``."""
    return [[r.name, r.version] for r in _USER]
