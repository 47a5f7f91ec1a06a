"""Failure types of every benchmark: per-episode flags and their rates per group.

Which benchmarks a failure type applies to comes from the catalogue
(:func:`failure_benchmarks`), so a rate is never shown as 0 where the failure cannot occur.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..benchmarks import ids as benchmark_ids

__all__ = ["FAILURES", "failure_benchmarks", "failure_rates", "failure_flags"]


#: Failure types for error analysis: name -> description.
FAILURES = {
    "not_completed": "AcCoRD episode ended without a purchase / all bookings",
    "unsatisfied_triggered": "a triggered preference was judged unsatisfied",
    "unrecovered_shift": "a goal shift was never acknowledged (or handed to a human)",
    "redundant_calls": "at least one redundant tool call",
    "transfer": "the agent handed a goal shift to a human",
}


def failure_benchmarks() -> dict[str, tuple[str, ...]]:
    """The benchmarks each failure type of :data:`FAILURES` can occur in, from the
    catalogue: an incomplete episode where ``completed == False`` is a failure
    (``incomplete_is_failure``), triggered preferences where the AcCoRD metrics score,
    goal shifts where the goal-shift tables are made, redundant calls where the goal-shift
    metrics (TCRR) score.

    Examples
    --------
    >>> failure_benchmarks()["unrecovered_shift"]
    ('agentchangebench',)
    >>> failure_benchmarks()["redundant_calls"]
    ('agentchangebench', 'tau2', 'taubench')
    """
    from ..benchmarks import scored_by, shown_in_table

    shifts = shown_in_table("accordkit.tables.goalshift:goalshift_main")
    return {"not_completed": benchmark_ids(incomplete_is_failure=True),
            "unsatisfied_triggered": scored_by("accordkit.metrics.accord"),
            "unrecovered_shift": shifts,
            "redundant_calls": scored_by("accordkit.metrics.goalshift"),
            "transfer": shifts}


def failure_rates(flags: pd.DataFrame, *,
                  by: Sequence[str] = ("benchmark", "agent_model", "method")) -> pd.DataFrame:
    """Share of episodes with each failure type per group, only where it can occur.

    Parameters
    ----------
    flags : pandas.DataFrame
        :func:`failure_flags` joined to the ``by`` columns (one of them ``benchmark``).
    by : list of str
        The groups; a missing value is shown as ``"?"``, never dropped.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``episodes``, then one column per failure type: the share, or
        NaN where the type does not apply to the group's benchmark
        (:func:`failure_benchmarks`; a plain tau2 run has no goal shift to miss, so it
        shows no 0 for one). A type that applies to no group is left out.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"benchmark": ["tau2", "tau2", "agentchangebench"],
    ...                   "agent_model": "m", "method": "x",
    ...                   "not_completed": False, "unsatisfied_triggered": False,
    ...                   "unrecovered_shift": [False, False, True],
    ...                   "redundant_calls": [True, False, False], "transfer": False})
    >>> t = failure_rates(f)
    >>> t.columns.tolist()
    ['benchmark', 'agent_model', 'method', 'episodes', 'unrecovered_shift', 'redundant_calls', 'transfer']
    >>> t.set_index("benchmark")["unrecovered_shift"].to_dict()
    {'agentchangebench': 1.0, 'tau2': nan}
    """
    by = list(by)
    if "benchmark" not in by:
        raise ValueError("failure_rates needs 'benchmark' among `by` (which flags apply)")
    names = [f for f in FAILURES if f in flags.columns]
    data = flags.assign(**{k: flags[k].fillna("?") for k in by})
    grouped = data.groupby(by, sort=True)
    out = grouped[names].mean().astype(float)
    out.insert(0, "episodes", grouped.size())
    out = out.reset_index()
    applies = failure_benchmarks()
    for name in names:
        out.loc[~out["benchmark"].isin(applies[name]), name] = np.nan
    keep = [n for n in names if out[n].notna().any()]
    return out[[*by, "episodes", *keep]]


def failure_flags(episodes: pd.DataFrame, *, by: Sequence[str] = (),
                  preferences: pd.DataFrame | None = None,
                  shifts: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per episode, one boolean column per failure type in :data:`FAILURES`.

    A flag is False (not missing) when the failure cannot occur for the episode's benchmark.

    Parameters
    ----------
    episodes : pandas.DataFrame
        Episode scores (``episode_id``, ``benchmark``, ``completed``,
        ``n_redundant_calls``, and the ``by`` columns).
    by : sequence of str, default ()
        Episode columns kept beside the flags: the groups :func:`failure_rates` (or a
        drill-down) takes them by.
    preferences : pandas.DataFrame, optional
        Preference scores (``episode_id``, ``dynamic``, ``satisfied``) for
        ``unsatisfied_triggered``.
    shifts : pandas.DataFrame, optional
        Shift scores (``episode_id``, ``recovered``, ``transferred``) for
        ``unrecovered_shift`` and ``transfer``.

    Returns
    -------
    pandas.DataFrame
        ``episode_id``, the ``by`` columns, then one boolean column per failure type.

    Examples
    --------
    >>> import pandas as pd
    >>> ep = pd.DataFrame({"episode_id": ["e1", "e2"], "benchmark": "accord",
    ...                    "agent_model": "m", "completed": [True, False]})
    >>> failure_flags(ep, by=["agent_model"])[["episode_id", "agent_model",
    ...                                         "not_completed"]].values.tolist()
    [['e1', 'm', False], ['e2', 'm', True]]
    """
    by = [by] if isinstance(by, str) else list(by)
    missing = [c for c in by if c not in episodes.columns]
    if missing:
        raise ValueError(f"failure_flags by {missing}: the episodes have no such column")
    out = episodes[["episode_id", *(c for c in by if c != "episode_id")]].copy()
    ids = out["episode_id"]

    def col(name: str) -> pd.Series:
        if name in episodes:
            return episodes[name]
        return pd.Series(np.nan, index=episodes.index)

    not_completed = (col("completed").astype("boolean") == False).fillna(False)  # noqa: E712
    if "benchmark" in episodes:  # an AcCoRD failure (no purchase); tau2 rows say `completed`
        # of termination (the catalogue's ``incomplete_is_failure``)
        not_completed &= episodes["benchmark"].isin(benchmark_ids(incomplete_is_failure=True))
    out["not_completed"] = not_completed
    bad_trig: set[str] = set()
    if preferences is not None and len(preferences):
        trig = preferences[(preferences["dynamic"] == "triggered")
                           & (preferences["satisfied"].astype("boolean") == False)]  # noqa: E712
        bad_trig = set(trig["episode_id"])
    out["unsatisfied_triggered"] = ids.isin(bad_trig)
    unrecovered: set[str] = set()
    transferred: set[str] = set()
    if shifts is not None and len(shifts):
        unrecovered = set(shifts.loc[shifts["recovered"].astype("boolean") == False,  # noqa: E712
                                     "episode_id"])
        transferred = set(shifts.loc[shifts["transferred"].astype("boolean").fillna(False),
                                     "episode_id"])
    out["unrecovered_shift"] = ids.isin(unrecovered)
    out["redundant_calls"] = (col("n_redundant_calls").astype("Float64") > 0).fillna(False)
    out["transfer"] = ids.isin(transferred)
    return out
