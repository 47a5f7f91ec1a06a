"""``validation_summary``: what ``accordkit validate SOURCE...`` prints.

Loads the sources with :func:`accordkit.load_with_report` and returns per
benchmark / domain / agent model counts together with every problem found.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import pandas as pd

from ._arrow import arrow_table
from .load import Source, load_with_report
from .validate import SkippedRecord

__all__ = ["validation_summary", "SUMMARY_COLUMNS"]

GROUP_COLUMNS = ("benchmark", "domain", "agent_model")
SUMMARY_COLUMNS = (*GROUP_COLUMNS, "n_episodes", "n_scenarios", "n_sources")


def validation_summary(
    sources: Source | Sequence[Source],
    *,
    errors: Literal["raise", "skip"] = "skip",
) -> tuple[pd.DataFrame, list[SkippedRecord]]:
    """Count the episodes in ``sources`` and list every problem.

    Parameters
    ----------
    sources : str, Path or list of them
        Anything :func:`accordkit.load` accepts.
    errors : {"skip", "raise"}
        ``"skip"`` (default) reads everything that can be read and returns the problems;
        ``"raise"`` stops at the first one with an
        :class:`~accordkit.schema.EpisodeValidationError`.

    Returns
    -------
    counts : pandas.DataFrame
        One row per (``benchmark``, ``domain``, ``agent_model``), sorted, with
        ``n_episodes``, ``n_scenarios`` (distinct ``scenario_id``) and ``n_sources``
        (distinct ``source``) as ``"Int64"``. Duplicate episodes are counted once.
    problems : list of SkippedRecord
        Every record or file that could not be loaded, with file, record, field and
        reason (empty when all is well). ``str(problem)`` is a one-line message.

    Examples
    --------
    >>> from accordkit.validate_report import validation_summary
    >>> counts, problems = validation_summary(["run.json", "data/sample/goalshift"])  # doctest: +SKIP
    >>> exit_code = 1 if problems else 0                                            # doctest: +SKIP
    """
    if isinstance(sources, str | Path):
        sources = [sources]
    ds, report = load_with_report(list(sources), errors=errors)
    frame = arrow_table(ds).select([*GROUP_COLUMNS, "scenario_id", "source"]).to_pandas()
    if frame.empty:
        counts = pd.DataFrame({c: pd.Series(dtype="Int64" if c.startswith("n_") else object)
                               for c in SUMMARY_COLUMNS})
        return counts, list(report.skipped)
    keys = list(GROUP_COLUMNS)
    grouped = frame.fillna({"agent_model": "(none)"}).groupby(keys, sort=True)
    counts = pd.DataFrame({
        "n_episodes": grouped.size(),
        "n_scenarios": grouped["scenario_id"].nunique(),
        "n_sources": grouped["source"].nunique(),
    }).reset_index()
    for col in ("n_episodes", "n_scenarios", "n_sources"):
        counts[col] = counts[col].astype("Int64")
    return counts[list(SUMMARY_COLUMNS)], list(report.skipped)
