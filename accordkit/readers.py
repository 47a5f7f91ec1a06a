"""The reader registry: every format :func:`accordkit.load` reads, and how a new one is added.

Formats are recognised by content, never by file name: the loading corridor
(:mod:`accordkit.ingest`) asks the readers of :mod:`accordkit.ingest.registry` in order, by the
kind of input (:func:`formats` lists them). Built-in and user readers keep one contract
(:mod:`accordkit.ingest.contract`). A **user reader** is any object with

* ``name`` — a short name used in messages;
* ``sniff(input) -> bool`` — whether it reads this input, judged by content
  (``input.head()`` gives the first :data:`HEAD_BYTES` bytes of the file, ``input.path`` its
  location, ``input.name`` the name reports give it);
* ``read(input, ctx) -> iterable`` — the file's episodes: canonical records (dicts with the
  columns of :data:`~accordkit.schema.EPISODE_FEATURES`, missing keys meaning null) and, for
  records it could not convert, the :class:`~accordkit.schema.EpisodeValidationError`
  naming file, record and field. A problem with the file as a whole is raised. ``ctx`` is
  the read context: ``ctx.note(text)`` keeps a note of the load, ``ctx.options`` holds the
  load's options (``config``, ``split``, ``metadata``).

Readers written for the first form of the contract, ``sniff(path, head)`` and
``read(path, *, source)``, are taken as they are.

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
...     def sniff(self, input):
...         return input.head().startswith(b'{"demo"')
...     def read(self, input, ctx):
...         return []
>>> register(Demo())
>>> [r.name for r in registered()][-1]
'demo'
>>> unregister("demo")
>>> [f.name for f in formats("folder")]
['results-folder', 'dataset-folder', 'folder']
"""

from __future__ import annotations

from .ingest.contract import Reader
from .ingest.registry import HEAD_BYTES, formats, register, registered, unregister

__all__ = ["Reader", "register", "unregister", "registered", "formats", "HEAD_BYTES"]
