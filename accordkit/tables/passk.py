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

__all__ = ["pass_hat_k", "one_interval", "BINARY_TOLERANCE"]

#: pass^1 and the mean reward are one number when they differ by no more than this.
BINARY_TOLERANCE = 1e-12

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


def one_interval(passk: pd.DataFrame, *, reward: pd.DataFrame, frame: pd.DataFrame,
                 by: Sequence[str], reward_column: str = "reward",
                 label: str = "mean reward") -> pd.DataFrame:
    """pass^1 with the mean reward's interval where the two are one number.

    With rewards of 0 and 1 only, the mean reward and pass^1 (the success rate averaged over
    tasks) are the same number when every task ran as many trials; two intervals for it
    (summarize's on episodes, pass_hat_k's on per-task rates) would read as two quantities.
    Where a group's rewards are all 0 or 1 and the two estimates agree (within
    :data:`BINARY_TOLERANCE`), the pass^1 row takes the reward's interval, and
    ``interval_of`` names it; elsewhere (a partial reward, unequal trials) they are two
    quantities, each with its own interval, and ``interval_of`` is missing.

    Parameters
    ----------
    passk : pandas.DataFrame
        :func:`pass_hat_k` with ``ci=True``: the ``by`` columns, ``k``, ``pass_hat_k``,
        ``ci_low``, ``ci_high``.
    reward : pandas.DataFrame
        The mean reward per group: the ``by`` columns, ``estimate``, ``ci_low``,
        ``ci_high`` (one row per group, e.g. :func:`accordkit.summarize` of the reward).
    frame : pandas.DataFrame
        The episodes both were computed from (the ``by`` columns and ``reward_column``).
    by : list of str
    reward_column, label : str
        The reward column of ``frame``, and the name written in ``interval_of``.

    Returns
    -------
    pandas.DataFrame
        ``passk`` with ``interval_of``.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"g": ["a"] * 4, "reward": [1.0, 0.0, 1.0, 1.0]})
    >>> passk = pd.DataFrame({"g": ["a", "a"], "k": [1, 2], "pass_hat_k": [0.75, 0.5],
    ...                       "ci_low": [0.5, 0.0], "ci_high": [1.0, 1.0]})
    >>> reward = pd.DataFrame({"g": ["a"], "estimate": [0.75], "ci_low": [0.45],
    ...                        "ci_high": [0.95]})
    >>> one_interval(passk, reward=reward, frame=frame, by=["g"])[["k", "ci_low", "interval_of"]]
       k  ci_low  interval_of
    0  1    0.45  mean reward
    1  2    0.00         None
    """
    by = list(by)
    out = passk.copy()
    out["interval_of"] = pd.Series([None] * len(out), index=out.index, dtype=object)
    if not len(out) or not len(reward) or reward_column not in frame:
        return out
    values = pd.to_numeric(frame[reward_column], errors="coerce")
    is_binary = values.isin((0.0, 1.0)) | values.isna()
    binary = (is_binary.groupby([frame[c] for c in by], dropna=False, sort=False).all()
              if by else pd.Series([bool(is_binary.all())]))
    rows = reward.set_index(by) if by else reward
    for i in out.index[out["k"] == 1]:
        key = tuple(out.loc[i, c] for c in by)
        key1 = key[0] if len(key) == 1 else key
        if by and (key1 not in binary.index or not bool(binary.loc[key1])
                   or key1 not in rows.index):
            continue
        if not by and not bool(binary.all()):
            continue
        r = rows.loc[key1] if by else rows.iloc[0]
        if isinstance(r, pd.DataFrame):   # a repeated group: not one row to take it from
            continue
        if abs(float(r["estimate"]) - float(out.loc[i, "pass_hat_k"])) > BINARY_TOLERANCE:
            continue
        out.loc[i, ["ci_low", "ci_high"]] = [float(r["ci_low"]), float(r["ci_high"])]
        if "ci_method" in out and "ci_method" in r:
            out.loc[i, "ci_method"] = r["ci_method"]
        out.loc[i, "interval_of"] = label
    return out
