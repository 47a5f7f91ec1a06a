"""pass^k and pass@k per group, with intervals: the mean over tasks of the per-task values.

The estimators are a metric (:mod:`accordkit.metrics.passk`: per task, and their means per
group, pure, no resampling); this table adds, with ``ci=True``, the intervals from
:func:`accordkit.summarize` on the per-task values (tasks are the clusters), so there is one
interval engine. It sits with the tables, above both the metrics and the statistics.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import pandas as pd

from ..metrics.passk import group_means, tasks_and_counts
from ..stats.summarize import summarize

__all__ = ["pass_hat_k"]

#: Columns ``pass_hat_k(ci=True)`` adds, from :func:`accordkit.summarize`.
_CI_COLUMNS = ("ci_low", "ci_high", "ci_method", "small_cell")


def pass_hat_k(frame: pd.DataFrame, ks: Sequence[int] | int | None = None, *,
               by: str | Sequence[str] | None = None, rule: str = "per_task",
               success: str = "success", task: str = "scenario_id", trial: str = "rollout",
               ci: bool | str | None = None, method: str = "bca", confidence: float = 0.95,
               n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """pass^k and pass@k per group: the mean over tasks of
    :func:`~accordkit.metrics.passk.pass_hat_k_tasks`.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per episode, e.g. from :func:`accordkit.score`.
    ks, by, rule, success, task, trial
        As in :func:`~accordkit.metrics.passk.pass_hat_k_tasks` (whose module docstring
        gives the two rules). ``by`` defaults to domain x configuration.
    ci : bool, optional
        Add an interval of pass^k (``ci_low``, ``ci_high``, ``ci_method``) from
        :func:`accordkit.summarize` on the per-task values, resampling tasks, and its
        ``small_cell`` flag (fewer than 10 tasks: the interval is not to be trusted).
        ``"bootstrap"`` is the older spelling of ``True`` (deprecated).
    method, confidence, n_resamples, seed
        Passed to :func:`accordkit.summarize` (BCa by default).

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, ``k``, ``pass_hat_k``, ``pass_at_k``, ``n_tasks`` (tasks with a
        value at that ``k``), ``n_episodes`` and ``n_excluded`` (infrastructure errors and
        rows without a success value), plus the interval columns with ``ci``. An empty
        frame with these columns when there are no episodes.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"scenario_id": ["a"] * 4 + ["b"] * 4,
    ...                       "success": [True] * 4 + [True, False, False, False]})
    >>> out = pass_hat_k(frame)
    >>> out["pass_hat_k"].tolist(), out["pass_at_k"].tolist()
    ([0.625, 0.5, 0.5, 0.5], [0.625, 0.75, 0.875, 1.0])
    """
    if ci == "bootstrap":
        warnings.warn("pass_hat_k(ci='bootstrap') is deprecated: use ci=True (intervals come "
                      "from accordkit.summarize, BCa by default)", DeprecationWarning,
                      stacklevel=2)
        ci = True
    if ci not in (None, False, True):
        raise ValueError(f"ci must be True, False or None, got {ci!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    tasks, counts = tasks_and_counts(frame, ks, by=by, rule=rule, success=success, task=task,
                                     trial=trial)
    out = group_means(frame, tasks, counts)
    if not ci:
        return out
    keys = [*counts.columns[:-2], "k"]
    if tasks.empty:
        return out.assign(ci_low=pd.Series(dtype=float), ci_high=pd.Series(dtype=float),
                          ci_method=pd.Series(dtype=object),
                          small_cell=pd.Series(dtype=bool))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        table = summarize(tasks, ["pass_hat_k"], by=keys, cluster=task, method=method,
                          confidence=confidence, n_resamples=n_resamples, seed=seed)
    out = out.merge(table[[*keys, *_CI_COLUMNS]], on=keys, how="left")
    out["small_cell"] = out["small_cell"].fillna(True).astype(bool)
    return out
