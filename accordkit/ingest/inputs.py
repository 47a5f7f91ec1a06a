"""One input of a load or a scoring run: what the plan found behind a source.

An :class:`Input` is one thing a reader reads: a file (or an fsspec URL), a dir-format tau2
run (its metadata file with the ``simulations/`` beside it), a hub dataset, or a problem the
plan found (a missing path, a folder with nothing to read, a dataset card naming no file).
It is a frozen ``msgspec`` struct (this module imports neither ``datasets`` nor the schema: a
score store's reader asks :func:`is_url` of its inputs), so a work item holding it travels whole between
processes and through Ray (:meth:`Input.encode`, :meth:`Input.decode`).

Names are kept as the user gave them: ``name`` is the path given (a file found inside a
given folder is named below that folder, as given), and ``real`` the file it resolves to,
links followed, beside it. Two inputs are the same file when their ``real`` paths are.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

import msgspec

if TYPE_CHECKING:  # the schema imports datasets: not needed to name or plan inputs
    from ..schema import EpisodeValidationError

__all__ = ["Input", "Card", "Problem", "HEAD_BYTES", "is_url", "local_path"]

#: Bytes of a file a reader's ``sniff`` may look at (:meth:`Input.head`).
HEAD_BYTES = 4096
_WHOLE_FILE = "(whole file)"


def is_url(source: str) -> bool:
    """Whether ``source`` is an fsspec URL (``s3://…``, ``gs://…``, ``memory://…``).

    Examples
    --------
    >>> is_url("s3://bucket/run.json"), is_url("file:///tmp/run.json"), is_url("run.json")
    (True, False, False)
    """
    return "://" in source and not source.startswith("file://")


def local_path(source: str) -> str:
    """``source`` without a ``file://`` prefix."""
    return source[len("file://"):] if source.startswith("file://") else source


class Card(msgspec.Struct, frozen=True):
    """What a dataset folder's card says of one of its data files.

    Attributes
    ----------
    config, split : str
        The config and split the card gives the file's rows (their ``config`` and
        ``split`` columns).
    folder : str
        The dataset folder: it fills empty ``source`` values.
    """

    config: str
    split: str
    folder: str


class Problem(msgspec.Struct, frozen=True):
    """A problem the plan found with an input: why, and the record and field it names."""

    reason: str
    record: str = _WHOLE_FILE
    field: str = "(top level)"
    #: the name of the error class (``SourceNotFoundError`` for a path that does not exist)
    kind: str = "EpisodeValidationError"
    #: the file the problem names, when not the input (a dataset folder's card)
    source: str | None = None


class Input(msgspec.Struct, frozen=True, kw_only=True):
    """One input: what a reader reads, and how reports name it.

    Attributes
    ----------
    name : str
        How reports, problems and the store manifest name it: the path as the user gave it
        (links not followed), a URL, or a hub id.
    kind : {"file", "run", "hub", "problem"}
        A file (local or URL), a dir-format tau2 run (``path`` is its metadata file), a hub
        dataset (``name`` is its id), or a problem the plan found (``problem``).
    path : str or None
        The local path to read (as given), or the URL.
    real : str or None
        The file ``path`` resolves to (links followed), for local inputs.
    source : str
        The source given that this input was found in (a file, a folder, a hub id).
    card : Card or None
        For a data file of a dataset folder: its config, split and folder.
    origin : str or None
        What fills the empty ``source`` values of its rows (default: ``name``).
    problem : Problem or None
        For ``kind="problem"``.
    sha256, size, mtime_ns : optional
        The digest of the file's bytes and its size and modification time when it was
        hashed (filled by a plan asked for hashes).
    """

    name: str
    kind: str = "file"
    path: str | None = None
    real: str | None = None
    source: str = ""
    card: Card | None = None
    origin: str | None = None
    problem: Problem | None = None
    sha256: str | None = None
    size: int | None = None
    mtime_ns: int | None = None
    #: the file's bytes, when the loader read them already (the bytes its episode cache key
    #: was made of); never encoded
    data: bytes | None = None

    # ------------------------------------------------------------------ reading

    @property
    def local(self) -> Path | None:
        """The local path (None for a URL, a hub id or a problem)."""
        if self.path is None or is_url(self.path):
            return None
        return Path(self.path)

    @property
    def is_url(self) -> bool:
        return self.path is not None and is_url(self.path)

    @property
    def fills(self) -> str:
        """What fills the empty ``source`` values of its rows."""
        return self.origin or (self.card.folder if self.card else self.name)

    @contextmanager
    def open(self) -> Iterator[IO[bytes]]:
        """The input's bytes as a binary file object (a local file or a URL)."""
        if self.path is None:
            raise ValueError(f"{self.name}: no file to open")
        if self.is_url:
            import fsspec

            with fsspec.open(self.path, "rb") as fh:
                yield fh
        else:
            with open(self.path, "rb") as fh:
                yield fh

    def head(self, n: int = HEAD_BYTES) -> bytes:
        """The first ``n`` bytes of the file (for ``sniff``)."""
        if self.data is not None:
            return self.data[:n]
        with self.open() as fh:
            return fh.read(n)

    def read_bytes(self) -> bytes:
        """The whole file's bytes (those the loader read, when it read them already)."""
        if self.data is not None:
            return self.data
        with self.open() as fh:
            return fh.read()

    def with_data(self, data: bytes | None) -> Input:
        """This input holding ``data``, its file's bytes as read."""
        return msgspec.structs.replace(self, data=data)

    @classmethod
    def for_problem(cls, err: EpisodeValidationError, *, name: str, source: str) -> Input:
        """A problem input for ``err`` (which keeps naming its own file, when it names one)."""
        return cls(kind="problem", name=name, source=source, problem=Problem(
            err.reason, err.record or _WHOLE_FILE, err.field or "(top level)",
            kind=type(err).__name__, source=err.source))

    def error(self) -> EpisodeValidationError:
        """The plan's problem with this input as the error a load raises or records."""
        from ..schema import EpisodeValidationError

        problem = self.problem or Problem("no problem")
        if problem.kind == "SourceNotFoundError":
            from .report import SourceNotFoundError

            cls: type[EpisodeValidationError] = SourceNotFoundError
        else:
            cls = EpisodeValidationError
        return cls(problem.reason, source=problem.source or self.name, record=problem.record,
                   field=problem.field)

    # ------------------------------------------------------------------ one form

    def encode(self) -> bytes:
        """The input as JSON (every engine hands inputs on in this form; without
        :attr:`data`)."""
        return msgspec.json.encode(self if self.data is None
                                   else msgspec.structs.replace(self, data=None))

    @classmethod
    def decode(cls, data: bytes | str) -> Input:
        """The input :meth:`encode` wrote."""
        return msgspec.json.decode(data, type=cls)

    def with_digest(self) -> Input:
        """This input with the sha256, size and modification time of its file (local files
        and URLs; anything else unchanged). A local file's digest is the one the episode
        cache remembers for it while it is unchanged (:mod:`accordkit.ingest.cache`), and is
        remembered there when it is taken, so that the file is hashed once.

        Raises
        ------
        OSError
            When the file cannot be read.
        """
        from .._internal.files import stream_sha256
        from .cache import file_sha256_remembered

        if self.kind not in ("file", "run") or self.path is None:
            return self
        if self.is_url:
            with self.open() as fh:
                return msgspec.structs.replace(self, sha256=stream_sha256(fh))
        # remembered with the episode cache's digests: reading the file next finds it
        sha256, st = file_sha256_remembered(self.path)
        return msgspec.structs.replace(self, sha256=sha256, size=st.st_size,
                                       mtime_ns=st.st_mtime_ns)
