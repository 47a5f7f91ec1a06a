"""``validation_report``: what ``accordkit validate SOURCE...`` prints.

Loads the sources with :func:`accordkit.load_with_report` and returns per
benchmark / domain / agent model counts, every problem found, the loader's notes and what
each file gave; :func:`format_validation` turns that into the lines the command prints,
with a per-file summary and repeats of one reason cut short.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pandas as pd

from ._internal.arrow import arrow_table
from .ingest.report import SkippedRecord
from .load import FileRead, Source, load_with_report

__all__ = ["validation_summary", "validation_report", "format_validation", "ValidationReport",
           "SUMMARY_COLUMNS"]

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
    report = validation_report(sources, errors=errors)
    return report.counts, report.problems


@dataclass
class ValidationReport:
    """Everything ``accordkit validate`` shows.

    Attributes
    ----------
    counts : pandas.DataFrame
        As returned by :func:`validation_summary`.
    problems : list of SkippedRecord
        Every record or file that could not be loaded.
    notes : list of str
        Oddities that did not stop a record (a task id missing from ``tasks``, bytes that
        were not UTF-8, a task defined twice).
    files : dict
        ``file -> FileRead``: episodes read from each file and, for a results file, the
        number of simulations it holds.
    """

    counts: pd.DataFrame
    problems: list[SkippedRecord] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: dict[str, FileRead] = field(default_factory=dict)


def validation_report(
    sources: Source | Sequence[Source],
    *,
    errors: Literal["raise", "skip"] = "skip",
) -> ValidationReport:
    """Load ``sources`` and gather counts, problems, notes and a per-file account.

    Parameters
    ----------
    sources : str, Path or list of them
        Anything :func:`accordkit.load` accepts.
    errors : {"skip", "raise"}
        As for :func:`validation_summary`.

    Returns
    -------
    ValidationReport

    Examples
    --------
    >>> from accordkit.validate_report import format_validation, validation_report
    >>> lines = format_validation(validation_report("run.json"))  # doctest: +SKIP
    """
    if isinstance(sources, str | Path):
        sources = [sources]
    ds, report = load_with_report(list(sources), errors=errors)
    return ValidationReport(_counts(ds), list(report.skipped), list(report.notes),
                            dict(report.files))


def _counts(ds: object) -> pd.DataFrame:
    frame = arrow_table(ds).select([*GROUP_COLUMNS, "scenario_id", "source"]).to_pandas()
    if frame.empty:
        return pd.DataFrame({c: pd.Series(dtype="Int64" if c.startswith("n_") else object)
                             for c in SUMMARY_COLUMNS})
    keys = list(GROUP_COLUMNS)
    grouped = frame.fillna({"agent_model": "(none)"}).groupby(keys, sort=True)
    counts = pd.DataFrame({
        "n_episodes": grouped.size(),
        "n_scenarios": grouped["scenario_id"].nunique(),
        "n_sources": grouped["source"].nunique(),
    }).reset_index()
    for col in ("n_episodes", "n_scenarios", "n_sources"):
        counts[col] = counts[col].astype("Int64")
    return counts[list(SUMMARY_COLUMNS)]


def _reason_key(problem: SkippedRecord) -> tuple[str, str]:
    """A problem's kind: its field with list positions blanked, and its reason."""
    return re.sub(r"\[\d+\]", "[]", problem.field or ""), problem.reason


def format_validation(report: ValidationReport, *, max_per_reason: int = 3) -> list[str]:
    """The lines ``accordkit validate`` prints for ``report``.

    Problems are grouped by kind (field, with list positions blanked, and reason): the first
    ``max_per_reason`` of each kind are listed, then "... and N more". A per-file summary
    gives episodes, skipped records and the distinct reasons with their counts; a results
    file without simulations says "header only: 0 simulations".

    Examples
    --------
    >>> import pandas as pd
    >>> from accordkit.load import FileRead
    >>> rep = ValidationReport(pd.DataFrame(), files={"r.json": FileRead(0, 0)})
    >>> format_validation(rep)[-4:]
    ['per file:', '  r.json: header only: 0 simulations', '', 'no problems found']
    """
    lines: list[str] = []
    if report.counts.empty:
        lines.append("no episodes loaded")
    else:
        lines.append(report.counts.to_string(index=False))
    by_file: dict[str, list[SkippedRecord]] = {}
    for p in report.problems:
        by_file.setdefault(str(p.source), []).append(p)
    names = list(dict.fromkeys([*report.files, *by_file]))
    if names:
        lines += ["", "per file:"]
    for name in names:
        read = report.files.get(name, FileRead())
        skipped = by_file.get(name, [])
        if read.simulations == 0 and not skipped:
            lines.append(f"  {name}: header only: 0 simulations")
            continue
        lines.append(f"  {name}: {read.episodes} episode(s), {len(skipped)} skipped")
        for (fld, reason), n in Counter(_reason_key(p) for p in skipped).most_common():
            lines.append(f"      {n} x {fld or '(no field)'}: {reason}")
    if report.notes:
        lines += ["", f"{len(report.notes)} note(s):"]
        lines += [f"  - {note}" for note in report.notes]
    if report.problems:
        lines += ["", f"{len(report.problems)} problem(s):"]
        groups: dict[tuple[str, str], list[SkippedRecord]] = {}
        for p in report.problems:
            groups.setdefault((str(p.source), *_reason_key(p)), []).append(p)
        for items in groups.values():
            lines += [f"  - {p}" for p in items[:max_per_reason]]
            if len(items) > max_per_reason:
                lines.append(f"    ... and {len(items) - max_per_reason} more with this "
                             "reason in this file")
    else:
        lines += ["", "no problems found"]
    return lines
