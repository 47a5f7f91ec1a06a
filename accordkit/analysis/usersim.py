"""How far the user simulator can be trusted, from the reviews of its conversations.

* :func:`usersim_reliability`: per user model, the share of reviewed episodes in which the
  simulator made an error, and a critical one (it helped or hindered the agent), with
  clustered bootstrap intervals;
* :func:`without_user_errors`: reward and pass^k of every configuration computed twice, on
  all episodes and on the episodes without a critical user-simulator error, side by side
  (nothing is dropped silently: both rows are there, with how many episodes the second
  leaves out).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..metrics.reviews import ReviewTables, reviewed_episodes, user_critical
from .failures import DEFAULT_BY

__all__ = ["usersim_reliability", "without_user_errors", "SUBSETS", "WITHOUT_COLUMNS"]

#: The two episode sets :func:`without_user_errors` compares.
SUBSETS = ("all", "no critical user-simulator error")
#: Columns of :func:`without_user_errors` after the ``by`` columns.
WITHOUT_COLUMNS = ["episodes", "metric", "estimate", "ci_low", "ci_high", "n_clusters",
                   "n_rows", "n_left_out", "n_unreviewed", "small_cell"]


def _by(episodes: pd.DataFrame, by: str | Sequence[str] | None,
        default: Sequence[str]) -> list[str]:
    if by is None:
        return [c for c in default if c in episodes.columns]
    return [by] if isinstance(by, str) else list(by)


def _flags(episodes: pd.DataFrame, reviews: ReviewTables) -> pd.DataFrame:
    crit = user_critical(reviews, episodes["episode_id"])
    errors = reviews.errors
    erred = set(errors.loc[errors["source"] == "user", "episode_id"])
    reviewed = reviewed_episodes(reviews)   # a failed review covers nothing
    any_error = [1.0 if e in erred else (0.0 if e in reviewed else float("nan"))
                 for e in episodes["episode_id"]]
    out = episodes.reset_index(drop=True).copy()
    out["critical_user_error"] = crit.astype("Float64").astype(float).to_numpy()
    out["user_error"] = any_error
    return out


def usersim_reliability(episodes: pd.DataFrame, reviews: ReviewTables, *,
                        by: str | Sequence[str] | None = None, cluster: str = "scenario_id",
                        **summarize_options: Any) -> pd.DataFrame:
    """The user simulator's error and critical-error rates per user model, with intervals.

    Parameters
    ----------
    episodes : pandas.DataFrame
        Episode scores (``episode_id``, the ``by`` columns, ``cluster``).
    reviews : ReviewTables
        Stored or judged reviews (:func:`accordkit.review_tables`).
    by : str or list of str, optional
        Default ``user_model`` (with ``user_implementation`` when present).
    cluster : str, default "scenario_id"
    **summarize_options
        Passed to :func:`accordkit.summarize`.

    Returns
    -------
    pandas.DataFrame
        :func:`accordkit.summarize`'s table with the metrics ``user_error`` (share of
        reviewed episodes with any user-simulator error) and ``critical_user_error`` (a
        critical one); episodes no review covers are not counted (``n_events`` is the
        number reviewed). A review tau2 could not make (its placeholder, "Failed to parse
        LLM response") is no error: such an episode counts as not reviewed, and
        ``n_review_failed`` says how many episodes of the group that is.

    Examples
    --------
    >>> import pandas as pd
    >>> from accordkit.metrics.reviews import reviews_from_json
    >>> bad = ('{"review": {"has_errors": true, "errors": [{"source": "user", '
    ...        '"severity": "critical_hindered", "reasoning": "r"}]}}')
    >>> ok = '{"review": {"has_errors": false}}'
    >>> reviews = reviews_from_json(list("abc"), [bad, ok, ok])
    >>> episodes = pd.DataFrame({"episode_id": list("abcd"), "user_model": ["u"] * 4,
    ...                          "scenario_id": list("wxyz")})
    >>> t = usersim_reliability(episodes, reviews, n_resamples=200)
    >>> t[["metric", "estimate", "n_events"]].round(3).to_dict("records")
    [{'metric': 'user_error', 'estimate': 0.333, 'n_events': 3.0}, {'metric': 'critical_user_error', 'estimate': 0.333, 'n_events': 3.0}]
    """
    from ..stats import summarize

    by_cols = _by(episodes, by, ("user_model", "user_implementation"))
    frame = _flags(episodes, reviews)
    out = summarize(frame, ["user_error", "critical_user_error"], by=by_cols or None,
                    cluster=cluster, **summarize_options)
    frame["_failed"] = frame["episode_id"].astype(str).isin(
        set(reviews.reviews["episode_id"].astype(str)) - reviewed_episodes(reviews))
    if by_cols:
        counts = frame.groupby(by_cols, dropna=False)["_failed"].sum().rename(
            "n_review_failed").reset_index()
        out = out.merge(counts, on=by_cols, how="left")
    else:
        out["n_review_failed"] = int(frame["_failed"].sum())
    out["n_review_failed"] = out["n_review_failed"].fillna(0).astype("int64")
    return out


def without_user_errors(episodes: pd.DataFrame, reviews: ReviewTables, *,
                        by: str | Sequence[str] | None = None,
                        ks: Sequence[int] | int | None = None, cluster: str = "scenario_id",
                        method: str = "bca", confidence: float = 0.95,
                        n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Reward and pass^k on all episodes and without those the user simulator spoiled.

    Parameters
    ----------
    episodes : pandas.DataFrame
        Episode scores: ``episode_id``, ``reward``, ``success``, ``scenario_id`` and
        ``rollout`` (for pass^k), and the ``by`` columns.
    reviews : ReviewTables
        Stored or judged reviews.
    by : str or list of str, optional
        Default domain x configuration.
    ks : int or list of int, optional
        pass^k for these k (default: 1 up to the fewest trials of any task).
    cluster, method, confidence, n_resamples, seed
        The interval options (:func:`accordkit.summarize`; pass^k through
        :func:`accordkit.pass_hat_k`).

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, then :data:`WITHOUT_COLUMNS`: ``episodes`` is ``"all"`` or
        ``"no critical user-simulator error"``; ``metric`` is ``reward`` (mean reward) or
        ``pass^k``; ``n_clusters`` the tasks, ``n_rows`` the episodes used, ``n_left_out``
        the episodes the second set drops (a critical user-simulator error) and
        ``n_unreviewed`` the episodes no review covers (kept in both sets: nothing says
        they were spoiled). Where a set's rewards are all 0 or 1 and its pass^1 equals its
        mean reward (equal trials per task), the two are one number: the pass^1 row shows
        the reward row's interval (:func:`accordkit.tables.passk.one_interval`).

    Examples
    --------
    >>> import pandas as pd
    >>> from accordkit.metrics.reviews import reviews_from_json
    >>> bad = ('{"review": {"has_errors": true, "errors": [{"source": "user", '
    ...        '"severity": "critical_helped", "reasoning": "r"}]}}')
    >>> ok = '{"review": {"has_errors": false}}'
    >>> episodes = pd.DataFrame({"episode_id": list("abcd"), "domain": ["x"] * 4,
    ...                          "scenario_id": ["p", "p", "q", "q"], "rollout": [0, 1] * 2,
    ...                          "reward": [1.0, 1.0, 0.0, 1.0],
    ...                          "success": [True, True, False, True]})
    >>> reviews = reviews_from_json(list("abcd"), [bad, ok, ok, ok])
    >>> t = without_user_errors(episodes, reviews, ks=1, n_resamples=200)
    >>> t[["episodes", "metric", "estimate", "n_rows", "n_left_out"]].to_dict("records")
    [{'episodes': 'all', 'metric': 'reward', 'estimate': 0.75, 'n_rows': 4, 'n_left_out': 0}, {'episodes': 'all', 'metric': 'pass^1', 'estimate': 0.75, 'n_rows': 4, 'n_left_out': 0}, {'episodes': 'no critical user-simulator error', 'metric': 'reward', 'estimate': 0.6666666666666666, 'n_rows': 3, 'n_left_out': 1}, {'episodes': 'no critical user-simulator error', 'metric': 'pass^1', 'estimate': 0.75, 'n_rows': 3, 'n_left_out': 1}]
    """
    import warnings

    from ..stats import summarize
    from ..tables.passk import one_interval, pass_hat_k

    by_cols = _by(episodes, by, DEFAULT_BY)
    frame = _flags(episodes, reviews)
    spoiled = frame["critical_user_error"] == 1.0
    unreviewed = frame["critical_user_error"].isna()
    opts = {"method": method, "confidence": confidence, "n_resamples": n_resamples,
            "seed": seed}
    parts = []
    for label, part in ((SUBSETS[0], frame), (SUBSETS[1], frame[~spoiled.to_numpy()])):
        left_out = _count(frame[spoiled.to_numpy()], by_cols) if label == SUBSETS[1] else None
        no_review = _count(frame[unreviewed.to_numpy()], by_cols)
        rows = []
        s = None
        if "reward" in part.columns and len(part):
            s = summarize(part, ["reward"], by=by_cols or None, cluster=cluster, **opts)
            rows.append(pd.DataFrame({
                **{c: s[c] for c in by_cols}, "metric": "reward", "estimate": s["estimate"],
                "ci_low": s["ci_low"], "ci_high": s["ci_high"], "n_clusters": s["n_clusters"],
                "n_rows": s["n_rows"], "small_cell": s["small_cell"]}))
        if "success" in part.columns and len(part):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # trial counts, said in n_rows
                p = pass_hat_k(part, ks, by=by_cols, task=cluster, ci=True, **opts)
            if s is not None:   # 0/1 rewards, equal trials: one number, one interval
                p = one_interval(p, reward=s, frame=part, by=by_cols)
            rows.append(pd.DataFrame({
                **{c: p[c] for c in by_cols}, "metric": "pass^" + p["k"].astype(str),
                "estimate": p["pass_hat_k"], "ci_low": p["ci_low"], "ci_high": p["ci_high"],
                "n_clusters": p["n_tasks"], "n_rows": p["n_episodes"],
                "small_cell": p["small_cell"]}))
        if not rows:
            continue
        block = pd.concat(rows, ignore_index=True)
        block.insert(len(by_cols), "episodes", label)
        for name, counts in (("n_left_out", left_out), ("n_unreviewed", no_review)):
            if counts is None:
                block[name] = 0
            elif by_cols:
                block = block.merge(counts.rename(name), left_on=by_cols, right_index=True,
                                    how="left")
            else:
                block[name] = int(counts)
            block[name] = block[name].fillna(0).astype("int64")
        parts.append(block)
    if not parts:
        return pd.DataFrame(columns=[*by_cols, *WITHOUT_COLUMNS])
    out = pd.concat(parts, ignore_index=True)
    return out[[*by_cols, *WITHOUT_COLUMNS]]


def _count(frame: pd.DataFrame, by_cols: list[str]) -> Any:
    if not by_cols:
        return len(frame)
    return frame.groupby(by_cols, dropna=False).size()
