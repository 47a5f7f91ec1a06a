"""tau2-bench and AgentChangeBench results: recognised, converted and batched here.

Both benchmarks write tau2's ``Results`` object, ``{timestamp, info, tasks, simulations}``,
as one JSON file or as a dir-format run (a metadata file beside ``simulations/``). Three
readers share one converter:

* ``results-file`` (kind *file*): a file whose first byte is ``{``, decoded straight from its
  bytes by the typed decoder (:mod:`.typed`); whatever that decoder refuses is left to the
  ``json`` reader (``read`` returns None), which names the problem;
* ``results-folder`` (kind *run*): a dir-format run (:mod:`.runs`), found by the plan;
* ``results`` (kind *document*): a parsed JSON object ``{info, tasks, simulations}``.

Modules
-------
- :mod:`.convert`: one simulation -> one canonical record (its field map declared as data).
- :mod:`.typed`: the typed ``msgspec`` decoders (the fast path).
- :mod:`.columns`: the messages column of typed simulations, built column-wise.
- :mod:`.batch`: a batch of converted simulations -> one checked Arrow table.
- :mod:`.runs`: dir-format runs (which files make one, reading one as one object).
- :mod:`.personas`: AgentChangeBench persona ids from their texts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ...check import Part, concat
from ...context import ReadContext
from ...inputs import Input
from ..text import jsonl_file, note_replaced
from .batch import results_parts
from .convert import is_results_object
from .runs import check_owner, read_run
from .typed import decode_results

__all__ = ["ResultsFile", "ResultsRun", "ResultsDocument", "results_parts", "is_results_object"]


class ResultsFile:
    """A results JSON file, by typed decoding (the fast path)."""

    name = "results-file"
    cached = True

    def sniff(self, input: Input) -> bool:
        return input.head().lstrip()[:1] == b"{"

    def read(self, input: Input, ctx: ReadContext) -> Iterator[Part] | None:
        if input.data is None and input.local is not None:
            with input.open() as fh:
                if jsonl_file(fh):   # a large JSON Lines file, read line by line: not ours
                    return None
        typed = decode_results(input.read_bytes())
        return None if typed is None else results_parts(typed, ctx, source=input.name)


class ResultsRun:
    """A dir-format run: ``input.path`` is its metadata file (``results.json`` or a file of
    another name that claims the ``simulations/`` folder beside it). The run is named by its
    folder, whatever its metadata file is called."""

    name = "results-folder"
    cached = True

    def sniff(self, input: Input) -> bool:
        return input.kind == "run"

    def read(self, input: Input, ctx: ReadContext) -> Iterator[Part]:
        meta = Path(str(input.path))
        check_owner(meta)
        return results_parts(read_run(meta), ctx, source=input.name)


class ResultsDocument:
    """A parsed results object (read by the general ``json`` reader)."""

    name = "results"

    def sniff(self, obj: Any) -> bool:
        return is_results_object(obj)

    def read(self, obj: Any, input: Input, ctx: ReadContext,
             bad_lines: Sequence[int]) -> Iterator[Part]:
        parts = list(results_parts(obj, ctx, source=input.name))
        if bad_lines:
            note_replaced(ctx, input.name, bad_lines, concat(p.table for p in parts))
        yield from parts
