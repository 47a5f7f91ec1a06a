"""Kaplan–Meier recovery times after a goal shift.

A shift whose acknowledgement (first relevant tool call, outcome) never came within the
conversation still tells something: the agent had not recovered after all the messages that
followed the shift. The observed-only median drops such shifts, the slowest ones, and so
comes out too small. Here each shift is a right-censored time:

* ``time`` = the recovery time (``gsrt_ack``, ``gsrt_tool`` or ``gsrt_outcome``) when the
  event was observed, else ``messages_after_shift`` (the censoring time);
* ``observed`` = whether the event was observed.

Survival curves come from :func:`scipy.stats.ecdf` on :class:`scipy.stats.CensoredData`.
The KM median is the smallest time at which the survival estimate is at most 0.5; it is NaN
("not reached") when more than half of the shifts are still unrecovered at the last time.
For intervals, :class:`~accordkit.stats._km.KMMedianEstimator` lets :func:`~accordkit.stats.summarize` resample
whole clusters: ``Metric(name, (time, observed), stat="km_median")``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ._cells import iter_cells
from ._km import HALF
from .metrics import Metric
from .summarize import summarize

__all__ = ["EVENTS", "recovery_times", "kaplan_meier", "km_median", "recovery_curves",
           "km_medians"]

#: the event name -> the per-shift time column of ``ak.score(ds, level="shift")``
EVENTS = {"ack": "gsrt_ack", "tool": "gsrt_tool", "outcome": "gsrt_outcome"}


def recovery_times(shifts: pd.DataFrame, *, event: str = "ack") -> pd.DataFrame:
    """The shifts whose reaction was judged, with right-censored ``time`` and ``observed``.

    Parameters
    ----------
    shifts : DataFrame
        ``ak.score(ds, level="shift")``: needs the event's time column, the matching
        ``censored_*`` flag and ``messages_after_shift``.
    event : {"ack", "tool", "outcome"}
        Acknowledgement, first relevant tool call or outcome.

    Returns
    -------
    DataFrame
        The judged shifts (``censored_<event>`` known; meta-marker shifts, whose reaction
        is unknown, are left out) with two more columns, ``time`` and ``observed``. A shift
        handed to a human (``transferred``) without the event is censored like one cut off
        by the end of the conversation. ``attrs["n_unjudged"]`` counts the meta-marker
        shifts left out and ``attrs["n_inconsistent"]`` those whose judged event lies at or
        before the shift (no time, not censored: left out).

    Raises
    ------
    ValueError
        An unobserved shift has no ``messages_after_shift`` (no censoring time), or a column
        is missing.
    """
    if event not in EVENTS:
        raise ValueError(f"`event` must be one of {', '.join(map(repr, EVENTS))}, got {event!r}")
    column, flag = EVENTS[event], f"censored_{event}"
    missing = [c for c in (column, flag, "messages_after_shift") if c not in shifts.columns]
    if missing:
        raise ValueError(f"the shift frame lacks column(s) {missing!r}; pass "
                         "ak.score(ds, level='shift')")
    judged = shifts[shifts[flag].notna()]
    times = judged[column].to_numpy(dtype=float, na_value=np.nan)
    censored = judged[flag].to_numpy(dtype=bool)
    transferred = (judged["transferred"].fillna(False).to_numpy(dtype=bool)
                   if "transferred" in judged.columns else np.zeros(len(judged), dtype=bool))
    # no time, yet neither censored nor transferred: the judge put the event at or before
    # the shift; such a shift has no usable time
    inconsistent = np.isnan(times) & ~censored & ~transferred
    n_unjudged = len(shifts) - len(judged)
    judged = judged[~inconsistent].copy()
    times = times[~inconsistent]
    after = judged["messages_after_shift"].to_numpy(dtype=float, na_value=np.nan)
    observed = ~np.isnan(times)
    lost = ~observed & np.isnan(after)
    if lost.any():
        first = judged.index[np.flatnonzero(lost)[0]]
        raise ValueError(f"shift at frame index {first!r} has no {column!r} and no "
                         "'messages_after_shift' (its censoring time)")
    judged["time"] = np.where(observed, times, after)
    judged["observed"] = observed
    judged.attrs["n_unjudged"] = int(n_unjudged)
    judged.attrs["n_inconsistent"] = int(inconsistent.sum())
    return judged


def kaplan_meier(time: np.ndarray, observed: np.ndarray) -> pd.DataFrame:
    """The Kaplan–Meier survival curve, from :func:`scipy.stats.ecdf`.

    Returns
    -------
    DataFrame
        ``time`` (distinct event times, starting at 0), ``survival`` and the number
        ``at_risk`` just before each time.

    Examples
    --------
    >>> curve = kaplan_meier([1, 2, 2, 3], [True, True, False, True])
    >>> curve.survival.round(3).tolist()
    [1.0, 0.75, 0.5, 0.0]
    """
    time = np.asarray(time, dtype=float)
    observed = np.asarray(observed, dtype=bool)
    if len(time) == 0:
        return pd.DataFrame({"time": [0.0], "survival": [1.0], "at_risk": [0]})
    if not observed.any():
        return pd.DataFrame({"time": [0.0], "survival": [1.0], "at_risk": [len(time)]})
    data = stats.CensoredData(uncensored=time[observed], right=time[~observed])
    sf = stats.ecdf(data).sf
    at_risk = np.array([np.count_nonzero(time >= t) for t in sf.quantiles])
    return pd.DataFrame({"time": np.r_[0.0, sf.quantiles],
                         "survival": np.r_[1.0, sf.probabilities],
                         "at_risk": np.r_[len(time), at_risk]})


def km_median(time: np.ndarray, observed: np.ndarray) -> float:
    """The smallest time at which the KM survival is at most 0.5 (NaN: not reached).

    Examples
    --------
    >>> km_median([1, 2, 3, 4], [True, False, False, False])  # 3 of 4 censored
    nan
    >>> km_median([1, 2, 3, 4], [True, True, True, True])
    2.0
    """
    curve = kaplan_meier(time, observed)
    below = np.flatnonzero(curve.survival.to_numpy() <= HALF)
    return float(curve.time.iloc[below[0]]) if len(below) else np.nan


def recovery_curves(shifts: pd.DataFrame, *, by: str | Sequence[str] | None = "agent_model",
                    events: Sequence[str] = ("ack", "tool", "outcome")) -> pd.DataFrame:
    """KM survival curves (share of shifts not yet recovered) per group and event.

    Returns
    -------
    DataFrame
        The ``by`` columns, ``event``, ``time``, ``survival``, ``at_risk``, and per group
        ``n_shifts`` and ``n_censored``.
    """
    by_ = _by(by)
    parts = []
    for event in events:
        times = recovery_times(shifts, event=event)
        for cell in iter_cells(times, by_):
            part = times.iloc[cell.positions]
            curve = kaplan_meier(part["time"].to_numpy(), part["observed"].to_numpy())
            for col, val in zip(by_, cell.values, strict=True):
                curve[col] = val
            curve["event"] = event
            curve["n_shifts"] = len(part)
            curve["n_censored"] = int((~part["observed"]).sum())
            parts.append(curve)
    cols = [*by_, "event", "time", "survival", "at_risk", "n_shifts", "n_censored"]
    return pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)


def km_medians(
    shifts: pd.DataFrame,
    *,
    by: str | Sequence[str] | None = "agent_model",
    events: Sequence[str] = ("ack", "tool", "outcome"),
    cluster: str | None = "scenario_id",
    observed_only: bool = True,
    method: str = "percentile",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """KM medians of the recovery times per group, with cluster-bootstrap intervals.

    Parameters
    ----------
    shifts : DataFrame
        ``ak.score(ds, level="shift")``.
    by, events : see :func:`recovery_curves`.
    cluster, method, confidence, n_resamples, seed
        Passed to :func:`~accordkit.stats.summarize`. The default interval is the
        percentile one: the jackknife BCa needs is often degenerate for a median of
        whole message counts.
    observed_only : bool, default True
        Also report the median over the observed shifts only (the biased one), as
        ``stat == "median"`` rows.

    Returns
    -------
    DataFrame
        A :func:`summarize` result with one row per group, event and statistic; the KM
        rows have ``stat == "km_median"`` and ``n_censored`` filled in, plus an ``event``
        column.
    """
    by_ = _by(by)
    parts = []
    for event in events:
        times = recovery_times(shifts, event=event)
        times["_observed"] = times["observed"].astype(float)
        metrics: list[Metric] = [Metric(f"KM median {event}", ("time", "_observed"),
                                        stat="km_median", higher_is_better=False)]
        if observed_only:
            metrics.append(Metric(f"observed median {event}", EVENTS[event], stat="median",
                                  higher_is_better=False))
        res = summarize(times, metrics, list(by_) or None, cluster=cluster, method=method,
                        confidence=confidence, n_resamples=n_resamples, seed=seed)
        res.insert(len(by_), "event", event)
        parts.append(res)
    out = pd.concat(parts, ignore_index=True)
    out["n_censored"] = out["n_censored"].astype("Int64")
    return out


def _by(by: str | Sequence[str] | None) -> tuple[str, ...]:
    if by is None:
        return ()
    return (by,) if isinstance(by, str) else tuple(by)
