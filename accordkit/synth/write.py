"""Write the embedded sample datasets (``accordkit synth``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import datasets

from ..benchmarks import CATALOG, judged_by, resolve, sample_parts
from ..save import save
from ..schema import EPISODE_FEATURES

__all__ = ["write_sample", "PARTS"]

#: The sample's parts: one per benchmark the catalogue simulates (its ``sample``), then the
#: stand-in ``usersim_tests`` verdicts on the episodes that judge scores.
PARTS = (*(sample.part for sample in sample_parts()), "verdicts")


def _episodes(records: list[dict]) -> datasets.Dataset:
    return datasets.Dataset.from_list(records, features=EPISODE_FEATURES)


def write_sample(out: str | Path = "data/sample", *, seed: int = 0,
                 parts: Iterable[str] | None = None,
                 progress: bool | None = None) -> list[Path]:
    """Generate and write the sample data; the same seed gives the same bytes.

    Parameters
    ----------
    out : str or Path
        Folder receiving ``accord/``, ``goalshift/`` and ``verdicts/``.
    seed : int
        Simulator seed.
    parts : iterable of str, optional
        Subset of :data:`PARTS` (``("accord", "goalshift", "verdicts")``); all by default.
        ``verdicts`` needs the AcCoRD episodes and regenerates them in memory when not
        written.

    Returns
    -------
    list of Path
        What was written.
    """
    out = Path(out)
    parts = tuple(parts or PARTS)
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise ValueError(f"unknown sample part(s) {sorted(unknown)}; expected {PARTS}")
    written: list[Path] = []
    judged: list[datasets.Dataset] = []   # the episodes the stand-in verdicts judge
    from tqdm import tqdm

    todo = [bench for bench in CATALOG.values() if bench.sample is not None and (
        bench.sample.part in parts or ("verdicts" in parts and
                                       bench.id in judged_by("usersim_tests")))]
    bar = tqdm(total=len(todo) + ("verdicts" in parts), desc="synth", unit="part",
               disable=None if progress is None else not progress)
    for bench in todo:
        sample = bench.sample
        for_verdicts = "verdicts" in parts and bench.id in judged_by("usersim_tests")
        bar.set_postfix_str(sample.part)
        ds = _episodes(resolve(sample.generator)(seed=seed)[0])
        if for_verdicts:
            judged.append(ds)
        if sample.part in parts:
            written.append(save(ds, out / sample.part, title=sample.title,
                                description=sample.description))
        bar.update(1)
    if "verdicts" in parts:
        from ..judges.standin import make_sample_verdicts
        from ..judges.verdicts import write_verdicts

        path = out / "verdicts" / "usersim_tests.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        episodes = judged[0] if len(judged) == 1 else datasets.concatenate_datasets(judged)
        write_verdicts(make_sample_verdicts(episodes, seed=seed), path)
        written.append(path)
        bar.update(1)
    bar.close()
    return written
