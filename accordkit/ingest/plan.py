"""The plan: the inputs behind the sources given, found by content. One plan for every load
and every scoring engine.

Each source given becomes inputs (:class:`~accordkit.ingest.inputs.Input`), in order:

* a local path (or a pattern such as ``logs/*.eval``, each match in name order): the first
  *folder* rule that knows it (:mod:`accordkit.ingest.formats.folder`:
  a dir-format tau2 run is one input; a dataset folder gives the data files its card names,
  each with its config and split, and the card's problems; any other folder gives its
  ``.json``, ``.jsonl``, ``.parquet`` and ``.eval`` files, each planned again as a path), else a file;
* an fsspec URL (``s3://…``): the file, or the data files below a folder URL;
* a hub id (``org/name``): one hub input;
* anything else: a problem input (:class:`~accordkit.load.SourceNotFoundError`).

A problem found while planning (a folder with nothing to read, a card naming no file, a path
that cannot be listed) is an input of kind ``"problem"``, reported when its turn comes, so
that problems come in source order and one bad source never stops the others. Inputs are
named as the user gave them; ``real`` holds the file each resolves to, links followed, and
:func:`read_once` finds inputs that name one file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from .check import WHOLE_FILE
from .context import ReadOptions
from .formats.folder import DATA_SUFFIXES
from .inputs import Input, Problem, is_url, local_path

__all__ = ["plan", "plan_sources", "read_once", "missing_sources", "DATA_SUFFIXES"]



def plan(sources: str | Path | Sequence[str | Path], *,
         options: ReadOptions | None = None, absolute: bool = False) -> list[Input]:
    """The inputs behind ``sources``, in order (see the module docstring).

    Parameters
    ----------
    sources : path, URL, hub id or a list of them
    options : ReadOptions, optional
        ``config`` and ``split`` choose a dataset folder's files.
    absolute : bool
        Name local inputs by their absolute path (as given, links not followed), for a
        record read from another folder (a score store's manifest).

    Examples
    --------
    >>> [(i.kind, i.name) for i in plan(["org/name", "no/such/file.json"])]
    [('hub', 'org/name'), ('problem', 'no/such/file.json')]
    """
    return [i for _, inputs in plan_sources(sources, options=options, absolute=absolute)
            for i in inputs]


def plan_sources(sources: str | Path | Sequence[str | Path], *,
                 options: ReadOptions | None = None, absolute: bool = False,
                 ) -> list[tuple[str, list[Input]]]:
    """Each source given, with the inputs behind it (see :func:`plan`)."""
    options = options or ReadOptions()
    if isinstance(sources, str | Path):
        sources = [sources]
    out = []
    for src in sources:
        given = str(src)
        try:
            inputs = _plan_source(given, options, absolute=absolute)
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - a source that cannot be listed is a problem
            inputs = [_problem_input(given, exc, source=given)]
        out.append((given, inputs))
    return out


def _plan_source(given: str, options: ReadOptions, *, absolute: bool) -> list[Input]:
    if is_url(given):
        return _plan_url(given)
    path = Path(local_path(given))
    if path.exists():
        if absolute:
            path = Path(os.path.abspath(path))   # as given, links not followed
        return _plan_path(path, options, source=given)
    if any(c in given for c in "*?["):
        matched = _plan_glob(given, options, absolute=absolute)
        if matched is not None:
            return matched
    from .formats.hub import is_hub_id

    if is_hub_id(given):
        return [Input(kind="hub", name=given, source=given)]
    return [Input(kind="problem", name=given, source=given, problem=Problem(
        "no such file or folder, and not a hub id of the form 'org/name'", WHOLE_FILE,
        "(path)", kind="SourceNotFoundError"))]


def missing_sources(sources: Sequence[str]) -> list[str]:
    """The sources that name nothing :func:`plan` can read: neither an existing local path
    (``file://`` or not), a pattern matching a local path, a URL nor a hub id.

    The one check the ``score`` and ``report`` commands make before any work.

    Examples
    --------
    >>> missing_sources(["s3://bucket/run.json", "org/dataset", "no/such/run.json",
    ...                  "file:///no/such/run.json", "no-such-dir/*.eval"])
    ['no/such/run.json', 'file:///no/such/run.json', 'no-such-dir/*.eval']
    """
    import glob

    from .formats.hub import is_hub_id

    out = []
    for source in sources:
        path = local_path(source)
        if Path(path).exists() or is_url(source) or is_hub_id(path):
            continue
        if glob.has_magic(path) and glob.glob(path, recursive=True):
            continue
        out.append(source)
    return out


def _plan_glob(given: str, options: ReadOptions, *, absolute: bool) -> list[Input] | None:
    """The inputs of the local paths a pattern (``logs/*.eval``, ``runs/**/*.json``)
    matches, in name order; None when it matches nothing (then it is no path at all)."""
    import glob

    found = sorted(glob.glob(local_path(given), recursive=True))
    if not found:
        return None
    out: list[Input] = []
    for match in found:
        path = Path(os.path.abspath(match)) if absolute else Path(match)
        out.extend(_plan_path(path, options, source=given))
    return out


def _plan_path(path: Path, options: ReadOptions, *, source: str) -> list[Input]:
    """The inputs of a local path: the first folder rule that knows it, else a file."""
    from .registry import formats

    for rule in formats("folder"):
        if rule.sniff(path):
            return rule.inputs(path, options=options, source=source,
                               plan_path=lambda p: _plan_path(p, options, source=source))
    return [Input(name=str(path), path=str(path), real=os.path.realpath(path), source=source)]


def _plan_url(url: str) -> list[Input]:
    """A file URL, or the data files below a folder URL (sorted). An input is named without
    the URL's credentials (user info, secret query values: what names it is written down, in
    rows, problems and manifests); its ``path`` keeps them, to read it."""
    import fsspec

    from .._internal.redact import redact_sources

    fs, root = fsspec.core.url_to_fs(url)
    if not fs.isdir(root):
        return [Input(name=redact_sources(url), path=url, source=url)]
    protocol = url.split("://", 1)[0]
    found = sorted(p for p in fs.find(root) if p.lower().endswith(DATA_SUFFIXES))
    if not found:
        return [Input(kind="problem", name=url, source=url, problem=Problem(
            f"no {', '.join(DATA_SUFFIXES)} file below this URL", WHOLE_FILE, "(folder)"))]
    return [Input(name=f"{protocol}://{p}", path=f"{protocol}://{p}", source=url)
            for p in found]


def _problem_input(name: str, exc: BaseException, *, source: str) -> Input:
    """A problem input for an exception raised while planning ``name``."""
    from .contract import whole_file_problem

    err = whole_file_problem(exc, name)
    return Input.for_problem(err, name=name, source=source)


def read_once(inputs: Sequence[Input]) -> list[int]:
    """For each input, the input that reads its file: itself, or an earlier one naming the
    same file (on its own and inside a folder given too, through a link, ...), which is
    read once so that its episodes are not counted twice.

    Files are the same when their real paths are (links followed). Of the inputs naming one
    file, the first that reads it through a dataset card is chosen (the card gives it a
    config and split, and ``split=`` chooses files by the card), else the first. Problems and
    hub ids read themselves.

    Examples
    --------
    >>> from accordkit.ingest.inputs import Card
    >>> card = Card("default", "train", "/d")
    >>> read_once([Input(name="a", real="/d/a.parquet"),
    ...            Input(name="/d/a.parquet", real="/d/a.parquet", card=card),
    ...            Input(name="b", real="/d/b.parquet"), Input(name="a2", real="/d/a.parquet")])
    [1, 1, 2, 1]
    """
    chosen: dict[str, int] = {}
    keys = [i.real or i.name if i.kind in ("file", "run") else None for i in inputs]
    for index, (input, key) in enumerate(zip(inputs, keys, strict=True)):
        if key is None:
            continue
        if key not in chosen or (input.card is not None and inputs[chosen[key]].card is None):
            chosen[key] = index
    return [index if key is None else chosen[key] for index, key in enumerate(keys)]
