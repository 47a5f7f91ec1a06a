"""The frames behind the error analysis's figures: where the first divergence falls, and
what a solved task costs (with intervals), per configuration.

Each figure of :mod:`accordkit.plots.failures` is drawn from one of these frames (or from
the failure taxonomy's own table), and the report writes the same frame as the figure's
CSV: one source for the numbers a reader sees and the numbers a reader downloads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["divergence_turns", "cost_per_success", "cost_frontier", "COST_COLUMN"]

#: The episode column holding what an episode cost the agent (in the run's currency).
COST_COLUMN = "agent_cost"


def divergence_turns(actions: pd.DataFrame, *, episodes: pd.DataFrame,
                     by: str | Sequence[str] = "configuration",
                     bins: Sequence[int] | None = None) -> pd.DataFrame:
    """How many episodes first left the expected path at each turn, per group.

    Parameters
    ----------
    actions : pandas.DataFrame
        The action diff (``episode_id``, ``first_divergence_turn``, ``divergence_reason``).
    episodes : pandas.DataFrame
        One row per episode with the ``by`` columns (episodes without expected actions
        are left out: they cannot diverge).
    by : str or list of str
        The grouping columns of ``episodes``.
    bins : list of int, optional
        Left edges of the turn bins (default: every turn, 0 to the largest).

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``turn`` (a bin's first turn), ``episodes`` (that diverged
        there), ``share`` (of the group's episodes with expected actions) and
        ``n_episodes`` (those episodes; the denominator). Every bin of every group is a
        row, a bin no episode fell in holding 0.

    Examples
    --------
    >>> import pandas as pd
    >>> eps = pd.DataFrame({"episode_id": ["a", "b", "c"], "configuration": ["x"] * 3})
    >>> diff = pd.DataFrame({"episode_id": ["a", "b", "c"],
    ...                      "first_divergence_turn": pd.array([2, None, 2], "Int64"),
    ...                      "divergence_reason": ["missing", None, "extra"]})
    >>> t = divergence_turns(diff, episodes=eps)
    >>> t["turn"].tolist(), t["episodes"].tolist(), t["share"].round(3).tolist()
    ([0, 1, 2], [0, 0, 2], [0.0, 0.0, 0.667])
    """
    by = [by] if isinstance(by, str) else list(by)
    missing = [c for c in by if c not in episodes]
    if missing:
        raise KeyError(f"divergence_turns: episodes have no column {missing}")
    cols = [*by, "turn", "episodes", "share", "n_episodes"]
    first = actions.drop_duplicates("episode_id")[["episode_id", "first_divergence_turn",
                                                   "divergence_reason"]]
    merged = episodes.drop_duplicates("episode_id")[["episode_id", *by]].merge(
        first, on="episode_id", how="inner")
    if not len(merged):
        return pd.DataFrame(columns=cols)
    diverged = merged[merged["divergence_reason"].notna()
                      & merged["first_divergence_turn"].notna()]
    turns = diverged["first_divergence_turn"].astype(int)
    top = int(turns.max()) if len(turns) else 0
    edges = sorted(set(int(b) for b in bins)) if bins is not None else list(range(top + 1))
    if not edges:
        raise ValueError("divergence_turns: bins is empty")
    which = np.searchsorted(np.asarray(edges), turns.to_numpy(), side="right") - 1
    diverged = diverged.assign(turn=np.asarray(edges)[np.clip(which, 0, None)])
    diverged = diverged[which >= 0]
    totals = merged.groupby(by, dropna=False, sort=True).size().rename("n_episodes")
    counts = diverged.groupby([*by, "turn"], dropna=False).size().rename("episodes")
    grid = pd.MultiIndex.from_tuples(
        [(*(g if isinstance(g, tuple) else (g,)), t) for g in totals.index for t in edges],
        names=[*by, "turn"])
    out = counts.reindex(grid, fill_value=0).reset_index()
    out = out.merge(totals.reset_index(), on=by, how="left")
    out["share"] = out["episodes"] / out["n_episodes"]
    out["episodes"] = out["episodes"].astype(int)
    out["turn"] = out["turn"].astype(int)
    return out[cols]


def cost_per_success(episodes: pd.DataFrame, *, by: str | Sequence[str] = "configuration",
                     cost: str = COST_COLUMN, **boot: Any) -> pd.DataFrame:
    """What one solved task costs, per group: the groups' total cost over their successes,
    with the mean cost per episode and the success rate, each with a task-clustered
    bootstrap interval (:func:`accordkit.summarize`, the options in ``boot``).

    Only episodes that recorded a cost count (a run that stores none gives an empty
    frame, and the report says so rather than draw 0).

    Returns
    -------
    pandas.DataFrame
        :func:`accordkit.summarize`'s columns for the metrics ``cost_per_success``
        (``sum(cost) / sum(success)``; NaN where nothing succeeded), ``cost_per_episode``
        and ``success_rate``.

    Examples
    --------
    >>> import pandas as pd
    >>> eps = pd.DataFrame({"configuration": ["x"] * 4, "scenario_id": ["t1", "t1", "t2", "t2"],
    ...                     "agent_cost": [0.2, 0.2, 0.4, 0.4], "success": [True, False, True, True]})
    >>> t = cost_per_success(eps, n_resamples=50, method="percentile")
    >>> t.set_index("metric")["estimate"].round(3).to_dict()
    {'cost_per_success': 0.4, 'cost_per_episode': 0.3, 'success_rate': 0.75}
    """
    from ..stats import summarize

    by = [by] if isinstance(by, str) else list(by)
    if cost not in episodes or "success" not in episodes:   # no cost stored: no rows
        frame = pd.DataFrame({**{c: pd.Series(dtype=object) for c in by},
                              "scenario_id": pd.Series(dtype=object),
                              "_cost": pd.Series(dtype=float),
                              "_solved": pd.Series(dtype=float)})
    else:
        frame = episodes[episodes[cost].notna() & episodes["success"].notna()]
        frame = frame.assign(_cost=frame[cost].astype(float),
                             _solved=frame["success"].astype(bool).astype(float))
    return summarize(frame, _cost_metrics(), by=by, **boot)


def _cost_metrics() -> list:
    """The metrics of :func:`cost_per_success`."""
    from ..stats import Metric

    return [Metric("cost_per_success", ("_cost", "_solved"), higher_is_better=False),
            Metric("cost_per_episode", "_cost", higher_is_better=False),
            Metric("success_rate", "_solved")]


def cost_frontier(table: pd.DataFrame, *, by: str | Sequence[str] = "configuration"
                  ) -> pd.DataFrame:
    """The cost–success frontier of :func:`cost_per_success`'s table: per group, the mean
    cost per episode and the success rate (with their intervals), and ``on_frontier``:
    no other group succeeds at least as often for less (nor more often for the same).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"configuration": ["a", "a", "b", "b", "c", "c"],
    ...                   "metric": ["cost_per_episode", "success_rate"] * 3,
    ...                   "estimate": [1.0, 0.5, 2.0, 0.9, 3.0, 0.8],
    ...                   "ci_low": [0.9, 0.4, 1.8, 0.8, 2.9, 0.7],
    ...                   "ci_high": [1.1, 0.6, 2.2, 1.0, 3.1, 0.9]})
    >>> cost_frontier(t)[["configuration", "on_frontier"]].values.tolist()
    [['a', True], ['b', True], ['c', False]]
    """
    by = [by] if isinstance(by, str) else list(by)
    cols = [*by, "cost", "cost_low", "cost_high", "success", "success_low", "success_high",
            "on_frontier"]
    part = table[table["metric"].isin(["cost_per_episode", "success_rate"])]
    if not len(part):
        return pd.DataFrame(columns=cols)
    wide = part.pivot_table(index=by, columns="metric",
                            values=["estimate", "ci_low", "ci_high"], dropna=False)
    out = pd.DataFrame({
        "cost": wide[("estimate", "cost_per_episode")],
        "cost_low": wide[("ci_low", "cost_per_episode")],
        "cost_high": wide[("ci_high", "cost_per_episode")],
        "success": wide[("estimate", "success_rate")],
        "success_low": wide[("ci_low", "success_rate")],
        "success_high": wide[("ci_high", "success_rate")]}).reset_index()
    cost, success = out["cost"].to_numpy(float), out["success"].to_numpy(float)
    on = []
    for i in range(len(out)):
        dominated = ((cost <= cost[i]) & (success >= success[i])
                     & ((cost < cost[i]) | (success > success[i])))
        on.append(bool(np.isfinite(cost[i]) and np.isfinite(success[i])
                       and not dominated.any()))
    out["on_frontier"] = on
    return out.sort_values("cost", kind="stable").reset_index(drop=True)[cols]
