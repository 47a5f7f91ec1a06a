"""The step before the notebooks: a report's sources scored into a score store.

The notebooks of a report always read a store. Given ``--scores``, it is that store; given
sources, each run's store is written here (``<run>/scores``) by
:func:`accordkit.engines.score_to_store` with ``merge=True``: inputs holding one episode more
than once (checkpoints of one run) or sharing a source file a pooled mode needs whole are
read together and merged as :func:`accordkit.load` merges them
(:mod:`accordkit.engines.merge`), so the tables are those of the sources loaded as one
dataset. Runs that read and score alike share one store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .grid import run_key, run_modes

__all__ = ["score_sources", "RunStores"]

#: Inputs larger than this (bytes on disk, parquet files aside) are scored by ``jobs``
#: worker processes.
_PARALLEL_SCORING_BYTES = 64 * 2**20
#: ... and so are parquet inputs of more rows than this: parquet is compressed (300,000
#: episodes of the replicated sample take 8 MB), and one process scores about 15,000
#: episodes a second, so 50,000 rows are a few seconds of work, the start-up of a worker.
_PARALLEL_SCORING_ROWS = 50_000


def score_sources(sources: Sequence[str], store: Path, *, params: Mapping[str, Any],
                  verdicts: Sequence[str], jobs: int) -> Path:
    """Score ``sources`` batch by batch into ``store`` with a run's modes, load options and
    verdicts, each episode once as :func:`accordkit.load` keeps it; return ``store``.

    Memory is bounded by the batch size, not by the data, except for inputs that must be
    merged (held together while they are scored). Bad records are skipped and listed in
    the manifest (the report says what was skipped).
    """
    from ..engines import score_to_store
    from ..engines.plan import expand_sources

    files = [Path(f) for f in expand_sources(sources)]
    num_proc = max(1, jobs) if _worth_workers(files) else 1
    score_to_store(list(sources), out=store, num_proc=num_proc, modes=run_modes(params),
                   errors="skip", progress=False, verdicts=verdicts,
                   metadata=params.get("metadata"), revision=params.get("revision"),
                   split=params.get("split"), merge=True)
    return store


class RunStores:
    """The store of each run of a report from sources: scored once per way of scoring.

    ``first`` is the store scored for the first run (with ``params``); a run of other
    modes or load options gets its own store in its folder.
    """

    def __init__(self, sources: Sequence[str], *, verdicts: Sequence[str], jobs: int,
                 first: Path, params: Mapping[str, Any]) -> None:
        self.sources, self.verdicts, self.jobs = list(sources), list(verdicts), jobs
        self.stores = {run_key(params): first}

    def __call__(self, run_dir: Path, params: Mapping[str, Any]) -> Path:
        key = run_key(params)
        if key not in self.stores:
            self.stores[key] = score_sources(self.sources, run_dir / "scores", params=params,
                                             verdicts=self.verdicts, jobs=self.jobs)
        return self.stores[key]


def _worth_workers(files: Sequence[Path]) -> bool:
    """Whether scoring ``files`` pays for worker processes (about 3 s each to start)."""
    import pyarrow.parquet as pq

    size = rows = 0
    for f in files:
        if not f.is_file():
            continue
        if f.suffix == ".parquet":
            try:
                rows += pq.ParquetFile(f).metadata.num_rows
            except Exception:  # noqa: BLE001 - the scoring run reports an unreadable file
                continue
        else:
            size += f.stat().st_size
    return size > _PARALLEL_SCORING_BYTES or rows > _PARALLEL_SCORING_ROWS
