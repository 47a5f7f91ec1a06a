"""The goal-shift tables (AgentChangeBench): main metrics and recovery-time medians.

Each builder returns the output of :func:`accordkit.summarize` (or of
:func:`accordkit.km_medians`) for one table of :mod:`accordkit.tables.catalogue`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..stats import summarize
from .catalogue import GOALSHIFT_GSRT, GOALSHIFT_MAIN
from .shared import with_tue_points

__all__ = ["goalshift_main", "goalshift_gsrt", "GSRT_KM_LABELS"]


def goalshift_main(episodes: pd.DataFrame, *, by: Sequence[str] = ("domain", "agent_model"),
                   **options: Any) -> pd.DataFrame:
    """Goal-shift main table (:data:`~accordkit.tables.catalogue.GOALSHIFT_MAIN`): TSR and
    its channels, TUE, T, P, TCRR and recovery rate.

    T, P, TUE, TCRR and recovery are ratios of sums over the group's episodes (the
    file-level definitions), not means of per-episode ratios.
    """
    return summarize(with_tue_points(episodes), list(GOALSHIFT_MAIN), list(by), **options)


#: Labels of the Kaplan–Meier GSRT rows, per recovery event.
GSRT_KM_LABELS = {"ack": "GSRT ack (KM median)", "tool": "GSRT tool (KM median)",
                  "outcome": "GSRT outcome (KM median)"}


def goalshift_gsrt(shifts: pd.DataFrame, *, by: Sequence[str] = ("domain", "agent_model"),
                   median: str = "km", **options: Any) -> pd.DataFrame:
    """Medians of the per-shift recovery times (messages after the shift).

    Parameters
    ----------
    shifts : DataFrame
        ``ak.score(ds, level="shift")``.
    by : list of str
        Grouping columns.
    median : {"km", "observed"}, default "km"
        ``"km"``: the Kaplan–Meier median, which counts a shift whose event never came as
        right-censored at the messages left after it (:func:`accordkit.km_medians`);
        ``"observed"``: the median over the shifts whose event was observed
        (:data:`~accordkit.tables.catalogue.GOALSHIFT_GSRT`), which leaves out the slowest
        recoveries and so reads too fast when many are censored.
    **options
        Interval options of :func:`accordkit.summarize`.
    """
    if median == "observed":
        return summarize(shifts, list(GOALSHIFT_GSRT), list(by), **options)
    if median != "km":
        raise ValueError(f"median must be 'km' or 'observed', got {median!r}")
    from ..stats.survival import km_medians

    res = km_medians(shifts, by=list(by) or None, observed_only=False, **options)
    res["metric"] = res["event"].map(GSRT_KM_LABELS)
    return res.drop(columns="event")
