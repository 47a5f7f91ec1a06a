"""Failure taxonomy tables: which failure statuses and fault types episodes show, per cell.

:func:`failure_indicators` turns the action diff and the reviews into one row per episode
with a 0/1 column per failure (NaN where the episode cannot show it: no expected action, no
review); :func:`failure_taxonomy` gives each column's share per cell (domain x
configuration by default, or persona, goal shift, ...) with clustered bootstrap intervals and
small-cell flags from :func:`accordkit.summarize`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..faults import FAULT_TYPES
from ..metrics.action_diff import DIVERGENCE_REASONS, action_summary
from ..metrics.reviews import ReviewTables, reviewed_episodes

__all__ = ["FAILURE_COLUMNS", "ACTION_FAILURES", "REVIEW_FAILURES", "REVIEW_FAILED",
           "failure_indicators",
           "failure_taxonomy", "cell_episodes", "taxonomy_groupings", "with_goal_shift",
           "DEFAULT_BY"]

#: From the action diff (NaN for an episode without a row in it).
ACTION_FAILURES = ("wrong_arguments", "missing_action", "extra_write", "diverged",
                   *(f"diverged_{r}" for r in DIVERGENCE_REASONS))
_SOURCES = ("agent", "user", "environment")
#: From the reviews (NaN for an episode no review covers).
REVIEW_FAILURES = (*(f"{s}_error" for s in _SOURCES),
                   *(f"critical_{s}_error" for s in _SOURCES),
                   *(f"fault_{t}" for t in FAULT_TYPES))
#: Not a failure of the episode: every stored review of it failed (tau2's placeholder),
#: counted apart from the errors (NaN for an episode without any review).
REVIEW_FAILED = "review_failed"
#: Every indicator column, in order (``failed`` first: 1 - ``success``).
FAILURE_COLUMNS = ("failed", *ACTION_FAILURES, *REVIEW_FAILURES, REVIEW_FAILED)
#: Default cells: domain x configuration.
DEFAULT_BY = ("domain", "agent_model", "method", "user_model")


def _action_part(actions: pd.DataFrame) -> pd.DataFrame:
    s = action_summary(actions)
    reason = s["divergence_reason"]
    out = pd.DataFrame({
        "episode_id": s["episode_id"],
        "wrong_arguments": (s["n_wrong_arguments"] > 0).astype(float),
        "missing_action": (s["n_missing"] > 0).astype(float),
        "extra_write": (s["n_extra"] > 0).astype(float),
        "diverged": reason.notna().astype(float),
    })
    for r in DIVERGENCE_REASONS:
        out[f"diverged_{r}"] = (reason == r).fillna(False).astype(float)
    return out


def _review_part(reviews: ReviewTables) -> pd.DataFrame:
    # a failed review covers nothing: its episode's error columns stay NaN
    covered = reviewed_episodes(reviews)
    ids = [e for e in pd.unique(reviews.reviews["episode_id"]) if str(e) in covered]
    out = pd.DataFrame({"episode_id": pd.Series(ids, dtype=object)})
    errors = reviews.errors
    for source in _SOURCES:
        mine = errors[errors["source"] == source]
        out[f"{source}_error"] = out["episode_id"].isin(set(mine["episode_id"])).astype(float)
        crit = mine[mine["critical"]]
        out[f"critical_{source}_error"] = out["episode_id"].isin(
            set(crit["episode_id"])).astype(float)
    for fault in FAULT_TYPES:
        hit = set(errors.loc[errors["fault_type"] == fault, "episode_id"])
        out[f"fault_{fault}"] = out["episode_id"].isin(hit).astype(float)
    every = pd.DataFrame({"episode_id": pd.unique(reviews.reviews["episode_id"])})
    every[REVIEW_FAILED] = (~every["episode_id"].astype(str).isin(covered)).astype(float)
    return every.merge(out, on="episode_id", how="left")


def failure_indicators(episodes: pd.DataFrame, *, actions: pd.DataFrame | None = None,
                       reviews: ReviewTables | None = None) -> pd.DataFrame:
    """One row per episode, one 0/1 column per failure of :data:`FAILURE_COLUMNS`.

    Parameters
    ----------
    episodes : pandas.DataFrame
        Episode scores (:func:`accordkit.score`): ``episode_id`` and, for ``failed``,
        ``success``.
    actions : pandas.DataFrame, optional
        The action diff of the same episodes (:func:`accordkit.action_diff`, or the store's
        ``action`` level).
    reviews : ReviewTables, optional
        Stored or judged reviews (:func:`accordkit.review_tables`).

    Returns
    -------
    pandas.DataFrame
        ``episode_id`` then the indicator columns that could be computed, as floats:
        1 the episode shows the failure, 0 it does not, NaN it cannot be told (an episode
        with no row in the action diff for the action columns, one no review covers for
        the review columns, one without ``success`` for ``failed``). ``diverged_<reason>``
        is the first divergence's reason; the review columns count an error of that source
        (``agent_error``...), a critical one (``critical_user_error``...), or of that fault
        type (``fault_wrong_argument``...). ``review_failed`` is 1 for an episode whose
        every stored review failed (tau2's "Failed to parse LLM response" placeholder):
        such an episode's review columns are NaN (not reviewed), never an error.

    Examples
    --------
    >>> import pandas as pd
    >>> episodes = pd.DataFrame({"episode_id": ["a", "b"], "success": [True, False]})
    >>> diff = pd.DataFrame({"episode_id": ["b"], "status": ["missing"],
    ...                      "first_divergence_turn": pd.array([5], "Int64"),
    ...                      "divergence_reason": ["missing"]})
    >>> out = failure_indicators(episodes, actions=diff)
    >>> out[["episode_id", "failed", "missing_action", "diverged_missing"]].to_dict("list")
    {'episode_id': ['a', 'b'], 'failed': [0.0, 1.0], 'missing_action': [nan, 1.0], 'diverged_missing': [nan, 1.0]}
    """
    if "episode_id" not in episodes.columns:
        raise ValueError("failure_indicators needs episode scores with an 'episode_id' column")
    out = episodes[["episode_id"]].reset_index(drop=True).copy()
    if "success" in episodes.columns:
        success = pd.to_numeric(episodes["success"].astype("Float64"), errors="coerce")
        out["failed"] = (1.0 - success.astype(float)).to_numpy()
    for part in ([_action_part(actions)] if actions is not None and len(actions) else []) + \
            ([_review_part(reviews)] if reviews is not None and len(reviews.reviews) else []):
        out = out.merge(part, on="episode_id", how="left")
    cols = [c for c in FAILURE_COLUMNS if c in out.columns]
    return out[["episode_id", *cols]]


def failure_taxonomy(episodes: pd.DataFrame, *, actions: pd.DataFrame | None = None,
                     reviews: ReviewTables | None = None,
                     by: str | Sequence[str] | None = None,
                     failures: Sequence[str] | None = None, failed_only: bool = False,
                     cluster: str = "scenario_id", **summarize_options: Any) -> pd.DataFrame:
    """Share of episodes with each failure status and fault type per cell, with intervals.

    Parameters
    ----------
    episodes, actions, reviews
        As in :func:`failure_indicators`; ``episodes`` also holds the ``by`` and
        ``cluster`` columns.
    by : str or list of str, optional
        Cells; default domain x configuration (:data:`DEFAULT_BY`, the columns present).
        Any episode column works: ``persona``, ``n_shifts``...
    failures : list of str, optional
        Indicator columns to show (default: every one some episode has a value for).
    failed_only : bool, default False
        Shares among the failed episodes only (``success`` False): what the failures are
        made of, rather than how often each occurs.
    cluster : str, default "scenario_id"
        Trials of one task are resampled together.
    **summarize_options
        ``method``, ``confidence``, ``n_resamples``, ``seed`` of :func:`accordkit.summarize`.

    Returns
    -------
    pandas.DataFrame
        :func:`accordkit.summarize`'s table: one row per cell and failure (``metric``), the
        share (``estimate``), ``ci_low``, ``ci_high``, ``n_clusters``, ``n_events`` (the
        episodes it can be told for), ``small_cell`` ... ``attrs["indicators"]`` holds
        the per-episode frame the shares were computed from (for listing a cell's
        episodes).

    Examples
    --------
    >>> import pandas as pd
    >>> episodes = pd.DataFrame({"episode_id": list("abcd"), "domain": ["x"] * 4,
    ...                          "scenario_id": list("ppqq"),
    ...                          "success": [True, False, False, True]})
    >>> t = failure_taxonomy(episodes, by="domain", n_resamples=200, method="percentile")
    >>> t[["domain", "metric", "estimate", "n_events", "small_cell"]].to_dict("records")
    [{'domain': 'x', 'metric': 'failed', 'estimate': 0.5, 'n_events': 4.0, 'small_cell': True}]
    """
    from ..stats import summarize

    ind = failure_indicators(episodes, actions=actions, reviews=reviews)
    names = [c for c in ind.columns if c != "episode_id"]
    if failures is not None:
        unknown = [f for f in failures if f not in names]
        if unknown:
            raise ValueError(f"unknown or unavailable failure column(s) {unknown}; "
                             f"available: {names}")
        names = list(failures)
    else:
        names = [c for c in names if ind[c].notna().any()]
    if by is None:
        by_cols = [c for c in DEFAULT_BY if c in episodes.columns]
    else:
        by_cols = [by] if isinstance(by, str) else list(by)
    keep = list(dict.fromkeys([*by_cols, cluster, "episode_id"]))
    missing = [c for c in keep if c not in episodes.columns]
    if missing:
        raise ValueError(f"failure_taxonomy: the episodes lack the column(s) {missing}")
    frame = episodes[keep].reset_index(drop=True).merge(ind[["episode_id", *names]],
                                                        on="episode_id", how="left")
    if failed_only:
        if "failed" not in ind.columns:
            raise ValueError("failed_only needs a 'success' column in the episodes")
        frame = frame[(frame["failed"] == 1.0).to_numpy()]
        names = [n for n in names if n != "failed"]
    out = summarize(frame, names, by=by_cols or None, cluster=cluster, **summarize_options)
    out.attrs["indicators"] = frame
    return out


def cell_episodes(indicators: pd.DataFrame, failure: str,
                  cell: dict[str, Any] | None = None) -> list[str]:
    """The episodes behind one cell of a taxonomy table: those of the cell showing
    ``failure`` (its indicator is 1).

    Examples
    --------
    >>> import pandas as pd
    >>> ind = pd.DataFrame({"episode_id": ["a", "b", "c"], "domain": ["x", "x", "y"],
    ...                     "failed": [1.0, 0.0, 1.0]})
    >>> cell_episodes(ind, "failed", {"domain": "x"})
    ['a']
    """
    if failure not in indicators.columns:
        raise ValueError(f"no failure column {failure!r}; the indicators have "
                         f"{[c for c in indicators.columns if c in FAILURE_COLUMNS]}")
    mask = (indicators[failure] == 1.0).to_numpy(dtype=bool, copy=True)
    for column, value in (cell or {}).items():
        col = indicators[column]
        same = col.isna() if value is None or (isinstance(value, float) and np.isnan(value)) \
            else col == value
        mask &= same.to_numpy(dtype=bool, na_value=False)
    return indicators.loc[mask, "episode_id"].astype(str).tolist()


def taxonomy_groupings(episodes: pd.DataFrame) -> dict[str, list[str]]:
    """The cell layouts worth a taxonomy table for these episodes: domain x configuration
    (agent model, and method and user model where they vary) always; by persona, and with / without a goal shift, when the episodes vary in them.

    The goal-shift layout needs a column ``has_goal_shift`` (``n_shifts > 0``), added to a
    copy of the frame by :func:`with_goal_shift`.

    Examples
    --------
    >>> import pandas as pd
    >>> ep = pd.DataFrame({"domain": ["a", "a"], "agent_model": ["m", "m"],
    ...                    "persona": ["EASY_1", "HARD_1"], "n_shifts": [0, 2]})
    >>> taxonomy_groupings(ep)
    {'configuration': ['domain', 'agent_model'], 'persona': ['domain', 'persona'], 'goal_shift': ['domain', 'has_goal_shift']}
    """
    # domain and agent model always; the rest of the configuration where it varies
    config = [c for c in DEFAULT_BY if c in episodes.columns
              and (c in ("domain", "agent_model") or episodes[c].nunique(dropna=False) > 1)]
    out = {"configuration": config or ["domain"]}
    if "persona" in episodes.columns and episodes["persona"].nunique(dropna=True) > 1:
        out["persona"] = [c for c in ("domain", "persona") if c in episodes.columns]
    if "n_shifts" in episodes.columns:
        has = episodes["n_shifts"].fillna(0) > 0
        if has.any() and not has.all():
            out["goal_shift"] = [c for c in ("domain",) if c in episodes.columns] + \
                ["has_goal_shift"]
    return out


def with_goal_shift(episodes: pd.DataFrame) -> pd.DataFrame:
    """A copy with ``has_goal_shift`` (``n_shifts > 0``; False without the column)."""
    out = episodes.copy()
    shifts = out["n_shifts"] if "n_shifts" in out.columns else pd.Series(0, index=out.index)
    out["has_goal_shift"] = (pd.to_numeric(shifts, errors="coerce").fillna(0) > 0)
    return out
