"""Write the embedded sample datasets (``accordkit synth``)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import datasets

from ..save import save
from ..schema import EPISODE_FEATURES

__all__ = ["write_sample", "PARTS"]

PARTS = ("accord", "goalshift", "verdicts")

_DESCRIPTIONS = {
    "accord": "AcCoRD-style episodes (shop and travel) from accordkit's scripted simulator: a "
              "rule-based user with hard/soft-underspecified, unachievable and triggered "
              "preferences, and scripted agents of different quality.",
    "goalshift": "AgentChangeBench-style episodes (banking, airline, retail) from accordkit's "
                 "scripted simulator: goal sequences with mid-conversation shifts, five "
                 "personas, repeated tool calls, transfers, and stored judge output.",
}


def _episodes(records: list[dict]) -> datasets.Dataset:
    return datasets.Dataset.from_list(records, features=EPISODE_FEATURES)


def write_sample(out: str | Path = "data/sample", *, seed: int = 0,
                 parts: Iterable[str] | None = None) -> list[Path]:
    """Generate and write the sample data; the same seed gives the same bytes.

    Parameters
    ----------
    out : str or Path
        Folder receiving ``accord/``, ``goalshift/`` and ``verdicts/``.
    seed : int
        Simulator seed.
    parts : iterable of str, optional
        Subset of ``("accord", "goalshift", "verdicts")``; all by default. ``verdicts``
        needs the AcCoRD episodes and regenerates them in memory when not written.

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
    accord_ds = None
    if "accord" in parts or "verdicts" in parts:
        from .accord import generate_accord

        accord_ds = _episodes(generate_accord(seed=seed)[0])
        if "accord" in parts:
            written.append(save(accord_ds, out / "accord", title="accordkit sample: AcCoRD",
                                description=_DESCRIPTIONS["accord"]))
    if "goalshift" in parts:
        from .goalshift import generate_goalshift

        ds = _episodes(generate_goalshift(seed=seed)[0])
        written.append(save(ds, out / "goalshift", title="accordkit sample: goal shifts",
                            description=_DESCRIPTIONS["goalshift"]))
    if "verdicts" in parts:
        from ..judges.standin import make_sample_verdicts
        from ..judges.verdicts import write_verdicts

        path = out / "verdicts" / "usersim_tests.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_verdicts(make_sample_verdicts(accord_ds, seed=seed), path)
        written.append(path)
    return written
